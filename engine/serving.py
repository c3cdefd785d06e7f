"""The serving engine: every request's life in one place — queue, admit, decode, finish, preempt.

Requests wait in a first-come-first-served queue. Admitted, a request holds KV blocks on the
board (VRAM) as its allocator (engine.allocators) says, and decodes with every other running
request: one token each per decode step of GPU time (vLLM's iteration-level batching). When the
last block a request holds is full, its next token needs another: a reserved one (contiguous:
the reservation fills up), or a new block wherever one is free (paged). If none is free the
newest running request is preempted whole (engine.preemption). A request finishes by itself
once it has generated its output, and at that moment every block it holds is freed, wherever it
is; nothing else moves.

Without chunked prefill (the paper's engine), prefill and swapping stall the GPU: while it
prefills a prompt or copies blocks no request decodes. With it (vLLM V1, engine.prefill), each
step's token budget prefills prompts in chunks beside the decode tokens. With prefix caching
(engine.prefix_cache) requests map the cached full blocks of their shared prefix; with speculative
decoding (engine.speculative) each step gains a request 1 to k + 1 tokens, and its drafts hold their
blocks ahead. Time comes in as an argument; nothing here reads a clock.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Sequence

from . import events as ev
from . import preemption
from . import rules as R
from . import speculative as spec
from .allocators import Allocator
from .board import Board, Cell, block_at
from .kvpool import BlockPool
from .features import DEFAULT as DEFAULT_FEATURES, Features
from .prefill import ChunkedPrefill
from .prefix_cache import BoardCache
from .request import FINISHED, QUEUED, RUNNING, Request, growth_of
from .workload import Arrival, prefix_blocks

_GROW, _FINISH = 0, 1


class Serving:
    """The queue, the running requests, the decode clock and the CPU swap space of one run.

    Write access to the board goes through this class only (engine.game asks it to admit);
    reading any attribute never changes anything.
    """

    def __init__(self, board: Board, features: Features = DEFAULT_FEATURES,
                 queue_max: int = R.QUEUE_MAX) -> None:
        self.board = board
        self.queue_max = queue_max  # the most requests that may wait (engine.game ends a run past it)
        self.features = features
        self.pool = BlockPool(R.VISIBLE_CELLS, R.TOKENS_PER_BLOCK)  # every held visible block
        self.cache = BoardCache(board, self.pool) if features.prefix_cache else None
        self.prefill = ChunkedPrefill(self) if features.chunked_prefill else None
        self.spec_k: int | None = 0 if features.speculative else None  # drafts a step (None: no speculation)
        self.requests: dict[int, Request] = {}  # every request not yet finished
        self.waiting: deque[Request] = deque()
        self.running: dict[int, Request] = {}
        self.step = 0
        self.time_ms = 0.0
        self.busy_until_ms = 0.0  # the GPU prefills or swaps until then: no decode step
        self._acc = 0.0  # GPU time towards the next decode step
        self._heap: list[tuple[int, int, int, int, int]] = []  # (step, kind, order, id, version)
        self._orders = 0
        self.preempt_mode = R.DEFAULT_PREEMPT
        self.cpu_used = 0  # blocks in the CPU swap space
        self.reserved = 0  # held blocks reserved for a maximum length, still empty
        self.token_base = 0  # sum of (context - start_step) over running requests (static: context)
        self.static_running = 0  # running requests set up by a puzzle or test: they never decode
        self.generated = 0  # tokens decoded so far by every request, finished or not
        self.decode_gain = 0  # of those, the ones decode steps gave (not a prefill's first token) ...
        self.decode_slots = 0  # ... over this many request-steps: tokens a step a request, drafts and all
        # Blocks the running requests may still take from the free pool as they grow (requests
        # whose allocator reserves nothing, each up to its maximum length): while the free pool
        # holds at least this many, no decode step can preempt.
        self.growth = 0
        # The cells of the request falling now (set by the game before time passes): not memory
        # yet, but a page must not be put where it will land.
        self.flying: tuple[Cell, ...] = ()
        self.served = 0
        self.tokens_served = 0  # output tokens of finished requests
        self.unscored = 0  # of those, the tokens not yet taken by take_unscored()
        self.reserved_wasted = 0  # reserved blocks still empty when their request finished
        self.preempted_swap = 0
        self.preempted_recompute = 0
        self.finished_holding_max = 0  # most blocks a request held once finished (counted; must be 0)
        self.prefix_copies = 0  # contiguous: shared-prefix blocks copied while the prefix ran
        self._live_prefixes: dict[int, int] = {}  # prefix -> running requests that start with it
        self.events: list[ev.Event] = []

    # ------------------------------------------------------------------ reading
    @property
    def held(self) -> int:
        """Visible blocks held (tokens and reservations), each counted once."""
        return self.pool.used

    def tokens_of(self, req: Request) -> int:
        """Tokens in a request's KV cache now."""
        if req.state == RUNNING and not req.static:
            if req.prefill_left:
                return req.context - req.prefill_left
            n = self.step - req.start_step  # steps into its decode segment: a token each, unless speculating
            return req.context + (n if self.spec_k is None else spec.gained(req, n, self.spec_k))
        return req.context

    def generated_of(self, req: Request) -> int:
        return self.tokens_of(req) - req.prompt

    def tokens_stored(self) -> int:
        """Tokens held in VRAM by every running request."""
        dup = self.cache.dup_tokens if self.cache is not None else 0  # shared tokens, stored once
        if self.spec_k is not None:  # tokens a step vary by request: counted one by one
            return sum(self.tokens_of(r) for r in self.running.values()) - dup
        p = self.prefill
        return (self.token_base + self.decoding() * self.step - dup
                + (p.tokens if p is not None else 0))

    def decoding(self) -> int:
        """Running requests that decode (not set up static, not still prefilling)."""
        p = self.prefill
        return len(self.running) - self.static_running - (len(p.queue) if p is not None else 0)

    def may_preempt(self) -> bool:
        """Whether a decode step could find no free block for a growing request (and so
        preempt one) before the next admission."""
        return self.growth > R.VISIBLE_CELLS - self.held - len(self.flying)

    def need(self, req: Request, alloc: Allocator | None = None, hits: list[Cell] | None = None) -> int:
        """Blocks `req` must be given to be admitted: its swapped blocks, or its context's, less
        those cached (paged with prefix caching, under `alloc`; `hits`: hits(), when known)."""
        if req.swapped:
            return req.swapped
        return R.blocks_for(req.context) - len(self.hits(req, alloc) if hits is None else hits)

    def hits(self, req: Request, alloc: Allocator | None) -> list[Cell]:
        """The cached blocks `req` would map if admitted now under `alloc` (engine.prefix_cache;
        none without it, for a contiguous allocator, or coming back from the swap space)."""
        cache = self.cache
        if cache is None or alloc is None or alloc.reserves_max_length or req.swapped:
            return []
        return cache.lookup(req)

    def table(self, req: Request) -> ev.BlockTable:
        """A request's block table now (logical page -> physical block)."""
        return ev.BlockTable(req.id, req.kind, tuple(enumerate(req.blocks)), req.reserved,
                             self.tokens_of(req))

    def cell_tokens(self, cell: Cell) -> tuple[Request, int, int] | None:
        """(request, logical page, tokens in that block) for a held block; None when free."""
        owner = self.board.grid[cell[1]][cell[0]]
        req = self.requests.get(owner)
        if req is None or req.state != RUNNING:
            return None
        page = req.blocks.index(cell)
        tokens = self.tokens_of(req) - page * R.TOKENS_PER_BLOCK
        return req, page, max(0, min(R.TOKENS_PER_BLOCK, tokens))

    # ------------------------------------------------------------------ scoring
    def take_unscored(self) -> int:
        """The output tokens of the requests finished since the last call (the game scores
        them at the level they finished in)."""
        n = self.unscored
        self.unscored = 0
        return n

    # ------------------------------------------------------------------ the queue
    def arrive(self, a: Arrival) -> Request:
        req = Request(a.id, a.kind, a.prompt, a.output, a.time_ms, a.time_ms, prefix=a.prefix)
        self.requests[req.id] = req
        self.waiting.append(req)
        self.events.append(ev.Arrived(req.id, req.kind, req.prompt, len(self.waiting), self.queue_max))
        return req

    # ------------------------------------------------------------------ admission
    def admit(self, req: Request, alloc: Allocator, tokens: list[Cell], reserved: list[Cell],
              how: str, preferred: list[Cell] | None = None, hits: Sequence[Cell] = ()) -> None:
        """Give `req` its blocks (`hits`: cached blocks it maps, then `tokens` hold the rest of
        its context, `reserved` are held empty) and let it decode. The caller has taken it out
        of the queue and checked the blocks are free."""
        board = self.board
        rid = req.id
        chunked = self.prefill is not None and not req.swapped
        if chunked:  # its context's blocks come as its chunks do (contiguous: held reserved)
            if alloc.reserves_max_length:
                tokens, reserved = [], [*tokens, *reserved]
            else:
                tokens, preferred = [], [*tokens, *(preferred or ())]
        own = tokens
        cache = self.cache
        if cache is not None:
            cache.claim(tokens)
            cache.claim(reserved)
            shared = 0 if req.private or alloc.reserves_max_length else prefix_blocks(req.prefix)
            own = tokens[cache.map(req, hits, tokens, shared):]
        self.hold(own, rid, reserved)
        swapped = req.swapped
        context = req.prompt + req.done
        if swapped:  # preemption.resume_ms(), need() and their like, written out for every admission
            stall = R.SWAP_MS_PER_BLOCK * swapped
            resumed = "swap"
            self.cpu_used -= swapped
            req.swapped = 0
        else:
            stall = 0.0 if chunked else R.PREFILL_MS_PER_TOKEN * (context - R.TOKENS_PER_BLOCK * len(hits))
            resumed = "recompute" if req.recomputed else ""
        req.recomputed = 0
        req.state = RUNNING
        req.mode = alloc.name
        req.alloc = alloc
        if req.prefix:
            live = self._live_prefixes
            if alloc.reserves_max_length and live.get(req.prefix):
                self.prefix_copies += prefix_blocks(req.prefix)
            live[req.prefix] = live.get(req.prefix, 0) + 1
        blocks = req.blocks = [*hits, *tokens, *reserved] if hits else [*tokens, *reserved]
        n_reserved = req.reserved = len(reserved)
        req.preferred = list(preferred or ())
        step = req.start_step = self.step
        order = self._orders = self._orders + 1
        req.order = order
        self.running[rid] = req
        self.reserved += n_reserved
        self.growth += growth_of(req)
        if chunked and self.prefill.admit(req, context - R.TOKENS_PER_BLOCK * len(hits)):  # type: ignore[union-attr]
            pass  # it decodes once its context is in (ChunkedPrefill.land)
        else:
            self.token_base += context - step
            self.schedule(req)
        if stall > 0:
            self.stall(stall)
        self.events.append(ev.Admitted(
            ev.BlockTable(rid, req.kind, tuple(enumerate(blocks)), n_reserved, context),
            how, stall, resumed, alloc.name, len(hits), chunked))

    def hold(self, cells: Sequence[Cell], owner: int, reserved: Sequence[Cell] = ()) -> None:
        """Hold free blocks for `owner` (`reserved`: held empty): the board and the pool."""
        self.board.place(cells, owner, reserved)
        take = self.pool.take
        for cell in cells:
            take(block_at(cell))
        for cell in reserved:
            take(block_at(cell))

    def stall(self, ms: float) -> None:
        if ms > 0:
            self.busy_until_ms = max(self.busy_until_ms, self.time_ms) + ms

    # ------------------------------------------------------------------ time
    def advance(self, dt_ms: float) -> None:
        """Let `dt_ms` of game time pass: decode steps, block growth, finishes, preemptions."""
        t0 = self.time_ms
        t1 = t0 + dt_ms
        self.time_ms = t1
        busy = self.busy_until_ms
        free = t1 - (busy if busy > t0 else t0)
        if free <= 0:
            return
        acc = self._acc + free
        prefill = self.prefill
        length = R.DECODE_STEP_MS if prefill is None else prefill.step_ms
        if acc >= length:
            heap = self._heap
            while acc >= length:
                acc -= length
                step = self.step = self.step + 1
                gain, slots = spec.step_gain(self, step)
                self.generated += gain
                self.decode_gain += gain
                self.decode_slots += slots
                if prefill is not None:
                    for req in prefill.land(t1 - acc):  # this step gave their first token
                        spec.first_token(req, step, self.spec_k)
                        self.token_base += req.context - req.start_step
                        self.generated += 1
                        self.schedule(req)
                if heap and heap[0][0] <= step:
                    self._run_step(step)
                if prefill is not None:
                    length = prefill.plan()
        self._acc = acc

    def next_step_ms(self, n: int = 1) -> float:
        """The game time of the n-th decode step from now (1: the next), if no stall comes
        before it."""
        t, busy = self.time_ms, self.busy_until_ms
        length = R.DECODE_STEP_MS if self.prefill is None else self.prefill.step_ms
        return (busy if busy > t else t) + length * n - self._acc

    def next_change_ms(self) -> float:
        """The game time of the next decode step at which a running request grows or
        finishes (infinity: none runs)."""
        heap = self._heap
        if not heap:
            return math.inf
        n = heap[0][0] - self.step
        return self.next_step_ms(n if n > 1 else 1)

    def schedule(self, req: Request) -> None:
        """Queue the next thing that happens to a running request: it needs a block, or it
        finishes (a block first on a tie: its last token needs room too)."""
        if req.static:
            return
        full = len(req.blocks) - req.reserved  # blocks holding tokens
        grow, finish = spec.next_steps(req, full, self.spec_k)
        if grow is not None and grow <= finish and (req.reserved or full < R.BLOCKS_PER_REQUEST):
            if self.spec_k and grow <= self.step:  # its drafts need their slots before the next step
                self._grow(req)
                return
            heapq.heappush(self._heap, (grow, _GROW, req.order, req.id, req.version))
        else:
            heapq.heappush(self._heap, (finish, _FINISH, req.order, req.id, req.version))

    def _run_step(self, step: int) -> None:
        heap = self._heap
        while heap and heap[0][0] <= step:
            _, what, _, rid, version = heapq.heappop(heap)
            req = self.running.get(rid)
            if req is None or req.version != version:
                continue
            if what == _FINISH:
                self._finish(req)
            else:
                self._grow(req)

    def _grow(self, req: Request) -> None:
        board = self.board
        if req.reserved:  # its reservation fills: the reserved block now holds tokens
            cell = req.blocks[len(req.blocks) - req.reserved]
            board.fill(cell)
            req.reserved -= 1
            self.reserved -= 1
            self.schedule(req)
            return
        got = self.next_block(req)
        while got is None:
            victim = preemption.victim(self)
            self.preempt(victim)
            if victim is req:
                return
            got = self.next_block(req)
        self.schedule(req)
        self.events.append(ev.Grew(req.id, req.kind, len(req.blocks) - 1, got))

    def next_block(self, req: Request) -> Cell | None:
        """Hold the next block of a paged request: the rest of its placement, else a plainly
        free block (never under the falling request), else the cached block freed longest ago."""
        board, cache = self.board, self.cache
        taken = [m | c for m, c in zip(board.masks, board.cached)] if cache is not None else board.masks[:]
        for x, y in self.flying:
            taken[y] |= 1 << x
        last = req.blocks[-1] if req.blocks else req.preferred[0] if req.preferred else (R.WIDTH // 2, R.HEIGHT - 1)
        got = req.alloc.grow(taken, req.preferred, last)  # type: ignore[union-attr]
        if got is None and cache is not None:
            got = cache.evict_oldest(self.flying)
        if got is None:
            return None
        if got in req.preferred:
            req.preferred.remove(got)
        self.hold((got,), req.id)
        req.blocks.append(got)
        self.growth -= 1
        return got

    def release(self, req: Request, keep: int = 0) -> list[Cell]:
        """Take every block from a running request; returns the blocks free now. `keep`: its
        first `keep` logical blocks are full and stay cached when freed (a preemption by
        recomputation, with prefix caching)."""
        cells = req.blocks
        self.growth -= growth_of(req)
        if req.mapped or keep:
            assert self.cache is not None
            freed = self.cache.release(req, keep)
        else:
            self.board.free(cells)
            unref = self.pool.unref
            for cell in cells:
                unref(block_at(cell))
            freed = cells
        self.reserved -= req.reserved
        if req.prefill_left:
            assert self.prefill is not None
            self.prefill.drop(req)
        else:
            self.token_base -= req.context - req.start_step
        if req.prefix:
            live = self._live_prefixes
            live[req.prefix] -= 1
            if not live[req.prefix]:
                del live[req.prefix]
        del self.running[req.id]
        req.version += 1
        req.mapped = 0
        return freed

    def _finish(self, req: Request) -> None:
        wasted = req.reserved
        cells = self.release(req)
        if self.cache is not None:
            self.cache.forget(req)
        # Measured, not assumed: blocks the board still gives this request once it finished.
        kept = self.board.held_by(req.id)
        if kept > self.finished_holding_max:
            self.finished_holding_max = kept
        req.done = req.output
        req.state = FINISHED
        req.blocks = []
        req.reserved = 0
        del self.requests[req.id]
        self.served += 1
        self.tokens_served += req.output
        self.unscored += req.output
        self.reserved_wasted += wasted
        self.events.append(ev.Finished(req.id, req.kind, tuple(cells), req.output, wasted))

    def preempt(self, req: Request) -> None:
        """Take every block of a running request and put it back at the front of the queue
        (engine.preemption)."""
        preemption.preempt(self, req)
