"""How a run ends: the report of its last moment, read from the game (engine.game ends it).

A CUDA OOM's counts (free blocks in reach, sealed off, in gaps too small) need a flood of every
placement on the final board: they are taken from a copy of it when the report is first read
for them (engine.memory.final_counts). Reading the game here changes nothing.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from . import memory
from . import rules as R
from .pieces import PIECES, Kind
from .reports import COUNTED, RunReport
from .request import Request
from .telemetry import utilisation

if TYPE_CHECKING:
    from .game import Game


def cause(game: Game, code: str, req: Request | None, free: int, need: int) -> str | None:
    """The report's words for an ending, unless they need the final board's counts (a CUDA
    OOM: engine.memory.final_counts words those)."""
    s = game.serving
    if code == "victory":
        return (f"{s.served} requests served: {s.tokens_served} tokens without running out "
                "of memory or falling behind")
    if code == "queue_full":
        return (f"{len(s.waiting)} requests waiting, more than the queue's {s.queue_max}: "
                f"{free} blocks free, {len(s.running)} running")
    if code == "deadline":
        assert req is not None
        return (f"req#{req.id} waited {game.wait_ms(req) / 1000:.0f} s, past the "
                f"{R.DEADLINE_MS / 1000:.0f} s deadline ({need} block(s) needed, {free} free)")
    return None


def run_report(game: Game, outcome: str, code: str, req: Request | None, kind: Kind) -> RunReport:
    """The report of a run ending now with `outcome` for the reason `code`, about `req` (the
    request it ended on, if one), a `kind` of request (what the counts are measured for)."""
    s = game.serving
    board = game.board
    need = s.need(req, game.allocator.allocator) if req is not None else 0
    occupied = board.occupied()
    free = R.VISIBLE_CELLS - occupied
    fragmented = game.allocator.allocator.external_fragmentation
    if outcome == "oom" and fragmented:
        need = R.BLOCKS_PER_REQUEST
        code = "memory_full" if free < need else code  # memory.oom_cause()
    fields: dict[str, Any] = dict(
        outcome=outcome, request_id=req.id if req is not None else 0,
        request_name=PIECES[kind].name, kind=kind, free_cells=free,
        peak_utilisation=max(game.peak_utilisation, utilisation(occupied)),
        requests_served=s.served, pieces=game.pieces, tokens=s.tokens_served,
        score=game.score, time_ms=game.time_ms, mode=game.mode, cause_code=code,
        utilisation=utilisation(occupied), reserved_blocks=s.reserved, need=need,
        resident=len(s.running), peak_resident=game.peak_resident, waiting=len(s.waiting),
        queue_max=s.queue_max,
        waited_ms=game.wait_ms(req) if req is not None else 0.0,
        preempted_swap=s.preempted_swap, preempted_recompute=s.preempted_recompute,
        reserved_wasted=s.reserved_wasted, mixed=game.mixed,
        modes_used=tuple(game.modes_used), goal=game.goal, goal_requests=game.goal_requests,
        reserved_cells=tuple(c for c in board.reserved_cells() if c[1] >= R.HIDDEN),
        prefilling_ms=(game.time_ms - req.prefill_ms if req is not None and s.prefill is not None
                       and req in s.prefill.queue else 0.0),
        **serving_figures(game),
    )
    count = partial(memory.final_counts, board.copy() if fragmented else board,
                    free, kind, s.reserved, need, code, cause(game, code, req, free, need),
                    fragmented)
    if fragmented:
        return RunReport.counted(count, **fields)
    counted: dict[str, Any] = dict(zip(COUNTED, count()))
    return RunReport(**fields, **counted)


def serving_figures(game: Game) -> dict[str, Any]:
    """What prefix caching and chunked prefill have done so far in the run (rules 4's switches):
    the run report's figures, and the live ones the console shows."""
    s = game.serving
    cache, prefill = s.cache, s.prefill
    out: dict[str, Any] = dict(prefix_copies=s.prefix_copies, prefix_hit_rate=None, prefill_skipped=0,
                               reused_tokens=0, ttft_ms_mean=None, ttft_ms_max=None, budget=None)
    if cache is not None:
        out.update(prefix_hit_rate=cache.found / cache.lookups if cache.lookups else None,
                   prefill_skipped=cache.skipped, reused_tokens=cache.reused)
    if prefill is not None:
        out.update(ttft_ms_mean=prefill.ttft_mean() if prefill.ttft_n else None,
                   ttft_ms_max=prefill.ttft_max if prefill.ttft_n else None, budget=prefill.budget)
    return out
