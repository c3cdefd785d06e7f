"""Seeded games in both allocator modes: how much sooner does a contiguous stack cause a CUDA OOM?

    python -m engine.autoplay [--mode contiguous|paged|both] [--policy idle|centre|split|bot]
                              [--skill K] [--seeds N] [--max-minutes M] [--json] [--record DIR]
                              [--chapter N|all [--spec-k K]]

Every game is endless, seeded and deterministic, and stops when the run ends (OOM or overload)
or after M game minutes. The policies are engine.playing's (`idle`, `centre`, `split`, `bot`;
`--skill`: the chance of each good decision, as the placement bot and as the scheduler). The first printed line answers the
article's question for the same seeds: minutes survived and tokens served, contiguous beside
paged.

With --chapter, the policy plays chapter N of the guided run (engine.chapters), or with `all`
every chapter in order, one line each (engine.chapter_play); --mode does not apply.

With --record, every game is also saved as a replay (DIR/<mode>-seed<N>.json), so bot games can
be watched (`python main.py --replay FILE`) and checked (`python -m engine.replay FILE`).

At most MAX_SEEDS games per mode and MAX_MINUTES game minutes per game; a long run shows its
progress on a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from . import chapter_play, cli_args, replay_json
from .bot import DEFAULT_SKILL, Bot
from .chapters import CHAPTERS
from .cli_args import number, whole
from .features import DEFAULT as DEFAULT_FEATURES, Features
from .game import MODES, OVERLOAD_CAUSES, Game
from .memory import OOM_CAUSES
from .playing import POLICIES, GameStats, drive, stats_of
from .rules import DEFAULT_BUDGET, SPEC_KS
from .replay import Recorder

MAX_SEEDS = 1_000
MAX_MINUTES = 240
MAX_BUDGET = 100_000  # tokens a step: more than any run can use


@dataclass(frozen=True, slots=True)
class ModeSummary:
    games: int
    ended_count: int
    end_causes: dict[str, int]
    oom_count: int
    oom_causes: dict[str, int]
    minutes_mean: float
    pieces_mean: float
    served_mean: float
    tokens_mean: float
    tokens_per_minute_mean: float
    resident_mean: float
    resident_peak_mean: float
    frag_peak: float
    waste_share_mean: float
    finished_holding_max: int
    oom_free_minus_need_max: int | None
    preemptions_mean: float
    preempted_swap_mean: float
    preempted_recompute_mean: float
    peak_utilisation_min: float
    prefix_hit_rate_mean: float
    prefill_tokens_skipped_mean: float
    reused_after_preemption_mean: float
    shared_blocks_peak_mean: float
    ttft_ms_mean: float
    step_ms_mean: float
    budget: int | None


def play_one(mode: str, seed: int, policy: str, skill: float, max_minutes: float,
             record: str | None = None, features: Features = DEFAULT_FEATURES,
             budget: int | None = None) -> GameStats:
    """One endless game under `policy`, stopped when it ends or at `max_minutes`; `budget`: the
    step's token budget (chunked prefill)."""
    recorder = Recorder(seed=seed, mode=mode, endless=True) if record is not None else None
    game = (recorder.game if recorder is not None
            else Game(seed=seed, mode=mode, endless=True, features=features))
    if budget is not None and game.serving.prefill is not None:
        game.serving.prefill.budget = budget
    step: Callable[..., object] = recorder.update if recorder is not None else game.update
    sampler = drive(game, policy, Bot(skill=skill, seed=seed), max_minutes * 60_000.0, step)
    if recorder is not None and record is not None:
        replay_json.save(recorder.finish(), os.path.join(record, f"{mode}-seed{seed}.json"))
    return stats_of(game, sampler)


def summarise(games: list[GameStats]) -> ModeSummary:
    ends = [g for g in games if g.ended]
    ooms = [g for g in ends if g.outcome == "oom"]
    end_causes = dict.fromkeys((*OOM_CAUSES, *OVERLOAD_CAUSES), 0)
    for g in ends:
        assert g.cause is not None
        end_causes[g.cause] += 1
    oom_causes = {k: end_causes[k] for k in OOM_CAUSES}
    free_minus_need = [g.oom_free_minus_need for g in ooms if g.oom_free_minus_need is not None]
    return ModeSummary(
        games=len(games), ended_count=len(ends), end_causes=end_causes, oom_count=len(ooms),
        oom_causes=oom_causes,
        minutes_mean=statistics.fmean(g.minutes for g in games),
        pieces_mean=statistics.fmean(g.pieces for g in games),
        served_mean=statistics.fmean(g.served for g in games),
        tokens_mean=statistics.fmean(g.tokens for g in games),
        tokens_per_minute_mean=statistics.fmean(g.tokens / g.minutes if g.minutes else 0.0
                                                for g in games),
        resident_mean=statistics.fmean(g.resident_mean for g in games),
        resident_peak_mean=statistics.fmean(g.resident_peak for g in games),
        frag_peak=max(g.frag_peak for g in games),
        waste_share_mean=statistics.fmean(g.waste_share for g in games),
        finished_holding_max=max(g.finished_holding for g in games),
        oom_free_minus_need_max=max(free_minus_need) if free_minus_need else None,
        preemptions_mean=statistics.fmean(g.preempted_swap + g.preempted_recompute for g in games),
        preempted_swap_mean=statistics.fmean(g.preempted_swap for g in games),
        preempted_recompute_mean=statistics.fmean(g.preempted_recompute for g in games),
        peak_utilisation_min=min(g.peak_utilisation for g in games),
        prefix_hit_rate_mean=statistics.fmean(g.prefix_hit_rate for g in games),
        prefill_tokens_skipped_mean=statistics.fmean(g.prefill_tokens_skipped for g in games),
        reused_after_preemption_mean=statistics.fmean(g.reused_after_preemption for g in games),
        shared_blocks_peak_mean=statistics.fmean(g.shared_blocks_peak for g in games),
        ttft_ms_mean=statistics.fmean(g.ttft_ms for g in games),
        step_ms_mean=statistics.fmean(g.step_ms for g in games),
        budget=games[0].budget,
    )


def _ending(r: ModeSummary) -> str:
    """How the runs of a mode mostly ended, in words."""
    if not r.ended_count:
        return "none ended"
    cause = max(r.end_causes, key=lambda k: r.end_causes[k])
    what = "CUDA OOM" if cause in OOM_CAUSES else "overloaded"
    return f"{r.ended_count}/{r.games} ended, mostly {what} ({cause})"


def headline(results: dict[str, ModeSummary]) -> str:
    """The article's question, answered for these seeds: how much sooner contiguous runs out."""
    parts = [f"{mode}: {r.minutes_mean:.1f} game minutes, {r.tokens_mean:,.0f} tokens served "
             f"({_ending(r)})" for mode, r in results.items()]
    line = "; ".join(parts)
    if "contiguous" in results and "paged" in results:
        c, p = results["contiguous"], results["paged"]
        if c.minutes_mean and c.tokens_mean:
            line += (f" — paged lasted {p.minutes_mean / c.minutes_mean:.1f}x as long and served "
                     f"{p.tokens_mean / c.tokens_mean:.1f}x the tokens")
    return line


def format_table(results: dict[str, ModeSummary], policy: str, skill: float,
                 max_minutes: float) -> str:
    who = f"bot skill {skill:g}" if policy == "bot" else f"policy {policy}"
    lines = [headline(results),
             f"{who}, games capped at {max_minutes:g} game minutes",
             f"{'mode':<12}{'ended':>7}{'minutes':>9}{'served':>8}{'tokens':>9}{'tok/min':>9}"
             f"{'resident':>10}{'peak':>6}{'waste':>8}{'frag pk':>9}{'preempt':>9}"]
    for mode, r in results.items():
        lines.append(f"{mode:<12}{f'{r.ended_count}/{r.games}':>7}{r.minutes_mean:>9.1f}"
                     f"{r.served_mean:>8.0f}{r.tokens_mean:>9.0f}{r.tokens_per_minute_mean:>9.0f}"
                     f"{r.resident_mean:>10.1f}{r.resident_peak_mean:>6.0f}"
                     f"{r.waste_share_mean * 100:>7.1f}%{r.frag_peak * 100:>8.1f}%"
                     f"{r.preemptions_mean:>9.1f}")
        causes = ", ".join(f"{k} {v}" for k, v in r.end_causes.items() if v)
        if causes:
            lines.append(f"{'':<12}how runs ended: {causes}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = cli_args.parser("python -m engine.autoplay", __doc__.splitlines()[0])
    p.add_argument("--mode", choices=(*MODES, "both"), default="both", help="allocator mode")
    p.add_argument("--policy", choices=POLICIES, default="bot", help="who plays")
    p.add_argument("--seeds", type=whole(1, MAX_SEEDS), default=6,
                   help=f"games per mode (seeds 0..N-1), at most {MAX_SEEDS:,}")
    p.add_argument("--max-minutes", type=number(0.1, MAX_MINUTES), default=30.0,
                   help=f"game minutes per game at most, up to {MAX_MINUTES}")
    p.add_argument("--skill", type=number(0.0, 1.0), default=DEFAULT_SKILL,
                   help="the bot's chance of each good decision (--policy bot)")
    p.add_argument("--no-prefix-cache", action="store_true",
                   help="turn prefix caching off: the same workload, nothing shared or kept cached")
    p.add_argument("--budget", type=whole(1, MAX_BUDGET), metavar="TOKENS",
                   help=f"the step's token budget of chunked prefill (default: {DEFAULT_BUDGET})")
    p.add_argument("--chapter", type=_chapter_arg, metavar="N|all",
                   help=f"play chapter N (1-{len(CHAPTERS)}) of the guided run, or all of them")
    p.add_argument("--spec-k", type=whole(0, max(SPEC_KS)), metavar="K",
                   help="with --chapter: the draft tokens a step in the chapters with speculative "
                        "decoding, kept all run (default: the bot chooses)")
    p.add_argument("--json", action="store_true", help="print one JSON object keyed by mode")
    p.add_argument("--record", metavar="DIR", type=cli_args.output_dir(),
                   help="save every game as a replay in DIR (created if missing)")
    return p


def _chapter_arg(text: str) -> list[int]:
    if text == "all":
        return [c.number for c in CHAPTERS]
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a chapter number or 'all', got {text!r}") from None
    if not 1 <= n <= len(CHAPTERS):
        raise argparse.ArgumentTypeError(f"there are chapters 1 to {len(CHAPTERS)}, not {n}")
    return [n]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.spec_k is not None and args.chapter is None:
        parser.error("--spec-k: only the chapters have speculative decoding (use --chapter)")
    if args.chapter is not None:
        for name, given in (("--record", args.record is not None), ("--budget", args.budget is not None),
                            ("--no-prefix-cache", args.no_prefix_cache), ("--mode", args.mode != "both")):
            if given:
                parser.error(f"{name}: a chapter sets its own mode, mechanisms and load")
        rows = chapter_play.play_chapters(args.chapter, args.seeds, args.policy, args.skill,
                                          args.max_minutes, args.spec_k)
        print(chapter_play.render(rows, args.json))
        return 0
    modes = MODES if args.mode == "both" else (args.mode,)
    if args.record is not None:
        try:
            os.makedirs(args.record, exist_ok=True)
            if not os.access(args.record, os.W_OK):
                raise PermissionError(13, "not writable")
        except OSError as exc:
            parser.error(f"--record {args.record}: {exc.strerror or exc}")
    features = DEFAULT_FEATURES
    if args.no_prefix_cache:
        if not features.prefix_cache:
            parser.error("--no-prefix-cache: the rules this build plays have no prefix cache")
        if args.record is not None:
            parser.error("--record: a run without the prefix cache is not a run of these rules; "
                         "it cannot be replayed")
        features = replace(features, prefix_cache=False)
    if args.budget is not None and not features.chunked_prefill:
        parser.error("--budget: the rules this build plays prefill whole, with no step budget")
    if args.budget is not None and args.record is not None:
        parser.error("--record: a run's budget is set by its inputs; a replay of --budget would "
                     "play the default")
    results = {}
    try:
        for m in modes:
            progress = cli_args.Progress(f"{m} games", args.seeds)
            games = []
            for seed in range(args.seeds):
                games.append(play_one(m, seed, args.policy, args.skill, args.max_minutes,
                                      args.record, features, args.budget))
                progress.update(seed + 1)
            progress.close()
            results[m] = summarise(games)
    except OSError as exc:
        print(f"{parser.prog}: error: cannot write a replay: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({m: asdict(r) for m, r in results.items()}, indent=2))
    else:
        print(format_table(results, args.policy, args.skill, args.max_minutes))
    return 0


if __name__ == "__main__":
    raise SystemExit(cli_args.run(main, prog="python -m engine.autoplay"))
