"""Preemption: no block is free for a decoding request, so the newest running request loses
all its blocks at once and goes back to the front of the queue (the paper's sec. 4.5).

How it comes back is the preemption mode. *Recompute* (vLLM V1's only way, and the default):
its blocks are freed and its prompt and generated tokens are prefilled again when it returns;
with prefix caching its full blocks are freed tail first with their content known, so the head
is evicted last and often comes straight back (engine.prefix_cache). *Swap* (vLLM V0 and the
paper, sec. 4.5): its blocks move to the CPU swap space, a strip of CPU_BLOCKS, and back,
paying PCIe time both ways. V0 stopped the whole engine with an error when that space was full; the game recomputes
it instead (a rule of the game's), as it does a request whose prompt is still being prefilled
in chunks (V0 swapped only decoding requests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import events as ev
from . import rules as R
from .request import QUEUED, Request

if TYPE_CHECKING:
    from .serving import Serving


def victim(s: Serving) -> Request:
    """The newest running request whose allocator lets it be preempted."""
    best: Request | None = None
    for r in s.running.values():
        if r.alloc is not None and r.alloc.preemptible and (best is None or r.order > best.order):
            best = r
    assert best is not None, "a growing request is preemptible itself"
    return best


def preempt(s: Serving, req: Request) -> None:
    """Take every block of a running request and put it back at the front of the queue, to be
    swapped back in or recomputed as the preemption mode says."""
    n = len(req.blocks)
    # Preempted in the step it was to grow in, it got no block for that step's token: only
    # what its blocks hold was generated (as vLLM preempts before the step runs).
    generated = req.done if req.prefill_left else min(
        s.generated_of(req), (n - req.reserved) * R.TOKENS_PER_BLOCK - req.prompt)
    how = s.preempt_mode
    if how == "swap" and (s.cpu_used + n > R.CPU_BLOCKS or req.prefill_left):
        how = "recompute"  # no room in the CPU swap space, or a prompt not yet prefilled
    keep = 0
    if how == "recompute" and s.cache is not None and req.alloc is not None \
            and not req.alloc.reserves_max_length:
        keep = min(req.prompt + generated, s.tokens_of(req)) // R.TOKENS_PER_BLOCK
    cells = s.release(req, keep)
    req.done = generated
    req.blocks = []
    req.reserved = 0
    req.preferred = []
    req.state = QUEUED
    req.queued_ms = s.time_ms
    req.preemptions += 1
    if how == "swap":
        req.swapped = n
        req.private = True
        s.cpu_used += n
        s.preempted_swap += 1
        s.stall(R.SWAP_MS_PER_BLOCK * n)
    else:
        req.recomputed = generated
        s.preempted_recompute += 1
    s.waiting.appendleft(req)
    s.events.append(ev.Preempted(req.id, req.kind, tuple(cells), how, generated, s.preempt_mode))


def resume_ms(req: Request) -> float:
    """GPU time a request's admission stalls decoding for without chunked prefill: a swap-in, or
    prefilling its context (recomputing what it had generated, if it was preempted)."""
    if req.swapped:
        return R.SWAP_MS_PER_BLOCK * req.swapped
    return R.PREFILL_MS_PER_TOKEN * req.context
