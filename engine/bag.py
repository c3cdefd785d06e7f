"""The 7-bag randomizer: every run of seven pieces holds each tetromino once."""

from __future__ import annotations

import random
from collections import deque

from .pieces import KINDS, Kind


class SevenBag:
    """Deals pieces from shuffled bags drawn with the game's own seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._queue: deque[Kind] = deque()

    def _refill(self) -> None:
        bag = list(KINDS)
        self._rng.shuffle(bag)
        self._queue.extend(bag)

    def peek(self, n: int) -> tuple[Kind, ...]:
        while len(self._queue) < n:
            self._refill()
        return tuple(self._queue[i] for i in range(n))

    def pop(self) -> Kind:
        if not self._queue:
            self._refill()
        return self._queue.popleft()
