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
from .rules import HEIGHT, HIDDEN, VISIBLE, WIDTH

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


# Every placement of every distinct shape of a kind, derived once from COLUMNS and grouped by
# how many columns it spans (1-4): per placement, for each of its columns in turn, the column,
# its bottom row and its top row, rows counted from the shape's top row. Rotations that are one
# shape moved (O's four, I's, S's and Z's two pairs) appear once.
Placements = tuple[tuple[tuple[int, ...], ...], ...]


def _placements(kind: Kind) -> Placements:
    shapes: list[tuple[tuple[int, int, int], ...]] = []
    for profile in COLUMNS[kind]:
        top0 = min(top for _, top, _, _ in profile)
        x0 = min(cx for cx, _, _, _ in profile)
        shape = tuple((cx - x0, top - top0, bottom - top0) for cx, top, bottom, _ in profile)
        if shape not in shapes:
            shapes.append(shape)
    return tuple(
        tuple(tuple(v for cx, top, bottom in shape for v in (x + cx, bottom, top))
              for shape in shapes if len(shape) == span
              for x in range(WIDTH - max(cx for cx, _, _ in shape)))
        for span in (1, 2, 3, 4))


PLACEMENTS: dict[Kind, Placements] = {k: _placements(k) for k in COLUMNS}
_LOW = tuple((1 << n) - 1 for n in range(VISIBLE + 4))  # _LOW[n]: the n lowest bits


def _usable_rows(tops: list[int], kind: Kind) -> list[int]:
    """usable_columns() with rows counted from the top visible row.

    A placement fits in column c on the open rows 0..depth[c]-1 only; slid down as far as its
    columns allow (room - 1 rows), it has swept one unbroken run per column, from its top row
    to room - 1 + its bottom row. Unrolled per span: this runs for every telemetry reading
    after a board change.
    """
    depth = [t - HIDDEN for t in tops]  # open free visible rows per column (<= 0: none)
    low = _LOW
    cols = [0] * WIDTH
    one, two, three, four = PLACEMENTS[kind]
    for c0, b0, t0 in one:
        r = depth[c0] - b0
        if r > 0:
            cols[c0] |= low[r + b0] - low[t0]
    for c0, b0, t0, c1, b1, t1 in two:
        r = depth[c0] - b0
        r1 = depth[c1] - b1
        if r1 < r:
            r = r1
        if r > 0:
            cols[c0] |= low[r + b0] - low[t0]
            cols[c1] |= low[r + b1] - low[t1]
    for c0, b0, t0, c1, b1, t1, c2, b2, t2 in three:
        r = depth[c0] - b0
        r1 = depth[c1] - b1
        if r1 < r:
            r = r1
        r1 = depth[c2] - b2
        if r1 < r:
            r = r1
        if r > 0:
            cols[c0] |= low[r + b0] - low[t0]
            cols[c1] |= low[r + b1] - low[t1]
            cols[c2] |= low[r + b2] - low[t2]
    for c0, b0, t0, c1, b1, t1, c2, b2, t2, c3, b3, t3 in four:
        r = depth[c0] - b0
        r1 = depth[c1] - b1
        if r1 < r:
            r = r1
        r1 = depth[c2] - b2
        if r1 < r:
            r = r1
        r1 = depth[c3] - b3
        if r1 < r:
            r = r1
        if r > 0:
            cols[c0] |= low[r + b0] - low[t0]
            cols[c1] |= low[r + b1] - low[t1]
            cols[c2] |= low[r + b2] - low[t2]
            cols[c3] |= low[r + b3] - low[t3]
    return cols


def usable_columns(tops: list[int], kind: Kind) -> list[int]:
    """Per column, a bitmask of the open free rows that lie in some placement of `kind` (any
    rotation) made of open free visible blocks only."""
    return [c << HIDDEN for c in _usable_rows(tops, kind)]


def usable_blocks(tops: list[int], kind: Kind) -> int:
    """How many open free blocks some placement of `kind` could be given (contiguous mode)."""
    return sum(map(int.bit_count, _usable_rows(tops, kind)))


def reserved_blocks(board: Board) -> int:
    """Visible blocks held for a request's maximum length but holding no tokens yet."""
    return sum(map(int.bit_count, board.reserved[HIDDEN:]))


def breakdown(board: Board, tops: list[int], kind: Kind, pages_on_demand: bool) -> Breakdown:
    """The whole breakdown counted from scratch (the game keeps the same figures up to date
    per board change instead)."""
    masks = board.masks
    free = sum(WIDTH - m.bit_count() for m in masks[HIDDEN:])
    open_free = sum(max(0, t - HIDDEN) for t in tops)
    sealed = free - open_free
    usable = free if pages_on_demand else usable_blocks(tops, kind)
    return Breakdown(free, sealed, reserved_blocks(board), usable)


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
