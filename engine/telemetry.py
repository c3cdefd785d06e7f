"""Memory telemetry computed from the board: the numbers the article wants in the player's head.

Definitions (all over the 200 visible cells):
- utilisation: held cells (tokens and reservations) / all cells.
- reserved share: held cells that are reserved but hold no tokens / held cells (contiguous
  allocators reserve each request's maximum length; paged ones reserve nothing).
- external fragmentation: free cells no request of any shape can be moved to (engine.reach) /
  all free cells. In paged mode it is 0 by construction: any free block can be a page.
- usable free: the free blocks that are not sealed off.
- waste share: of the memory held or lost, the share holding no token (reserved-but-empty
  blocks, unfilled tails of last blocks, and sealed free blocks).
- throughput: tokens decoded by every running request over the last 10 s, per second.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from .rules import THROUGHPUT_WINDOW_MS, TOKENS_PER_BLOCK, VISIBLE_CELLS

_new = object.__new__


class Telemetry:
    """One reading of every gauge, taken when Game.telemetry() was called.

    Built every frame, so it must be cheap: the one figure that needs a walk over the board
    (free blocks out of every request's reach, contiguous mode) is counted only when a gauge
    reads it, and then once per board change (the game caches it).
    """

    __slots__ = ("utilisation", "throughput", "reserved", "resident", "peak_utilisation",
                 "free_cells", "pieces", "score", "level", "tokens", "waiting",
                 "served", "preempted_swap", "preempted_recompute", "cpu_used",
                 "tokens_stored", "slots_held", "reserved_wasted", "minutes", "_lost",
                 "_count_lost")

    def __init__(self, *, utilisation: float, throughput: float, reserved: int, resident: int,
                 peak_utilisation: float, free_cells: int, pieces: int, served: int, score: int,
                 level: int, tokens: int, waiting: int, preempted_swap: int,
                 preempted_recompute: int, cpu_used: int, tokens_stored: int, slots_held: int,
                 reserved_wasted: int, minutes: float,
                 count_lost: Callable[[], int] | None = None, lost: int | None = None) -> None:
        self.utilisation = utilisation
        self.throughput = throughput
        self.reserved = reserved
        self.resident = resident
        self.peak_utilisation = peak_utilisation
        self.free_cells = free_cells
        self.pieces = pieces
        self.served = served
        self.score = score
        self.level = level
        self.tokens = tokens
        self.waiting = waiting
        self.preempted_swap = preempted_swap
        self.preempted_recompute = preempted_recompute
        self.cpu_used = cpu_used
        self.tokens_stored = tokens_stored
        self.slots_held = slots_held
        self.reserved_wasted = reserved_wasted
        self.minutes = minutes
        self._lost = lost
        self._count_lost = count_lost

    @classmethod
    def _of(cls, utilisation: float, throughput: float, reserved: int, resident: int,
            peak_utilisation: float, free_cells: int, pieces: int, served: int, score: int,
            level: int, tokens: int, waiting: int, preempted_swap: int,
            preempted_recompute: int, cpu_used: int, tokens_stored: int, slots_held: int,
            reserved_wasted: int, minutes: float,
            count_lost: Callable[[], int] | None) -> Telemetry:
        """The same reading as __init__ makes, from positional figures (the game builds one
        every frame: keyword arguments cost more than the rest of it)."""
        t = _new(cls)
        t.utilisation = utilisation
        t.throughput = throughput
        t.reserved = reserved
        t.resident = resident
        t.peak_utilisation = peak_utilisation
        t.free_cells = free_cells
        t.pieces = pieces
        t.served = served
        t.score = score
        t.level = level
        t.tokens = tokens
        t.waiting = waiting
        t.preempted_swap = preempted_swap
        t.preempted_recompute = preempted_recompute
        t.cpu_used = cpu_used
        t.tokens_stored = tokens_stored
        t.slots_held = slots_held
        t.reserved_wasted = reserved_wasted
        t.minutes = minutes
        t._lost = None
        t._count_lost = count_lost
        return t

    @property
    def sealed_holes(self) -> int:
        """Free blocks no request can be given (external fragmentation; paged: 0)."""
        if self._lost is None:
            self._lost = self._count_lost() if self._count_lost is not None else 0
        return self._lost

    @property
    def fragmentation(self) -> float:
        return fragmentation(self.free_cells, self.sealed_holes)

    @property
    def usable_free(self) -> int:
        return self.free_cells - self.sealed_holes

    @property
    def waste_share(self) -> float:
        """Of the memory held or lost, the share that holds no token: reserved-but-empty and
        unfilled tails (slots - tokens) plus free blocks out of reach."""
        lost = self.sealed_holes * TOKENS_PER_BLOCK
        total = self.slots_held + lost
        return (total - self.tokens_stored) / total if total else 0.0

    def as_dict(self) -> dict[str, float]:
        names = [n for n in self.__slots__ if not n.startswith("_")]
        out: dict[str, float] = {n: getattr(self, n) for n in names}
        for n in ("sealed_holes", "fragmentation", "usable_free", "waste_share"):
            out[n] = getattr(self, n)
        return out


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
        samples = self._samples
        if samples and samples[0][0] <= time_ms - THROUGHPUT_WINDOW_MS:
            self._forget_before(time_ms)  # bounded even if the rate is never read
        samples.append((time_ms, tokens))
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
