"""Prefix caching on the game's board: vLLM's automatic prefix caching (SGLang's RadixAttention).

A full KV block is known by its content: the tokens in it and every token before it (vLLM
hashes a block with its parent's hash; SGLang keeps the same chains as a radix tree). Requests
whose prompts start with the same tokens — a workload's shared system prompt — map their first
logical blocks to the same physical blocks: a block's reference count is the number of running
requests that map it, and it is computed once. Only full blocks are cached; a partly filled
block never is.

When the last request mapping a cached block finishes or is preempted, the block stays cached
but free ("cached-free"): it counts as free memory and can be handed out at once, but while no
one takes it, a request whose prompt starts with that content finds it and skips its prefill.
A block is needed and none is plainly free: the least recently used cached-free block is evicted
(vLLM's free-block queue). A request preempted by recomputation frees its blocks tail first with
their content known, so its head is evicted last and often comes straight back when it resumes.

This module keeps the bookkeeping only (which content is where, the reference counts, the
order of eviction); engine.serving writes the board.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Cell = tuple[int, int]
# A block's content: (PREFIX, prefix id, logical block) for a workload's shared prefix, or
# (OWN, request id, logical block) for a request's own tokens (only it can ever find those again).
Key = tuple[int, int, int]
PREFIX, OWN = 0, 1
# The board's owner id of a shared prefix's blocks: PREFIX_OWNER + prefix id (request ids never
# reach it), so a block many requests map is drawn as the prefix's, not one request's.
PREFIX_OWNER = 1 << 40


class PrefixCache:
    """Which cached content each block holds, the reference counts of the mapped ones, and the
    cached-free blocks in the order they are evicted (least recently used first).

    Reading never changes anything: hits() is a lookup; take(), add(), drop(), evict() write.
    """

    __slots__ = ("cell_of", "key_of", "refs", "lru", "shared", "shared_peak")

    def __init__(self) -> None:
        self.cell_of: dict[Key, Cell] = {}  # cached content -> the block holding it
        self.key_of: dict[Cell, Key] = {}  # and back
        self.refs: dict[Cell, int] = {}  # mapped cached blocks -> running requests mapping them
        self.lru: dict[Cell, None] = {}  # cached-free blocks, least recently used first
        self.shared = 0  # mapped blocks that two or more requests map
        self.shared_peak = 0

    # ------------------------------------------------------------------ reading
    def hits(self, keys: Iterable[Key]) -> list[Cell]:
        """The blocks holding the longest run of `keys` from the first (a chain: a block is
        only found if every block before it is)."""
        out: list[Cell] = []
        cell_of = self.cell_of
        for key in keys:
            cell = cell_of.get(key)
            if cell is None:
                break
            out.append(cell)
        return out

    def is_free(self, cell: Cell) -> bool:
        """Whether `cell` is cached-free (counted as free memory)."""
        return cell in self.lru

    def oldest(self, n: int, skip: Sequence[Cell] = ()) -> list[Cell]:
        """The `n` cached-free blocks evicted first (fewer when fewer are cached), passing over
        `skip`."""
        out: list[Cell] = []
        if n <= 0:
            return out
        for cell in self.lru:
            if cell not in skip:
                out.append(cell)
                if len(out) == n:
                    break
        return out

    # ------------------------------------------------------------------ writing
    def take(self, cell: Cell) -> bool:
        """One more running request maps the cached block `cell`; True when it was cached-free
        (it is held again)."""
        refs = self.refs
        n = refs.get(cell, 0)
        refs[cell] = n + 1
        if n == 0:
            del self.lru[cell]
            return True
        if n == 1:
            self.shared += 1
            if self.shared > self.shared_peak:
                self.shared_peak = self.shared
        return False

    def add(self, key: Key, cell: Cell, mapped: bool = True) -> None:
        """The full block `cell` now holds `key`'s content: mapped by the request that computed
        it, or (mapped=False) cached-free at once, freed by a preempted request. Content cached
        elsewhere already stays where it is."""
        if key in self.cell_of:
            return
        self.cell_of[key] = cell
        self.key_of[cell] = key
        if mapped:
            self.refs[cell] = 1
        else:
            self.lru[cell] = None

    def drop(self, cell: Cell) -> bool:
        """A request stops mapping `cell`; True when no one maps it now (it is cached-free,
        the most recently used)."""
        refs = self.refs
        n = refs[cell] - 1
        if n:
            refs[cell] = n
            if n == 1:
                self.shared -= 1
            return False
        del refs[cell]
        self.lru[cell] = None
        return True

    def evict(self, cell: Cell) -> None:
        """Forget the content of the cached-free block `cell` (it is handed out for something
        else)."""
        key = self.key_of.pop(cell)
        del self.cell_of[key]
        self.lru.pop(cell, None)
