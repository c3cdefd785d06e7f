"""Where pages go: the page-placement rules, used by the game and by the bot's look-ahead.

Two rules, both here and nowhere else. A *split* (the player's Shift/P) aims: each page goes to
the lowest free visible block of its own column, holes included; if that column is full, to the
nearest column with a free block (left first on a tie). *Paging on demand* (a request that
cannot be placed whole) takes the lowest free blocks anywhere, nearest the request on a tie:
the memory a contiguous allocator could not reach is used first. Only visible rows are page
frames: the hidden spawn rows above the board are not memory. Boards are given as one bitmask
per row (top row first), as `Board.masks`.
"""

from __future__ import annotations

from collections.abc import Iterable

from .rules import HEIGHT, HIDDEN, WIDTH

Cell = tuple[int, int]


def lowest_frame(masks: list[int], col: int) -> int:
    """Lowest free visible row of column `col`; -1 when the column has none."""
    bit = 1 << col
    for y in range(HEIGHT - 1, HIDDEN - 1, -1):
        if not masks[y] & bit:
            return y
    return -1


def frame_for(masks: list[int], col: int) -> Cell | None:
    """The block a page wanting column `col` gets, or None when no visible block is free."""
    for d in range(WIDTH):
        for c in ((col,) if d == 0 else (col - d, col + d)):
            if 0 <= c < WIDTH:
                y = lowest_frame(masks, c)
                if y >= 0:
                    return c, y
    return None


def page_frames(masks: list[int], columns: Iterable[int]) -> list[Cell] | None:
    """The blocks for pages wanting `columns`, in page order, each taken before the next is
    placed; None when fewer blocks are free than there are pages (nothing is taken then)."""
    work = masks[:]
    out: list[Cell] = []
    for col in columns:
        cell = frame_for(work, col)
        if cell is None:
            return None
        work[cell[1]] |= 1 << cell[0]
        out.append(cell)
    return out


def demand_frames(masks: list[int], pages: int, near: float) -> list[Cell] | None:
    """The `pages` lowest free visible blocks, nearest column `near` first on a row (left first
    on a tie); None when fewer are free."""
    out: list[Cell] = []
    if pages <= 0:
        return out
    for y in range(HEIGHT - 1, HIDDEN - 1, -1):
        free = [x for x in range(WIDTH) if not masks[y] >> x & 1]
        free.sort(key=lambda x: (abs(x - near), x))
        for x in free:
            out.append((x, y))
            if len(out) == pages:
                return out
    return None
