"""LAB screen: one request trace served by a contiguous and a paged KV cache, side by side.

Both maps show the same memory (the paper's 15,728 token slots, cut into cells
of one block). A cell is coloured by the request that owns it: solid where it
holds tokens, hatched where it is reserved but still empty, dark when free.
The frame budget is kept by spreading work over frames: a new trace is drawn
a slice per frame (the next one is drawn ahead, in the background), the two
engines are built on separate frames, each engine advances under a wall-clock
budget, one map is refreshed per frame and repaints at most a fixed number of
cells (the rest follow on the next refresh), and counters and the plot are
redrawn ten times a second.
"""
from __future__ import annotations

import statistics
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import ne

import pygame

from engine.lab import DATASETS, LabConfig, Request, Simulator
from engine.lab.paper import FIG13_RATE, LABELS
from engine.lab.workload import stream
from ui import theme
from ui.scene import Scene
from ui.text import TextCache, fit, wrap
from ui.widgets import Button, draw_panel, hit

RectT = tuple[int, int, int, int]

DATASET_CHOICES = ("sharegpt", "alpaca")
BLOCK_CHOICES = (8, 16, 32, 64)
CONTIGUOUS_CHOICES = ("oracle", "pow2", "max")
SPEEDS = (1, 4, 16)
TRACE_REQUESTS = 3000
TRACE_CHUNK = 150  # requests drawn per frame while the screen waits for a trace
PREFETCH_CHUNK = 25  # requests of the next trace drawn per frame in the background
MAX_STEPS_PER_UPDATE = 300  # engine steps per side and frame, so a frame never stalls
SIM_BUDGET_S = 0.0012  # wall-clock time per side and frame for engine steps
MAX_LAG_S = 2.0  # simulated seconds the engines may fall behind before the clock waits
MAX_PAINT = 140  # map cells repainted per refresh; the rest follow on the next one
REDRAW_EVERY = 6  # frames between redraws of counters and plot (10 Hz)
SAMPLE_EVERY_S = 0.25  # simulated seconds between points of the running-requests plot
PLOT_POINTS = 240
RATE_WINDOW_S = 5.0  # tokens/s is averaged over this much simulated time

HEADER: RectT = (0, 0, theme.CANVAS_W, 34)
MAP_PANELS: tuple[RectT, RectT] = ((10, 78, 385, 300), (405, 78, 385, 300))
PLOT: RectT = (10, 386, 385, 186)
INFO: RectT = (405, 386, 385, 186)
MAP_TOP_PAD = 24
MAP_BOTTOM_PAD = 44

FREE_CELL: theme.Colour = (20, 26, 48)
LEFT_ACCENT = theme.CYAN
RIGHT_ACCENT = theme.MAGENTA

HELP_TEXT = (
    "Same requests, same memory. Contiguous engines reserve a range per request up front; "
    "the paged engine takes one block at a time from anywhere. Click a block to follow its request."
)


PALETTE_SIZE = 24


def _palette() -> tuple[theme.Colour, ...]:
    """Hues a golden angle apart, so neighbouring requests look clearly different."""
    colours = []
    for k in range(PALETTE_SIZE):
        c = pygame.Color(0)
        c.hsva = ((k * 137.508) % 360, 62 + (k % 3) * 12, 92 - (k % 2) * 14, 100)
        colours.append((c.r, c.g, c.b))
    return tuple(colours)


PALETTE = _palette()


def request_colour(rid: int) -> theme.Colour:
    return PALETTE[rid % PALETTE_SIZE]


def paint_tile(colour: theme.Colour, size: int, solid: int) -> pygame.Surface:
    """A cell: its first `solid` columns hold tokens, the rest is reserved (hatched)."""
    tile = pygame.Surface((size, size))
    tile.fill(theme.mix(colour, theme.BOARD_BG, 0.78))
    line = theme.mix(colour, theme.BOARD_BG, 0.25)
    for k in range(-size, size, 3):  # diagonal hatching
        pygame.draw.line(tile, line, (k, size - 1), (k + size - 1, 0))
    if solid:
        tile.fill(colour, (0, 0, solid, size))
    return tile


@dataclass(frozen=True)
class Grid:
    """Cell geometry of a memory map inside its area."""

    x: int
    y: int
    cols: int
    rows: int
    cell: int
    cells: int

    @classmethod
    def fit(cls, cells: int, area: RectT) -> "Grid":
        ax, ay, aw, ah = area
        for size in range(40, 2, -1):
            cols = aw // size
            rows = -(-cells // cols)
            if rows * size <= ah:
                break
        x = ax + (aw - cols * size) // 2
        y = ay + (ah - rows * size) // 2
        return cls(x, y, cols, rows, size, cells)

    def rect(self, i: int) -> pygame.Rect:
        r, c = divmod(i, self.cols)
        return pygame.Rect(self.x + c * self.cell, self.y + r * self.cell, self.cell - 1, self.cell - 1)

    def index_at(self, pos: tuple[int, int]) -> int | None:
        dx, dy = pos[0] - self.x, pos[1] - self.y
        if dx < 0 or dy < 0:
            return None
        c, r = dx // self.cell, dy // self.cell
        if c >= self.cols:
            return None
        i = r * self.cols + c
        return i if i < self.cells else None


FREE = -1  # cell state of free memory
SOLID_BITS = 6  # a cell state is rid << SOLID_BITS | solid width (cells are at most 40 px)


def cell_state(rid: int, solid: int) -> int:
    """A cell's picture as one int: which request owns it and how many pixel columns hold tokens.

    Ints, not tuples, so a refresh of a thousand cells leaves nothing for the garbage collector.
    """
    return rid << SOLID_BITS | solid


def state_owner(state: int) -> int | None:
    return None if state < 0 else state >> SOLID_BITS


class MemoryMap:
    """A cached picture of one KV cache; only changed cells are repainted."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.states: list[int] = [FREE] * grid.cells
        self.surface = pygame.Surface((grid.cols * grid.cell, grid.rows * grid.cell))
        self.surface.fill(theme.PANEL)
        self.tiles: dict[int, pygame.Surface] = {}
        self.free_tile = pygame.Surface((grid.cell - 1, grid.cell - 1))
        self.free_tile.fill(FREE_CELL)
        self.owned: dict[int, Sequence[int]] = {}
        self.positions = [(c * grid.cell, r * grid.cell) for r in range(grid.rows) for c in range(grid.cols)]
        # Every cell starts free: one row of tiles, copied down, then the unused end of the last row cleared.
        row = pygame.Surface((grid.cols * grid.cell, grid.cell))
        row.fill(theme.PANEL)
        row.blits([(self.free_tile, (c * grid.cell, 0)) for c in range(grid.cols)], False)
        self.surface.blits([(row, (0, r * grid.cell)) for r in range(grid.rows)], False)
        last = grid.cells - (grid.rows - 1) * grid.cols
        self.surface.fill(theme.PANEL, (last * grid.cell, (grid.rows - 1) * grid.cell,
                                        (grid.cols - last) * grid.cell, grid.cell))

    def _tile(self, state: int) -> pygame.Surface:
        if state < 0:
            return self.free_tile
        rid, solid = state >> SOLID_BITS, state & ((1 << SOLID_BITS) - 1)
        key = cell_state(rid % PALETTE_SIZE, solid)  # at most PALETTE_SIZE x cell tiles, made once
        tile = self.tiles.get(key)
        if tile is None:
            tile = self.tiles[key] = paint_tile(request_colour(rid), self.grid.cell - 1, solid)
        return tile

    def update(self, states: list[int], owned: dict[int, Sequence[int]], limit: int | None = MAX_PAINT) -> int:
        """Repaint up to ``limit`` cells whose state changed; return how many still differ.

        Cells left over keep their old state here, so the next refresh finds them again.
        """
        old = self.states
        changed = list(compress(range(len(states)), map(ne, states, old)))
        total = len(changed)
        if limit is not None and total > limit:
            # A stride rather than the first cells, so every part of the map keeps moving.
            changed = changed[:: -(-total // limit)]
        tile, positions, blit = self._tile, self.positions, self.surface.blit
        for i in changed:
            state = old[i] = states[i]
            blit(tile(state), positions[i])
        self.owned = owned
        return total - len(changed)

    def owner(self, i: int) -> int | None:
        """The request shown in cell ``i`` (None: free)."""
        return state_owner(self.states[i])

    def solid(self, i: int) -> int:
        """How many pixel columns of cell ``i`` hold tokens (0: free)."""
        state = self.states[i]
        return 0 if state < 0 else state & ((1 << SOLID_BITS) - 1)

    def owner_at(self, pos: tuple[int, int]) -> int | None:
        i = self.grid.index_at(pos)
        return None if i is None else self.owner(i)

    def draw(self, surface: pygame.Surface, selected: int | None) -> None:
        g = self.grid
        surface.blit(self.surface, (g.x, g.y))
        if selected is not None:
            for i in self.owned.get(selected, ()):
                pygame.draw.rect(surface, (255, 255, 255), g.rect(i).inflate(2, 2), 2)


class Side:
    """One engine of the comparison: its simulator, map and live counters."""

    def __init__(self, allocator: str, trace, config: LabConfig, area: RectT) -> None:
        self.allocator = allocator
        self.sim = Simulator(trace, allocator, config)
        self.block = config.block_size
        self.cells = config.slots // config.block_size
        self.map = MemoryMap(Grid.fit(self.cells, area))
        self.history: deque[tuple[float, int]] = deque()
        self.dirty = True

    def advance_to(self, clock: float, budget_s: float = SIM_BUDGET_S) -> None:
        """Step the engine towards ``clock``, for at most ``budget_s`` of wall-clock time."""
        steps = 0
        sim = self.sim
        deadline = time.perf_counter() + budget_s
        while (sim.clock < clock and not sim.done and steps < MAX_STEPS_PER_UPDATE
               and (steps == 0 or time.perf_counter() < deadline)):
            sim.step(1)
            steps += 1
        if steps:
            self.dirty = True
            self.history.append((sim.clock, sim.tokens_generated))
            while len(self.history) > 2 and self.history[0][0] < sim.clock - RATE_WINDOW_S:
                self.history.popleft()

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

    def refresh_map(self, limit: int | None = MAX_PAINT) -> None:
        """Bring the map up to the engine's state, repainting at most ``limit`` cells (None: all)."""
        if not self.dirty:
            return
        width = self.map.grid.cell - 1
        states = [FREE] * self.cells
        owned: dict[int, Sequence[int]] = {}
        sim, block = self.sim, self.block
        if sim.paged:
            for rid, table in sim.block_tables().items():
                length = sim.length(sim.running[rid])
                full = cell_state(rid, width)
                for b in table:
                    states[b] = full
                rest = length % block
                if rest:
                    states[table[-1]] = cell_state(rid, width * rest // block)
                owned[rid] = table
        else:
            half = block // 2
            for rid, run in sim.running.items():
                start, reserve = run.start, run.reserve
                first = max(0, -(-(start - half) // block))
                last = min(self.cells, -(-(start + reserve - half) // block))
                if last <= first:
                    continue
                filled = start + sim.length(run)
                states[first:last] = [cell_state(rid, 0)] * (last - first)
                full_end = min(last, max(first, (filled - block) // block + 1))  # cells wholly below `filled`
                states[first:full_end] = [cell_state(rid, width)] * (full_end - first)
                for i in range(full_end, last):
                    held = min(block, max(0, filled - i * block))
                    if not held:
                        break
                    states[i] = cell_state(rid, width * held // block)
                owned[rid] = range(first, last)
        self.dirty = self.map.update(states, owned, limit) > 0


class TraceBuilder:
    """A trace drawn a slice at a time, so drawing 3,000 requests never stalls a frame."""

    def __init__(self, dataset: str, seed: int) -> None:
        self.key = (dataset, seed)
        self.requests: list[Request] = []
        self._source: Iterator[Request] = stream(dataset, FIG13_RATE[dataset], seed)

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
    """The LAB: memory maps, counters, a plot of running requests and a block-table inspector."""

    def __init__(self, app, seed: int = 1) -> None:
        self.app = app
        self.text: TextCache = getattr(app, "text", None) or TextCache()
        self.seed = seed
        self.dataset = "sharegpt"
        self.block = 16
        self.contiguous = "oracle"
        self.speed = 4
        self.paused = False
        self.sim_budget_s = SIM_BUDGET_S
        self.selected: int | None = None
        self.hover: tuple[int, int] | None = None
        self.chrome: pygame.Surface | None = None
        self.plot_surface: pygame.Surface | None = None
        self.legend_tiles: tuple[pygame.Surface, pygame.Surface] | None = None
        self.help_lines = wrap(HELP_TEXT, theme.SMALL, INFO[2] - 20)
        self.block_lines: tuple[tuple[int, int], list[str]] | None = None
        self.builders: dict[tuple[str, int], TraceBuilder] = {}
        self.buttons = self._make_buttons()
        self.restart()

    # ------------------------------------------------------------------ setup
    def _make_buttons(self) -> list[Button]:
        specs = [
            ("pause", 70, "PAUSE", "Space"),
            ("x1", 40, "x1", "1"),
            ("x4", 40, "x4", "2"),
            ("x16", 44, "x16", "3"),
            ("dataset", 118, "", "D"),
            ("block", 92, "", "B"),
            ("contiguous", 128, "", "C"),
            ("restart", 88, "NEW TRACE", "R"),
            ("back", 112, "BACK", "Esc / L"),
        ]
        x, buttons = 10, []
        for name, width, label, hint in specs:
            buttons.append(Button(name, (x, 40, width, 32), label, hint))
            x += width + 6
        return buttons

    @property
    def ready(self) -> bool:
        """Both engines are built and running."""
        return len(self.sides) == 2

    def restart(self) -> None:
        """Serve the current dataset's trace afresh; the engines are built over the next frames."""
        spec = DATASETS[self.dataset]
        self.rate = FIG13_RATE[self.dataset]
        key = (self.dataset, self.seed)
        # Keep only this trace and the one drawn ahead for the next seed.
        self.builders = {k: b for k, b in self.builders.items() if k in (key, (self.dataset, self.seed + 1))}
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
        self.block_lines = None
        self.title = f"{spec.title} at {self.rate:g} req/s, block {self.block}"
        self.chrome = None

    def prepare(self) -> None:
        """One frame's share of setting up: a slice of the trace, or one engine."""
        builder = self.builders[(self.dataset, self.seed)]
        if not builder.done:
            builder.extend(TRACE_CHUNK)
            return
        self.trace = builder.requests
        config = LabConfig(block_size=self.block)
        i = len(self.sides)
        allocator = self.contiguous if i == 0 else "paged"
        side = Side(allocator, self.trace, config, self._map_area(i))
        side.refresh_map(limit=None)
        self.sides.append(side)
        if self.ready:
            self.by_rid = {r.rid: r for r in self.trace}
            self.chrome = None

    @staticmethod
    def _map_area(i: int) -> RectT:
        x, y, w, h = MAP_PANELS[i]
        return (x + 8, y + MAP_TOP_PAD, w - 16, h - MAP_TOP_PAD - MAP_BOTTOM_PAD)

    # ------------------------------------------------------------------ input
    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.KEYDOWN:
            key = event.key
            actions = {
                pygame.K_ESCAPE: "back", pygame.K_l: "back", pygame.K_SPACE: "pause", pygame.K_p: "pause",
                pygame.K_1: "x1", pygame.K_2: "x4", pygame.K_3: "x16", pygame.K_d: "dataset",
                pygame.K_b: "block", pygame.K_c: "contiguous", pygame.K_r: "restart",
            }
            if key in actions:
                self.command(actions[key])
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
        elif name == "block":
            self.block = BLOCK_CHOICES[(BLOCK_CHOICES.index(self.block) + 1) % len(BLOCK_CHOICES)]
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
        for side in self.sides:
            if pygame.Rect(side.map.grid.x, side.map.grid.y, side.map.surface.get_width(),
                           side.map.surface.get_height()).collidepoint(pos):
                self.selected = side.map.owner_at(pos)
                self.block_lines = None
                return

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        if not self.ready:
            self.prepare()
            return
        if self.paused:
            return
        if all(side.sim.done for side in self.sides):
            self.seed += 1
            self.restart()
            return
        # Draw the next trace ahead, a little each frame, so the restart at the end is instant.
        self.builders.setdefault((self.dataset, self.seed + 1), TraceBuilder(self.dataset, self.seed + 1))
        self.builders[(self.dataset, self.seed + 1)].extend(PREFETCH_CHUNK)
        self.clock += dt_ms / 1000.0 * self.speed
        for side in self.sides:
            side.advance_to(self.clock, self.sim_budget_s)
        # Engines that cannot keep up (a slow machine at x16) slow the clock rather than fall behind for good.
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
            if self.plot_stale:  # at x1 a new point comes only every 15 frames
                self.plot_surface = None
                self.plot_stale = False
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

    def draw(self, surface: pygame.Surface) -> None:
        if self.chrome is None:
            self.chrome = self._draw_chrome()
        surface.blit(self.chrome, (0, 0))
        if not self.ready:
            self._draw_preparing(surface)
            return
        for side in self.sides:
            side.map.draw(surface, self.selected)
        if self.counters is None:
            self.counters = self._counters()
        t = self.text
        for text, size, colour, pos, anchor in self.counters:
            t.blit(surface, text, size, colour, pos, anchor)
        if self.plot_surface is None:
            self.plot_surface = self._draw_plot()
        surface.blit(self.plot_surface, PLOT[:2])
        self._draw_info(surface)

    def _draw_preparing(self, surface: pygame.Surface) -> None:
        builder = self.builders[(self.dataset, self.seed)]
        if builder.done:
            message = "starting the engines"
        else:
            message = f"drawing {TRACE_REQUESTS:,} requests ... {len(builder.requests) / TRACE_REQUESTS:.0%}"
        for i in range(2):
            x, y, w, h = self._map_area(i)
            self.text.blit(surface, message, theme.BODY, theme.TEXT_DIM, (x + w // 2, y + h // 2), "center")

    def _draw_chrome(self) -> pygame.Surface:
        """Everything that changes only on a click: background, panels, buttons, legend."""
        s = pygame.Surface(theme.CANVAS_SIZE)
        s.fill(theme.BG)
        t = self.text
        pygame.draw.rect(s, theme.PANEL, HEADER)
        pygame.draw.line(s, theme.PANEL_EDGE, (0, HEADER[3]), (theme.CANVAS_W, HEADER[3]))
        t.blit(s, "MEMORY LAB", theme.LARGE, theme.CYAN, (12, 8))
        t.blit(s, fit(self.title + "  |  OPT-13B, 15,728 KV slots", theme.SMALL, 500), theme.SMALL,
               theme.TEXT_DIM, (150, 11))
        labels = {
            "pause": "RUN" if self.paused else "PAUSE",
            "dataset": DATASETS[self.dataset].title,
            "block": f"BLOCK {self.block}",
            "contiguous": LABELS[self.contiguous].replace("Orca (", "").rstrip(")").upper() + " vs PAGED",
        }
        hover = hit(self.buttons, self.hover) if self.hover else None
        for b in self.buttons:
            active = (b.name == "pause" and self.paused) or b.name == f"x{self.speed}"
            b.draw(s, t, active=active, hover=b is hover, label=labels.get(b.name))
        for i in range(2):
            allocator = self.contiguous if i == 0 else "paged"
            accent = LEFT_ACCENT if i == 0 else RIGHT_ACCENT
            draw_panel(s, MAP_PANELS[i], t, edge=accent)
            x, y, w, _ = MAP_PANELS[i]
            kind = "contiguous ranges" if i == 0 else f"blocks of {self.block} tokens"
            t.blit(s, LABELS[allocator], theme.BODY, accent, (x + 8, y + 4))
            t.blit(s, kind, theme.SMALL, theme.TEXT_DIM, (x + w - 8, y + 6), "topright")
        draw_panel(s, PLOT, t, "RUNNING REQUESTS")
        draw_panel(s, INFO, t)
        return s

    def _counters(self) -> list[tuple[str, int, theme.Colour, tuple[int, int], str]]:
        """Live counters of both engines and the clock: (text, size, colour, position, anchor).

        Recomputed ten times a second, so their text is rendered at most that often.
        """
        items = []
        for i, side in enumerate(self.sides):
            x, y, w, h = MAP_PANELS[i]
            sim = side.sim
            row1 = y + h - MAP_BOTTOM_PAD + 6
            row2 = row1 + 18
            extra = f"preempted {sim.preemptions}" if sim.paged else f"finished {sim.finished}"
            items += [
                (f"running {len(sim.running)}", theme.BODY, theme.TEXT, (x + 10, row1), "topleft"),
                (f"waiting {len(sim.waiting)}", theme.BODY, theme.TEXT_DIM, (x + 130, row1), "topleft"),
                (f"waste {side.waste():.0%}", theme.BODY, theme.AMBER, (x + w - 10, row1), "topright"),
                (f"{side.tokens_per_s():,.0f} tokens/s", theme.BODY, theme.GREEN, (x + 10, row2), "topleft"),
                (extra, theme.SMALL, theme.TEXT_DIM, (x + w - 10, row2 + 1), "topright"),
            ]
        status = "PAUSED" if self.paused else f"x{self.speed}"
        items.append((f"t = {self.clock:6.1f} s  {status}", theme.SMALL, theme.AMBER,
                      (theme.CANVAS_W - 12, 10), "topright"))
        return items

    def _draw_plot(self) -> pygame.Surface:
        x, y, w, h = PLOT
        s = pygame.Surface((w, h))
        s.fill(theme.PANEL)
        pygame.draw.rect(s, theme.PANEL_EDGE, (0, 0, w, h), 1, border_radius=4)
        t = self.text
        t.blit(s, "RUNNING REQUESTS", theme.SMALL, theme.PANEL_TITLE, (7, 4))
        t.blit(s, f"last {PLOT_POINTS * SAMPLE_EVERY_S:.0f} s", theme.SMALL, theme.TEXT_DIM, (w - 8, 4), "topright")
        area = pygame.Rect(36, 26, w - 46, h - 56)
        pygame.draw.rect(s, theme.BOARD_BG, area)
        top = self.plot_max * 1.15
        for frac in (0.0, 0.5, 1.0):
            yy = area.bottom - round(area.height * frac)
            pygame.draw.line(s, theme.GRID_LINE, (area.x, yy), (area.right, yy))
            t.blit(s, f"{top * frac:.0f}", theme.SMALL, theme.TEXT_DIM, (area.x - 4, yy), "midright")
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
            t.blit(s, label, theme.SMALL, theme.TEXT, (lx + 24, legend_y + 1))
        return s

    def _draw_info(self, surface: pygame.Surface) -> None:
        t = self.text
        x, y, w, h = INFO
        left = x + 10
        width = w - 20
        rid = self.selected
        if rid is None:
            t.blit(surface, "HOW TO READ IT", theme.SMALL, theme.PANEL_TITLE, (x + 7, y + 4))
            yy = y + 24
            for line in self.help_lines[:4]:
                t.blit(surface, line, theme.SMALL, theme.TEXT, (left, yy))
                yy += 17
            yy += 6
            self._legend(surface, left, yy)
            return
        req = self.by_rid[rid]
        t.blit(surface, f"REQUEST #{rid}", theme.SMALL, request_colour(rid), (x + 7, y + 4))
        t.blit(surface, f"prompt {req.prompt}, output {req.output} tokens", theme.SMALL, theme.TEXT_DIM,
               (x + w - 8, y + 4), "topright")
        contiguous, paged = (side.sim for side in self.sides)
        yy = y + 24
        run = contiguous.running.get(rid)
        if run is not None:
            start, reserve = run.start, run.reserve
            line = (f"{LABELS[self.contiguous]}: slots {start}-{start + reserve - 1}, "
                    f"{contiguous.length(run)} of {reserve} used")
        else:
            line = f"{LABELS[self.contiguous]}: {self._where(contiguous, rid)}"
        t.blit(surface, fit(line, theme.SMALL, width), theme.SMALL, LEFT_ACCENT, (left, yy))
        yy += 20
        run = paged.running.get(rid)
        if run is None:
            t.blit(surface, f"vLLM (paged): {self._where(paged, rid)}", theme.SMALL, RIGHT_ACCENT, (left, yy))
            return
        table = paged.pages.grow(rid, -(-paged.length(run) // paged.block_size))
        t.blit(surface, f"vLLM block table: {paged.length(run)} tokens in {len(table)} blocks",
               theme.SMALL, RIGHT_ACCENT, (left, yy))
        yy += 18
        room = (y + h - 8 - yy) // 16
        key = (rid, len(table))
        if self.block_lines is None or self.block_lines[0] != key:
            # Wrapped once per change of the table, not every frame.
            lines = wrap("  ".join(f"{i}>{b}" for i, b in enumerate(table)), theme.SMALL, width)
            if len(lines) > room:
                lines = lines[: room - 1] + [f"... {len(table)} entries (logical > physical)"]
            self.block_lines = (key, lines)
        for line in self.block_lines[1]:
            t.blit(surface, line, theme.SMALL, theme.TEXT, (left, yy))
            yy += 16

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
        size = 14
        if self.legend_tiles is None:
            colour = request_colour(3)
            self.legend_tiles = (paint_tile(colour, size, size), paint_tile(colour, size, 0))
        items = ((self.legend_tiles[0], "holds tokens"), (self.legend_tiles[1], "reserved, empty"), (None, "free"))
        xx = x
        for tile, label in items:
            if tile is None:
                pygame.draw.rect(surface, FREE_CELL, (xx, y + 1, size, size))
            else:
                surface.blit(tile, (xx, y + 1))
            r = t.blit(surface, label, theme.SMALL, theme.TEXT, (xx + size + 5, y + 1))
            xx = r.right + 14
        t.blit(surface, "Keys: Space pause, 1/2/3 speed, D B C R, Esc back", theme.SMALL, theme.TEXT_DIM,
               (x, y + 24))


# ---------------------------------------------------------------------- headless tools
class _StandaloneApp:
    """Just enough of the App protocol to show the LAB on its own."""

    def __init__(self) -> None:
        self.text = TextCache()
        self.scenes: list[Scene] = []
        self.popped = False

    def push(self, scene: Scene) -> None:
        self.scenes.append(scene)

    def pop(self) -> None:
        self.popped = True

    def replace(self, scene: Scene) -> None:
        self.scenes[-1:] = [scene]


def _frames(scene: LabScene, canvas: pygame.Surface, frames: int, every: int = 0,
            actions: tuple[str, ...] = ()) -> tuple[list[float], list[float], list[float]]:
    """Run ``frames`` frames; every ``every`` frames press the next of ``actions``.

    Returns wall-clock update and draw times and the frame's CPU time, in ms: on a busy machine
    the wall clock also counts time the process waited for a core.
    """
    update_ms, draw_ms, cpu_ms = [], [], []
    for k in range(frames):
        c0 = time.process_time()
        t0 = time.perf_counter()
        if every and k and k % every == 0:  # the press is part of its frame
            scene.command(actions[(k // every - 1) % len(actions)])
        scene.update(theme.STEP_MS)
        t1 = time.perf_counter()
        scene.draw(canvas)
        t2 = time.perf_counter()
        cpu_ms.append((time.process_time() - c0) * 1000)
        update_ms.append((t1 - t0) * 1000)
        draw_ms.append((t2 - t1) * 1000)
    return update_ms, draw_ms, cpu_ms


def _open(dataset: str, speed: int) -> LabScene:
    """A LAB on its own, set up (its first frames draw the trace) and ready to run."""
    scene = LabScene(_StandaloneApp())
    if dataset != scene.dataset:
        scene.command("dataset")
    scene.speed = speed
    while not scene.ready:
        scene.update(theme.STEP_MS)
    return scene


def _select_busiest(scene: LabScene) -> None:
    """Click the paged request that holds the most blocks."""
    paged_map = scene.sides[1].map
    if paged_map.owned:
        rid = max(paged_map.owned, key=lambda r: len(paged_map.owned[r]))
        scene.click(paged_map.grid.rect(paged_map.owned[rid][0]).center)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _bench(canvas: pygame.Surface, frames: int) -> None:
    """Frame times of the LAB for each dataset and speed, with a request selected, and while switching."""
    print(f"LAB frame times in ms, {frames} frames (60 fps steps) per row once the trace is drawn, a request "
          "selected after 60 frames.")
    print("frame = update (engine steps, map refresh) + draw; wall clock, and CPU time of the process.")
    print(f"{'':38} {'wall':>27}   {'CPU':>20}")
    print(f"{'scenario':38} {'draw med':>8} {'frame med':>9} {'p99':>6} {'max':>6}   "
          f"{'med':>6} {'p99':>6} {'max':>6}")
    rows = [(d, s, ()) for d in DATASET_CHOICES for s in SPEEDS]
    rows.append(("sharegpt", 4, ("block", "contiguous", "dataset", "restart")))
    for dataset, speed, actions in rows:
        scene = _open(dataset, speed)
        _frames(scene, canvas, 60)
        _select_busiest(scene)
        update_ms, draw_ms, cpu_ms = _frames(scene, canvas, frames, 120 if actions else 0, actions)
        frame_ms = [u + d for u, d in zip(update_ms, draw_ms)]
        name = f"{DATASETS[dataset].title} x{speed}" + (", a control pressed every 2 s" if actions else "")
        print(f"{name:38} {statistics.median(draw_ms):8.2f} {statistics.median(frame_ms):9.2f} "
              f"{_pct(frame_ms, 0.99):6.2f} {max(frame_ms):6.2f}   {statistics.median(cpu_ms):6.2f} "
              f"{_pct(cpu_ms, 0.99):6.2f} {max(cpu_ms):6.2f}")


def _main(argv: list[str]) -> int:
    """``python -m ui.lab_scene [--bench] [--screenshot PATH] [--frames N] [--dataset D] [--speed X] [--select]``

    Runs the LAB headless: prints frame times (update = engine steps and map refresh, draw = the
    drawn frame), or with --bench a table per dataset and speed; optionally saves a screenshot.
    """
    import argparse
    import os

    from engine.cli_args import whole

    parser = argparse.ArgumentParser(prog="python -m ui.lab_scene", description=_main.__doc__.split("\n\n")[1])
    parser.add_argument("--bench", action="store_true", help="time every dataset and speed")
    parser.add_argument("--screenshot", help="save the canvas as PNG here")
    parser.add_argument("--frames", type=whole(1, 100_000), default=900, help="frames to run (default 900)")
    parser.add_argument("--dataset", choices=DATASET_CHOICES, default="sharegpt")
    parser.add_argument("--speed", type=int, choices=SPEEDS, default=4)
    parser.add_argument("--select", action="store_true", help="click the busiest paged block first")
    args = parser.parse_args(argv)
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    pygame.display.init()
    pygame.font.init()
    theme.font.cache_clear()
    pygame.display.set_mode(theme.CANVAS_SIZE)
    canvas = pygame.Surface(theme.CANVAS_SIZE)
    if args.bench:
        _bench(canvas, args.frames)
        return 0
    scene = _open(args.dataset, args.speed)
    if args.screenshot:
        scene.sim_budget_s = 1.0  # no wall-clock limit: the same picture on any machine
    update_ms, draw_ms, _ = _frames(scene, canvas, args.frames)
    if args.select:
        _select_busiest(scene)
    scene.bring_up_to_date()
    scene.draw(canvas)
    frame_ms = [u + d for u, d in zip(update_ms, draw_ms)]
    print(f"frames {args.frames}: draw median {statistics.median(draw_ms):.2f} ms, "
          f"update median {statistics.median(update_ms):.2f} ms, frame (update + draw) median "
          f"{statistics.median(frame_ms):.2f} ms, p99 {_pct(frame_ms, 0.99):.2f} ms")
    if args.screenshot:
        pygame.image.save(canvas, args.screenshot)
        print(f"saved {args.screenshot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
