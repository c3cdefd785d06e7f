"""`python -m engine.replay CODE_OR_FILE [--json] [--code] [--beside CODE_OR_FILE]`: check a recorded run.

Re-simulates a share code, a link holding one, or a replay file, and compares the result with
what the run claims. With --beside, a chapter-2 run is set beside the chapter-1 run whose
arrivals it replays, both read at the moment that one ended (what the chapter's outro shows). Exit 0: verified; 1: a file that cannot be read, or a run that is corrupt,
truncated, newer, unverifiable or not matching (one line on stderr); 2: a bad command line.
(Desktop tool: not in the web bundle.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, Any

from . import cli_args, replay_json, sharecode
from .replay import Replay, ReplayError


PROG = "python -m engine.replay"


def load_any(arg: str) -> Replay:
    """A replay from a file path (a replay file, or a file holding a share code or a link), a
    share code or a link with ?replay=CODE; ReplayError or OSError when it cannot be read."""
    if "replay=" not in arg and (os.path.exists(arg) or arg.endswith(".json") or os.sep in arg):
        return load_file(arg)
    return sharecode.decode(arg)


def load_file(path: str) -> Replay:
    """A replay file (JSON: its first character is '{'), or a text file holding a share code."""
    with replay_json.open_text(path) as fh:
        try:
            first = _first_char(fh)
            fh.seek(0)
            if not first or first == "{":
                return replay_json.read(fh)
            return sharecode.decode(_code_text(fh))
        except UnicodeDecodeError:
            raise ReplayError("not UTF-8 text") from None


def _first_char(fh: IO[str]) -> str:
    """The first character of `fh` that is not blank ('' when there is none)."""
    while True:
        chunk = fh.read(replay_json.CHUNK_CHARS)
        if not chunk:
            return ""
        rest = chunk.lstrip()
        if rest:
            return rest[0]


def _code_text(fh: IO[str]) -> str:
    """The text of a file holding a share code, its blank characters left out, read no further
    than a code can be long (ReplayError past that)."""
    parts: list[str] = []
    size = 0
    while True:
        chunk = fh.read(replay_json.CHUNK_CHARS)
        if not chunk:
            return "".join(parts)
        part = "".join(chunk.split())
        size += len(part)
        if size > sharecode.MAX_CODE_CHARS + 4096:
            raise ReplayError(f"not a share code: longer than {sharecode.MAX_CODE_CHARS} characters")
        parts.append(part)


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.replay CODE_OR_FILE`: re-simulate a run and check what it claims."""
    parser = cli_args.parser(
        PROG,
        "Re-simulate a recorded run (replay file, share code, or a file holding one) and check "
        "its result. Exit 0: verified; 1: unreadable, corrupt, truncated, newer, unverifiable or "
        "not matching; 2: bad command line.")
    parser.add_argument("source", metavar="CODE_OR_FILE",
                        help="a share code, a ?replay= link, a replay file or a file holding a code")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--code", action="store_true", help="print the run's share code instead")
    parser.add_argument("--beside", metavar="CODE_OR_FILE",
                        help="a chapter-2 run: the chapter-1 run it replays; print both at the moment that one ended")
    args = parser.parse_args(argv)
    if args.beside is not None and args.code:
        parser.error("--beside prints the two runs side by side: it takes no --code")
    return _check_and_print(parser, args)


def _check_and_print(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        replay = load_any(args.source)
    except ReplayError as exc:
        return cli_args.failure(parser.prog, str(exc))
    except OSError as exc:
        return cli_args.failure(parser.prog, f"cannot read {args.source[:80]}: {exc.strerror or exc}")
    out, problem = replay.check()
    if problem is not None:
        return cli_args.failure(parser.prog, problem)
    assert out is not None
    if args.code:
        try:
            code = sharecode.encode(replay, out)
        except ReplayError as exc:
            return cli_args.failure(parser.prog, f"no share code for this run: {exc}")
        print(code)
        if len(code) > sharecode.COMMENT_LIMIT:
            print(f"{parser.prog}: note: {len(code)} characters, more than a comment takes "
                  f"({sharecode.COMMENT_LIMIT})", file=sys.stderr)
        return 0
    summary: dict[str, object] = {"seed": replay.seed, "daily": replay.daily, "rules": replay.rules,
                                  "endless": replay.endless, "chapter": replay.chapter,
                                  "steps": len(replay.steps), **out.summary(), "verified": True}
    pair: dict[str, Any] | None = None
    if args.beside is not None:
        try:
            pair = side_by_side(replay, load_any(args.beside))
        except ReplayError as exc:
            return cli_args.failure(parser.prog, f"--beside: {exc}")
        except OSError as exc:
            return cli_args.failure(parser.prog, f"cannot read {args.beside[:80]}: {exc.strerror or exc}")
        summary["beside"] = pair
    if args.json:
        print(json.dumps(summary, separators=(", ", ": ")))
        return 0
    day = f", daily {replay.daily}" if replay.daily else ""
    print(f"seed {replay.seed}{day}, mode {summary['mode']}, {len(replay.steps)} steps: "
          f"score {summary['score']}, served {summary['served']}, tokens {summary['tokens']}, "
          f"{summary['minutes']} game minutes, "
          f"outcome {summary['outcome']}")
    print("final state reproduced exactly")
    if pair is not None:
        c, p = pair["contiguous"], pair["paged"]
        print(f"at {pair['at_ms'] / 1000:.1f} s, when the chapter-1 run ended: running {c['running']} contiguous, "
              f"{p['running']} paged; VRAM held {c['held']:.0%} / {p['held']:.0%}; "
              f"waste {c['waste']:.0%} / {p['waste']:.0%}")
    return 0


def side_by_side(second: Replay, first: Replay) -> dict[str, Any]:
    """A chapter run beside the run of the chapter whose arrivals it replays, both at the moment
    that one ended: the figures chapter 2's outro shows. ReplayError when they are not such a pair."""
    from .chapters import chapter
    from .outro import Moment, figures

    if second.chapter is None or chapter(second.chapter).arrivals_of is None:
        raise ReplayError("the run checked is not of a chapter that replays another's arrivals")
    if first.chapter != chapter(second.chapter).arrivals_of or first.seed != second.seed:
        raise ReplayError(f"not the run whose arrivals it replays (chapter "
                          f"{chapter(second.chapter).arrivals_of}, seed {second.seed})")
    ended = first.simulate().game
    at = figures(ended)
    moment = Moment(ended.time_ms)
    second.simulate(moment.read)
    return {"at_ms": round(ended.time_ms, 3),
            "contiguous": {"running": at.running, "held": at.held, "waste": at.waste},
            "paged": {"running": moment.running, "held": moment.held, "waste": moment.waste}}
