"""LAB screen: one request trace served by a contiguous and a paged KV cache, side by side.

Both maps show the same memory (the paper's 15,728 token slots, cut into cells
of one block). A cell is coloured by the request that owns it: solid where it
holds tokens, hatched where it is reserved but still empty, dark when free.
The simulators advance a few engine steps per frame; map cells are redrawn
only when their owner or fill changed, so a drawn frame is a handful of blits.
"""
from __future__ import annotations

import statistics
import sys
import time
from collections import deque
from dataclasses import dataclass

import pygame

from engine.lab import DATASETS, LabConfig, Simulator, generate
from engine.lab.paper import FIG13_RATE, LABELS
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
MAX_STEPS_PER_UPDATE = 300  # engine steps per side and frame, so a frame never stalls
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


class MemoryMap:
    """A cached picture of one KV cache; only changed cells are repainted."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.states: list[tuple[int, int] | None] = [None] * grid.cells
        self.surface = pygame.Surface((grid.cols * grid.cell, grid.rows * grid.cell))
        self.surface.fill(theme.PANEL)
        self.tiles: dict[tuple[int, int], pygame.Surface] = {}
        self.free_tile = pygame.Surface((grid.cell - 1, grid.cell - 1))
        self.free_tile.fill(FREE_CELL)
        self.owned: dict[int, list[int]] = {}
        for i in range(grid.cells):
            self._paint(i, None)

    def _tile(self, rid: int, solid: int) -> pygame.Surface:
        key = (rid % PALETTE_SIZE, solid)  # at most PALETTE_SIZE x cell tiles, made once
        tile = self.tiles.get(key)
        if tile is None:
            tile = self.tiles[key] = paint_tile(request_colour(rid), self.grid.cell - 1, solid)
        return tile

    def _paint(self, i: int, state: tuple[int, int] | None) -> None:
        g = self.grid
        r, c = divmod(i, g.cols)
        pos = (c * g.cell, r * g.cell)
        self.surface.blit(self.free_tile if state is None else self._tile(*state), pos)

    def update(self, states: list[tuple[int, int] | None], owned: dict[int, list[int]]) -> None:
        """Repaint the cells whose (owner, solid width) changed."""
        old = self.states
        for i in [i for i, (a, b) in enumerate(zip(states, old)) if a != b]:
            self._paint(i, states[i])
        self.states = states
        self.owned = owned

    def owner_at(self, pos: tuple[int, int]) -> int | None:
        i = self.grid.index_at(pos)
        if i is None or self.states[i] is None:
            return None
        return self.states[i][0]

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
        self.generated = 0
        self.history: deque[tuple[float, int]] = deque()
        self.dirty = True

    def advance_to(self, clock: float) -> None:
        steps = 0
        sim = self.sim
        while sim.clock < clock and not sim.done and steps < MAX_STEPS_PER_UPDATE:
            report = sim.advance(1)
            self.generated += report.generated
            steps += 1
        if steps:
            self.dirty = True
            self.history.append((sim.clock, self.generated))
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

    def refresh_map(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        width = self.map.grid.cell - 1
        states: list[tuple[int, int] | None] = [None] * self.cells
        owned: dict[int, list[int]] = {}
        sim, block = self.sim, self.block
        if sim.paged:
            for rid, table in sim.block_tables().items():
                length = sim.length(sim.running[rid])
                full = (rid, width)
                for b in table:
                    states[b] = full
                rest = length % block
                if rest:
                    states[table[-1]] = (rid, width * rest // block)
                owned[rid] = table
        else:
            half = block // 2
            for rid, (start, reserve, tokens, _final) in sim.ranges_held().items():
                first = max(0, -(-(start - half) // block))
                last = min(self.cells, -(-(start + reserve - half) // block))
                if last <= first:
                    continue
                filled = start + tokens
                states[first:last] = [(rid, 0)] * (last - first)
                full_end = min(last, max(first, (filled - block) // block + 1))  # cells wholly below `filled`
                states[first:full_end] = [(rid, width)] * (full_end - first)
                for i in range(full_end, last):
                    held = min(block, max(0, filled - i * block))
                    if not held:
                        break
                    states[i] = (rid, width * held // block)
                owned[rid] = list(range(first, last))
        self.map.update(states, owned)


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
        self.selected: int | None = None
        self.hover: tuple[int, int] | None = None
        self.chrome: pygame.Surface | None = None
        self.plot_surface: pygame.Surface | None = None
        self.legend_tiles: tuple[pygame.Surface, pygame.Surface] | None = None
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

    def restart(self) -> None:
        """A new trace for the current dataset; both engines start from an empty cache."""
        spec = DATASETS[self.dataset]
        self.rate = FIG13_RATE[self.dataset]
        self.trace = generate(self.dataset, TRACE_REQUESTS, self.rate, self.seed)
        config = LabConfig(block_size=self.block)
        self.sides = (
            Side(self.contiguous, self.trace, config, self._map_area(0)),
            Side("paged", self.trace, config, self._map_area(1)),
        )
        self.by_rid = {r.rid: r for r in self.trace}
        self.clock = 0.0
        self.frame = 0
        self.next_sample = 0.0
        self.samples: deque[tuple[int, int]] = deque(maxlen=PLOT_POINTS)
        self.plot_max = 8
        self.plot_surface = None
        self.selected = None
        self.title = f"{spec.title} at {self.rate:g} req/s, block {self.block}"
        self.chrome = None
        for side in self.sides:
            side.refresh_map()

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

    def click(self, pos: tuple[int, int]) -> None:
        button = hit(self.buttons, pos)
        if button is not None:
            self.command(button.name)
            return
        for side in self.sides:
            if pygame.Rect(side.map.grid.x, side.map.grid.y, side.map.surface.get_width(),
                           side.map.surface.get_height()).collidepoint(pos):
                self.selected = side.map.owner_at(pos)
                return

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        if self.paused:
            return
        if all(side.sim.done for side in self.sides):
            self.seed += 1
            self.restart()
            return
        self.clock += dt_ms / 1000.0 * self.speed
        for side in self.sides:
            side.advance_to(self.clock)
        # One map a frame: each is repainted at 30 Hz, and a frame does half the work.
        self.frame += 1
        self.sides[self.frame % 2].refresh_map()
        while self.next_sample <= self.clock:
            left, right = (len(side.sim.running) for side in self.sides)
            self.samples.append((left, right))
            self.plot_max = max(self.plot_max, left, right)
            self.next_sample += SAMPLE_EVERY_S
            self.plot_surface = None

    # ------------------------------------------------------------------ drawing
    def draw(self, surface: pygame.Surface) -> None:
        if self.chrome is None:
            self.chrome = self._draw_chrome()
        surface.blit(self.chrome, (0, 0))
        for i, side in enumerate(self.sides):
            side.map.draw(surface, self.selected)
            self._draw_counters(surface, i, side)
        if self.plot_surface is None:
            self.plot_surface = self._draw_plot()
        surface.blit(self.plot_surface, PLOT[:2])
        self._draw_info(surface)
        t = self.text
        status = "PAUSED" if self.paused else f"x{self.speed}"
        t.blit(surface, f"t = {self.clock:6.1f} s  {status}", theme.SMALL, theme.AMBER,
               (theme.CANVAS_W - 12, 10), "topright")

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
        for i, side in enumerate(self.sides):
            accent = LEFT_ACCENT if i == 0 else RIGHT_ACCENT
            draw_panel(s, MAP_PANELS[i], t, edge=accent)
            x, y, w, _ = MAP_PANELS[i]
            kind = "contiguous ranges" if i == 0 else f"blocks of {self.block} tokens"
            t.blit(s, LABELS[side.allocator], theme.BODY, accent, (x + 8, y + 4))
            t.blit(s, kind, theme.SMALL, theme.TEXT_DIM, (x + w - 8, y + 6), "topright")
        draw_panel(s, PLOT, t, "RUNNING REQUESTS")
        draw_panel(s, INFO, t)
        return s

    def _draw_counters(self, surface: pygame.Surface, i: int, side: Side) -> None:
        t = self.text
        x, y, w, h = MAP_PANELS[i]
        sim = side.sim
        row1 = y + h - MAP_BOTTOM_PAD + 6
        row2 = row1 + 18
        t.blit(surface, f"running {len(sim.running)}", theme.BODY, theme.TEXT, (x + 10, row1))
        t.blit(surface, f"waiting {len(sim.waiting)}", theme.BODY, theme.TEXT_DIM, (x + 130, row1))
        t.blit(surface, f"waste {side.waste():.0%}", theme.BODY, theme.AMBER, (x + w - 10, row1), "topright")
        t.blit(surface, f"{side.tokens_per_s():,.0f} tokens/s", theme.BODY, theme.GREEN, (x + 10, row2))
        extra = f"preempted {sim.preemptions}" if sim.paged else f"finished {sim.finished}"
        t.blit(surface, extra, theme.SMALL, theme.TEXT_DIM, (x + w - 10, row2 + 1), "topright")

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
                label += f"  avg {sum(v[k] for v in self.samples) / len(self.samples):.1f}"
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
            for line in wrap(HELP_TEXT, theme.SMALL, width)[:4]:
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
            start, reserve, tokens, _ = contiguous.ranges_held()[rid]
            line = f"{LABELS[self.contiguous]}: slots {start}-{start + reserve - 1}, {tokens} of {reserve} used"
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
        entries = [f"{i}>{b}" for i, b in enumerate(table)]
        lines = wrap("  ".join(entries), theme.SMALL, width)
        room = (y + h - 8 - yy) // 16
        if len(lines) > room:
            lines = lines[: room - 1] + [f"... {len(table)} entries (logical > physical)"]
        for line in lines:
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


def _main(argv: list[str]) -> int:
    """``python -m ui.lab_scene [--screenshot PATH] [--frames N]``: render headless, print frame times."""
    import argparse
    import os

    parser = argparse.ArgumentParser(prog="python -m ui.lab_scene", description=_main.__doc__)
    parser.add_argument("--screenshot", help="save the canvas as PNG here")
    parser.add_argument("--frames", type=int, default=900, help="frames of x4 simulation before the picture")
    parser.add_argument("--dataset", choices=DATASET_CHOICES, default="sharegpt")
    parser.add_argument("--select", action="store_true", help="click the busiest paged block first")
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error("--frames must be >= 1")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    pygame.display.init()
    pygame.font.init()
    theme.font.cache_clear()
    pygame.display.set_mode(theme.CANVAS_SIZE)
    canvas = pygame.Surface(theme.CANVAS_SIZE)
    scene = LabScene(_StandaloneApp())
    if args.dataset != scene.dataset:
        scene.command("dataset")
    draw_ms, update_ms = [], []
    for _ in range(args.frames):
        t0 = time.perf_counter()
        scene.update(theme.STEP_MS)
        t1 = time.perf_counter()
        scene.draw(canvas)
        t2 = time.perf_counter()
        update_ms.append((t1 - t0) * 1000)
        draw_ms.append((t2 - t1) * 1000)
    if args.select:
        paged_map = scene.sides[1].map
        if paged_map.owned:
            rid = max(paged_map.owned, key=lambda r: len(paged_map.owned[r]))
            scene.click(paged_map.grid.rect(paged_map.owned[rid][0]).center)
        scene.draw(canvas)
    print(f"frames {args.frames}: draw median {statistics.median(draw_ms):.2f} ms, "
          f"update median {statistics.median(update_ms):.2f} ms, "
          f"frame (update + draw) p95 {sorted(u + d for u, d in zip(update_ms, draw_ms))[len(draw_ms) * 95 // 100]:.2f} ms")
    if args.screenshot:
        pygame.image.save(canvas, args.screenshot)
        print(f"saved {args.screenshot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
