"""Memory telemetry computed from the board: the numbers the article wants in the player's head.

Definitions (all over the 200 visible cells):
- utilisation: held cells (tokens and reservations) / all cells.
- reserved share: held cells that are reserved but hold no tokens / held cells (contiguous
  allocators reserve each request's maximum length; paged ones reserve nothing).
- external fragmentation: sealed free cells / all free cells, where a free cell is sealed when a
  held cell stands above it in its column. Sealed cells are free memory that a request needing
  one contiguous range can never be given.
- usable free: the free blocks the current allocator could give the falling request right now
  (engine.memory): in contiguous mode those in some open range of its shape, in paged mode all.
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
    usable_free: int
    reserved: int
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
    waiting: int = 0  # requests in the queue
    served: int = 0  # requests finished
    preempted_swap: int = 0
    preempted_recompute: int = 0
    cpu_used: int = 0  # blocks in the CPU swap space
    tokens_stored: int = 0  # tokens in VRAM now
    waste_share: float = 0.0  # of held + out-of-reach memory, the share holding no token
    reserved_wasted: int = 0  # reserved blocks never filled by the requests that finished
    minutes: float = 0.0  # game time


def fragmentation(free: int, sealed: int) -> float:
    return sealed / free if free else 0.0


def reserved_share(reserved: int, occupied: int) -> float:
    return reserved / occupied if occupied else 0.0


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
