"""Physical KV blocks with reference counts: the one memory model of the game and the LAB.

A block is free or held; a held block's reference count is the number of block tables that map
it (the paper's sec. 4.4): sequences that share a prefix (the samples of one prompt, the beams
of one search, every request behind a common system prompt) point at the same physical block,
which goes back to the free pool only when its count drops to zero. A sequence about to write
into a block another sequence also points at gets its own copy first (copy-on-write); pinned
blocks stay allocated while no sequence points at them.

A full block may be known by its content (vLLM's automatic prefix caching hashes it with every
token before it; engine.prefix_cache names that content). A known block that goes free keeps
its content: it is free memory, but found again by content it is mapped instead of computed.
Free blocks are kept in the order they went free, so the known one freed longest ago is the one
evicted first when a block is needed (vLLM's free-block queue).

The LAB's simulator asks for any free block (`append`, `fork`: low numbers first, the last freed
first); the game asks for the block where a request came to rest (`take`). Blocks are numbers
from 0; the game numbers the visible cells of its board row by row.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Sequence

SeqId = tuple[int, int]  # (request id, sequence number within the request)


class OutOfBlocks(MemoryError):
    """No free physical block left."""


class BlockPool:
    """Free blocks in the order they went free, reference counts, content of known blocks, and
    one block table per sequence (the LAB's)."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.num_blocks = num_blocks
        self.block_size = block_size
        # Free blocks, oldest first; the LAB's append() takes the newest (so, from a fresh pool,
        # low block numbers first), prefix caching evicts the oldest known one.
        self.free: dict[int, None] = dict.fromkeys(range(num_blocks - 1, -1, -1))
        self.refs: list[int] = [0] * num_blocks
        self.pinned: set[int] = set()
        self.tables: dict[SeqId, list[int]] = {}
        self.lengths: dict[SeqId, int] = {}  # tokens written by each sequence
        self.cow_copies = 0
        # The latest copies: (copy number, sequence, block copied, the copy), for a screen to flash them.
        self.copy_log: deque[tuple[int, SeqId, int, int]] = deque(maxlen=256)
        self.content: dict[int, Hashable] = {}  # known blocks (held or free) -> their content
        self.block_of: dict[Hashable, int] = {}  # and back
        self.shared = 0  # held blocks mapped more than once through ref() (the game's sharing)
        self.shared_peak = 0
        self.version = 0  # bumped by every change of a block's state (what a drawing follows)

    @property
    def used(self) -> int:
        return self.num_blocks - len(self.free)

    # ------------------------------------------------------------------ single blocks
    def _take(self) -> int:
        if not self.free:
            raise OutOfBlocks("no free KV block")
        block, _ = self.free.popitem()
        self._forget(block)
        self.refs[block] = 1
        self.version += 1
        return block

    def take(self, block: int) -> None:
        """Hold the free block `block` for one table; content it kept is evicted (it will hold
        other tokens)."""
        del self.free[block]
        self._forget(block)
        self.refs[block] = 1
        self.version += 1

    def ref(self, block: int) -> bool:
        """One more table maps `block` (held, or free with its content known); True when it
        was free (held again, its content found)."""
        refs = self.refs
        n = refs[block]
        refs[block] = n + 1
        self.version += 1
        if n == 0:
            del self.free[block]
            return True
        if n == 1:
            self.shared += 1
            if self.shared > self.shared_peak:
                self.shared_peak = self.shared
        return False

    def unref(self, block: int) -> bool:
        """One table stops mapping `block`; True when no one maps it now (it is free, the most
        recently freed, and keeps its content if known)."""
        refs = self.refs
        n = refs[block] - 1
        if n < 0:
            raise AssertionError(f"block {block} released more often than referenced")
        refs[block] = n
        self.version += 1
        if n == 1:
            self.shared -= 1
        if n == 0 and block not in self.pinned:
            self.free[block] = None
            return True
        return False

    # ------------------------------------------------------------------ content (prefix caching)
    def know(self, block: int, content: Hashable) -> bool:
        """`block` (full) holds `content`; False (and nothing changes) when that content is
        known in another block already."""
        if content in self.block_of:
            return False
        self.content[block] = content
        self.block_of[content] = block
        self.version += 1
        return True

    def found(self, contents: Iterable[Hashable]) -> list[int]:
        """The blocks holding the longest run of `contents` from the first (a chain: a block
        is found only if every block before it is)."""
        out: list[int] = []
        block_of = self.block_of
        for content in contents:
            block = block_of.get(content)
            if block is None:
                break
            out.append(block)
        return out

    def evict(self, block: int) -> None:
        """Forget the content of `block`."""
        self._forget(block)
        self.version += 1

    def _forget(self, block: int) -> None:
        content = self.content.pop(block, None)
        if content is not None:
            del self.block_of[content]

    def known_free(self) -> list[int]:
        """Free blocks whose content is known, the one freed longest ago first."""
        content = self.content
        return [b for b in self.free if b in content]

    def oldest_known(self, skip: Sequence[int] = ()) -> int | None:
        """The free block with known content freed longest ago (not in `skip`): the next to be
        evicted."""
        content = self.content
        for b in self.free:
            if b in content and b not in skip:
                return b
        return None

    # ------------------------------------------------------------------ the LAB's sequences
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
        self.version += 1

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
        self.version += 1

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
                self._drop_plain(last)
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
            self._drop_plain(block)

    def _drop_plain(self, block: int) -> None:
        """A sequence's reference goes (the LAB's tables, whose counts sharing raises directly)."""
        refs = self.refs
        refs[block] -= 1
        self.version += 1
        if refs[block] < 0:
            raise AssertionError(f"block {block} released more often than referenced")
        if refs[block] == 0 and block not in self.pinned:
            self.free[block] = None

    def table(self, seq: SeqId) -> list[int]:
        return self.tables[seq]
