"""LAB screen: one request trace served by a contiguous and a paged KV cache, side by side.

Both maps show the same memory (the paper's 15,728 token slots, one cell per
16-token block). Key S cycles the sharing scenario: basic sampling, parallel
sampling (4 samples of each prompt), beam search (width 4) and a shared
one-shot prefix. Shared blocks carry their reference count, a block copied on
write flashes, and clicking a block outlines every sequence that points at it.

The engines advance by simulated time: each frame moves the LAB clock by the
frame's time times the speed, and each engine steps until it catches up, at most
``STEPS_PER_FRAME`` engine steps a frame (a fixed amount of work, so the same
trace gives the same picture on any machine). The picture comes from
``engine.lab.projection``, which reads the engines without changing them; one
map is refreshed per frame and repaints at most a fixed number of cells.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import pygame

from engine.lab import DATASETS, LabConfig, Request, Simulator
from engine.lab.paper import DEFAULT_RATE, LABELS
from engine.lab.projection import MapView, memory_saved, project, recent_copies
from engine.lab.sharing import SCENARIOS, Sharing, scenario
from engine.lab.workload import stream
from ui import theme
from ui.lab_layout import BUTTONS, LabLayout, lab_layout
from ui.memory_map import DIGIT_MIN_CELL, FREE_CELL, MAX_PAINT, Grid, MemoryMap, paint_tile, request_colour
from ui.scene import Scene
from ui.text import TextCache, fit, wrap
from ui.widgets import Button, draw_panel, hit

DATASET_CHOICES = ("sharegpt", "alpaca", "translation")
CONTIGUOUS_CHOICES = ("oracle", "pow2", "max")
SCENARIO_CHOICES = SCENARIOS  # basic, parallel, beam, prefix
FAN_OUT = 4  # samples (parallel) and beam width (beam) on the LAB
BLOCK_SIZE = 16  # one cell = one KV block of 16 tokens (vLLM's default), as in the game
SPEEDS = (1, 4, 16)
TRACE_REQUESTS = 3000
TRACE_CHUNK = 150  # requests drawn per frame while the screen waits for a trace
PREFETCH_CHUNK = 25  # requests of the next trace drawn per frame in the background
STEPS_PER_FRAME = 24  # engine steps per side and frame at most: a frame never stalls
MAX_LAG_S = 2.0  # simulated seconds the engines may fall behind before the clock waits
REDRAW_EVERY = 6  # frames between redraws of counters and plot (10 Hz)
SAMPLE_EVERY_S = 0.25  # simulated seconds between points of the running-requests plot
PLOT_POINTS = 240
RATE_WINDOW_S = 5.0  # tokens/s is averaged over this much simulated time
FLASH_FRAMES = 18  # a block copied on write flashes for 0.3 s

LEFT_ACCENT = theme.CYAN
RIGHT_ACCENT = theme.MAGENTA

HELP_TEXT = {
    "basic": "Same requests, same memory. Contiguous engines reserve a range per request up front; the paged "
             "engine takes one block at a time from anywhere. Click a block to follow its request.",
    "parallel": "4 samples of each prompt. Orca gives every sample its own copy of the prompt; vLLM points all "
                "4 at the prompt's blocks (white pips count the pointers) and copies a shared block only when "
                "a sample writes into it (it flashes). Click a block to see who points at it.",
    "beam": "Beam search, width 4: beams fork and die every few steps. Survivors share their ancestors' blocks "
            "(white pips count the pointers), a dropped beam frees what only it held, and a write into a "
            "shared block copies it first (it flashes). Click a block to see its beams.",
    "prefix": "Every prompt starts with the same 80-token instruction. vLLM computes and keeps its blocks once "
              "(violet, top left) and every request points at them; Orca stores and computes it again for "
              "each request.",
}
HELP_TEXT_SHORT = {  # the portrait info panel has room for three lines
    "basic": "Same requests, same memory. Orca reserves a range per request up front; vLLM takes one block at "
             "a time. Tap a block to follow its request.",
    "parallel": "4 samples a prompt: vLLM points them all at the prompt's blocks (white pips count pointers) "
                "and copies a block when a sample writes into it.",
    "beam": "Beam width 4: beams share their ancestors' blocks (white pips count pointers); a write into a "
            "shared block copies it first (it flashes).",
    "prefix": "Every prompt starts with the same 80 tokens: vLLM keeps their blocks once (violet) for every "
              "request; Orca stores them again for each.",
}
SCENARIO_LABELS = {"basic": "BASIC", "parallel": "4 SAMPLES", "beam": "BEAM 4", "prefix": "PREFIX"}


class Side:
    """One engine of the comparison: its simulator, map and live counters."""

    def __init__(self, allocator: str, trace: list[Request], config: LabConfig, area: tuple[int, int, int, int]) -> None:
        self.allocator = allocator
        self.sim = Simulator(trace, allocator, config, track_blocks=True)
        self.cells = config.slots // config.block_size
        self.map = MemoryMap(Grid.fit(self.cells, area), config.block_size)
        self.view: MapView | None = None
        self.history: deque[tuple[float, int]] = deque()
        self.dirty = True
        self.copies_seen = 0
        self.flashes: dict[int, int] = {}  # cell -> frames of flash left

    def advance_to(self, clock: float, max_steps: int = STEPS_PER_FRAME) -> None:
        """Step the engine towards ``clock``, at most ``max_steps`` engine steps."""
        steps = 0
        sim = self.sim
        while sim.clock < clock and not sim.done and steps < max_steps:
            sim.step(1)
            steps += 1
        if steps:
            self.dirty = True
            self.history.append((sim.clock, sim.tokens_generated))
            while len(self.history) > 2 and self.history[0][0] < sim.clock - RATE_WINDOW_S:
                self.history.popleft()
            self.copies_seen, copied = recent_copies(sim, self.copies_seen)
            for cell in copied:
                self.flashes[cell] = FLASH_FRAMES

    def fade(self) -> None:
        for cell in list(self.flashes):
            self.flashes[cell] -= 1
            if self.flashes[cell] <= 0:
                del self.flashes[cell]

    def tokens_per_s(self) -> float:
        if len(self.history) < 2:
            return 0.0
        (t0, g0), (t1, g1) = self.history[0], self.history[-1]
        return (g1 - g0) / (t1 - t0) if t1 > t0 else 0.0

    def waste(self) -> float:
        """Share of the memory in use (or made unusable) that does not hold tokens."""
        mem = self.sim.memory()
        used = mem.total() - mem.free
        return 1 - mem.tokens / used if used else 0.0

    def saving(self) -> float:
        """Share of the blocks the sequences point at that sharing saves right now."""
        saved, logical = memory_saved(self.sim)
        return saved / logical if logical > 0 else 0.0

    def refresh_map(self, limit: int | None = MAX_PAINT) -> None:
        """Bring the map up to the engine's state, repainting at most ``limit`` cells (None: all)."""
        if not self.dirty:
            return
        self.view = project(self.sim)
        self.dirty = self.map.update(self.view.cells, limit) > 0


class TraceBuilder:
    """A trace drawn a slice at a time, so drawing 3,000 requests never stalls a frame."""

    def __init__(self, dataset: str, seed: int, max_seq_len: int = 2048) -> None:
        self.key = (dataset, seed, max_seq_len)
        self.requests: list[Request] = []
        self._source: Iterator[Request] = stream(dataset, DEFAULT_RATE[dataset], seed, max_seq_len)

    @property
    def done(self) -> bool:
        return len(self.requests) >= TRACE_REQUESTS

    def extend(self, n: int) -> bool:
        """Draw up to ``n`` more requests; True once the trace is complete."""
        source, out = self._source, self.requests
        for _ in range(min(n, TRACE_REQUESTS - len(out))):
            out.append(next(source))
        return self.done


class LabScene(Scene):
    """The LAB: memory maps, counters, a plot of running requests and a block inspector."""

    def __init__(self, app, seed: int = 1, size: tuple[int, int] | None = None) -> None:
        self.app = app
        self.text: TextCache = getattr(app, "text", None) or TextCache()
        canvas: tuple[int, int] = size if size is not None else getattr(app, "canvas_size", theme.CANVAS_SIZE)
        width, height = canvas
        self.layout: LabLayout = lab_layout(width, height)
        self.seed = seed
        self.dataset = "sharegpt"
        self.block = BLOCK_SIZE
        self.contiguous = "oracle"
        self.scenario = "basic"
        self.speed = 4
        self.paused = False
        self.steps_per_frame = STEPS_PER_FRAME
        self.selected: int | None = None  # request followed on both maps
        self.selected_cell: tuple[int, int] | None = None  # (side, cell) clicked
        self.hover: tuple[int, int] | None = None
        self.chrome: pygame.Surface | None = None
        self.plot_surface: pygame.Surface | None = None
        self.legend_tiles: tuple[pygame.Surface, ...] | None = None
        self.info_lines: tuple[object, list[tuple[str, theme.Colour]]] | None = None
        self.builders: dict[tuple[str, int, int], TraceBuilder] = {}
        self.buttons = [Button(name, self.layout.buttons[name], label, hint) for name, _, label, hint in BUTTONS]
        self.restart()

    # ------------------------------------------------------------------ setup
    @property
    def sharing(self) -> Sharing:
        return scenario(self.scenario, FAN_OUT)

    @property
    def config(self) -> LabConfig:
        return LabConfig(block_size=self.block, sharing=self.sharing)

    @property
    def ready(self) -> bool:
        """Both engines are built and running."""
        return len(self.sides) == 2

    def _trace_key(self, seed: int) -> tuple[str, int, int]:
        return (self.dataset, seed, self.config.max_seq_len - self.sharing.prefix)

    def restart(self) -> None:
        """Serve the current dataset's trace afresh; the engines are built over the next frames."""
        spec = DATASETS[self.dataset]
        self.rate = DEFAULT_RATE[self.dataset]
        key, ahead = self._trace_key(self.seed), self._trace_key(self.seed + 1)
        # Keep only this trace and the one drawn ahead for the next seed.
        self.builders = {k: b for k, b in self.builders.items() if k in (key, ahead)}
        self.builders.setdefault(key, TraceBuilder(*key))
        self.trace: list[Request] = []
        self.sides: list[Side] = []
        self.by_rid: dict[int, Request] = {}
        self.clock = 0.0
        self.frame = 0
        self.next_sample = 0.0
        self.samples: deque[tuple[int, int]] = deque(maxlen=PLOT_POINTS)
        self.sample_sums = [0, 0]
        self.plot_max = 8
        self.plot_surface = None
        self.plot_stale = False
        self.counters: list[tuple[str, int, theme.Colour, tuple[int, int], str]] | None = None
        self.selected = None
        self.selected_cell = None
        self.info_lines = None
        self.title = f"{spec.title} at {self.rate:g} req/s, {self.sharing.label}"
        help_text = (HELP_TEXT_SHORT if self.layout.portrait else HELP_TEXT)[self.scenario]
        self.help_lines = wrap(help_text, self.layout.small, self.layout.info[2] - 20)
        self.chrome = None

    def prepare(self) -> None:
        """One frame's share of setting up: a slice of the trace, or one engine."""
        builder = self.builders[self._trace_key(self.seed)]
        if not builder.done:
            builder.extend(TRACE_CHUNK)
            return
        self.trace = builder.requests
        i = len(self.sides)
        allocator = self.contiguous if i == 0 else "paged"
        side = Side(allocator, self.trace, self.config, self.layout.map_area(i))
        side.refresh_map(limit=None)
        self.sides.append(side)
        if self.ready:
            self.by_rid = {r.rid: r for r in self.trace}
            self.chrome = None

    def _map_area(self, i: int) -> tuple[int, int, int, int]:
        return self.layout.map_area(i)

    # ------------------------------------------------------------------ input
    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.KEYDOWN:
            actions = {
                pygame.K_ESCAPE: "back", pygame.K_l: "back", pygame.K_SPACE: "pause", pygame.K_p: "pause",
                pygame.K_1: "x1", pygame.K_2: "x4", pygame.K_3: "x16", pygame.K_d: "dataset",
                pygame.K_s: "scenario", pygame.K_c: "contiguous", pygame.K_r: "restart",
            }
            if event.key in actions:
                self.command(actions[event.key])
        elif event.type == pygame.MOUSEMOTION:
            before = hit(self.buttons, self.hover) if self.hover else None
            self.hover = event.pos
            if hit(self.buttons, event.pos) is not before:
                self.chrome = None
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.click(event.pos)

    def command(self, name: str) -> None:
        if name == "back":
            self.app.pop()
            return
        if name == "pause":
            self.paused = not self.paused
        elif name in ("x1", "x4", "x16"):
            self.speed = int(name[1:])
        elif name == "dataset":
            self.dataset = DATASET_CHOICES[(DATASET_CHOICES.index(self.dataset) + 1) % len(DATASET_CHOICES)]
            self.restart()
        elif name == "scenario":
            i = SCENARIO_CHOICES.index(self.scenario)
            self.scenario = SCENARIO_CHOICES[(i + 1) % len(SCENARIO_CHOICES)]
            self.restart()
        elif name == "contiguous":
            i = CONTIGUOUS_CHOICES.index(self.contiguous)
            self.contiguous = CONTIGUOUS_CHOICES[(i + 1) % len(CONTIGUOUS_CHOICES)]
            self.restart()
        elif name == "restart":
            self.seed += 1
            self.restart()
        self.chrome = None
        self.counters = None

    def click(self, pos: tuple[int, int]) -> None:
        button = hit(self.buttons, pos)
        if button is not None:
            self.command(button.name)
            return
        for k, side in enumerate(self.sides):
            grid = side.map.grid
            if grid.bounds.collidepoint(pos):
                cell = grid.index_at(pos)
                owner = side.map.owner(cell) if cell is not None else None
                shared = cell is not None and side.view is not None and bool(side.view.pointing_at(cell))
                self.selected = owner
                self.selected_cell = (k, cell) if cell is not None and (owner is not None or shared) else None
                self.info_lines = None
                return

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        if not self.ready:
            self.prepare()
            return
        for side in self.sides:
            side.fade()
        if self.paused:
            return
        if all(side.sim.done for side in self.sides):
            self.seed += 1
            self.restart()
            return
        # Draw the next trace ahead, a little each frame, so the restart at the end is instant.
        ahead = self._trace_key(self.seed + 1)
        self.builders.setdefault(ahead, TraceBuilder(*ahead)).extend(PREFETCH_CHUNK)
        self.clock += dt_ms / 1000.0 * self.speed
        for side in self.sides:
            side.advance_to(self.clock, self.steps_per_frame)
        # Engines that cannot keep up slow the clock rather than fall behind for good.
        behind = [side.sim.clock for side in self.sides if not side.sim.done]
        if behind and self.clock - min(behind) > MAX_LAG_S:
            self.clock = min(behind) + MAX_LAG_S
        # One map a frame: each is repainted at 30 Hz, and a frame does half the work.
        self.frame += 1
        self.sides[self.frame % 2].refresh_map()
        while self.next_sample <= self.clock:
            left, right = (len(side.sim.running) for side in self.sides)
            if len(self.samples) == PLOT_POINTS:
                old = self.samples[0]
                self.sample_sums = [self.sample_sums[0] - old[0], self.sample_sums[1] - old[1]]
            self.samples.append((left, right))
            self.sample_sums = [self.sample_sums[0] + left, self.sample_sums[1] + right]
            self.plot_max = max(self.plot_max, left, right)
            self.next_sample += SAMPLE_EVERY_S
            self.plot_stale = True
        # Plot and counters on different frames, so their costs never add up.
        if self.frame % REDRAW_EVERY == 0:
            if self.plot_stale:
                self.plot_surface = None
                self.plot_stale = False
                self.info_lines = None
        elif self.frame % REDRAW_EVERY == REDRAW_EVERY // 2:
            self.counters = None

    # ------------------------------------------------------------------ drawing
    def bring_up_to_date(self) -> None:
        """Repaint everything now rather than spread over frames (for a still picture)."""
        for side in self.sides:
            side.dirty = True
            side.refresh_map(limit=None)
        self.counters = None
        self.plot_surface = None
        self.info_lines = None

    def outlined(self, k: int) -> list[int]:
        """Cells outlined on side ``k``: every sequence pointing at the clicked block, or the followed request."""
        side = self.sides[k]
        view = side.view
        if view is None:
            return []
        if self.selected_cell is not None and self.selected_cell[0] == k:
            return view.outline(self.selected_cell[1])
        if self.selected is not None:
            return list(view.owned.get(self.selected, ()))
        return []

    def draw(self, surface: pygame.Surface) -> None:
        if self.chrome is None:
            self.chrome = self._draw_chrome()
        surface.blit(self.chrome, (0, 0))
        if not self.ready:
            self._draw_preparing(surface)
            return
        for k, side in enumerate(self.sides):
            focus = self.selected_cell[1] if self.selected_cell and self.selected_cell[0] == k else None
            flashes = [(cell, left / FLASH_FRAMES) for cell, left in side.flashes.items()]
            side.map.draw(surface, self.outlined(k), flashes, focus)
        if self.counters is None:
            self.counters = self._counters()
        t = self.text
        for text, size, colour, pos, anchor in self.counters:
            t.blit(surface, text, size, colour, pos, anchor)
        if self.layout.plot is not None:
            if self.plot_surface is None:
                self.plot_surface = self._draw_plot()
            surface.blit(self.plot_surface, self.layout.plot[:2])
        self._draw_info(surface)

    def _draw_preparing(self, surface: pygame.Surface) -> None:
        builder = self.builders[self._trace_key(self.seed)]
        if builder.done:
            message = "starting the engines"
        else:
            message = f"drawing {TRACE_REQUESTS:,} requests ... {len(builder.requests) / TRACE_REQUESTS:.0%}"
        for i in range(2):
            x, y, w, h = self._map_area(i)
            self.text.blit(surface, message, self.layout.body, theme.TEXT_DIM, (x + w // 2, y + h // 2), "center")

    def _draw_chrome(self) -> pygame.Surface:
        """Everything that changes only on a click: background, panels, buttons, titles."""
        lay = self.layout
        s = pygame.Surface(lay.size)
        s.fill(theme.BG)
        t = self.text
        pygame.draw.rect(s, theme.PANEL, lay.header)
        pygame.draw.line(s, theme.PANEL_EDGE, (0, lay.header[3]), (lay.width, lay.header[3]))
        right = t.blit(s, "MEMORY LAB", lay.large, theme.CYAN, (12, 8)).right
        if not lay.portrait:
            t.blit(s, fit(self.title, lay.small, lay.width - right - 170), lay.small, theme.TEXT_DIM,
                   (right + 12, 11))
        baseline = LABELS[self.contiguous].replace("Orca (", "").rstrip(")").upper()
        labels = {
            "pause": "RUN" if self.paused else "PAUSE",
            "dataset": DATASETS[self.dataset].title.replace(" En-De", ""),
            "scenario": SCENARIO_LABELS[self.scenario],
            "contiguous": baseline if lay.portrait else baseline + " vs PAGED",
        }
        if lay.portrait:
            labels["restart"] = "NEW"
        hover = hit(self.buttons, self.hover) if self.hover else None
        for b in self.buttons:
            active = (b.name == "pause" and self.paused) or b.name == f"x{self.speed}"
            b.draw(s, t, active=active, hover=b is hover, label=labels.get(b.name), size=lay.small)
        for i in range(2):
            allocator = self.contiguous if i == 0 else "paged"
            accent = LEFT_ACCENT if i == 0 else RIGHT_ACCENT
            draw_panel(s, lay.maps[i], t, edge=accent)
            x, y, w, _ = lay.maps[i]
            kind = "a range per sequence" if i == 0 else f"blocks of {self.block} tokens"
            t.blit(s, LABELS[allocator], lay.body, accent, (x + 8, y + 4))
            t.blit(s, kind, lay.small, theme.TEXT_DIM, (x + w - 8, y + 6), "topright")
        if lay.plot is not None:
            draw_panel(s, lay.plot, t)
        draw_panel(s, lay.info, t)
        return s

    def _counters(self) -> list[tuple[str, int, theme.Colour, tuple[int, int], str]]:
        """Live counters of both engines and the clock: (text, size, colour, position, anchor)."""
        lay = self.layout
        small, body = lay.small, lay.body
        items = []
        seqs = self.sharing.seqs
        for i, side in enumerate(self.sides):
            x, y, w, h = lay.maps[i]
            sim = side.sim
            row1 = y + h - lay.map_bottom_pad + 4
            row2 = row1 + lay.line + 2
            running = f"running {len(sim.running)}" + (f" x{seqs}" if seqs > 1 else "")
            items += [
                (running, body, theme.TEXT, (x + 10, row1), "topleft"),
                (f"waiting {len(sim.waiting)}", body, theme.TEXT_DIM, (x + w // 2 - 20, row1), "topleft"),
                (f"waste {side.waste():.0%}", body, theme.AMBER, (x + w - 10, row1), "topright"),
                (f"{side.tokens_per_s():,.0f} tokens/s", small, theme.GREEN, (x + 10, row2), "topleft"),
            ]
            if sim.paged and self.sharing.shares:
                extra = f"sharing saves {side.saving():.0%}, copied {sim.cow_copies}"
                items.append((extra, small, theme.VIOLET, (x + w - 10, row2), "topright"))
            else:
                extra = f"preempted {sim.preemptions}" if sim.paged else f"finished {sim.finished}"
                items.append((extra, small, theme.TEXT_DIM, (x + w - 10, row2), "topright"))
        status = "PAUSED" if self.paused else f"x{self.speed}"
        items.append((f"t = {self.clock:6.1f} s  {status}", small, theme.AMBER, (lay.width - 12, 10), "topright"))
        return items

    def _draw_plot(self) -> pygame.Surface:
        lay = self.layout
        assert lay.plot is not None
        x, y, w, h = lay.plot
        s = pygame.Surface((w, h))
        s.fill(theme.PANEL)
        pygame.draw.rect(s, theme.PANEL_EDGE, (0, 0, w, h), 1, border_radius=4)
        t = self.text
        t.blit(s, "RUNNING REQUESTS", lay.small, theme.PANEL_TITLE, (7, 4))
        t.blit(s, f"last {PLOT_POINTS * SAMPLE_EVERY_S:.0f} s", lay.small, theme.TEXT_DIM, (w - 8, 4), "topright")
        area = pygame.Rect(36, 26, w - 46, h - 56)
        pygame.draw.rect(s, theme.BOARD_BG, area)
        top = self.plot_max * 1.15
        for frac in (0.0, 0.5, 1.0):
            yy = area.bottom - round(area.height * frac)
            pygame.draw.line(s, theme.GRID_LINE, (area.x, yy), (area.right, yy))
            t.blit(s, f"{top * frac:.0f}", lay.small, theme.TEXT_DIM, (area.x - 4, yy), "midright")
        if len(self.samples) >= 2:
            step = area.width / (PLOT_POINTS - 1)
            for k, colour in ((0, LEFT_ACCENT), (1, RIGHT_ACCENT)):
                points = [(area.x + j * step, area.bottom - area.height * v[k] / top)
                          for j, v in enumerate(self.samples)]
                pygame.draw.lines(s, colour, False, points, 2)
        legend_y = h - 24
        for k, (label, colour) in enumerate(((LABELS[self.contiguous], LEFT_ACCENT), ("vLLM (paged)", RIGHT_ACCENT))):
            lx = 12 + k * 186
            if self.samples:
                label += f"  avg {self.sample_sums[k] / len(self.samples):.1f}"
            pygame.draw.line(s, colour, (lx, legend_y + 8), (lx + 18, legend_y + 8), 3)
            t.blit(s, label, lay.small, theme.TEXT, (lx + 24, legend_y + 1))
        return s

    # ------------------------------------------------------------------ info panel
    def _info(self) -> list[tuple[str, theme.Colour]]:
        """The info panel's lines for the current selection (title first)."""
        width = self.layout.info[2] - 20
        small = self.layout.small
        if self.selected_cell is not None:
            k, cell = self.selected_cell
            side = self.sides[k]
            if side.sim.paged and side.view is not None:
                return self._block_info(side, cell, width)
        rid = self.selected
        if rid is None:
            return [("HOW TO READ IT", theme.PANEL_TITLE)] + [(line, theme.TEXT) for line in self.help_lines]
        req = self.by_rid[rid]
        lines: list[tuple[str, theme.Colour]] = [
            (f"REQUEST #{rid}", request_colour(rid)),
            (f"prompt {req.prompt}, output {req.output} tokens", theme.TEXT_DIM),
        ]
        contiguous, paged = (side.sim for side in self.sides)
        run = contiguous.running.get(rid)
        if run is not None:
            ranges = ", ".join(f"{s}-{s + run.reserve - 1}" for s in run.starts[:2])
            more = f" (+{len(run.starts) - 2})" if len(run.starts) > 2 else ""
            line = f"{LABELS[self.contiguous]}: slots {ranges}{more}, {contiguous.length(run)} of {run.reserve} used"
        else:
            line = f"{LABELS[self.contiguous]}: {self._where(contiguous, rid)}"
        lines += [(part, LEFT_ACCENT) for part in wrap(line, small, width)]  # "n of m used" is the point
        run = paged.running.get(rid)
        if run is None:
            lines.append((f"vLLM (paged): {self._where(paged, rid)}", RIGHT_ACCENT))
            return lines
        table = paged.pool.tables[(rid, 0)] if (rid, 0) in paged.pool.tables else next(
            t for s, t in paged.pool.tables.items() if s[0] == rid)
        lines.append((f"vLLM block table: {paged.length(run)} tokens in {len(table)} blocks", RIGHT_ACCENT))
        lines += [(line, theme.TEXT) for line in wrap("  ".join(f"{i}>{b}" for i, b in enumerate(table)), small, width)]
        return lines

    def _block_info(self, side: Side, cell: int, width: int) -> list[tuple[str, theme.Colour]]:
        small = self.layout.small
        view = side.view
        assert view is not None
        pool = side.sim.pool
        seqs = view.pointing_at(cell)
        refs = pool.refs[cell]
        if cell in pool.pinned:
            title = f"BLOCK {cell}: CACHED PREFIX, {refs} REFERENCES"
            colour = theme.VIOLET
        else:
            title = f"BLOCK {cell}: {refs} REFERENCE{'S' if refs != 1 else ''}"
            colour = request_colour(seqs[0][0]) if seqs else theme.TEXT
        lines: list[tuple[str, theme.Colour]] = [(title, colour)]
        by_request: dict[int, list[int]] = {}
        for rid, i in seqs:
            by_request.setdefault(rid, []).append(i)
        if by_request:
            noun = "beam" if self.scenario == "beam" else "sample" if self.scenario == "parallel" else "sequence"
            if len(by_request) == 1:
                rid, ids = next(iter(by_request.items()))
                text = (f"pointed at by {len(ids)} {noun}s of request #{rid}" if len(ids) > 1
                        else f"held by request #{rid} alone")
            else:
                text = f"pointed at by {len(by_request)} requests: " + ", ".join(f"#{r}" for r in sorted(by_request))
            lines += [(line, theme.TEXT) for line in wrap(text, small, width)[:2]]
        if refs > 1:
            lines.append((fit("shared: a write into it copies it first", small, width), theme.TEXT_DIM))
        first = seqs[0][0] if seqs else None
        if first is not None and first in side.sim.running:
            table = view.sequences[seqs[0]]
            lines.append((f"block table of #{first}: {side.sim.length(side.sim.running[first])} tokens", RIGHT_ACCENT))
            lines += [(line, theme.TEXT) for line in wrap("  ".join(f"{i}>{b}" for i, b in enumerate(table)),
                                                          small, width)]
        return lines

    def _draw_info(self, surface: pygame.Surface) -> None:
        t = self.text
        lay = self.layout
        x, y, w, h = lay.info
        key = (self.selected, self.selected_cell)
        if self.info_lines is None or self.info_lines[0] != key:
            self.info_lines = (key, self._info())
        lines = self.info_lines[1]
        legend = self.selected is None and self.selected_cell is None
        bottom = y + h - 6 - (2 * lay.line + 6 if legend else 0)
        room = max(1, (bottom - y - 24) // lay.line)
        body = lines[1:]
        if len(body) > room:
            tables = any(">" in line for line, _ in body)
            body = body[: room - 1] + [("... (logical block > physical block)", theme.TEXT_DIM)] if tables \
                else body[:room]
        title, colour = lines[0]
        t.blit(surface, fit(title, lay.small, w - 14), lay.small, colour, (x + 7, y + 4))
        yy = y + 24
        for line, colour in body:
            t.blit(surface, line, lay.small, colour, (x + 10, yy))
            yy += lay.line
        if legend:
            self._legend(surface, x + 10, y + h - 2 * lay.line - 10)

    def _where(self, sim: Simulator, rid: int) -> str:
        if rid in sim.running:
            return "running"
        if rid in sim.completed:
            return "finished"
        if rid in sim.generated:
            return "preempted, waiting to be recomputed"
        return "waiting in the queue" if self.by_rid[rid].arrival <= sim.clock else "not arrived yet"

    def _legend(self, surface: pygame.Surface, x: int, y: int) -> None:
        t = self.text
        lay = self.layout
        size = 14
        if self.legend_tiles is None:
            colour = request_colour(3)
            self.legend_tiles = (paint_tile(colour, size, size), paint_tile(colour, size, 0),
                                 paint_tile(colour, size, size, 3, digit=self.sides[1].map.grid.cell > DIGIT_MIN_CELL))
        items = [(self.legend_tiles[0], "tokens"), (self.legend_tiles[1], "reserved"), (None, "free")]
        if self.sharing.shares:
            items.append((self.legend_tiles[2], "shared x3"))
        xx = x
        for tile, label in items:
            if tile is None:
                pygame.draw.rect(surface, FREE_CELL, (xx, y + 1, size, size))
            else:
                surface.blit(tile, (xx, y + 1))
            r = t.blit(surface, label, lay.small, theme.TEXT, (xx + size + 4, y))
            xx = r.right + 10
        keys = "S sharing  D data  C baseline  Space pause" if lay.portrait else \
            "S sharing, D data, C baseline, Space pause, 1/2/3 speed"
        t.blit(surface, fit(keys, lay.small, lay.info[2] - 20), lay.small, theme.TEXT_DIM, (x, y + lay.line + 2))


if __name__ == "__main__":  # python -m ui.lab_scene: the headless tool lives in ui.lab_cli
    import sys

    from ui.lab_cli import run

    raise SystemExit(run(sys.argv[1:]))
