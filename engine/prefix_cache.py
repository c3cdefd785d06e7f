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

The reference counts, the content of known blocks and the order of eviction are the run's block
pool (engine.kvpool, the LAB's too); BoardCache adds the board's side of it for engine.serving.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from . import rules as R
from .board import Board, block_at, cell_at
from .kvpool import BlockPool
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


def content_keys(req: Request, blocks: int) -> list[Key]:
    """What the first `blocks` logical blocks of `req` hold, as the cache knows content: its
    workload's shared prefix (unless it came back from the swap space with copies of its own),
    then its own tokens."""
    shared = 0 if req.private else min(prefix_blocks(req.prefix), blocks)
    return ([(PREFIX, req.prefix, i) for i in range(shared)]
            + [(OWN, req.id, i) for i in range(shared, blocks)])


class BoardCache:
    """Prefix caching on one run's board, over its block pool (engine.kvpool: the reference
    counts, the content of known blocks, the order free ones are evicted in): it writes the
    board's side (the cached-free marks, a shared prefix's owner, PREFIX_OWNER + prefix id) and
    counts what it found.
    """

    __slots__ = ("board", "pool", "dup_tokens", "lookups", "found", "skipped", "reused")

    def __init__(self, board: Board, pool: BlockPool) -> None:
        self.board = board
        self.pool = pool
        self.dup_tokens = 0  # tokens running requests hold more than once through shared blocks
        self.lookups = 0  # shared-prefix blocks that admitted requests asked for
        self.found = 0  # of those, found cached
        self.skipped = 0  # context tokens found cached, not prefilled
        self.reused = 0  # of those, found by requests coming back from a preemption

    # ------------------------------------------------------------------ reading
    def lookup(self, req: Request) -> list[Cell]:
        """The cached blocks `req` would map now: the longest run of its context's full blocks
        whose content is cached, never its last token's (as vLLM, which must compute at least the
        last token to sample the next: a context found whole recomputes its last block)."""
        found = self.pool.found(content_keys(req, (req.context - 1) // R.TOKENS_PER_BLOCK))
        return [cell_at(b) for b in found]

    def content_of(self, cell: Cell) -> Key | None:
        """What the block at `cell` is known to hold (None: nothing known)."""
        return self.pool.content.get(block_at(cell))  # type: ignore[return-value]

    def refs(self, cell: Cell) -> int:
        """How many running requests map the block at `cell`."""
        return self.pool.refs[block_at(cell)]

    @property
    def version(self) -> int:
        return self.pool.version

    def frame_masks(self, need: int, hits: Sequence[Cell] = ()) -> list[int]:
        """Row masks with the blocks `need` new ones may come from left free: every plainly free
        block, and when those are too few, the cached-free ones freed longest ago (evicted when
        taken) for the rest, never one of `hits` (the blocks the request maps)."""
        board = self.board
        masks = [m | c for m, c in zip(board.masks, board.cached)]
        short = need - sum(R.WIDTH - m.bit_count() for m in masks[R.HIDDEN:])
        mapped = {block_at(c) for c in hits}
        for block in self.pool.known_free() if short > 0 else ():
            if block in mapped:
                continue
            x, y = cell_at(block)
            masks[y] &= ~(1 << x)
            short -= 1
            if not short:
                break
        return masks

    # ------------------------------------------------------------------ writing
    def claim(self, cells: Iterable[Cell]) -> None:
        """Cached-free blocks among `cells` lose their content: they are about to be held."""
        cached = self.board.cached
        for x, y in cells:
            if cached[y] >> x & 1:
                self.board.cache(((x, y),), False)
                self.pool.evict(block_at((x, y)))

    def evict_oldest(self, skip: Sequence[Cell]) -> Cell | None:
        """The free block with cached content freed longest ago (not in `skip`), its content
        evicted: the block to take when none is plainly free."""
        block = self.pool.oldest_known([block_at(c) for c in skip])
        if block is None:
            return None
        cell = cell_at(block)
        self.claim((cell,))
        return cell

    def map(self, req: Request, hits: Sequence[Cell], tokens: list[Cell], shared: int) -> int:
        """Map the cached blocks `hits` into `req`'s table, and hold and cache the full blocks
        of its shared prefix (its first `shared` blocks) that it computes now, the first of
        `tokens`. Returns how many of `tokens` those are. Counts what the cache found."""
        board, pool = self.board, self.pool
        for cell in hits:
            block = block_at(cell)
            known = self.content_of(cell)
            assert known is not None
            owner, prefix, _ = known
            if pool.ref(block):  # cached-free: held again
                board.cache((cell,), False)
                board.place((cell,), req.id if owner == OWN else PREFIX_OWNER + prefix)
            else:
                self.dup_tokens += R.TOKENS_PER_BLOCK
        found = len(hits)
        if shared and not req.swapped:
            self.lookups += shared
            self.found += min(found, shared)
        self.skipped += found * R.TOKENS_PER_BLOCK
        if req.preemptions:
            self.reused += found * R.TOKENS_PER_BLOCK
        fresh = 0
        while fresh < shared - found and fresh < len(tokens) \
                and (PREFIX, req.prefix, found + fresh) not in pool.block_of:
            fresh += 1  # a block whose content is cached elsewhere stays a block of its own
        if fresh:  # the shared prefix's blocks it computes: cached, mapped by it alone so far
            board.place(tokens[:fresh], PREFIX_OWNER + req.prefix)
            for i, cell in enumerate(tokens[:fresh], start=found):
                pool.take(block_at(cell))
                pool.know(block_at(cell), (PREFIX, req.prefix, i))
        req.mapped = found + fresh
        return fresh

    def release(self, req: Request, keep: int) -> list[Cell]:
        """Take every block from `req`: its own are freed, the full ones among its first
        `keep` staying cached, tail first (evicted first); then the cached blocks it mapped
        lose a reference, the last leaving them cached-free (a finished request's own content
        goes in forget()). Returns the blocks free now."""
        board, pool = self.board, self.pool
        cells = req.blocks
        m = req.mapped
        own = cells[m:]
        board.free(own)
        kept = min(keep, len(cells))
        contents = content_keys(req, kept)
        for i in range(len(cells) - 1, m - 1, -1):  # tail first
            block = block_at(cells[i])
            if i < kept and pool.know(block, contents[i]):
                board.cache((cells[i],))
            pool.unref(block)
        freed = list(own)
        for cell in reversed(cells[:m]):
            block = block_at(cell)
            if pool.unref(block):
                board.free((cell,))
                board.cache((cell,))
                freed.append(cell)
            else:
                self.dup_tokens -= R.TOKENS_PER_BLOCK
        return freed

    def forget(self, req: Request) -> None:
        """`req` finished: the content of its own it left cached (freed by an earlier
        preemption, then not found again) is of no use to anyone."""
        pool, board = self.pool, self.board
        for block, content in list(pool.content.items()):
            if content[0] == OWN and content[1] == req.id and not pool.refs[block]:  # type: ignore[index]
                board.cache((cell_at(block),), False)
                pool.evict(block)
