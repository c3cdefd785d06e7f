"""The chapters played by a policy: `python -m engine.autoplay --chapter N|all`.

Every chapter run is seeded and deterministic. Chapter 2 replays chapter 1's arrivals, so for
each seed the same policy's chapter-1 run is played first: the moment it ended is where chapter
2 counts the requests it has running (`running_at_contiguous_end_mean`), the article's question
answered on the same arrivals.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass

from .playing import GameStats, drive, stats_of
from . import speculative
from .bot import Bot
from .chapters import CHAPTERS, Chapter, chapter
from .game import OVERLOAD_CAUSES
from .memory import OOM_CAUSES


@dataclass(frozen=True, slots=True)
class ChapterSummary:
    chapter: int
    name: str
    adds: str
    mode: str
    goal: int | None  # requests to serve (None: endless)
    games: int
    completed_count: int  # runs that reached the goal
    end_causes: dict[str, int]  # how the runs that did not ended
    minutes_mean: float
    minutes_min: float
    served_mean: float
    tokens_mean: float
    tokens_per_minute_mean: float
    preemptions_mean: float
    spec_k: int | None  # the drafts a step it was forced to (None: chosen, or no speculation)
    running_at_end_mean: float
    running_peak_mean: float
    waste_share_mean: float
    prefix_hit_rate_mean: float
    ttft_ms_mean: float
    held_at_end_mean: float  # the share of VRAM held (reserved included) when runs ended
    # The chapter that replays another's arrivals (2): at the moment that run ended, the requests
    # running, and the share of VRAM they held.
    running_at_contiguous_end_mean: float | None
    held_at_contiguous_end_mean: float | None


def play_chapter(ch: Chapter, seed: int, policy: str, skill: float, max_minutes: float,
                 mark_ms: float | None = None, spec_k: int | None = None) -> GameStats:
    """One run of chapter `ch` under `policy`, stopped when it ends or at `max_minutes`;
    `spec_k`: the drafts a step, kept all run (None: the player's, or the bot's, choice)."""
    game = ch.new_game(seed)
    if spec_k is not None:
        speculative.set_k(game.serving, spec_k)
    sampler = drive(game, policy, Bot(skill=skill, seed=seed, speculate=spec_k is None),
                    max_minutes * 60_000.0, mark_ms=mark_ms)
    return stats_of(game, sampler)


def summarise(ch: Chapter, games: list[GameStats], spec_k: int | None = None) -> ChapterSummary:
    causes = dict.fromkeys((*OOM_CAUSES, *OVERLOAD_CAUSES), 0)
    for g in games:
        if g.cause is not None:
            causes[g.cause] += 1
    marks = [g.running_at_mark for g in games if g.running_at_mark is not None]
    return ChapterSummary(
        chapter=ch.number, name=ch.name, adds=ch.adds, mode=ch.mode, goal=ch.goal,
        games=len(games), completed_count=sum(ch.met(g.served, g.won) for g in games),
        end_causes={k: v for k, v in causes.items() if v},
        minutes_mean=statistics.fmean(g.minutes for g in games),
        minutes_min=min(g.minutes for g in games),
        served_mean=statistics.fmean(g.served for g in games),
        tokens_mean=statistics.fmean(g.tokens for g in games),
        tokens_per_minute_mean=statistics.fmean(g.tokens / g.minutes if g.minutes else 0.0
                                                for g in games),
        preemptions_mean=statistics.fmean(g.preempted_swap + g.preempted_recompute for g in games),
        spec_k=spec_k if ch.features.speculative else None,
        running_at_end_mean=statistics.fmean(g.running_at_end for g in games),
        running_peak_mean=statistics.fmean(g.resident_peak for g in games),
        waste_share_mean=statistics.fmean(g.waste_share for g in games),
        prefix_hit_rate_mean=statistics.fmean(g.prefix_hit_rate for g in games),
        ttft_ms_mean=statistics.fmean(g.ttft_ms for g in games),
        held_at_end_mean=statistics.fmean(g.held_at_end for g in games),
        running_at_contiguous_end_mean=statistics.fmean(marks) if marks else None,
        held_at_contiguous_end_mean=statistics.fmean(g.held_at_mark for g in games) if marks else None)


def play_chapters(numbers: list[int], seeds: int, policy: str, skill: float,
                  max_minutes: float, spec_k: int | None = None) -> list[ChapterSummary]:
    """Each chapter of `numbers` (in the arc's order) over seeds 0..seeds-1 (`spec_k`: forced in
    the chapters with speculative decoding)."""
    played: dict[int, list[GameStats]] = {}
    for n in sorted(set(numbers)):
        ch = chapter(n)
        marks: list[float | None] = [None] * seeds
        if ch.arrivals_of is not None:  # the moment the same player's run of that chapter ended
            first = played.get(ch.arrivals_of) or [
                play_chapter(chapter(ch.arrivals_of), s, policy, skill, max_minutes)
                for s in range(seeds)]
            marks = [g.minutes * 60_000.0 for g in first]
        k = spec_k if ch.features.speculative else None
        played[n] = [play_chapter(ch, s, policy, skill, max_minutes, marks[s], k) for s in range(seeds)]
    return [summarise(chapter(n), played[n], spec_k) for n in sorted(set(numbers))]


def render(rows: list[ChapterSummary], as_json: bool = False) -> str:
    """The chapters played, as the command prints them: JSON, or one line a chapter."""
    if as_json:
        return json.dumps({"chapters": [asdict(r) for r in rows]}, indent=2)
    lines = []
    for r in rows:
        goal = f"serve {r.goal}" if r.goal is not None else "endless"
        line = (f"chapter {r.chapter} {r.name} ({r.adds}, {r.mode}, {goal}): met {r.completed_count}/"
                f"{r.games}, {r.minutes_mean:.1f} game minutes (shortest {r.minutes_min:.1f}), "
                f"{r.served_mean:.0f} served, {r.tokens_per_minute_mean:.0f} tokens a minute, "
                f"{r.running_at_end_mean:.1f} running at the end")
        if r.running_at_contiguous_end_mean is not None and r.held_at_contiguous_end_mean is not None:
            line += (f"; {r.running_at_contiguous_end_mean:.1f} running in "
                     f"{r.held_at_contiguous_end_mean:.0%} of VRAM when chapter 1's run ended")
        causes = ", ".join(f"{k} {v}" for k, v in r.end_causes.items())
        lines.append(line + (f"; ended: {causes}" if causes else ""))
    return "\n".join(lines)


__all__ = ["CHAPTERS", "ChapterSummary", "play_chapter", "play_chapters", "render"]
