"""The LAB's memory-map widget: one cell per KV block, painted from ``engine.lab.projection`` states.

A cell is coloured by the request that owns it: solid where it holds tokens,
hatched where it is reserved but still empty, dark when free. A block that
several sequences point at carries its reference count (white pips along its
top edge, a full bar for four or more, when the cell is too small for a digit); the blocks of a cached shared prefix are
violet. Only cells whose state changed are repainted, at most a fixed number a
refresh, and tiles are made once per colour, fill and count.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress
from operator import ne

import pygame

from engine.lab.projection import FREE, PREFIX_OWNER, state_fill, state_owner, state_refs
from ui import theme

RectT = tuple[int, int, int, int]

FREE_CELL: theme.Colour = (20, 26, 48)
PREFIX_COLOUR: theme.Colour = theme.VIOLET
SHARED_MARK: theme.Colour = (255, 255, 255)
MAX_PAINT = 140  # map cells repainted per refresh; the rest follow on the next one
DIGIT_MIN_CELL = 11  # smaller cells show a shared block's count as pips
PALETTE_SIZE = 24
FLASH_ALPHA = 170  # a fresh copy-on-write flash: white over the cell, fading


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
    return PREFIX_COLOUR if rid == PREFIX_OWNER else PALETTE[rid % PALETTE_SIZE]


def paint_tile(colour: theme.Colour, size: int, solid: int, refs: int = 1, digit: bool | None = None) -> pygame.Surface:
    """A cell: its first ``solid`` columns hold tokens, the rest is reserved (hatched).

    With ``refs`` > 1 the cell also shows how many sequences point at it: a digit, or pips
    (``digit`` None: a digit when the cell is large enough).
    """
    tile = pygame.Surface((size, size))
    tile.fill(theme.mix(colour, theme.BOARD_BG, 0.78))
    line = theme.mix(colour, theme.BOARD_BG, 0.25)
    for k in range(-size, size, 3):  # diagonal hatching
        pygame.draw.line(tile, line, (k, size - 1), (k + size - 1, 0))
    if solid:
        tile.fill(colour, (0, 0, solid, size))
    if refs > 1:
        if digit if digit is not None else size >= DIGIT_MIN_CELL:
            label = theme.font(theme.SMALL).render(str(refs) if refs < 10 else "+", True, SHARED_MARK)
            back = pygame.Rect(0, 0, min(size, label.get_width() + 2), min(size, label.get_height() - 2))
            back.center = (size // 2, size // 2)
            tile.fill(theme.BOARD_BG, back)
            tile.blit(label, label.get_rect(center=(size // 2, size // 2)))
        else:
            # Too small for a digit: one white pip per reference along the top edge, a full bar for 4 or more.
            pip = max(1, size // 4)
            if refs >= 4:
                tile.fill(SHARED_MARK, (0, 0, size, pip))
            else:
                for k in range(refs):
                    tile.fill(SHARED_MARK, (size - (k + 1) * (pip + 1) + 1, 0, pip, pip))
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
    def fit(cls, cells: int, area: RectT) -> Grid:
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

    @property
    def bounds(self) -> pygame.Rect:
        return pygame.Rect(self.x, self.y, self.cols * self.cell, self.rows * self.cell)


class MemoryMap:
    """A cached picture of one KV cache; only changed cells are repainted."""

    def __init__(self, grid: Grid, block_size: int) -> None:
        self.grid = grid
        self.block_size = block_size
        self.states: list[int] = [FREE] * grid.cells
        self.surface = pygame.Surface((grid.cols * grid.cell, grid.rows * grid.cell))
        self.surface.fill(theme.PANEL)
        self.tiles: dict[tuple[int, int, int], pygame.Surface] = {}
        self.free_tile = pygame.Surface((grid.cell - 1, grid.cell - 1))
        self.free_tile.fill(FREE_CELL)
        self.flash_tile = pygame.Surface((grid.cell + 1, grid.cell + 1), pygame.SRCALPHA)
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
        rid = state_owner(state)
        assert rid is not None
        width = self.grid.cell - 1
        solid = width * state_fill(state) // self.block_size
        refs = state_refs(state)
        key = (PALETTE_SIZE if rid == PREFIX_OWNER else rid % PALETTE_SIZE, solid, refs if refs > 1 else 1)
        tile = self.tiles.get(key)
        if tile is None:
            tile = self.tiles[key] = paint_tile(request_colour(rid), width, solid, key[2])
        return tile

    def update(self, states: list[int], limit: int | None = MAX_PAINT) -> int:
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
        return total - len(changed)

    def owner(self, i: int) -> int | None:
        """The request shown in cell ``i`` (None: free or a shared prefix's cached block)."""
        rid = state_owner(self.states[i])
        return None if rid == PREFIX_OWNER else rid

    def owner_at(self, pos: tuple[int, int]) -> int | None:
        i = self.grid.index_at(pos)
        return None if i is None else self.owner(i)

    def draw(self, surface: pygame.Surface, outlined: Iterable[int] = (), flashes: Iterable[tuple[int, float]] = (),
             focus: int | None = None) -> None:
        """The map, white outlines around ``outlined`` cells, and fading flashes (cell, strength 0..1)."""
        g = self.grid
        surface.blit(self.surface, (g.x, g.y))
        for i, strength in flashes:
            self.flash_tile.fill((255, 255, 255, round(FLASH_ALPHA * strength)))
            surface.blit(self.flash_tile, g.rect(i).move(-1, -1).topleft)
        for i in outlined:
            pygame.draw.rect(surface, (255, 255, 255), g.rect(i).inflate(2, 2), 2 if g.cell >= 8 else 1)
        if focus is not None:
            pygame.draw.rect(surface, theme.AMBER, g.rect(focus).inflate(4, 4), 2)
