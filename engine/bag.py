"""The bag randomizer: every bag holds each kind of piece once (seven tetrominoes: the 7-bag)."""

from __future__ import annotations

import random
from collections import deque

from .pieces import KINDS, Kind


def _shuffle(rng: random.Random, bag: list[Kind]) -> None:
    """rng.shuffle(bag) of a plain random.Random, written out (Fisher-Yates over getrandbits, as
    the standard library draws it): a bag is shuffled every seven pieces and once per run."""
    getrandbits = rng.getrandbits
    for i in range(len(bag) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        bag[i], bag[j] = bag[j], bag[i]


def _same_draws() -> bool:
    """Whether _shuffle() draws exactly what this Python's random module draws."""
    ours, theirs = random.Random(20240), random.Random(20240)
    for size in (1, 2, 7, 13, 64):
        a, b = list(range(size)), list(range(size))
        _shuffle(ours, a)  # type: ignore[arg-type]
        theirs.shuffle(b)
        if a != b:
            return False
    return ours.random() == theirs.random()


_WRITTEN_OUT = _same_draws()


class PieceBag:
    """Deals pieces from shuffled bags, one of each kind in KINDS per bag, drawn with the game's
    own seeded RNG. The bag's size follows KINDS, so a new kind of piece joins every bag."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._queue: deque[Kind] = deque()

    def _refill(self) -> None:
        bag = list(KINDS)
        if _WRITTEN_OUT and type(self._rng) is random.Random:
            _shuffle(self._rng, bag)
        else:
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
