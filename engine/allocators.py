"""The KV-cache allocators as policy objects: where a request's blocks go, and nothing else.

engine.serving runs every request's life (admit, decode, finish, preempt) and asks the
request's allocator only these questions: which blocks a request placed whole holds, where the
blocks of a request that cannot be placed whole (or that the player splits) go, and where a
decoding request's next block goes. The registry (engine.modes) names one allocator per mode;
a new allocator is a class here and a row there.

Boards are given as one bitmask per row (top row first), as `Board.masks`; cells as (x, y).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import paging

Cell = tuple[int, int]


class Allocator:
    """The questions engine.serving asks; the defaults are a contiguous allocator's answers."""

    name = ""
    reserves_max_length = True  # a request holds its maximum length from admission on
    player_split = False  # Shift/P may page the falling request into free blocks
    pages_on_demand = False  # a request that cannot be placed whole is given blocks anywhere
    external_fragmentation = True  # free blocks can lie where no request can be given them
    preemptible = False  # a decoding request may need a block it does not hold yet

    def whole(self, cells: Sequence[Cell], need: int) -> tuple[list[Cell], list[Cell]]:
        """(blocks holding tokens, blocks reserved but empty) of a request placed whole at
        `cells` (in logical order) whose context needs `need` blocks."""
        return list(cells[:need]), list(cells[need:])

    def unplaced(self, masks: list[int], need: int, near: float) -> list[Cell] | None:
        """Blocks for a request that cannot be placed whole; None: it cannot be admitted."""
        return None

    def split(self, masks: list[int], columns: Sequence[int]) -> list[Cell] | None:
        """Blocks for the player's split, a page per column wanted; None: refused."""
        return None

    def grow(self, masks: list[int], preferred: Sequence[Cell], last: Cell) -> Cell | None:
        """The block a decoding request takes when its last block is full; None: none free."""
        return None


class Contiguous(Allocator):
    """One unbroken range per request for its maximum length (the paper's sec. 3): the
    tetromino's four blocks, the context's solid, the rest reserved until decoding fills them."""

    name = "contiguous"


class Paged(Allocator):
    """PagedAttention: the context's blocks only, then one more whenever the last fills,
    wherever a block is free (engine.paging's rules). Free memory is all usable."""

    name = "paged"
    reserves_max_length = False
    player_split = True
    pages_on_demand = True
    external_fragmentation = False
    preemptible = True

    def whole(self, cells: Sequence[Cell], need: int) -> tuple[list[Cell], list[Cell]]:
        return list(cells[:need]), []

    def unplaced(self, masks: list[int], need: int, near: float) -> list[Cell] | None:
        return paging.demand_frames(masks, need, near)

    def split(self, masks: list[int], columns: Sequence[int]) -> list[Cell] | None:
        return paging.page_frames(masks, columns)

    def grow(self, masks: list[int], preferred: Sequence[Cell], last: Cell) -> Cell | None:
        for x, y in preferred:  # the rest of its own placement first, while still free
            if not masks[y] >> x & 1:
                return x, y
        frames = paging.demand_frames(masks, 1, last[0])
        return frames[0] if frames else None
