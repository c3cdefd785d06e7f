"""One inference request as the serving engine keeps it: its lengths, its place in the queue or
on the board (its block table), and what a preemption left it with."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import rules as R
from .allocators import Allocator
from .board import Cell
from .pieces import PIECES, Kind

QUEUED, RUNNING, FINISHED = "queued", "running", "finished"


@dataclass(slots=True, eq=False)
class Request:
    """One inference request. `output` (what it will generate) is hidden from the player and
    the bot; everything else is on screen."""

    id: int
    kind: Kind
    prompt: int
    output: int
    arrived_ms: float
    queued_ms: float  # when it last joined the queue: its deadline counts from here
    state: str = QUEUED
    mode: str = ""  # the allocator it was admitted under
    done: int = 0  # tokens generated before its current decode segment
    start_step: int = 0  # the decode step its current segment started at
    blocks: list[Cell] = field(default_factory=list)  # block table: logical page i -> blocks[i]
    reserved: int = 0  # how many of the last entries of `blocks` are reserved, still empty
    preferred: list[Cell] = field(default_factory=list)  # paged: the rest of its placement
    swapped: int = 0  # blocks it holds in the CPU swap space while preempted by swapping
    recomputed: int = 0  # generated tokens it must prefill again (preempted by recompute)
    preemptions: int = 0
    order: int = 0  # admission order: the newest running request is preempted first
    version: int = 0  # bumped whenever its scheduled decode event is no longer valid
    static: bool = False  # set up by a puzzle or test: holds its blocks, never decodes
    alloc: Allocator | None = None  # the allocator it was admitted under
    prefix: int = 0  # the shared prompt prefix it starts with (engine.workload.prefix_id; 0: none)
    mapped: int = 0  # leading entries of `blocks` that are cached blocks it maps (prefix caching)
    private: bool = False  # swapped out whole: its prefix came back as blocks of its own
    prefill_left: int = 0  # chunked prefill: context tokens still to prefill (it decodes after)
    prefill_ms: float = 0.0  # chunked prefill: when it was admitted to prefill
    first_token: bool = False  # it has given its first token (time to first token counted)
    # Speculative decoding (engine.speculative): its current segment, the tokens it has gained
    # after each step of it, and the stream the acceptances are drawn from.
    spec_seg: tuple[int, int, int, int] | None = None
    spec_cum: list[int] = field(default_factory=list)
    spec_rng: random.Random | None = None

    @property
    def name(self) -> str:
        return PIECES[self.kind].name

    @property
    def context(self) -> int:
        """Tokens in its KV cache when its current segment starts: prompt + generated."""
        return self.prompt + self.done


def growth_of(req: Request) -> int:
    """Blocks a running request may still take from the free pool as it grows: up to its
    maximum length, unless its allocator reserved that at admission (or it never decodes)."""
    alloc = req.alloc
    if alloc is None or alloc.reserves_max_length or req.static:
        return 0
    room = R.BLOCKS_PER_REQUEST - len(req.blocks)
    return room if room > 0 else 0
