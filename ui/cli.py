"""Command line of main.py: the desktop game, headless screenshots and the frame benchmark."""
from __future__ import annotations

import argparse
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.modes import NAMES as MODES

from ui.layout import LANDSCAPE, NAMES as LAYOUTS

SCENES = ("title", "play", "help", "pause", "oom", "victory")

USAGE = """\
python main.py [--mode contiguous|paged] [--layout landscape|portrait] [--seed S] [--daily]
                      [--replay CODE_OR_FILE] [--scene title|play] [--autoplay] [--frames N]
       python main.py --headless --frames N [--screenshot out.png] [--record run.json]
                      [--scene title|play|help|pause|oom|victory] [--mode contiguous|paged]
                      [--layout landscape|portrait] [--autoplay] [--seed S] [--daily]
                      [--replay CODE_OR_FILE]
       python main.py --bench-frame [--frames N] [--seed S]"""


@dataclass(frozen=True)
class Options:
    headless: bool = False
    bench_frame: bool = False
    frames: int | None = None
    screenshot: str | None = None
    scene: str | None = None
    mode: str | None = None
    autoplay: bool = False
    seed: int | None = None
    layout: str = LANDSCAPE
    record: str | None = None
    replay: str | None = None
    daily: bool = False


class UsageError(Exception):
    """Bad command line: shown with the usage text, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog="main.py", usage=USAGE, add_help=True,
                description="PagedAttention: VRAM Tetris")
    p.add_argument("--headless", action="store_true", help="render without a window and write a PNG")
    p.add_argument("--bench-frame", action="store_true", help="time one drawn frame on a busy board")
    p.add_argument("--frames", type=int, help="fixed 60 Hz steps to simulate (headless), frames to time (--bench-frame) "
                   "or frames before the window closes by itself")
    p.add_argument("--screenshot", help="PNG file for the headless canvas")
    p.add_argument("--scene", choices=SCENES, help="screen to show (default: title, or play with --autoplay)")
    p.add_argument("--mode", choices=MODES, help="allocator mode")
    p.add_argument("--layout", choices=LAYOUTS, default=LANDSCAPE,
                   help="screen arrangement: landscape 800x580 (desktop, wide embeds) or portrait "
                        "420x700 (phones) (default: %(default)s)")
    p.add_argument("--autoplay", action="store_true", help="let the bot play")
    p.add_argument("--seed", type=int, help="random seed for the run")
    p.add_argument("--daily", action="store_true", help="play today's daily challenge (UTC date seed)")
    p.add_argument("--replay", metavar="CODE_OR_FILE", help="watch a run: a share code or a replay file")
    p.add_argument("--record", metavar="FILE", help="headless: write the run's replay (JSON) to FILE")
    return p


def parse(argv: list[str]) -> Options:
    """Parse and validate; raises UsageError with a one-line reason."""
    ns = _parser().parse_args(argv)
    if ns.headless and ns.bench_frame:
        raise UsageError("--headless and --bench-frame cannot be combined")
    if ns.headless:
        if ns.frames is None:
            raise UsageError("--headless needs --frames N")
        if ns.screenshot is None and ns.record is None:
            raise UsageError("--headless needs --screenshot out.png (or --record run.json)")
    elif ns.screenshot is not None:
        raise UsageError("--screenshot only works with --headless")
    elif ns.record is not None:
        raise UsageError("--record only works with --headless (the game keeps every run's share code)")
    elif ns.scene not in (None, "title", "play"):
        raise UsageError(f"--scene {ns.scene} only works with --headless "
                         "(a window starts on the title, or in a game with --scene play)")
    if ns.frames is not None and not (1 <= ns.frames <= 1_000_000):
        raise UsageError(f"--frames must be between 1 and 1000000, not {ns.frames}")
    if ns.screenshot is not None:
        problem = screenshot_problem(ns.screenshot)
        if problem:
            raise UsageError(problem)
    if ns.seed is not None and not (0 <= ns.seed < 2**31):
        raise UsageError(f"--seed must be between 0 and {2**31 - 1}")
    if ns.record is not None and not ns.record.lower().endswith(".json"):
        raise UsageError(f"--record must name a .json file, not {ns.record!r}")
    if ns.replay is not None and (ns.daily or ns.autoplay or ns.record is not None or ns.seed is not None
                                  or ns.mode is not None or ns.scene not in (None, "play")):
        raise UsageError("--replay plays a recorded run: it takes no --daily, --autoplay, --record, "
                         "--seed, --mode or --scene")
    if ns.daily and ns.seed is not None:
        raise UsageError("--daily sets the seed from today's UTC date: leave out --seed")
    if ns.daily and ns.scene not in (None, "play", "oom", "victory", "pause", "help"):
        raise UsageError("--daily starts a game: --scene title does not apply")
    if ns.record is not None and ns.scene not in (None, "play", "oom", "victory", "pause", "help"):
        raise UsageError("--record records a game: --scene title has no run to record")
    return Options(headless=ns.headless, bench_frame=ns.bench_frame, frames=ns.frames,
                   screenshot=ns.screenshot, scene=ns.scene, mode=ns.mode, autoplay=ns.autoplay,
                   seed=ns.seed, layout=ns.layout, record=ns.record, replay=ns.replay, daily=ns.daily)


def screenshot_problem(path: str) -> str | None:
    """Why ``path`` cannot take a PNG screenshot (checked before any frame runs), or None."""
    if not path.lower().endswith(".png"):
        return f"--screenshot must name a .png file, not {path!r}"
    target = Path(path)
    if target.is_dir():
        return f"--screenshot {path!r} is a directory"
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        return f"--screenshot folder {str(folder)!r} does not exist"
    if not os.access(folder, os.W_OK):
        return f"--screenshot folder {str(folder)!r} is not writable"
    return None


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: leave with the shell's status for it (130 or 143)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def exit_on_signals() -> None:
    """SIGINT and SIGTERM end the program with status 130 / 143 (``Interrupted``), never a traceback."""
    def stop(signum: int, _frame: object) -> None:
        raise Interrupted(128 + signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def parse_or_exit(argv: list[str]) -> Options:
    """parse(), but print usage and exit with status 2 on bad input (never a traceback)."""
    try:
        return parse(argv)
    except UsageError as exc:
        print(f"usage: {USAGE}\nmain.py: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
