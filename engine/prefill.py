"""Chunked prefill and the step's token budget: vLLM V1's scheduler (chunked prefill is its default).

Every decode step has a token budget (vLLM's max_num_batched_tokens). The running requests'
decode tokens come first, one each; what is left prefills admitted requests in chunks, first
come first served, so a long prompt no longer stalls every running request: it takes several
steps, and its first token waits. A step takes longer the more tokens it runs (a base time plus
a time per token), so a big budget admits fast and stutters, a small one decodes steadily and
keeps first tokens waiting. Blocks are allocated as each chunk is scheduled (a paged request's
come from its own placement first); a chunk that finds no free block waits. The step that
prefills a prompt's last chunk gives its first token (time to first token: from its arrival).

Where the game differs: when the running requests alone fill the budget, vLLM also holds some
of them back; the game decodes them all and holds only prefill back.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from . import rules as R
from .board import block_at
from .prefix_cache import PREFIX, PREFIX_OWNER
from .request import Request
from .speculative import step_ms as spec_step_ms
from .workload import prefix_blocks

if TYPE_CHECKING:
    from .serving import Serving


class ChunkedPrefill:
    """The prefilling requests of a run, the chunks of the step under way and the step's length;
    engine.serving calls admit() as a request is admitted, land() as a step ends and plan() as
    the next begins."""

    __slots__ = ("serving", "budget", "queue", "plan_", "step_ms", "tokens", "decoding", "planned",
                 "ttft_sum", "ttft_n", "ttft_max", "step_sum", "steps", "drafts")

    def __init__(self, serving: Serving, budget: int = R.DEFAULT_BUDGET) -> None:
        self.serving = serving
        self.budget = budget
        self.queue: deque[Request] = deque()  # admitted, prompt not prefilled yet, in order
        self.plan_: list[tuple[Request, int]] = []  # the chunks of the step under way
        self.step_ms = R.STEP_BASE_MS  # the length of the step under way
        self.tokens = 0  # tokens the prefilling requests hold in VRAM so far
        self.decoding = 0  # the step under way: decode tokens...
        self.planned = 0  # ...and prefill tokens
        self.drafts = 0  # ...and draft tokens verified (speculative decoding)
        self.ttft_sum = 0.0  # time to first token, from arrival, of every first token so far
        self.ttft_n = 0
        self.ttft_max = 0.0
        self.step_sum = 0.0  # the length of every step begun so far
        self.steps = 0

    def admit(self, req: Request, left: int) -> bool:
        """`req` was admitted with `left` tokens of its context still to prefill (the rest was
        found cached); True when it must wait for them (it decodes once they are in)."""
        req.prefill_left = left
        req.prefill_ms = self.serving.time_ms
        if not left:  # all of it found cached: its first token comes with the next step
            self._first_token(req, self.serving.next_step_ms())
            return False
        self.queue.append(req)
        self.tokens += req.context - left
        return True

    def drop(self, req: Request) -> None:
        """`req` stops prefilling unfinished (preempted)."""
        self.queue.remove(req)
        self.tokens -= req.context - req.prefill_left
        self.plan_ = [(r, c) for r, c in self.plan_ if r is not req]
        req.prefill_left = 0

    def land(self, when_ms: float) -> list[Request]:
        """The step under way ends at `when_ms`: its chunks are in. Returns the requests whose
        whole context is in now (this step gave their first token)."""
        s = self.serving
        done: list[Request] = []
        for req, chunk in self.plan_:
            req.prefill_left -= chunk
            self.tokens += chunk
            if s.cache is not None and req.prefix and not req.private and req.alloc is not None \
                    and not req.alloc.reserves_max_length:
                self._cache_prefix(req)
            if req.alloc is not None and req.alloc.reserves_max_length:
                self._fill(req)
            if not req.prefill_left:
                self.queue.remove(req)
                self.tokens -= req.context
                done.append(req)
                self._first_token(req, when_ms)
        self.plan_ = []
        return done

    def _first_token(self, req: Request, when_ms: float) -> None:
        """Count the time to first token of a request (once: not again when it comes back from
        a preemption after it)."""
        if req.first_token:
            return
        req.first_token = True
        ttft = when_ms - req.arrived_ms
        self.ttft_sum += ttft
        self.ttft_n += 1
        if ttft > self.ttft_max:
            self.ttft_max = ttft

    def plan(self) -> float:
        """The next step begins: decode tokens first, then prefill chunks in order while the
        budget lasts, each with the blocks it needs. Returns the step's length."""
        s = self.serving
        decoding = s.decoding()
        k = s.spec_k or 0
        left = self.budget - decoding * (1 + k)  # verified drafts take budget too (vLLM V1)
        planned = 0
        for req in self.queue:
            if left <= 0:
                break
            chunk = self._room(req, min(req.prefill_left, left))
            if chunk > 0:
                self.plan_.append((req, chunk))
                left -= chunk
                planned += chunk
        self.decoding, self.planned, self.drafts = decoding, planned, decoding * k
        ms = self.step_ms = spec_step_ms(decoding, planned, k)
        self.step_sum += ms
        self.steps += 1
        return ms

    # ------------------------------------------------------------------ blocks
    def _room(self, req: Request, chunk: int) -> int:
        """How much of `chunk` the blocks `req` holds (and can get now) take: a paged request
        is given blocks for it, its placement's first."""
        s = self.serving
        done = req.context - req.prefill_left
        alloc = req.alloc
        assert alloc is not None
        want = R.blocks_for(done + chunk) - len(req.blocks)
        while want > 0 and not alloc.reserves_max_length and s.next_block(req) is not None:
            want -= 1
        return min(chunk, len(req.blocks) * R.TOKENS_PER_BLOCK - done)

    def _fill(self, req: Request) -> None:
        """Contiguous: the reserved blocks its prefilled tokens reach hold tokens now."""
        s = self.serving
        full = R.blocks_for(req.context - req.prefill_left)
        while len(req.blocks) - req.reserved < full:
            s.board.fill(req.blocks[len(req.blocks) - req.reserved])
            req.reserved -= 1
            s.reserved -= 1

    def _cache_prefix(self, req: Request) -> None:
        """The blocks of its workload's shared prefix that its prefill has filled go into the
        prefix cache, mapped by it (unless that content is cached elsewhere already)."""
        s = self.serving
        board, pool = s.board, s.pool
        full = min(prefix_blocks(req.prefix), (req.context - req.prefill_left) // R.TOKENS_PER_BLOCK)
        while req.mapped < full and req.mapped < len(req.blocks) \
                and pool.know(block_at(req.blocks[req.mapped]), (PREFIX, req.prefix, req.mapped)):
            cell = req.blocks[req.mapped]
            board.free((cell,))
            board.place((cell,), PREFIX_OWNER + req.prefix)
            req.mapped += 1

    def ttft_mean(self) -> float:
        return self.ttft_sum / self.ttft_n if self.ttft_n else 0.0

    def step_mean(self) -> float:
        return self.step_sum / self.steps if self.steps else self.step_ms
