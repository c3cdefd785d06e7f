"""Seeded bot games in both allocator modes: how much sooner does a contiguous stack run out?

    python -m engine.autoplay --mode contiguous|paged|both --seeds N --max-pieces M [--skill K] [--json]
                              [--record DIR]

With --record, every game is also saved as a replay (DIR/<mode>-seed<N>.json), so bot games can
be watched (`python main.py --replay FILE`) and checked (`python -m engine.replay FILE`).

At most MAX_SEEDS games per mode, MAX_PIECES pieces per game and MAX_TOTAL_PIECES pieces per
mode (about an hour of bot play); a long run shows its progress on a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import statistics
from dataclasses import asdict, dataclass

from .bot import DEFAULT_SKILL, Bot
from . import cli_args
from .cli_args import number, whole
from .game import MODES, Game
from .memory import OOM_CAUSES
from .replay import Recorder
from .rules import VISIBLE_CELLS
from .telemetry import reserved_share

MAX_SEEDS = 10_000
MAX_PIECES = 1_000_000
MAX_TOTAL_PIECES = 2_000_000  # seeds x max-pieces per mode
THINK_MS = 400.0  # game time the bot spends per piece: the split meter recharges meanwhile


@dataclass(frozen=True, slots=True)
class GameStats:
    pieces: int
    lines: int
    oom: bool
    frag_mean: float
    frag_peak: float
    resident_mean: float
    reserved_share_mean: float  # reserved-but-empty / held blocks, averaged over placements
    vram_at_oom: float | None  # held / all blocks when the run ran out of memory
    free_at_oom: int | None  # free visible blocks at that moment
    oom_cause: str | None


@dataclass(frozen=True, slots=True)
class ModeSummary:
    games: int
    pieces_mean: float
    pieces_median: float
    lines_mean: float
    frag_mean: float
    frag_peak: float
    resident_mean: float
    oom_count: int
    splits_mean: float
    vram_at_oom_mean: float | None  # over the games that ended in OOM; None when none did
    free_at_oom_max: int | None
    reserved_share_mean: float
    oom_causes: dict[str, int]


def play_one(mode: str, seed: int, max_pieces: int, skill: float,
             record: str | None = None) -> tuple[GameStats, int]:
    """One endless bot game; telemetry is sampled after every placement.

    With `record` (a directory) the game is written down and saved there as a replay.
    """
    recorder = Recorder(seed=seed, mode=mode, endless=True) if record is not None else None
    game = recorder.game if recorder is not None else Game(seed=seed, mode=mode, endless=True)
    step = recorder.update if recorder is not None else game.update
    bot = Bot(skill=skill, seed=seed)
    frag_sum = frag_peak = reserved_sum = 0.0
    resident_sum = 0
    samples = splits = 0
    while not game.over and game.pieces < max_pieces:
        plan = bot.choose(game)
        assert plan is not None and game.active is not None
        request = game.active.request_id
        step(0.0, plan.moves())
        step(THINK_MS)  # the piece falls straight down its column while the bot "thinks"
        if game.active is not None and game.active.request_id == request and not game.over:
            step(0.0, (plan.final,))
        splits += plan.split
        t = game.telemetry()
        frag_sum += t.fragmentation
        frag_peak = max(frag_peak, t.fragmentation)
        resident_sum += t.resident
        reserved_sum += reserved_share(t.reserved, VISIBLE_CELLS - t.free_cells)
        samples += 1
    if recorder is not None and record is not None:
        recorder.finish().save(os.path.join(record, f"{mode}-seed{seed}.json"))
    n = max(1, samples)
    r = game.result if game.over and game.result is not None and game.result.outcome == "oom" else None
    return GameStats(game.pieces, game.lines, r is not None, frag_sum / n, frag_peak,
                     resident_sum / n, reserved_sum / n,
                     r.utilisation if r else None, r.free_cells if r else None,
                     r.cause_code if r else None), splits


def summarise(mode: str, seeds: int, max_pieces: int, skill: float,
              record: str | None = None, progress: cli_args.Progress | None = None) -> ModeSummary:
    games = []
    for seed in range(seeds):
        games.append(play_one(mode, seed, max_pieces, skill, record))
        if progress is not None:
            progress.update(seed + 1)
    stats, splits = zip(*games)
    ooms = [s for s in stats if s.oom]
    causes = dict.fromkeys(OOM_CAUSES, 0)
    for s in ooms:
        causes[s.oom_cause] += 1
    return ModeSummary(
        games=seeds,
        pieces_mean=statistics.fmean(s.pieces for s in stats),
        pieces_median=float(statistics.median(s.pieces for s in stats)),
        lines_mean=statistics.fmean(s.lines for s in stats),
        frag_mean=statistics.fmean(s.frag_mean for s in stats),
        frag_peak=max(s.frag_peak for s in stats),
        resident_mean=statistics.fmean(s.resident_mean for s in stats),
        oom_count=sum(s.oom for s in stats),
        splits_mean=statistics.fmean(splits),
        vram_at_oom_mean=statistics.fmean(s.vram_at_oom for s in ooms) if ooms else None,
        free_at_oom_max=max(s.free_at_oom for s in ooms) if ooms else None,
        reserved_share_mean=statistics.fmean(s.reserved_share_mean for s in stats),
        oom_causes=causes,
    )


def format_table(results: dict[str, ModeSummary], max_pieces: int, skill: float) -> str:
    lines = [f"bot skill {skill:g}, games capped at {max_pieces} pieces",
             f"{'mode':<12}{'pieces mean':>12}{'median':>9}{'lines':>8}{'frag mean':>11}"
             f"{'frag peak':>11}{'resident':>10}{'OOM':>8}{'splits':>8}{'reserved':>10}"
             f"{'VRAM@OOM':>10}{'free@OOM':>10}"]
    for mode, r in results.items():
        lines.append(f"{mode:<12}{r.pieces_mean:>12.1f}{r.pieces_median:>9.1f}{r.lines_mean:>8.1f}"
                     f"{r.frag_mean * 100:>10.1f}%{r.frag_peak * 100:>10.1f}%{r.resident_mean:>10.1f}"
                     f"{f'{r.oom_count}/{r.games}':>8}{r.splits_mean:>8.1f}"
                     f"{r.reserved_share_mean * 100:>9.1f}%"
                     f"{'-' if r.vram_at_oom_mean is None else f'{r.vram_at_oom_mean * 100:.1f}%':>10}"
                     f"{'-' if r.free_at_oom_max is None else r.free_at_oom_max:>10}")
        causes = ", ".join(f"{k} {v}" for k, v in r.oom_causes.items() if v)
        if causes:
            lines.append(f"{'':<12}OOM causes: {causes}")
    if "contiguous" in results and "paged" in results:
        c, p = results["contiguous"], results["paged"]
        if c.pieces_mean:
            lines.append(f"paged placed {p.pieces_mean / c.pieces_mean:.1f}x the pieces of contiguous "
                         "before running out of memory (or reaching the cap)")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = cli_args.parser("python -m engine.autoplay", __doc__.splitlines()[0])
    p.add_argument("--mode", choices=(*MODES, "both"), default="both", help="allocator mode")
    p.add_argument("--seeds", type=whole(1, MAX_SEEDS), default=10,
                   help=f"games per mode (seeds 0..N-1), at most {MAX_SEEDS:,}")
    p.add_argument("--max-pieces", type=whole(1, MAX_PIECES), default=1000,
                   help=f"cap per game, at most {MAX_PIECES:,} (and --seeds x --max-pieces at most {MAX_TOTAL_PIECES:,})")
    p.add_argument("--skill", type=number(0.0, 1.0), default=DEFAULT_SKILL,
                   help="chance the bot takes its best placement")
    p.add_argument("--json", action="store_true", help="print one JSON object keyed by mode")
    p.add_argument("--record", metavar="DIR", type=cli_args.output_dir(),
                   help="save every game as a replay in DIR (created if missing)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seeds * args.max_pieces > MAX_TOTAL_PIECES:
        parser.error(f"--seeds {args.seeds} x --max-pieces {args.max_pieces} is up to "
                     f"{args.seeds * args.max_pieces:,} pieces per mode, more than {MAX_TOTAL_PIECES:,}")
    modes = MODES if args.mode == "both" else (args.mode,)
    if args.record is not None:
        try:
            os.makedirs(args.record, exist_ok=True)
            if not os.access(args.record, os.W_OK):
                raise PermissionError(13, "not writable")
        except OSError as exc:
            parser.error(f"--record {args.record}: {exc.strerror or exc}")
    results = {}
    try:
        for m in modes:
            progress = cli_args.Progress(f"{m} games", args.seeds)
            results[m] = summarise(m, args.seeds, args.max_pieces, args.skill, args.record, progress)
            progress.close()
    except OSError as exc:
        print(f"{parser.prog}: error: cannot write a replay: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({m: asdict(r) for m, r in results.items()}, indent=2))
    else:
        print(format_table(results, args.max_pieces, args.skill))
    return 0


if __name__ == "__main__":
    raise SystemExit(cli_args.run(main, prog="python -m engine.autoplay"))
