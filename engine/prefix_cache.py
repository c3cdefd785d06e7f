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

PrefixCache keeps the bookkeeping (which content is where, the reference counts, the order of
eviction); BoardCache adds the board's side of it for engine.serving.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from . import rules as R
from .board import Board
from .request import Request
from .workload import prefix_blocks

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

    __slots__ = ("cell_of", "key_of", "refs", "lru", "shared", "shared_peak", "version")

    def __init__(self) -> None:
        self.cell_of: dict[Key, Cell] = {}  # cached content -> the block holding it
        self.key_of: dict[Cell, Key] = {}  # and back
        self.refs: dict[Cell, int] = {}  # mapped cached blocks -> running requests mapping them
        self.lru: dict[Cell, None] = {}  # cached-free blocks, least recently used first
        self.shared = 0  # mapped blocks that two or more requests map
        self.shared_peak = 0
        self.version = 0  # bumped by every write (what a drawing of the cache follows)

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
        self.version += 1
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
        self.version += 1
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
        self.version += 1
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
        self.version += 1
        key = self.key_of.pop(cell)
        del self.cell_of[key]
        self.lru.pop(cell, None)


def content_keys(req: Request, blocks: int) -> list[Key]:
    """What the first `blocks` logical blocks of `req` hold, as the cache knows content: its
    workload's shared prefix (unless it came back from the swap space with copies of its own),
    then its own tokens."""
    shared = 0 if req.private else min(prefix_blocks(req.prefix), blocks)
    return ([(PREFIX, req.prefix, i) for i in range(shared)]
            + [(OWN, req.id, i) for i in range(shared, blocks)])


class BoardCache(PrefixCache):
    """The prefix cache of one run, writing the board's blocks it concerns: the cached-free
    marks, the shared blocks' owner (PREFIX_OWNER + prefix id), and what it found (hit counts).

    The serving engine asks it what an admitted request maps and what a released one frees;
    `held` methods return how many board blocks became held (or free) so the engine's count
    stays one number.
    """

    __slots__ = ("board", "dup_tokens", "lookups", "found", "skipped", "reused")

    def __init__(self, board: Board) -> None:
        super().__init__()
        self.board = board
        self.dup_tokens = 0  # tokens running requests hold more than once through shared blocks
        self.lookups = 0  # shared-prefix blocks that admitted requests asked for
        self.found = 0  # of those, found cached
        self.skipped = 0  # context tokens found cached, not prefilled
        self.reused = 0  # of those, found by requests coming back from a preemption

    def lookup(self, req: Request) -> list[Cell]:
        """The cached blocks `req` would map now: the longest run of its context's full
        blocks whose content is cached."""
        return self.hits(content_keys(req, req.context // R.TOKENS_PER_BLOCK))

    def free_masks(self, hits: Sequence[Cell]) -> tuple[list[int], list[int]]:
        """(row masks with cached-free blocks counted as taken, row masks with only `hits`
        counted as taken): where to look for plainly free blocks first, then anywhere."""
        masks = self.board.masks
        plain = [m | c for m, c in zip(masks, self.board.cached)]
        anywhere = masks[:]
        for x, y in hits:
            anywhere[y] |= 1 << x
        return plain, anywhere

    def claim(self, cells: Iterable[Cell]) -> None:
        """Cached-free blocks among `cells` lose their content: they are about to be held."""
        for cell in cells:
            if cell in self.lru:
                self.evict(cell)
                self.board.cache((cell,), False)

    def evict_oldest(self, skip: Sequence[Cell]) -> Cell | None:
        """The least recently used cached-free block (not in `skip`), its content evicted."""
        found = self.oldest(1, skip)
        self.claim(found)
        return found[0] if found else None

    def map(self, req: Request, hits: Sequence[Cell], tokens: list[Cell], shared: int) -> tuple[int, int]:
        """Map the cached blocks `hits` into `req`'s table, and cache the full blocks of its
        shared prefix (its first `shared` blocks) that it computes now, the first of `tokens`.
        Returns (how many of `tokens` those are, board blocks now held)."""
        board = self.board
        held = 0
        for cell in hits:
            owner, prefix, _ = self.key_of[cell]
            if self.take(cell):  # cached-free: held again
                board.cache((cell,), False)
                board.place((cell,), req.id if owner == OWN else PREFIX_OWNER + prefix)
                held += 1
            else:
                self.dup_tokens += R.TOKENS_PER_BLOCK
        found = len(hits)
        if req.prefix and not req.swapped:
            self.lookups += prefix_blocks(req.prefix)
            self.found += min(found, shared)
        self.skipped += found * R.TOKENS_PER_BLOCK
        if req.preemptions:
            self.reused += found * R.TOKENS_PER_BLOCK
        fresh = 0
        while fresh < shared - found and fresh < len(tokens) \
                and (PREFIX, req.prefix, found + fresh) not in self.cell_of:
            fresh += 1  # a block whose content is cached elsewhere stays a block of its own
        if fresh:  # the shared prefix's blocks it computes: cached, mapped by it alone so far
            board.place(tokens[:fresh], PREFIX_OWNER + req.prefix)
            for i, cell in enumerate(tokens[:fresh], start=found):
                self.add((PREFIX, req.prefix, i), cell)
        req.mapped = found + fresh
        return fresh, held + fresh

    def release(self, req: Request, keep: int, finished: bool) -> tuple[list[Cell], int]:
        """Take every block from `req`: its own are freed, the full ones among its first
        `keep` staying cached, tail first (evicted first); then the cached blocks it mapped
        lose a reference, the last leaving them cached-free (a finished request's own content
        is of no use to anyone: evicted). Returns (the blocks free now, how many)."""
        board = self.board
        cells = req.blocks
        m = req.mapped
        own = cells[m:]
        board.free(own)
        freed = list(own)
        if keep > m:
            kept = [(i, cells[i]) for i in range(min(keep, len(cells)) - 1, m - 1, -1)]
            for i, cell in kept:
                self.add((OWN, req.id, i), cell, mapped=False)
            board.cache(cell for _, cell in kept)
        for cell in reversed(cells[:m]):
            if self.drop(cell):
                board.free((cell,))
                if finished and self.key_of[cell][0] == OWN:
                    self.evict(cell)
                else:
                    board.cache((cell,))
                freed.append(cell)
            else:
                self.dup_tokens -= R.TOKENS_PER_BLOCK
        return freed, len(freed)
