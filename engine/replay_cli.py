"""`python -m engine.replay CODE_OR_FILE [--json] [--code]`: check a recorded run.

Re-simulates a share code, a link holding one, or a replay file, and compares the result with
what the run claims. Exit 0: verified; 1: corrupt, truncated, newer, unverifiable or not matching
(one line on stderr); 2: a bad command line or a file that cannot be opened. (Desktop tool: not
in the web bundle.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import cli_args, sharecode
from .replay import Replay, ReplayError


def load_any(arg: str) -> Replay:
    """A replay from a file path, a share code or a link with ?replay=CODE."""
    if "replay=" not in arg and (os.path.exists(arg) or arg.endswith(".json") or os.sep in arg):
        return Replay.load(arg)
    return sharecode.decode(arg)


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.replay CODE_OR_FILE`: re-simulate a run and check what it claims."""
    parser = cli_args.parser(
        "python -m engine.replay",
        "Re-simulate a recorded run (replay file or share code) and check its result. "
                    "Exit 0: verified; 1: corrupt, truncated, newer, unverifiable or not matching; "
                    "2: bad command line or unreadable file.")
    parser.add_argument("source", metavar="CODE_OR_FILE", help="a share code, a ?replay= link or a replay file")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--code", action="store_true", help="print the run's share code instead")
    args = parser.parse_args(argv)
    try:
        return _check_and_print(parser, args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _check_and_print(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        replay = load_any(args.source)
    except ReplayError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {args.source}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    out, problem = replay.check()
    if problem is not None:
        print(f"{parser.prog}: {problem}", file=sys.stderr)
        return 1
    assert out is not None
    if args.code:
        code = sharecode.encode(replay, out)
        print(code)
        if len(code) > sharecode.COMMENT_LIMIT:
            print(f"{parser.prog}: note: {len(code)} characters, more than a comment takes "
                  f"({sharecode.COMMENT_LIMIT})", file=sys.stderr)
        return 0
    summary = {"seed": replay.seed, "daily": replay.daily, "rules": replay.rules,
               "endless": replay.endless, "steps": len(replay.steps), **out.summary(),
               "verified": True}
    if args.json:
        print(json.dumps(summary, separators=(", ", ": ")))
        return 0
    day = f", daily {replay.daily}" if replay.daily else ""
    print(f"seed {replay.seed}{day}, mode {summary['mode']}, {len(replay.steps)} steps: "
          f"score {summary['score']}, served {summary['served']}, tokens {summary['tokens']}, "
          f"{summary['minutes']} game minutes, "
          f"outcome {summary['outcome']}")
    print("final state reproduced exactly")
    return 0
