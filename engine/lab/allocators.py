"""Contiguous ranges (the Orca baselines' allocator) and their reservation sizes.

Memory is measured in token slots. The contiguous allocator hands out one
range per sequence and can fail although enough slots are free, when no single
free range is long enough (external fragmentation). Paged memory hands out
fixed-size blocks from anywhere (``engine.kvpool.BlockPool``); ``memory`` puts both
behind the scheduler's one interface, and its registry names the LAB's allocators.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable

# Reservation size at admission, given prompt + output length and the maximum
# sequence length. These are the paper's three Orca baselines.
RESERVATIONS: dict[str, Callable[[int, int], int]] = {
    "max": lambda total, max_len: max_len,
    "pow2": lambda total, max_len: min(1 << (total - 1).bit_length(), max_len),
    "oracle": lambda total, max_len: total,
}


class ContiguousAllocator:
    """First-fit over a sorted list of free ranges; freeing merges neighbours."""

    def __init__(self, slots: int) -> None:
        self.capacity = slots
        self.starts: list[int] = [0] if slots else []
        self.lengths: list[int] = [slots] if slots else []
        self.owned: dict[Hashable, tuple[int, int]] = {}  # owner -> (start, size)
        self.free_slots = slots

    def largest_free(self) -> int:
        return max(self.lengths, default=0)

    def allocate(self, rid: Hashable, size: int) -> int | None:
        """Start of a new range of ``size`` slots for ``rid``, or None if no range fits."""
        lengths = self.lengths
        for i, length in enumerate(lengths):
            if length >= size:
                start = self.starts[i]
                if length == size:
                    del self.starts[i]
                    del lengths[i]
                else:
                    self.starts[i] = start + size
                    lengths[i] = length - size
                self.owned[rid] = (start, size)
                self.free_slots -= size
                return start
        return None

    def release(self, rid: Hashable) -> None:
        start, size = self.owned.pop(rid)
        self.free_slots += size
        starts, lengths = self.starts, self.lengths
        i = bisect_left(starts, start)
        end = start + size
        merge_left = i > 0 and starts[i - 1] + lengths[i - 1] == start
        merge_right = i < len(starts) and starts[i] == end
        if merge_left and merge_right:
            lengths[i - 1] += size + lengths[i]
            del starts[i]
            del lengths[i]
        elif merge_left:
            lengths[i - 1] += size
        elif merge_right:
            starts[i] = start
            lengths[i] += size
        else:
            starts.insert(i, start)
            lengths.insert(i, size)
