"""Physical KV blocks with reference counts, block tables and copy-on-write (the paper's sec. 4.4).

A sequence's block table lists the physical blocks that hold its tokens, in
order. Sequences that share a prefix (the samples of one prompt, the beams of
one search, every request behind a common system prompt) point at the same
physical blocks; a block's reference count is the number of tables that hold
it, and a block goes back to the free pool only when that count drops to zero.
A sequence about to write into a block that another sequence also points at
gets its own copy first (copy-on-write); pinned blocks (a cached shared prefix)
stay allocated while no sequence points at them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

SeqId = tuple[int, int]  # (request id, sequence number within the request)


class OutOfBlocks(MemoryError):
    """No free physical block left."""


class BlockPool:
    """Free list, reference counts and one block table per sequence."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        # Popping from the end hands out low block numbers first.
        self.free: list[int] = list(range(num_blocks - 1, -1, -1))
        self.refs: list[int] = [0] * num_blocks
        self.pinned: set[int] = set()
        self.tables: dict[SeqId, list[int]] = {}
        self.lengths: dict[SeqId, int] = {}  # tokens written by each sequence
        self.cow_copies = 0
        # The latest copies: (copy number, sequence, block copied, the copy), for a screen to flash them.
        self.copy_log: deque[tuple[int, SeqId, int, int]] = deque(maxlen=256)

    @property
    def used(self) -> int:
        return self.num_blocks - len(self.free)

    def _take(self) -> int:
        if not self.free:
            raise OutOfBlocks("no free KV block")
        block = self.free.pop()
        self.refs[block] = 1
        return block

    def _drop(self, block: int) -> None:
        refs = self.refs
        refs[block] -= 1
        if refs[block] < 0:
            raise AssertionError(f"block {block} released more often than referenced")
        if refs[block] == 0 and block not in self.pinned:
            self.free.append(block)

    def pin(self, count: int) -> list[int]:
        """Allocate ``count`` blocks that stay allocated without any sequence pointing at them."""
        blocks = []
        for _ in range(count):
            block = self._take()
            self.refs[block] = 0
            self.pinned.add(block)
            blocks.append(block)
        return blocks

    def create(self, seq: SeqId, shared: Iterable[int] = (), shared_tokens: int = 0) -> None:
        """A new sequence whose table starts with ``shared`` (full) blocks of ``shared_tokens`` tokens."""
        if seq in self.tables:
            raise ValueError(f"sequence {seq!r} exists")
        table = list(shared)
        for block in table:
            self.refs[block] += 1
        self.tables[seq] = table
        self.lengths[seq] = shared_tokens

    def fork(self, parent: SeqId, child: SeqId) -> None:
        """``child`` points at every block of ``parent`` (no copy until one of them writes)."""
        if child in self.tables:
            raise ValueError(f"sequence {child!r} exists")
        table = self.tables[parent][:]
        refs = self.refs
        for block in table:
            refs[block] += 1
        self.tables[child] = table
        self.lengths[child] = self.lengths[parent]

    def append(self, seq: SeqId, tokens: int = 1) -> None:
        """Write ``tokens`` more tokens of ``seq``: new blocks when the last is full, a copy when it is shared."""
        if tokens <= 0:
            return
        table = self.tables[seq]
        length = self.lengths[seq]
        bs = self.block_size
        if table and length % bs:
            last = table[-1]
            if self.refs[last] > 1:  # copy-on-write: never write into a block another sequence reads
                copy = self._take()
                self._drop(last)
                table[-1] = copy
                self.cow_copies += 1
                self.copy_log.append((self.cow_copies, seq, last, copy))
        need = -(-(length + tokens) // bs) - len(table)
        if need > len(self.free):
            raise OutOfBlocks("no free KV block")
        for _ in range(need):
            table.append(self._take())
        self.lengths[seq] = length + tokens

    def release(self, seq: SeqId) -> None:
        """Drop ``seq``; blocks no other sequence points at go back to the free pool."""
        table = self.tables.pop(seq)
        del self.lengths[seq]
        for block in reversed(table):
            self._drop(block)

    def table(self, seq: SeqId) -> list[int]:
        return self.tables[seq]
