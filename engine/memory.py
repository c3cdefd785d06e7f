"""Where the free memory is, as seen by the next request: the numbers behind gauges and crashes.

Every visible block is exactly one of: holding tokens, reserved (held for a request's maximum
length, still empty), or free. In contiguous mode a free block is *sealed* when no request of
any shape can be moved to it (engine.reach: turned at the top, slid and dropped, tucks
included): external fragmentation. It is *usable* when the falling request's own shape can
reach it, and otherwise *open but unusable* (other shapes reach it, this one does not). In paged
mode every free block is usable.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import reach
from .board import Board, Cell
from .frozen import quick_init
from .pieces import KINDS, Kind
from .reach import reachable_cells
from .rules import HEIGHT, HIDDEN, WIDTH
from .telemetry import fragmentation

# Why a run ran out of memory, in the order a report explains them.
OOM_CAUSES: tuple[str, ...] = ("memory_full", "no_free_range", "spawn_blocked", "ceiling")


@quick_init
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


def sealed_cells(board: Board, cover: list[int] | None = None) -> tuple[Cell, ...]:
    """Free visible cells no request of any shape can be moved to (`cover`: the board's
    engine.reach.reachable_cells(), when the caller has it already)."""
    masks = board.masks
    if cover is None:
        cover = reachable_cells(board)
    full = (1 << WIDTH) - 1
    out: list[Cell] = []
    for y in range(HIDDEN, HEIGHT):
        bits = ~(masks[y] | cover[y]) & full
        while bits:  # left to right
            low = bits & -bits
            out.append((low.bit_length() - 1, y))
            bits ^= low
    return tuple(out)


def oom_cause(b: Breakdown, need: int, code: str) -> str:
    """The honest reason a whole request of `need` blocks could not be admitted: memory really
    full when fewer blocks are free than it needs, else `code` (how it failed)."""
    return "memory_full" if b.free < need else code


def cause_text(cause: str, b: Breakdown, need: int) -> str:
    """One sentence for the crash report; its figures agree with the report's other lines."""
    if cause == "memory_full":
        return f"memory really full: {b.free} free block(s), the request needs {need}"
    if cause == "no_free_range":
        return (f"no free range of the request's shape: {b.free} blocks free, {b.sealed} sealed "
                f"under held blocks, {b.open_unusable} in gaps too small for it")
    if cause == "ceiling":
        return (f"the request came to rest above VRAM: {b.free} blocks free, {b.sealed} of them "
                f"sealed off where no request can reach")
    return (f"no room where requests enter: {b.free} blocks free, {b.sealed} of them sealed off, "
            f"but the entry is held")


def final_counts(board: Board, free: int, kind: Kind, reserved: int, need: int, code: str,
                 cause: str | None, fragmented: bool) -> tuple[str, int, float, int, int,
                                                              tuple[Cell, ...]]:
    """The end-of-run report's counted figures (engine.reports.COUNTED) on a run's final
    board, `free` of whose visible blocks are free, as engine.game counts them for its gauges:
    (cause, free blocks out of every shape's reach, fragmentation, blocks usable by `kind`, open
    but unusable, the sealed cells). `cause` is the report's words when they need none of these
    (cause_text() words the rest); `fragmented`: the allocator leaves external fragmentation
    (contiguous)."""
    if not fragmented:
        b = Breakdown(free, 0, reserved, free)
        return (cause_text(code, b, need) if cause is None else cause, 0, fragmentation(free, 0),
                free, b.open_unusable, ())
    solid = reach.solid(board.masks)
    covers = reach.covers(board, KINDS, solid)
    big = 0
    for k in KINDS:
        big |= covers[k]
    lost = free - reach.free_visible(big, solid)
    b = Breakdown(free, lost, reserved, reach.free_visible(covers[kind], solid))
    return (cause_text(code, b, need) if cause is None else cause, lost, fragmentation(free, lost),
            b.usable, b.open_unusable, sealed_cells(board, reach.rows(big)) if lost else ())
