"""LAB screen: one request trace served by a contiguous and a paged KV cache, side by side.

Both maps show the same memory (the paper's 15,728 token slots, one cell per
16-token block). Key S cycles the sharing scenario: basic sampling, parallel
sampling (``FAN_OUT`` samples of each prompt), beam search (width ``FAN_OUT``)
and a shared one-shot prefix. Shared blocks carry their reference count, a block
copied on write flashes, and clicking a block outlines every sequence that
points at it.

The engines come from the LAB's registry (``engine.lab.memory.REGISTRY``): the
right-hand map is the paper's system (``REFERENCE``), key C cycles the left-hand
one through the baselines. What each engine is in the game, its colour and the
game's label for it come from the game's registry (``engine.modes``); key G (or a
click on the info panel) turns the info panel to the game's rules for either
engine.

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

from engine import modes as game_modes
from engine import rules as game_rules
from engine.lab import DATASETS, LabConfig, Request, Simulator
from engine.lab.memory import BASELINES, REFERENCE, get as lab_allocator
from engine.lab.paper import DEFAULT_RATE
from engine.lab.projection import MapView, memory_saved, project, recent_copies
from engine.lab.sharing import FAN_OUT, PREFIXES, SCENARIO_PREFIX, SCENARIOS, Sharing, scenario
from engine.lab.workload import stream
from ui import theme
from ui.lab_layout import BUTTONS, LabLayout, lab_layout
from ui.memory_map import DIGIT_MIN_CELL, FREE_CELL, MAX_PAINT, Grid, MemoryMap, paint_tile, request_colour
from ui.i18n import DEFAULT as DEFAULT_LANGUAGE, Catalogue, catalogue
from ui.scene import Scene
from ui.text import TextCache, fit, wrap
from ui.widgets import Button, draw_panel, hit

DATASET_CHOICES = ("sharegpt", "alpaca", "translation")
# Key C steps through the baselines from the tightest reservation (the registry lists them loosest first).
BASELINE_CHOICES: tuple[str, ...] = tuple(reversed(BASELINES))
CONTIGUOUS_CHOICES = BASELINE_CHOICES  # the name older callers use
DEFAULT_BASELINE = "oracle"  # the strongest baseline the paper measures
SCENARIO_CHOICES = SCENARIOS  # basic, parallel, beam, prefix
BLOCK_SIZE = game_rules.TOKENS_PER_BLOCK  # one cell = one KV block of 16 tokens (vLLM's default), as in the game
LEGEND_REFS = 3  # the pointer count the legend's shared tile shows
INFO_PAGES = ("help", "game0", "game1")  # the info panel with nothing selected: how to read it, each engine in the game
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


def accent(allocator: str) -> theme.Colour:
    """The colour of the game mode whose rules ``allocator`` follows (the game's registry names it)."""
    mode = game_modes.of_lab(allocator)
    return theme.named(mode.accent) if mode is not None else theme.VIOLET


GAME_KEY = "G"  # turns the info panel to the engines in the game (pygame.K_g in ``handle``)
_HINTS = {name: hint for name, _, _, hint in BUTTONS}
# Key names the catalogues' key lines quote, from the buttons' own hints.
KEY_HINTS: dict[str, str] = {
    "scenario": _HINTS["scenario"], "dataset": _HINTS["dataset"], "contiguous": _HINTS["contiguous"],
    "pause": _HINTS["pause"], "speeds": "/".join(_HINTS[f"x{n}"] for n in SPEEDS), "game": GAME_KEY,
}

LEFT_ACCENT = accent(DEFAULT_BASELINE)
RIGHT_ACCENT = accent(REFERENCE)


def game_words(tr: Catalogue, allocator: str, block: int = BLOCK_SIZE,
               short: bool = False) -> tuple[str, list[str]] | None:
    """(title, paragraphs) saying what ``allocator`` is in the game under the game's rules; None if no
    game mode follows its rules. Labels come from the registries, numbers from the game's rules."""
    mode = game_modes.of_lab(allocator)
    if mode is None:
        return None
    label = tr.t(f"mode.{mode.name}.label")
    exact = mode.lab[0]
    engine = tr.t(f"lab.engine.{allocator}")
    params = {
        "mode": label, "engine": tr.t(f"lab.engine.{exact}"), "blocks": game_rules.BLOCKS_PER_REQUEST,
        "tokens": block, "queue": game_rules.QUEUE_MAX, "deadline": f"{game_rules.DEADLINE_MS / 1000:g}",
        "cpu": game_rules.CPU_BLOCKS,
    }
    paragraphs = []
    if allocator != exact and not short:
        paragraphs.append(tr.t("lab.game.like", engine=engine, mode=label, exact=params["engine"]))
    paragraphs.append(tr.t(f"lab.game{'_short' if short else ''}.{mode.name}", **params))
    return tr.t("lab.game_title", mode=label), paragraphs



def sharing_label(tr: Catalogue, sharing: Sharing) -> str:
    """The sharing scenario in words ("parallel sampling, n = 4"), in `tr`'s language."""
    if sharing.sampling == "parallel":
        return tr.t("lab.sharing.parallel", n=sharing.n)
    if sharing.sampling == "beam":
        return tr.t("lab.sharing.beam", n=sharing.n)
    if sharing.prefix:
        name = next((k for k, v in PREFIXES.items() if v == sharing.prefix), "")
        key = "lab.sharing.prefix_named" if name else "lab.sharing.prefix"
        return tr.t(key, tokens=sharing.prefix, name=name)
    return tr.t("lab.sharing.basic")


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
        self.language = self.tr.code
        self.counters: list[tuple[str, int, theme.Colour, tuple[int, int], str]] | None = None
        canvas: tuple[int, int] = size if size is not None else getattr(app, "canvas_size", theme.CANVAS_SIZE)
        width, height = canvas
        self.layout: LabLayout = lab_layout(width, height)
        self.seed = seed
        self.dataset = "sharegpt"
        self.block = BLOCK_SIZE
        self.contiguous = DEFAULT_BASELINE  # the left-hand engine; the right-hand one is REFERENCE
        self.page = 0  # INFO_PAGES: what the info panel shows while nothing is selected
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
    def tr(self) -> Catalogue:
        """The app's language (English for a host without one)."""
        tr = getattr(self.app, "tr", None)
        return tr if isinstance(tr, Catalogue) else catalogue(DEFAULT_LANGUAGE)

    def language_changed(self) -> None:
        self.language = self.tr.code
        self._words()

    def _words(self) -> None:
        """Everything worded once per trace: the title and the help lines, in the app's language."""
        tr = self.tr
        spec = DATASETS[self.dataset]
        self.title = tr.t("lab.subtitle", dataset=spec.title, rate=f"{self.rate:g}",
                          sharing=sharing_label(tr, self.sharing))
        help_key = "lab.help_short." if self.layout.portrait else "lab.help."
        sharing = self.sharing
        text = tr.t(help_key + self.scenario, n=FAN_OUT, tokens=PREFIXES[SCENARIO_PREFIX], refs=LEGEND_REFS,
                    left=tr.t(f"lab.engine.{self.contiguous}"), right=tr.t(f"lab.engine.{REFERENCE}"),
                    prefix=sharing.prefix)
        self.help_lines = wrap(text, self.layout.small, self.layout.info[2] - 20)
        self.chrome = None
        self.plot_surface = None
        self.info_lines = None
        self.counters = None

    @property
    def sharing(self) -> Sharing:
        return scenario(self.scenario, FAN_OUT)

    @property
    def config(self) -> LabConfig:
        return LabConfig(block_size=self.block, sharing=self.sharing)

    @property
    def allocators(self) -> tuple[str, str]:
        """The engines of the left-hand and the right-hand map (rows of the LAB's registry)."""
        return self.contiguous, REFERENCE

    @property
    def accents(self) -> tuple[theme.Colour, theme.Colour]:
        left, right = self.allocators
        return accent(left), accent(right)

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
        self.counters = None
        self.selected = None
        self.selected_cell = None
        self.info_lines = None
        self._words()

    def prepare(self) -> None:
        """One frame's share of setting up: a slice of the trace, or one engine."""
        builder = self.builders[self._trace_key(self.seed)]
        if not builder.done:
            builder.extend(TRACE_CHUNK)
            return
        self.trace = builder.requests
        i = len(self.sides)
        allocator = self.allocators[i]
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
                pygame.K_s: "scenario", pygame.K_c: "contiguous", pygame.K_r: "restart", pygame.K_g: "game",
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
            i = BASELINE_CHOICES.index(self.contiguous) if self.contiguous in BASELINE_CHOICES else -1
            self.contiguous = BASELINE_CHOICES[(i + 1) % len(BASELINE_CHOICES)]
            self.restart()
        elif name == "game":
            self.page = (self.page + 1) % len(INFO_PAGES)
            self.selected = None
            self.selected_cell = None
            self.info_lines = None
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
        if pygame.Rect(self.layout.info).collidepoint(pos):  # the info panel turns its page
            self.command("game")
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
        tr = self.tr
        if builder.done:
            message = tr.t("lab.starting")
        else:
            message = tr.t("lab.drawing", n=tr.num(TRACE_REQUESTS), percent=tr.pct(len(builder.requests) / TRACE_REQUESTS))
        for i in range(2):
            x, y, w, h = self._map_area(i)
            self.text.blit(surface, message, self.layout.body, theme.TEXT_DIM, (x + w // 2, y + h // 2), "center")

    def _draw_chrome(self) -> pygame.Surface:
        """Everything that changes only on a click: background, panels, buttons, titles."""
        lay = self.layout
        s = pygame.Surface(lay.size)
        s.fill(theme.BG)
        t, tr = self.text, self.tr
        pygame.draw.rect(s, theme.PANEL, lay.header)
        pygame.draw.line(s, theme.PANEL_EDGE, (0, lay.header[3]), (lay.width, lay.header[3]))
        right = t.blit(s, tr.t("lab.title"), lay.large, theme.CYAN, (12, 8)).right
        if not lay.portrait:
            t.blit(s, fit(self.title, lay.small, lay.width - right - 170), lay.small, theme.TEXT_DIM,
                   (right + 12, 11))
        baseline = tr.t(f"lab.baseline.{self.contiguous}")
        reference = tr.t(f"lab.baseline.{REFERENCE}")
        labels = {
            "pause": tr.t("lab.run" if self.paused else "lab.pause"),
            "dataset": DATASETS[self.dataset].title.replace(" En-De", ""),
            "scenario": tr.t(f"lab.scenario.{self.scenario}", n=FAN_OUT),
            "contiguous": baseline if lay.portrait else tr.t("lab.vs_paged", baseline=baseline, reference=reference),
            "restart": tr.t("lab.new" if lay.portrait else "lab.new_trace"),
            "back": tr.t("lab.back"),
        }
        hover = hit(self.buttons, self.hover) if self.hover else None
        for b in self.buttons:
            active = (b.name == "pause" and self.paused) or b.name == f"x{self.speed}"
            b.draw(s, t, active=active, hover=b is hover, label=labels.get(b.name), size=lay.small)
        for i, (allocator, colour) in enumerate(zip(self.allocators, self.accents)):
            draw_panel(s, lay.maps[i], t, edge=colour)
            x, y, w, _ = lay.maps[i]
            kind = tr.t(f"lab.kind.{lab_allocator(allocator).kind}", n=self.block)
            t.blit(s, tr.t(f"lab.engine.{allocator}"), lay.body, colour, (x + 8, y + 4))
            t.blit(s, kind, lay.small, theme.TEXT_DIM, (x + w - 8, y + 6), "topright")
        if lay.plot is not None:
            draw_panel(s, lay.plot, t)
        draw_panel(s, lay.info, t)
        return s

    def _counters(self) -> list[tuple[str, int, theme.Colour, tuple[int, int], str]]:
        """Live counters of both engines and the clock: (text, size, colour, position, anchor)."""
        lay = self.layout
        small, body = lay.small, lay.body
        tr = self.tr
        items = []
        seqs = self.sharing.seqs
        for i, side in enumerate(self.sides):
            x, y, w, h = lay.maps[i]
            sim = side.sim
            row1 = y + h - lay.map_bottom_pad + 4
            row2 = row1 + lay.line + 2
            running = (tr.t("lab.running_fan", n=len(sim.running), seqs=seqs) if seqs > 1
                       else tr.t("lab.running", n=len(sim.running)))
            items += [
                (running, body, theme.TEXT, (x + 10, row1), "topleft"),
                (tr.t("lab.waiting", n=len(sim.waiting)), body, theme.TEXT_DIM, (x + w // 2 - 20, row1), "topleft"),
                (tr.t("lab.waste", percent=tr.pct(side.waste())), body, theme.AMBER, (x + w - 10, row1), "topright"),
                (tr.t("lab.tokens_per_s", value=f"{side.tokens_per_s():,.0f}"), small, theme.GREEN, (x + 10, row2),
                 "topleft"),
            ]
            if sim.memory_manager.shares and self.sharing.shares:
                extra = tr.t("lab.sharing_saves", percent=tr.pct(side.saving()), n=sim.cow_copies)
                items.append((extra, small, theme.VIOLET, (x + w - 10, row2), "topright"))
            else:
                extra = (tr.t("lab.preempted", n=sim.preemptions) if sim.memory_manager.preempts
                         else tr.t("lab.finished", n=sim.finished))
                items.append((extra, small, theme.TEXT_DIM, (x + w - 10, row2), "topright"))
        status = tr.t("lab.paused") if self.paused else f"x{self.speed}"
        items.append((tr.t("lab.clock", t=f"{self.clock:6.1f}", status=status), small, theme.AMBER,
                      (lay.width - 12, 10), "topright"))
        return items

    def _draw_plot(self) -> pygame.Surface:
        lay = self.layout
        assert lay.plot is not None
        x, y, w, h = lay.plot
        s = pygame.Surface((w, h))
        s.fill(theme.PANEL)
        pygame.draw.rect(s, theme.PANEL_EDGE, (0, 0, w, h), 1, border_radius=4)
        t = self.text
        t.blit(s, self.tr.t("lab.plot_title"), lay.small, theme.PANEL_TITLE, (7, 4))
        t.blit(s, self.tr.t("lab.plot_window", s=f"{PLOT_POINTS * SAMPLE_EVERY_S:.0f}"), lay.small, theme.TEXT_DIM,
               (w - 8, 4), "topright")
        area = pygame.Rect(36, 26, w - 46, h - 56)
        pygame.draw.rect(s, theme.BOARD_BG, area)
        top = self.plot_max * 1.15
        for frac in (0.0, 0.5, 1.0):
            yy = area.bottom - round(area.height * frac)
            pygame.draw.line(s, theme.GRID_LINE, (area.x, yy), (area.right, yy))
            t.blit(s, f"{top * frac:.0f}", lay.small, theme.TEXT_DIM, (area.x - 4, yy), "midright")
        if len(self.samples) >= 2:
            step = area.width / (PLOT_POINTS - 1)
            for k, colour in enumerate(self.accents):
                points = [(area.x + j * step, area.bottom - area.height * v[k] / top)
                          for j, v in enumerate(self.samples)]
                pygame.draw.lines(s, colour, False, points, 2)
        legend_y = h - 24
        tr = self.tr
        for k, (allocator, colour) in enumerate(zip(self.allocators, self.accents)):
            label = tr.t(f"lab.engine.{allocator}")
            lx = 12 + k * 186
            if self.samples:
                label = tr.t("lab.plot_avg", label=label, value=f"{self.sample_sums[k] / len(self.samples):.1f}")
            pygame.draw.line(s, colour, (lx, legend_y + 8), (lx + 18, legend_y + 8), 3)
            t.blit(s, label, lay.small, theme.TEXT, (lx + 24, legend_y + 1))
        return s

    # ------------------------------------------------------------------ info panel
    def _info(self) -> list[tuple[str, theme.Colour]]:
        """The info panel's lines for the current selection (title first)."""
        width = self.layout.info[2] - 20
        small = self.layout.small
        tr = self.tr
        if self.selected_cell is not None:
            k, cell = self.selected_cell
            side = self.sides[k]
            if side.sim.has_blocks and side.view is not None:
                return self._block_info(side, cell, width)
        rid = self.selected
        if rid is None:
            return self._page(width)
        req = self.by_rid[rid]
        lines: list[tuple[str, theme.Colour]] = [
            (tr.t("lab.request", id=rid), request_colour(rid)),
            (tr.t("lab.prompt_output", prompt=req.prompt, output=req.output), theme.TEXT_DIM),
        ]
        for side, colour in zip(self.sides, self.accents):
            lines += self._request_lines(side.sim, rid, colour, width)
        return lines

    def _page(self, width: int) -> list[tuple[str, theme.Colour]]:
        """The info panel with nothing selected: how to read the maps, or an engine in the game."""
        tr = self.tr
        page = INFO_PAGES[self.page]
        if page != "help":
            k = int(page[-1])
            words = game_words(tr, self.allocators[k], self.block, short=self.layout.portrait)
            if words is not None:
                title, paragraphs = words
                lines = [(title, self.accents[k])]
                for paragraph in paragraphs:
                    lines += [(line, theme.TEXT) for line in wrap(paragraph, self.layout.small, width)]
                return lines
        return [(tr.t("lab.how_to_read"), theme.PANEL_TITLE)] + [(line, theme.TEXT) for line in self.help_lines]

    def _request_lines(self, sim: Simulator, rid: int, colour: theme.Colour, width: int) -> list[tuple[str, theme.Colour]]:
        """Where request ``rid`` is in one engine's memory: its block table, or its ranges."""
        tr = self.tr
        small = self.layout.small
        label = tr.t(f"lab.engine.{sim.allocator}")
        run = sim.running.get(rid)
        if run is None:
            return [(part, colour) for part in wrap(tr.t("lab.where", label=label, where=self._where(sim, rid)),
                                                    small, width)]
        if sim.has_blocks:
            tables = sim.pool.tables
            table = tables[(rid, 0)] if (rid, 0) in tables else next(t for s, t in tables.items() if s[0] == rid)
            lines = [(part, colour) for part in wrap(
                tr.t("lab.table_summary", label=label, tokens=sim.length(run), blocks=len(table)), small, width)]
            return lines + [(line, theme.TEXT) for line in wrap("  ".join(f"{i}>{b}" for i, b in enumerate(table)),
                                                                 small, width)]
        ranges = ", ".join(f"{s}-{s + run.reserve - 1}" for s in run.starts[:2])
        more = f" (+{len(run.starts) - 2})" if len(run.starts) > 2 else ""
        line = tr.t("lab.slots", label=label, ranges=ranges, more=more, used=sim.length(run), reserve=run.reserve)
        return [(part, colour) for part in wrap(line, small, width)]  # "n of m used" is the point

    def _block_info(self, side: Side, cell: int, width: int) -> list[tuple[str, theme.Colour]]:
        small = self.layout.small
        tr = self.tr
        view = side.view
        assert view is not None
        pool = side.sim.pool
        seqs = view.pointing_at(cell)
        refs = pool.refs[cell]
        if cell in pool.pinned:
            title = tr.t("lab.block_prefix", cell=cell, refs=refs)
            colour = theme.VIOLET
        else:
            title = tr.t("lab.block_ref_one" if refs == 1 else "lab.block_refs", cell=cell, refs=refs)
            colour = request_colour(seqs[0][0]) if seqs else theme.TEXT
        lines: list[tuple[str, theme.Colour]] = [(title, colour)]
        by_request: dict[int, list[int]] = {}
        for rid, i in seqs:
            by_request.setdefault(rid, []).append(i)
        if by_request:
            noun = self.scenario if self.scenario in ("beam", "parallel") else "other"
            if len(by_request) == 1:
                rid, ids = next(iter(by_request.items()))
                text = (tr.t(f"lab.pointed.{noun}", n=len(ids), id=rid) if len(ids) > 1
                        else tr.t("lab.held_alone", id=rid))
            else:
                text = tr.t("lab.pointed_requests", n=len(by_request),
                            ids=", ".join(f"#{r}" for r in sorted(by_request)))
            lines += [(line, theme.TEXT) for line in wrap(text, small, width)[:2]]
        if refs > 1:
            lines.append((fit(tr.t("lab.shared_copy"), small, width), theme.TEXT_DIM))
        first = seqs[0][0] if seqs else None
        if first is not None and first in side.sim.running:
            table = view.sequences[seqs[0]]
            lines.append((tr.t("lab.table_of", id=first, tokens=side.sim.length(side.sim.running[first])),
                          accent(side.allocator)))
            lines += [(line, theme.TEXT) for line in wrap("  ".join(f"{i}>{b}" for i, b in enumerate(table)),
                                                          small, width)]
        return lines

    def _draw_info(self, surface: pygame.Surface) -> None:
        t = self.text
        lay = self.layout
        x, y, w, h = lay.info
        key = (self.selected, self.selected_cell, self.page)
        if self.info_lines is None or self.info_lines[0] != key:
            self.info_lines = (key, self._info())
        lines = self.info_lines[1]
        legend = self.selected is None and self.selected_cell is None and INFO_PAGES[self.page] == "help"
        bottom = y + h - 6 - (2 * lay.line + 6 if legend else 0)
        room = max(1, (bottom - y - 24) // lay.line)
        body = lines[1:]
        if len(body) > room:
            tables = any(">" in line for line, _ in body)
            body = body[: room - 1] + [(self.tr.t("lab.table_more"), theme.TEXT_DIM)] if tables \
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
        tr = self.tr
        if rid in sim.running:
            return tr.t("lab.state.running")
        if rid in sim.completed:
            return tr.t("lab.state.finished")
        if rid in sim.generated:
            return tr.t("lab.state.preempted")
        return tr.t("lab.state.waiting" if self.by_rid[rid].arrival <= sim.clock else "lab.state.future")

    def _legend(self, surface: pygame.Surface, x: int, y: int) -> None:
        t = self.text
        lay = self.layout
        size = 14
        if self.legend_tiles is None:
            colour = request_colour(3)
            self.legend_tiles = (paint_tile(colour, size, size), paint_tile(colour, size, 0),
                                 paint_tile(colour, size, size, LEGEND_REFS,
                                            digit=self.sides[1].map.grid.cell > DIGIT_MIN_CELL))
        tr = self.tr
        items = [(self.legend_tiles[0], tr.t("lab.legend.tokens")), (self.legend_tiles[1], tr.t("lab.legend.reserved")),
                 (None, tr.t("lab.legend.free"))]
        if self.sharing.shares:
            items.append((self.legend_tiles[2], tr.t("lab.legend.shared", n=LEGEND_REFS)))
        xx = x
        for tile, label in items:
            if tile is None:
                pygame.draw.rect(surface, FREE_CELL, (xx, y + 1, size, size))
            else:
                surface.blit(tile, (xx, y + 1))
            r = t.blit(surface, label, lay.small, theme.TEXT, (xx + size + 4, y))
            xx = r.right + 10
        keys = tr.t("lab.keys_short" if lay.portrait else "lab.keys", **KEY_HINTS)
        t.blit(surface, fit(keys, lay.small, lay.info[2] - 20), lay.small, theme.TEXT_DIM, (x, y + lay.line + 2))


if __name__ == "__main__":
    # `python -m ui.lab_scene`: the headless tool lives in ui.lab_cli (not in the web bundle).
    # This block runs only when this file is the script (__main__), never when the module is
    # imported, so it is an entry point and no import circle: ui.lab_cli imports ui.lab_scene
    # (a module of its own, apart from this script), never the reverse.
    import sys

    from ui.lab_cli import run

    raise SystemExit(run(sys.argv[1:]))
