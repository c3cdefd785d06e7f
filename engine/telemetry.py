"""Memory telemetry computed from the board: the numbers the article wants in the player's head.

Definitions (all over the 200 visible cells):
- utilisation: occupied cells / all cells.
- external fragmentation: sealed free cells / all free cells, where a free cell is sealed when an
  occupied cell stands above it in its column. Sealed cells are free memory that a request needing
  one contiguous range can never be given.
- paging efficiency: the share of free memory the current allocator can hand to the next request
  right now. A contiguous allocator can only use open (unsealed) cells, so it is 1 - fragmentation;
  a paged allocator with a split charged can place a page in any free cell, so it is 1. In paged mode
  without charge the next request is placed whole, as in contiguous mode.
- throughput: tokens dispatched by garbage-collected rows over the last 5 s, per second.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from .rules import THROUGHPUT_WINDOW_MS, VISIBLE_CELLS


class Telemetry(NamedTuple):
    """One reading of every gauge (a named tuple: built every frame, so it must be cheap)."""

    utilisation: float
    fragmentation: float
    throughput: float
    paging_efficiency: float
    resident: int
    peak_utilisation: float
    free_cells: int
    sealed_holes: int
    pieces: int
    lines: int
    score: int
    level: int
    charge: float
    tokens: int


def fragmentation(free: int, sealed: int) -> float:
    return sealed / free if free else 0.0


def paging_efficiency(free: int, sealed: int, can_page: bool) -> float:
    if not free:
        return 0.0
    return 1.0 if can_page else (free - sealed) / free


def utilisation(occupied: int) -> float:
    return occupied / VISIBLE_CELLS


class ThroughputWindow:
    """Rolling tokens/s over the last THROUGHPUT_WINDOW_MS of game time."""

    __slots__ = ("_samples", "_total")

    def __init__(self) -> None:
        self._samples: deque[tuple[float, int]] = deque()
        self._total = 0

    def add(self, time_ms: float, tokens: int) -> None:
        self._forget_before(time_ms)  # bounded even if the rate is never read
        self._samples.append((time_ms, tokens))
        self._total += tokens

    def rate(self, now_ms: float) -> float:
        self._forget_before(now_ms)
        return self._total * 1000.0 / THROUGHPUT_WINDOW_MS

    def __len__(self) -> int:
        """Samples held: only those inside the window."""
        return len(self._samples)

    def _forget_before(self, now_ms: float) -> None:
        samples = self._samples
        cutoff = now_ms - THROUGHPUT_WINDOW_MS
        while samples and samples[0][0] <= cutoff:
            self._total -= samples.popleft()[1]
