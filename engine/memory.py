"""Where the free memory is, as seen by the next request: the numbers behind gauges and crashes.

Every visible block is exactly one of: holding tokens, reserved (held for a request's maximum
length, still empty), or free. A free block is *sealed* when something held stands above it in
its column (no whole request can drop into it), *usable* when some placement of the request's
shape covers it using open free blocks only, and otherwise *open but unusable* (open, yet in no
range of the request's shape: a gap too narrow, say).
"""

from __future__ import annotations

from dataclasses import dataclass

from .board import Board, Cell
from .pieces import COLUMNS, Kind
from .rules import HEIGHT, HIDDEN, WIDTH

# Why a run ran out of memory, in the order a report explains them.
OOM_CAUSES: tuple[str, ...] = ("memory_full", "no_free_range", "spawn_blocked", "ceiling")


@dataclass(frozen=True, slots=True)
class Breakdown:
    """The visible blocks by what the next request could do with them."""

    free: int
    sealed: int
    reserved: int
    usable: int  # free blocks this request could be given (paged: every free block)

    @property
    def open_unusable(self) -> int:
        return max(0, self.free - self.sealed - self.usable)


def usable_columns(tops: list[int], kind: Kind) -> list[int]:
    """Per column, a bitmask of the open free rows that lie in some placement of `kind` (any
    rotation) made of open free visible blocks only."""
    cols = [0] * WIDTH
    for profile in COLUMNS[kind]:
        lo_y = max(HIDDEN - top for _, top, _, _ in profile)
        for x in range(-min(cx for cx, _, _, _ in profile), WIDTH - max(cx for cx, _, _, _ in profile)):
            hi_y = min(tops[x + cx] - 1 - bottom for cx, _, bottom, _ in profile)
            if hi_y < lo_y:
                continue
            for cx, top, bottom, _ in profile:
                a, b = lo_y + top, hi_y + bottom  # rows covered by some placement in this column
                cols[x + cx] |= ((1 << (b - a + 1)) - 1) << a
    return cols


def breakdown(board: Board, tops: list[int], kind: Kind, pages_on_demand: bool) -> Breakdown:
    masks = board.masks
    free = sum(WIDTH - m.bit_count() for m in masks[HIDDEN:])
    reserved = sum(m.bit_count() for m in board.reserved[HIDDEN:])
    open_free = sum(max(0, t - HIDDEN) for t in tops)
    sealed = free - open_free
    if pages_on_demand:
        usable = free
    else:
        usable = sum(c.bit_count() for c in usable_columns(tops, kind))
    return Breakdown(free, sealed, reserved, usable)


def sealed_cells(board: Board, tops: list[int]) -> tuple[Cell, ...]:
    """Free visible cells with something held above them in their column."""
    masks = board.masks
    return tuple((x, y) for y in range(HIDDEN, HEIGHT) for x in range(WIDTH)
                 if y > tops[x] and not masks[y] >> x & 1)


def oom_cause(b: Breakdown, need: int) -> str:
    """The honest reason a whole request of `need` blocks could not be admitted at the top."""
    if b.free < need:
        return "memory_full"
    if b.usable == 0:
        return "no_free_range"
    return "spawn_blocked"


def cause_text(cause: str, b: Breakdown, need: int) -> str:
    """One sentence for the crash report (its breakdown lines give the rest)."""
    if cause == "memory_full":
        return f"memory really full: {b.free} free block(s) left, the request needs {need}"
    if cause == "no_free_range":
        return (f"no free range of the request's shape: {b.free} blocks free, all sealed under "
                "overhangs or in gaps too small")
    if cause == "ceiling":
        return f"the stack reached the ceiling with {b.free} blocks free"
    return (f"admission blocked at the top with {b.free} blocks free (only {b.usable} in ranges "
            "the request could use)")
