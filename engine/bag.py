"""The bag randomizer: every bag holds each kind of piece once (seven tetrominoes: the 7-bag)."""

from __future__ import annotations

import random
from collections import deque

from .pieces import KINDS, Kind


class PieceBag:
    """Deals pieces from shuffled bags, one of each kind in KINDS per bag, drawn with the game's
    own seeded RNG. The bag's size follows KINDS, so a new kind of piece joins every bag."""

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
