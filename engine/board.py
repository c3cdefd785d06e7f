"""The VRAM board: a grid of KV blocks, each empty (0) or owned by a request id.

Rows are lists indexed [y][x]; y = 0 is the top hidden spawn row. Outside the board counts as
solid, so collision needs no special cases for walls and floor.
"""

from __future__ import annotations

from collections.abc import Iterable

from .rules import HEIGHT, HIDDEN, WIDTH

Cell = tuple[int, int]


class Board:
    __slots__ = ("grid",)

    width = WIDTH
    height = HEIGHT
    HIDDEN = HIDDEN
    VISIBLE = HEIGHT - HIDDEN

    def __init__(self, grid: list[list[int]] | None = None) -> None:
        self.grid: list[list[int]] = grid if grid is not None else [[0] * WIDTH for _ in range(HEIGHT)]

    @classmethod
    def from_strings(cls, rows: Iterable[str], owner: int = 1) -> Board:
        """Build a board from text, bottom-aligned: '#' (or a digit id) is occupied, '.' free."""
        lines = list(rows)
        board = cls()
        top = HEIGHT - len(lines)
        for i, line in enumerate(lines):
            for x, ch in enumerate(line):
                if ch == "#":
                    board.grid[top + i][x] = owner
                elif ch.isdigit():
                    board.grid[top + i][x] = int(ch)
        return board

    def fits(self, shape: tuple[Cell, ...], x: int, y: int) -> bool:
        grid = self.grid
        for cx, cy in shape:
            px = x + cx
            py = y + cy
            if px < 0 or px >= WIDTH or py < 0 or py >= HEIGHT or grid[py][px]:
                return False
        return True

    def drop_distance(self, shape: tuple[Cell, ...], x: int, y: int) -> int:
        """How many rows the shape can fall from (x, y) before it rests."""
        grid = self.grid
        best = HEIGHT
        for cx, cy in shape:
            px = x + cx
            py = y + cy + 1
            d = 0
            while py < HEIGHT and not grid[py][px]:
                py += 1
                d += 1
            if d < best:
                best = d
        return best

    def column_top(self, x: int) -> int:
        """Row of the highest occupied block in column x, or HEIGHT if the column is empty."""
        grid = self.grid
        for y in range(HEIGHT):
            if grid[y][x]:
                return y
        return HEIGHT

    def lowest_empty(self, x: int) -> int:
        """Lowest free row of column x, holes included; -1 when the column is full."""
        grid = self.grid
        for y in range(HEIGHT - 1, -1, -1):
            if not grid[y][x]:
                return y
        return -1

    def full_rows(self, rows: Iterable[int]) -> list[int]:
        grid = self.grid
        return sorted(y for y in set(rows) if 0 not in grid[y])

    def clear_rows(self, rows: list[int]) -> list[int]:
        """Remove `rows` (sorted) and let everything above fall; returns the freed owners."""
        grid = self.grid
        freed: list[int] = []
        for y in rows:
            freed.extend(grid[y])
        keep = set(rows)
        remaining = [row for y, row in enumerate(grid) if y not in keep]
        self.grid = [[0] * WIDTH for _ in rows] + remaining
        return freed

    def visible_counts(self) -> tuple[int, int]:
        """(occupied, sealed) over the visible rows.

        A free cell is *sealed* when some occupied cell stands above it in its column: no
        contiguous piece can reach it, exactly as a free gap between two live allocations
        cannot serve a request that needs one unbroken range.
        """
        grid = self.grid
        occupied = 0
        sealed = 0
        covered = [False] * WIDTH
        for y in range(HEIGHT):
            row = grid[y]
            visible = y >= HIDDEN
            for x in range(WIDTH):
                if row[x]:
                    covered[x] = True
                    if visible:
                        occupied += 1
                elif visible and covered[x]:
                    sealed += 1
        return occupied, sealed

    def owners(self) -> set[int]:
        return {v for row in self.grid for v in row if v}

    def cells(self) -> int:
        return sum(1 for row in self.grid for v in row if v)
