"""Beam search's memory: which beams die and fork, and a compact count of the blocks they hold.

``BeamSchedule`` draws, from a request's own seeded generator, the steps at which
the set of beams changes and how (the same draws whatever else the engine does,
so event-jumping and step-by-step runs agree). Between those steps every beam
just appends tokens to blocks only it holds.

``BeamTree`` counts physical blocks without numbering them: the beams' block
tables form a tree whose nodes are runs of blocks pointed at by the same beams
(a *segment*). A segment's ``cnt`` is its children plus the beams ending in it,
so a fork or a dropped beam costs O(1) amortised instead of a walk over a block
table. ``engine.kvpool.BlockPool`` does the same with numbered blocks and per-block
reference counts (the LAB screen and the property tests); both give the same
counts and the same copies.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate

from .sharing import BEAM_SURVIVAL


@lru_cache(maxsize=None)
def _patterns(width: int) -> tuple[tuple[float, ...], tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]]:
    """Every way some of ``width`` beams can be dropped: cumulative probabilities (given that one is),
    and for each the dropped beams and the survivors."""
    weights, patterns = [], []
    for mask in range(1 << width):
        alive = [bool(mask >> i & 1) for i in range(width)]
        if all(alive):
            continue
        p = math.prod(BEAM_SURVIVAL if a else 1 - BEAM_SURVIVAL for a in alive)
        if not any(alive):  # every beam dropped: the best of them is kept
            alive[0] = True
        weights.append(p)
        patterns.append((tuple(i for i in range(width) if not alive[i]), tuple(i for i in range(width) if alive[i])))
    total = sum(weights)
    cumulative = tuple(accumulate(w / total for w in weights))
    return cumulative, tuple(patterns)


class BeamSchedule:
    """When a request's beams change, and how: ``(dropped beam, beam it forks from)`` pairs."""

    __slots__ = ("random", "log_all_survive", "cumulative", "patterns")

    def __init__(self, seed: int, width: int) -> None:
        self.random = random.Random(seed).random
        self.log_all_survive = width * math.log(BEAM_SURVIVAL)
        self.cumulative, self.patterns = _patterns(width)

    def gap(self) -> int:
        """Steps (>= 0) until the next step at which some beam is dropped (geometric)."""
        return int(math.log1p(-self.random()) / self.log_all_survive)

    def step(self) -> tuple[list[tuple[int, int]], int]:
        """A changing step's forks, and the gap to the next changing step (``forks()``, then ``gap()``)."""
        forks = self.forks()
        return forks, int(math.log1p(-self.random()) / self.log_all_survive)

    def forks(self) -> list[tuple[int, int]]:
        """The dropped beams of a changing step, each with the surviving beam it is replaced by a fork of."""
        rand = self.random
        cumulative = self.cumulative
        i = min(bisect_right(cumulative, rand()), len(cumulative) - 1)
        dropped, survivors = self.patterns[i]
        n = len(survivors)
        return [(dead, survivors[int(rand() * n)]) for dead in dropped]


class Segment:
    __slots__ = ("parent", "blocks", "cnt")

    def __init__(self, parent: Segment | None, blocks: int, cnt: int) -> None:
        self.parent = parent
        self.blocks = blocks
        self.cnt = cnt


class BeamTree:
    """The blocks of one request's beams, counted; all beams have the same length."""

    __slots__ = ("leaves", "blocks", "length", "copies", "block_size")

    def __init__(self, width: int, prompt: int, block_size: int) -> None:
        self.block_size = block_size
        root = Segment(None, -(-prompt // block_size), width)
        self.leaves = [root] * width
        self.blocks = root.blocks
        self.length = prompt
        self.copies = 0

    def grow(self, length: int) -> None:
        """Every beam appends tokens up to ``length`` into blocks only it holds (after a write)."""
        bs = self.block_size
        add = -(-length // bs) - -(-self.length // bs)
        if add:
            for leaf in self.leaves:  # after a write every beam's last segment is its own
                leaf.blocks += add
            self.blocks += add * len(self.leaves)
        self.length = length

    def fork(self, forks: list[tuple[int, int]]) -> None:
        leaves = self.leaves
        dropped = []
        for dead, parent in forks:
            leaf = leaves[parent]
            leaf.cnt += 1
            dropped.append(leaves[dead])
            leaves[dead] = leaf
        for node in dropped:
            self._release(node)

    def _release(self, node: Segment | None) -> None:
        while node is not None:
            node.cnt -= 1
            if node.cnt:
                return
            self.blocks -= node.blocks
            node = node.parent

    def change(self, length: int, forks: list[tuple[int, int]]) -> int:
        """``grow(length)``, ``fork(forks)`` and ``write()`` in one: the blocks taken (or, negative, freed)
        beyond the growth."""
        self.grow(length)
        before = self.blocks
        self.fork(forks)
        self.write()
        return self.blocks - before

    def write(self) -> None:
        """Every beam writes one token; a shared, partly filled last block is copied first."""
        leaves, length = self.leaves, self.length
        if length % self.block_size == 0:
            for i, leaf in enumerate(leaves):
                leaves[i] = Segment(leaf, 1, 1)  # leaf: one beam end becomes one child
            self.blocks += len(leaves)
        else:
            for i in range(len(leaves)):
                leaf = leaves[i]
                if leaf.cnt < 2:
                    continue
                if leaf.blocks > 1:  # split off the shared last block
                    last = Segment(leaf, 1, leaf.cnt)
                    leaf.blocks -= 1
                    leaf.cnt = 1
                    for j in range(len(leaves)):
                        if leaves[j] is leaf:
                            leaves[j] = last
                    leaf = last
                copy = Segment(leaf.parent, 1, 1)
                if leaf.parent is not None:
                    leaf.parent.cnt += 1
                leaf.cnt -= 1
                leaves[i] = copy
                self.blocks += 1
                self.copies += 1
        self.length = length + 1
