"""The VRAM board: a grid of KV blocks, each empty (0) or held by a request id.

A held block either stores the request's tokens or is *reserved*: held for the request's
maximum length but still empty (contiguous allocators reserve up front). Rows are lists indexed
[y][x]; y = 0 is the top hidden spawn row. Outside the board counts as solid, so collision needs
no special cases for walls and floor.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import paging
from .pieces import Footprint
from .rules import HEIGHT, HIDDEN, WIDTH

Cell = tuple[int, int]
FULL = (1 << WIDTH) - 1


def block_at(cell: Cell) -> int:
    """The KV block number of a visible cell (engine.kvpool numbers them row by row)."""
    return (cell[1] - HIDDEN) * WIDTH + cell[0]


def cell_at(block: int) -> Cell:
    """The visible cell of KV block number `block`."""
    return block % WIDTH, block // WIDTH + HIDDEN


class Board:
    """`grid` holds owners for drawing and logs; `masks` (one bit per held cell, a row per int)
    mirror it for collision and the counts taken after every placement; `reserved` marks the
    held cells that are reservations, not tokens. Write only through place(), reserve(), fill(),
    free() and from_strings() so they never disagree (load() takes another board's blocks whole).
    Memory never moves: freeing a block leaves every other block where it is."""

    __slots__ = ("grid", "masks", "reserved", "cached", "version", "_tops", "_tops_v", "_owned")

    width = WIDTH
    height = HEIGHT
    HIDDEN = HIDDEN
    VISIBLE = HEIGHT - HIDDEN

    def __init__(self) -> None:
        self.grid: list[list[int]] = [[0] * WIDTH for _ in range(HEIGHT)]
        self.masks: list[int] = [0] * HEIGHT
        self.reserved: list[int] = [0] * HEIGHT
        # Free cells that still hold cached KV content (engine.prefix_cache): free memory, drawn
        # apart; a piece may come to rest on them, and taking one evicts its content.
        self.cached: list[int] = [0] * HEIGHT
        self.version = 0  # bumped by every write that changes which cells are held
        self._tops: list[int] = [HEIGHT] * WIDTH  # column_tops(), valid at version _tops_v
        self._tops_v = 0
        self._owned: dict[int, int] = {}  # blocks each owner holds, kept by every write

    @classmethod
    def from_strings(cls, rows: Iterable[str], owner: int = 1) -> Board:
        """Build a board from text, bottom-aligned: '#' (or an owner id 1-9) is occupied, any
        other character free."""
        lines = list(rows)
        board = cls()
        top = HEIGHT - len(lines)
        for i, line in enumerate(lines):
            for x, ch in enumerate(line):
                if ch == "#" or ch in "123456789":
                    board.place([(x, top + i)], owner if ch == "#" else int(ch))
        return board

    def copy(self) -> Board:
        """A board of the same blocks that no write to this one changes."""
        other = Board.__new__(Board)
        other.grid = [row[:] for row in self.grid]
        other.masks = self.masks[:]
        other.reserved = self.reserved[:]
        other.cached = self.cached[:]
        other.version = self.version
        other._tops = self._tops
        other._tops_v = self._tops_v
        other._owned = self._owned.copy()
        return other

    def load(self, other: Board) -> None:
        """Hold exactly the blocks of `other`, owners and reservations alike."""
        self.grid = [row[:] for row in other.grid]
        self.masks = other.masks[:]
        self.reserved = other.reserved[:]
        self.cached = other.cached[:]
        self.version += 1
        owned: dict[int, int] = {}
        for row in self.grid:
            for owner in row:
                if owner:
                    owned[owner] = owned.get(owner, 0) + 1
        self._owned = owned

    def held_by(self, owner: int) -> int:
        """Blocks the board gives `owner` (tokens and reservations)."""
        return self._owned.get(owner, 0)

    def place(self, cells: Iterable[Cell], owner: int, reserved: Iterable[Cell] = ()) -> None:
        """Hold free cells for `owner`: `cells` store its tokens, `reserved` are held for it
        without storing tokens (one write for both)."""
        grid, masks = self.grid, self.masks
        v = self.version
        self.version = v + 1
        tops = self._tops[:] if self._tops_v == v else None  # kept up to date (a new list)
        n = 0
        for x, y in cells:
            grid[y][x] = owner
            masks[y] |= 1 << x
            n += 1
            if tops is not None and y < tops[x]:
                tops[x] = y
        if reserved:
            marks = self.reserved
            for x, y in reserved:
                grid[y][x] = owner
                masks[y] |= 1 << x
                marks[y] |= 1 << x
                n += 1
                if tops is not None and y < tops[x]:
                    tops[x] = y
        owned = self._owned
        owned[owner] = owned.get(owner, 0) + n
        if tops is not None:
            self._tops = tops
            self._tops_v = v + 1

    def reserve(self, cells: Iterable[Cell], owner: int) -> None:
        """Hold free cells for `owner` without storing tokens in them."""
        self.place((), owner, cells)

    def reserved_cells(self, owners: Iterable[int] | None = None) -> list[Cell]:
        """Reserved cells, of every request or of `owners` only, top row first."""
        want = None if owners is None else set(owners)
        out: list[Cell] = []
        for y, bits in enumerate(self.reserved):
            while bits:
                low = bits & -bits
                x = low.bit_length() - 1
                if want is None or self.grid[y][x] in want:
                    out.append((x, y))
                bits ^= low
        return out

    def cache(self, cells: Iterable[Cell], cached: bool = True) -> None:
        """Mark free cells as holding cached content (or, cached=False, no longer)."""
        marks = self.cached
        for x, y in cells:
            if cached:
                marks[y] |= 1 << x
            else:
                marks[y] &= ~(1 << x)

    def cached_cells(self) -> list[Cell]:
        """Cells marked as cached-free, top row first."""
        out: list[Cell] = []
        for y, bits in enumerate(self.cached):
            while bits:
                low = bits & -bits
                out.append((low.bit_length() - 1, y))
                bits ^= low
        return out

    def fill(self, cell: Cell) -> None:
        """A reserved block now holds tokens."""
        x, y = cell
        self.reserved[y] &= ~(1 << x)

    def free(self, cells: Iterable[Cell]) -> None:
        """Give held cells (token or reserved) back to the free pool; nothing else moves."""
        grid, masks, reserved = self.grid, self.masks, self.reserved
        v = self.version
        self.version = v + 1
        owned = self._owned
        cols = 0
        for x, y in cells:
            keep = ~(1 << x)
            row = grid[y]
            owner = row[x]
            if owner:
                left = owned[owner] - 1
                if left:
                    owned[owner] = left
                else:
                    del owned[owner]
            row[x] = 0
            masks[y] &= keep
            reserved[y] &= keep
            cols |= 1 << x
        if self._tops_v == v:
            tops = self._tops[:]
            while cols:  # a column whose top block was freed: its top is lower now
                low = cols & -cols
                cols ^= low
                x = low.bit_length() - 1
                y = tops[x]
                if y < HEIGHT and not masks[y] & low:
                    y += 1
                    while y < HEIGHT and not masks[y] & low:
                        y += 1
                    tops[x] = y
            self._tops = tops
            self._tops_v = v + 1

    def fits(self, fp: Footprint, x: int, y: int) -> bool:
        """Whether a shape (as its footprint) at (x, y) lies inside the board on free cells."""
        if y + fp.min_dy < 0 or y + fp.max_dy >= HEIGHT:
            return False
        rows = fp.at.get(x)
        if rows is None:  # past a wall
            return False
        masks = self.masks
        for dy, bits in rows:
            if masks[y + dy] & bits:
                return False
        return True

    def drop_distance(self, columns: tuple[tuple[int, int, int, int], ...], x: int, y: int,
                      tops: list[int] | None = None) -> int:
        """How many rows a shape (given by its column profile) can fall from (x, y).

        With `tops` (current column tops) a column whose lowest cell is above its top is answered
        without scanning; a piece tucked under an overhang scans down from its cell.
        """
        masks = self.masks
        best = HEIGHT
        for cx, _, bottom, _ in columns:
            px = x + cx
            py = y + bottom + 1
            if tops is not None and py <= tops[px]:
                d = tops[px] - py
            else:
                bit = 1 << px
                d = 0
                while py < HEIGHT and not masks[py] & bit:
                    py += 1
                    d += 1
            if d < best:
                best = d
        return best

    def column_tops(self) -> list[int]:
        """column_top() of every column, kept up to date as blocks come and go (a list of the
        board's own: read it, never change it; a write makes a new one)."""
        if self._tops_v != self.version:
            masks = self.masks
            tops = [HEIGHT] * WIDTH
            covered = 0
            for y in range(HEIGHT):
                new = masks[y] & ~covered
                if new:
                    covered |= new
                    while new:
                        low = new & -new
                        tops[low.bit_length() - 1] = y
                        new ^= low
            self._tops = tops
            self._tops_v = self.version
        return self._tops

    def column_top(self, x: int) -> int:
        """Row of the highest occupied block in column x, or HEIGHT if the column is empty."""
        grid = self.grid
        for y in range(HEIGHT):
            if grid[y][x]:
                return y
        return HEIGHT

    def column_with_room(self, x: int) -> int:
        """x if its column has a free visible cell, else the nearest column that does (left
        first); -1 if none has. Where a page goes when its own column is full."""
        cell = paging.frame_for(self.masks, x)
        return -1 if cell is None else cell[0]

    def stats(self) -> tuple[int, int, list[int]]:
        """(occupied, sealed, column tops) over the visible rows; occupied counts reserved cells
        (they are held memory) and a reserved cell seals the free cells under it.

        A free cell is *sealed* when some occupied cell stands above it in its column: no
        contiguous piece can reach it, exactly as a free gap between two live allocations
        cannot serve a request that needs one unbroken range. Column tops are as column_top().
        """
        masks = self.masks
        sealed = covered = 0
        tops = [HEIGHT] * WIDTH
        for y in range(HEIGHT):
            m = masks[y]
            if m:
                new = m & ~covered
                while new:
                    low = new & -new
                    tops[low.bit_length() - 1] = y
                    new ^= low
                covered |= m
            elif not covered:
                continue
            if y >= HIDDEN:
                sealed += (covered & ~m).bit_count()
        return self.occupied(), sealed, tops

    def occupied(self) -> int:
        """Held visible blocks (tokens and reservations)."""
        return sum(map(int.bit_count, self.masks[HIDDEN:]))
