"""Speculative decoding, as vLLM runs it (`--speculative-config`: n-gram, EAGLE or a draft model).

Each step, every decoding request drafts `k` tokens ahead; the target model verifies them in the
same forward pass, accepts the longest prefix it agrees with, and adds one token of its own, so a
request gains 1 to k + 1 tokens a step. Blocks for the drafts are allocated before the step (vLLM's
lookahead slots): a request needs room for its tokens plus k, so speculation holds more blocks and
preempts sooner when memory is tight. Rejected drafts roll back; their slots stay with the request
and are filled later. Verified drafts count against the step's token budget (vLLM V1 schedules
1 + k tokens for such a request), and make the step longer, but less than decode tokens do.

Where the game simplifies: each draft is accepted with a fixed chance per workload
(rules.SPEC_ACCEPT; from published acceptance lengths, docs/rules.md), independently and in a
chain (no trees); the draft costs nothing (n-gram lookup); k is one number for every request.

A request's gains over its current decode segment are drawn once, from its own seeded stream
(its id, how far it had got, its preemptions): the same run plays out the same on every machine.
Without speculation (k None) a segment gains one token a step: the functions below are how far a
decoding request has got, and when it next needs a block or finishes, either way.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from . import rules as R
from .request import RUNNING, Request

if TYPE_CHECKING:
    from .serving import Serving


def _stream(req: Request, k: int) -> random.Random:
    return random.Random((req.id * 1_000_003 + req.done * 8_191 + req.preemptions * 131 + k) & 0xFFFFFFFF)


def gained(req: Request, n: int, k: int | None) -> int:
    """Tokens `req` has gained `n` steps into its current decode segment (at most its output;
    one a step without speculation)."""
    if k is None:
        return n
    seg = (req.start_step, req.done, req.preemptions, k)
    if req.spec_seg != seg:  # a new segment (admitted, back from a preemption, a new k): draw anew
        req.spec_seg = seg
        req.spec_cum = [0]
        req.spec_rng = _stream(req, k)
    cum = req.spec_cum
    if n < len(cum):
        return cum[n]
    rng = req.spec_rng
    assert rng is not None
    accept = R.SPEC_ACCEPT[req.kind]
    left = req.output - req.done
    last = cum[-1]
    while len(cum) <= n:
        if last < left:
            a = 0
            while a < k and rng.random() < accept:
                a += 1
            last = min(left, last + 1 + a)
        cum.append(last)
    return cum[n]


def first_step(req: Request, tokens: int, k: int) -> int | None:
    """The first step of its segment after which `req` has gained at least `tokens` (None: its
    output ends before)."""
    if tokens > req.output - req.done:
        return None
    n = 0
    while gained(req, n, k) < tokens:
        n += 1
    return n


def next_steps(req: Request, full: int, k: int | None) -> tuple[int | None, int]:
    """The steps at which `req` next needs a block (None: it finishes first) and finishes, when
    its `full` blocks hold tokens: drafts need their slots before the step (lookahead slots),
    unless a reservation holds them."""
    if k is None:  # a token a step: its first token past its blocks, its last token
        return (req.start_step + full * R.TOKENS_PER_BLOCK + 1 - req.context,
                req.start_step + req.output - req.done)
    room = full * R.TOKENS_PER_BLOCK - req.context - (0 if req.reserved else k)
    finish = req.start_step + (first_step(req, req.output - req.done, k) or 0)
    at = first_step(req, room + 1, k) if room >= 0 else 0
    return (None if at is None else req.start_step + at), finish


def set_k(s: Serving, k: int) -> None:
    """Draft `k` tokens a step from the next step on: every decoding request starts a new segment
    where it stands (what it gained kept), and its drafts get their slots at once."""
    if s.spec_k is None or k == s.spec_k:
        return
    decoding = [r for r in s.running.values() if not r.static and not r.prefill_left]
    for req in decoding:
        gain = gained(req, s.step - req.start_step, s.spec_k)
        s.token_base += gain - (s.step - req.start_step)
        req.done += gain
        req.start_step = s.step
        req.version += 1  # its scheduled events are void: scheduled again below
    s.spec_k = k
    for req in decoding:
        if req.state == RUNNING:  # (a request's drafts may preempt another)
            s.schedule(req)


def step_gain(s: Serving, step: int) -> tuple[int, int]:
    """Tokens the decoding requests of `s` gained in decode step `step` (just run), and how many
    requests decoded in it."""
    k = s.spec_k
    if k is None:
        n = s.decoding()
        return n, n
    total = count = 0
    for req in s.running.values():
        n = step - req.start_step
        if n >= 1 and not req.static and not req.prefill_left:
            total += gained(req, n, k) - gained(req, n - 1, k)
            count += 1
    return total, count


def first_token(req: Request, step: int, k: int | None) -> None:
    """`req`'s prompt is in: step `step` gave its first token, and it decodes from there on (with
    speculation, as a segment of its own that drafts from the next step)."""
    if k is None:
        req.start_step = step - 1
    else:
        req.done, req.start_step = req.done + 1, step


def step_ms(decoding: int, planned: int, k: int) -> float:
    """A step's length: the base, every decode and prefill token, and every verified draft."""
    return (R.STEP_BASE_MS + R.STEP_MS_PER_TOKEN * (decoding + planned)
            + R.SPEC_MS_PER_DRAFT * decoding * k)
