"""Command lines of the UI side: main.py (the desktop game, headless screenshots, the frame
benchmark) and the pieces every UI tool shares. Desktop only: the browser never parses a command
line (main.py builds ui.options.Options there), so this module stays out of the web archive.

The conventions are engine.cli_args' (abbreviations refused, defaults in --help, one-line
errors `main.py: error: WHAT (try main.py --help)` with exit 2, SIGINT/SIGTERM -> 130/143 without a traceback); this module adds what only
the UI needs: the pygame banner hidden and SDL kept off the signals (`quiet_pygame`), and the
screenshot-path check (`screenshot_path`) that every tool writing a PNG uses before it renders.
"""
from __future__ import annotations

import argparse
import os
from datetime import date
from pathlib import Path

from engine import cli_args
from engine.chapters import CHAPTERS
from engine.daily import parse_day
from engine.replay import MAX_SEED as REPLAY_MAX_SEED
from engine.modes import NAMES as MODES
from ui.i18n import LANGUAGES
from ui.options import Options

from ui.layout import LANDSCAPE, NAMES as LAYOUTS

SCENES = ("title", "play", "help", "pause", "oom", "victory", "chapters", "intro", "outro")
CHAPTER_SCENES = ("intro", "outro")  # need --chapter N; --chapter also plays chapter N (--scene play)
MAX_FRAMES = 1_000_000  # about 4.6 hours of 60 Hz frames
MAX_SEED = REPLAY_MAX_SEED
LAB_COMMAND = "python -m ui.lab_scene"

USAGE = """\
python main.py [--mode contiguous|paged] [--layout landscape|portrait] [--seed S] [--daily]
                      [--replay CODE_OR_FILE] [--scene title|play|intro] [--chapter N] [--autoplay]
                      [--endless] [--frames N] [--lang en|ko]
       python main.py --headless --frames N [--screenshot out.png] [--record run.json]
                      [--scene title|play|help|pause|oom|victory|chapters|intro|outro] [--chapter N]
                      [--mode contiguous|paged]
                      [--layout landscape|portrait] [--autoplay] [--endless] [--seed S] [--daily]
                      [--replay CODE_OR_FILE] [--data-dir DIR] [--lang en|ko] [--day YYYY-MM-DD]
       python main.py --bench-frame [--frames N] [--seed S]"""


def quiet_pygame() -> None:
    """Before pygame is imported: no support banner on stdout, and SDL leaves SIGINT/SIGTERM to
    us (it would turn them into a quit event that a headless run never reads)."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    os.environ.setdefault("SDL_NO_SIGNAL_HANDLERS", "1")


def check_screenshot(text: str) -> str:
    """The screenshot-path check: a .png file that can be written, checked before rendering.

    Raises argparse.ArgumentTypeError with a one-line reason (for argparse `type=`)."""
    return str(cli_args.check_output_file(text, (".png",)))


def screenshot_path(text: str) -> str:
    """argparse type for a --screenshot option (see check_screenshot)."""
    return check_screenshot(text)


class UsageError(Exception):
    """Bad command line: one line on stderr (engine.cli_args' format), exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _scene(text: str) -> str:
    if text == "lab":
        raise argparse.ArgumentTypeError(f"the LAB is a tool of its own: run {LAB_COMMAND}")
    if text not in SCENES:
        raise argparse.ArgumentTypeError(f"invalid choice: {text[:40]!r} (choose from {', '.join(SCENES)})")
    return text


def _day(text: str) -> date:
    try:
        return parse_day(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser() -> _Parser:
    p = _Parser(prog="main.py", usage=USAGE, add_help=True, allow_abbrev=False,
                formatter_class=cli_args.HelpFormatter,
                description="PagedAttention: VRAM Tetris",
                epilog=f"The LAB (KV-cache serving simulator) runs with: {LAB_COMMAND}")
    p.add_argument("--headless", action="store_true", help="render without a window and write a PNG")
    p.add_argument("--bench-frame", action="store_true", help="time one drawn frame on a busy board")
    p.add_argument("--frames", type=cli_args.whole(1, MAX_FRAMES),
                   help=f"fixed 60 Hz steps to simulate (headless), frames to time (default: "
                        f"600 for --bench-frame) or frames before the window closes by itself, "
                        f"at most {MAX_FRAMES:,}")
    p.add_argument("--screenshot", type=screenshot_path, help="PNG file for the headless canvas")
    p.add_argument("--scene", type=_scene, metavar="{" + ",".join(SCENES) + "}",
                   help="screen to show (default: title, or play with --autoplay)")
    p.add_argument("--mode", choices=MODES, help="allocator mode (default: the saved one)")
    p.add_argument("--layout", choices=LAYOUTS, default=LANDSCAPE,
                   help="screen arrangement: landscape 800x580 (desktop, wide embeds) or portrait "
                        "420x700 (phones) (default: %(default)s)")
    p.add_argument("--autoplay", action="store_true", help="let the bot play")
    p.add_argument("--seed", type=cli_args.whole(0, MAX_SEED), help="random seed for the run (default: 7 headless)")
    p.add_argument("--data-dir", type=cli_args.output_dir(),
                   help="headless: settings folder to load and save, as the game does "
                        "(default: a temporary one)")
    p.add_argument("--lang", choices=LANGUAGES,
                   help="language of every word on screen (default: the saved choice, else the locale's)")
    p.add_argument("--daily", action="store_true", help="play today's daily challenge (UTC date seed)")
    p.add_argument("--day", type=_day, metavar="YYYY-MM-DD",
                   help="headless: the UTC date taken for today, the title's and --daily's "
                        "(default: the clock's), so a picture does not change with the date")
    p.add_argument("--endless", action="store_true", default=None,
                   help="an endless run: no goal, it lasts until the server runs out of memory or falls behind")
    p.add_argument("--replay", metavar="CODE_OR_FILE", help="watch a run: a share code or a replay file")
    p.add_argument("--chapter", type=cli_args.whole(1, len(CHAPTERS)), metavar="N",
                   help=f"a chapter of the guided run (1-{len(CHAPTERS)}): play it (--scene play), or "
                        "show its intro (the default in a window) or outro (--scene intro|outro; headless, "
                        "the outro after the bot plays it)")
    p.add_argument("--record", metavar="FILE", type=cli_args.output_file(".json"),
                   help="headless: write the run's replay (JSON) to FILE")
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
    elif ns.data_dir is not None:
        raise UsageError("--data-dir only works with --headless (the game uses your settings folder)")
    elif ns.day is not None:
        raise UsageError("--day only works with --headless (the game plays on the clock's date)")
    elif ns.scene not in (None, "title", "play"):
        raise UsageError(f"--scene {ns.scene} only works with --headless "
                         "(a window starts on the title, or in a game with --scene play)")
    if ns.replay is not None and (ns.daily or ns.autoplay or ns.record is not None or ns.seed is not None
                                  or ns.mode is not None or ns.scene not in (None, "play") or ns.day is not None):
        raise UsageError("--replay plays a recorded run: it takes no --daily, --day, --autoplay, --record, "
                         "--seed, --mode or --scene")
    if ns.endless and (ns.daily or ns.replay is not None):
        raise UsageError("--endless starts a new run: the daily challenge and a replay have their own goal")
    if ns.daily and ns.seed is not None:
        raise UsageError("--daily sets the seed from today's UTC date: leave out --seed")
    if ns.daily and ns.scene not in (None, "play", "oom", "victory", "pause", "help"):
        raise UsageError("--daily starts a game: --scene title does not apply")
    if ns.record is not None and ns.scene not in (None, "play", "oom", "victory", "pause", "help", "outro"):
        raise UsageError(f"--record records a game: --scene {ns.scene} has no run to record")
    if ns.scene in CHAPTER_SCENES and ns.chapter is None:
        raise UsageError(f"--scene {ns.scene} needs --chapter N")
    if ns.chapter is not None and (ns.scene not in (None, "play", *CHAPTER_SCENES) or ns.daily or ns.endless
                                   or ns.mode is not None or ns.replay is not None):
        raise UsageError("--chapter sets the run's mode and goal: it goes with --scene play, intro or outro "
                         "only, without --mode, --daily, --endless or --replay")
    return Options(headless=ns.headless, bench_frame=ns.bench_frame, frames=ns.frames,
                   screenshot=ns.screenshot, scene=ns.scene, mode=ns.mode, autoplay=ns.autoplay,
                   seed=ns.seed, layout=ns.layout, record=None if ns.record is None else str(ns.record),
                   replay=ns.replay, daily=ns.daily,
                   data_dir=None if ns.data_dir is None else str(ns.data_dir), lang=ns.lang,
                   endless=ns.endless, day=ns.day, chapter=ns.chapter)


def screenshot_problem(path: str) -> str | None:
    """Why ``path`` cannot take a PNG screenshot (check_screenshot, as one line), or None."""
    try:
        check_screenshot(path)
    except argparse.ArgumentTypeError as exc:
        return f"--screenshot: {exc}"
    return None


def parse_or_exit(argv: list[str]) -> Options:
    """parse(), but exit with status 2 and one line on bad input (never a traceback)."""
    try:
        return parse(argv)
    except UsageError as exc:
        raise cli_args.usage_error("main.py", str(exc)) from None


def data_dir(opts: Options) -> Path | None:
    """The settings folder a headless run uses, made if missing (None: a temporary one)."""
    if opts.data_dir is None:
        return None
    path = Path(opts.data_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


__all__ = ["Options", "UsageError", "parse", "parse_or_exit", "quiet_pygame", "check_screenshot",
           "screenshot_path", "screenshot_problem", "data_dir", "SCENES",
           "MODES", "MAX_FRAMES"]
