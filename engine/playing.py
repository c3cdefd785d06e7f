"""A policy playing one game: the loop every autoplay and chapter run shares, and the figures a
finished (or stopped) game leaves.

Policies: `idle` presses nothing at all; `centre` hard-drops every request at its spawn pose at
once; `split` splits every request the moment it appears and again whenever it is refused
(vLLM's own scheduler: admit first come, first served while blocks are free; in contiguous mode,
where nothing splits, it drops like `centre`); `bot` is engine.bot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .bot import Bot
from .game import Game, Input
from .rules import DECODE_STEP_MS, TOKENS_PER_BLOCK, VISIBLE_CELLS

POLICIES = ("idle", "centre", "split", "bot")
THINK_MS = 150.0  # game time the bot spends on each request before its final key...
MOVE_MS = 60.0  # ...and per key it presses before that (steering a piece takes longer)
IDLE_STEP_MS = 100.0  # how far time moves on while nothing is pressed
SAMPLE_MS = 1_000.0  # the time averages (waste, resident requests) read the game this often


@dataclass(frozen=True, slots=True)
class GameStats:
    minutes: float
    pieces: int
    served: int
    tokens: int
    ended: bool
    outcome: str | None  # "oom", "overload" or None (reached the cap)
    cause: str | None
    resident_mean: float
    resident_peak: int
    frag_peak: float
    waste_share: float  # time average
    oom_free_minus_need: int | None
    preempted_swap: int
    preempted_recompute: int
    finished_holding: int
    peak_utilisation: float  # the most VRAM held at once
    prefix_hit_rate: float  # shared-prefix blocks found cached, of those asked for
    prefill_tokens_skipped: int  # context tokens found cached instead of prefilled
    reused_after_preemption: int  # of those, found by requests back from a preemption
    shared_blocks_peak: int  # the most blocks two or more requests mapped at once
    budget: int | None  # the step's token budget (None: prefill stalls instead)
    ttft_ms: float  # mean game time from a request's arrival to its first token (chunked prefill)
    step_ms: float  # mean game time of a decode step
    won: bool = False  # a run with a goal reached it
    running_at_end: int = 0  # requests running when it ended (or stopped)
    held_at_end: float = 0.0  # the share of VRAM held then
    running_at_mark: int | None = None  # requests running at the sampler's mark (None: no mark)
    held_at_mark: float = 0.0  # the share of VRAM held then


class Sampler:
    """Time averages of the gauges, read every SAMPLE_MS of game time, and the requests running
    at `mark_ms` (None: not counted)."""

    def __init__(self, mark_ms: float | None = None) -> None:
        self.mark_ms = mark_ms
        self.running_at_mark: int | None = None
        self.held_at_mark = 0.0  # the share of VRAM held then
        self.next_ms = 0.0
        self.n = 0
        self.resident = 0
        self.frag_peak = 0.0
        self.waste_num = 0
        self.waste_den = 0

    def read(self, game: Game) -> None:
        if self.mark_ms is not None and self.running_at_mark is None and game.time_ms >= self.mark_ms:
            self.running_at_mark = len(game.serving.running)
            self.held_at_mark = game.serving.held / VISIBLE_CELLS
        while game.time_ms >= self.next_ms:
            self.next_ms += SAMPLE_MS
            tokens, slots, lost = game.waste()
            total = slots + lost * TOKENS_PER_BLOCK
            self.waste_num += total - tokens
            self.waste_den += total
            free = VISIBLE_CELLS - game.serving.held
            if free:
                self.frag_peak = max(self.frag_peak, lost / free)
            self.resident += len(game.serving.running)
            self.n += 1


def drive(game: Game, policy: str, bot: Bot, cap_ms: float,
          step: Callable[..., object] | None = None, mark_ms: float | None = None) -> Sampler:
    """Play `game` under `policy` until it ends or reaches `cap_ms` of game time (or, for a run
    that waits for its first move, until nothing moves it); `step` is the game's update (or a
    recorder's). The sampler counts, at `mark_ms`, the requests running then."""
    step = step if step is not None else game.update
    sampler = Sampler(mark_ms)
    while not game.over and game.time_ms < cap_ms:
        if policy == "bot" and (game.active is not None or game.blocked is not None):
            plan = bot.plan(game)
            if not plan or plan[-1] not in (Input.HARD_DROP, Input.SPLIT):
                step(IDLE_STEP_MS * 2, plan)  # waiting: the request falls meanwhile
            else:
                request = game.active.request_id if game.active is not None else None
                step(0.0, plan[:-1])
                step(THINK_MS + MOVE_MS * (len(plan) - 1))  # the piece falls while the bot "thinks"
                still = (game.active is not None and game.active.request_id == request) or (
                    request is None and game.blocked is not None)
                if still and not game.over:
                    step(0.0, plan[-1:])
        elif policy == "centre" and game.active is not None:
            step(0.0, (Input.HARD_DROP,))
        elif policy == "split" and (game.active is not None or game.blocked is not None):
            held = game.falling if game.active is not None else game.blocked
            step(0.0, (Input.SPLIT if game.allocator.player_split else Input.HARD_DROP,))
            if held in (game.falling if game.active is not None else None, game.blocked):
                step(IDLE_STEP_MS)  # refused: it waits for blocks to free
        else:
            step(IDLE_STEP_MS)
        if game.ready:  # nothing was pressed: a run that waits for its first move never starts
            break
        sampler.read(game)
    return sampler


def stats_of(game: Game, sampler: Sampler) -> GameStats:
    """What a finished (or stopped) game's figures were."""
    r = game.result if game.over else None
    outcome = r.outcome if r is not None and r.outcome != "victory" else None
    n = max(1, sampler.n)
    s = game.serving
    at_mark, held_at_mark = sampler.running_at_mark, sampler.held_at_mark
    if sampler.mark_ms is not None and at_mark is None:  # it ended (or stopped) before the mark
        at_mark, held_at_mark = len(s.running), s.held / VISIBLE_CELLS
    cache = s.cache
    return GameStats(
        minutes=game.time_ms / 60_000.0, pieces=game.pieces, served=s.served,
        tokens=s.tokens_served, ended=outcome is not None, outcome=outcome,
        cause=r.cause_code if outcome is not None and r is not None else None,
        resident_mean=sampler.resident / n, resident_peak=game.peak_resident,
        frag_peak=sampler.frag_peak,
        waste_share=sampler.waste_num / sampler.waste_den if sampler.waste_den else 0.0,
        oom_free_minus_need=(r.free_cells - r.need) if r is not None and outcome == "oom" else None,
        preempted_swap=s.preempted_swap, preempted_recompute=s.preempted_recompute,
        finished_holding=s.finished_holding_max, peak_utilisation=game.peak_utilisation,
        prefix_hit_rate=cache.found / cache.lookups if cache is not None and cache.lookups else 0.0,
        prefill_tokens_skipped=cache.skipped if cache is not None else 0,
        reused_after_preemption=cache.reused if cache is not None else 0,
        shared_blocks_peak=s.pool.shared_peak if cache is not None else 0,
        budget=s.prefill.budget if s.prefill is not None else None,
        ttft_ms=s.prefill.ttft_mean() if s.prefill is not None else 0.0,
        step_ms=s.prefill.step_mean() if s.prefill is not None else DECODE_STEP_MS,
        won=r is not None and r.outcome == "victory", running_at_end=len(s.running),
        held_at_end=s.held / VISIBLE_CELLS, running_at_mark=at_mark, held_at_mark=held_at_mark)
