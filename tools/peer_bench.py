"""How fast our engine places pieces beside pure-Python Tetris engines from PyPI.

Every engine is driven the same way, one call per key press as a frontend makes them, by the same
seeded random player: for each piece it turns the piece 0-3 times clockwise, moves it up to five
cells left or right, and hard-drops it; a game over starts a new game. Each engine gets the same
wall time per run, runs are interleaved (one run of each engine, then the next round) so a busy
machine slows all of them alike, and the table shows the median run.

The peers are pinned in tools/peers.txt; `./build.sh bench-peers` installs them into their own
environment (build/venv-peers) and runs this. An engine whose package is missing is listed as such.

Usage:
    python tools/peer_bench.py [--seconds 3] [--runs 5] [--seed 1234] [--only NAME ...] [--json]
    python tools/peer_bench.py --footprint [--only NAME ...] [--json]   # Python code run a piece
Exit status: 0 done, 2 bad usage.
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType, SimpleNamespace
from typing import Any

TraceFunction = Callable[[FrameType, str, Any], Any]

ROOT = Path(__file__).resolve().parent.parent
PEERS_FILE = ROOT / "tools" / "peers.txt"


@dataclass
class Driver:
    """One engine, as the player sees it: one call per key press."""

    rotate: Callable[[], None]  # one clockwise turn
    move: Callable[[int], None]  # one cell: -1 left, +1 right
    drop: Callable[[], tuple[int, bool]]  # hard drop: (lines cleared, game over)
    restart: Callable[[], None]


def ours(seed: int) -> Driver:
    """This game's engine through Game.update, events on, telemetry read after every drop (as the UI
    does); game time passes between requests, since they arrive on their own clock."""
    sys.path.insert(0, str(ROOT))
    from engine import Game, Input

    cw, left, right, drop = (Input.ROTATE_CW,), (Input.LEFT,), (Input.RIGHT,), (Input.HARD_DROP,)
    state = SimpleNamespace(game=Game(seed=seed, endless=True), games=0)

    def hard_drop() -> tuple[int, bool]:
        # Requests arrive on their own clock: after a drop, game time runs (as frames would)
        # until the next request falls.
        game = state.game
        before = game.served
        game.update(0.0, drop)
        game.telemetry()
        while game.active is None and not game.over:
            game.update(max(game.idle_ms(), 1.0))
        return game.served - before, game.over

    def restart() -> None:
        state.games += 1
        state.game = Game(seed=seed + state.games, endless=True)

    return Driver(rotate=lambda: state.game.update(0.0, cw),
                  move=lambda dx: state.game.update(0.0, right if dx > 0 else left),
                  drop=hard_drop, restart=restart)


def tetris_lib(seed: int) -> Driver:
    """PyPI `tetris` (BaseGame with its default modern rules)."""
    import tetris

    # A seed of 0 is taken as "no seed" there: start at 1.
    state = SimpleNamespace(game=tetris.BaseGame(seed=seed + 1), games=0)

    def hard_drop() -> tuple[int, bool]:
        game = state.game
        game.hard_drop()
        return len(game.delta.clears) if game.delta else 0, game.lost

    def restart() -> None:
        state.games += 1
        state.game = tetris.BaseGame(seed=seed + 1 + state.games)

    def move(dx: int) -> None:
        if dx > 0:
            state.game.right(1)
        else:
            state.game.left(1)

    return Driver(rotate=lambda: state.game.rotate(1), move=move, drop=hard_drop, restart=restart)


def tetris_tui(seed: int) -> Driver:
    """PyPI `tetris-tui` (module terminal_tetris): its engine's update(dt, actions), no drawing."""
    from terminal_tetris.engine import GAME_OVER, Game

    state = SimpleNamespace(game=Game(seed=seed), games=0)

    def hard_drop() -> tuple[int, bool]:
        game = state.game
        before = game.lines
        game.update(0.0, ["hard"])
        return game.lines - before, game.phase == GAME_OVER

    def restart() -> None:
        state.games += 1
        state.game = Game(seed=seed + state.games)

    return Driver(rotate=lambda: state.game.update(0.0, ["cw"]),
                  move=lambda dx: state.game.update(0.0, ["right" if dx > 0 else "left"]),
                  drop=hard_drop, restart=restart)


ENGINES: dict[str, tuple[Callable[[int], Driver], str]] = {
    "vram-tetris": (ours, "this repository"),
    "tetris": (tetris_lib, "tetris"),
    "tetris-tui": (tetris_tui, "tetris-tui"),
}


@dataclass
class Run:
    pieces: int
    lines: int
    games: int
    seconds: float


def one_piece(driver: Driver, rng: random.Random) -> tuple[int, bool]:
    """The random player's moves for one piece: (lines cleared, game over). A game over starts
    the next game."""
    for _ in range(rng.randrange(4)):
        driver.rotate()
    shift = rng.randint(-5, 5)
    step = 1 if shift > 0 else -1
    for _ in range(abs(shift)):
        driver.move(step)
    cleared, over = driver.drop()
    if over:
        driver.restart()
    return cleared, over


def play(driver: Driver, seconds: float, seed: int) -> Run:
    """The random player, for `seconds` of wall time."""
    rng = random.Random(seed)
    pieces = lines = 0
    games = 1
    clock = time.perf_counter
    start = clock()
    end = start + seconds
    while True:
        cleared, over = one_piece(driver, rng)
        pieces += 1
        lines += cleared
        games += over
        if pieces % 16 == 0 and clock() >= end:
            break
    return Run(pieces, lines, games, clock() - start)


@dataclass
class Footprint:
    lines_run: float  # Python source lines executed a piece
    distinct: float  # of those, different lines (each piece on its own, mean)
    bytecode: float  # the bytes of compiled code those different lines are (mean)
    functions: int  # Python functions run over all the pieces traced


def _line_bytes(code: CodeType) -> dict[int | None, int]:
    """Bytes of compiled code (with the interpreter's inline caches) each line of `code` is."""
    sizes: dict[int | None, int] = {}
    for start, end, line in code.co_lines():
        sizes[line] = sizes.get(line, 0) + end - start
    return sizes


WARM, TRACED = 2000, 200  # pieces played before the footprint is taken, and pieces traced


def footprint(driver: Driver, seed: int, warm: int = WARM, traced: int = TRACED) -> Footprint:
    """How much Python code a piece runs, with the random player's own code and the random
    module left out: after `warm` pieces, `traced` pieces under sys.settrace. A piece that runs
    the same few lines many times stays in the processor's caches; one that runs many different
    lines once each does not, at the same instruction count (the interpreter reads compiled code
    as data)."""
    rng = random.Random(seed)
    for _ in range(warm):
        one_piece(driver, rng)
    player = one_piece.__code__
    random_file = random.__file__
    seen: set[tuple[CodeType, int]] = set()
    functions: set[CodeType] = set()
    runs = 0
    distinct = 0
    size = 0

    def on_line(frame: FrameType, event: str, arg: object) -> TraceFunction:
        nonlocal runs
        if event == "line":
            seen.add((frame.f_code, frame.f_lineno))
            runs += 1
        return on_line

    def on_call(frame: FrameType, event: str, arg: object) -> TraceFunction | None:
        code = frame.f_code
        if code is player or code.co_filename == random_file:
            return None
        functions.add(code)
        return on_line

    sizes: dict[CodeType, dict[int | None, int]] = {}
    for _ in range(traced):
        seen.clear()
        sys.settrace(on_call)
        try:
            one_piece(driver, rng)
        finally:
            sys.settrace(None)
        distinct += len(seen)
        for code, line in seen:
            if code not in sizes:
                sizes[code] = _line_bytes(code)
            size += sizes[code][line]
    return Footprint(runs / traced, distinct / traced, size / traced, len(functions))


def pinned() -> dict[str, str]:
    """The peers' pins, read from tools/peers.txt (name==version lines)."""
    pins = {}
    for line in PEERS_FILE.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[name.strip()] = version.strip()
    return pins


def installed_version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def make_drivers(names: list[str], seed: int) -> tuple[dict[str, Driver], dict[str, str]]:
    """(the engines that can be measured, and why each other one cannot: missing, or not the
    pinned version)."""
    drivers: dict[str, Driver] = {}
    missing: dict[str, str] = {}
    pins = pinned()
    for name in names:
        factory, dist = ENGINES[name]
        try:
            drivers[name] = factory(seed)
        except ImportError as exc:
            missing[name] = f"not installed ({exc.name or exc}); ./build.sh bench-peers installs {dist}=={pins.get(dist, '?')}"
            continue
        if name != "vram-tetris" and installed_version(dist) != pins.get(dist):
            missing[name] = f"{dist} {installed_version(dist)} is installed, tools/peers.txt pins {pins.get(dist)}"
            del drivers[name]
    return drivers, missing


def bench(names: list[str], seconds: float, runs: int, seed: int) -> dict:
    drivers, missing = make_drivers(names, seed)
    results: dict[str, list[Run]] = {name: [] for name in drivers}
    for r in range(runs):
        for name, driver in drivers.items():
            results[name].append(play(driver, seconds, seed + 1000 * r))
    rows = {}
    for name, rs in results.items():
        rates = sorted(run.pieces / run.seconds for run in rs)
        pieces = sum(run.pieces for run in rs)
        rows[name] = {
            "pieces_per_s": statistics.median(rates), "min": rates[0], "max": rates[-1],
            "lines_per_s": statistics.median(run.lines / run.seconds for run in rs),
            "pieces_per_game": pieces / sum(run.games for run in rs),
            "version": "this checkout" if name == "vram-tetris" else installed_version(ENGINES[name][1]),
        }
    return {"python": f"{platform.python_version()} ({platform.python_implementation()}) on {platform.machine()}",
            "runs": runs, "seconds": seconds, "seed": seed, "engines": rows, "missing": missing}


def print_table(result: dict) -> None:
    print(f"Python {result['python']}; {result['runs']} run(s) x {result['seconds']:g} s per engine, "
          f"interleaved; seed {result['seed']}")
    print(f"{'engine':<14} {'version':<14} {'pieces/s':>10} {'(min-max)':>17} {'lines/s':>8} {'pieces/game':>12}")
    print("-" * 80)
    for name, row in result["engines"].items():
        span = f"({row['min']:,.0f}-{row['max']:,.0f})"
        print(f"{name:<14} {row['version']:<14} {row['pieces_per_s']:>10,.0f} {span:>17} "
              f"{row['lines_per_s']:>8.1f} {row['pieces_per_game']:>12.1f}")
    for name, why in result["missing"].items():
        print(f"{name:<14} skipped: {why}")


def print_footprints(names: list[str], seed: int, as_json: bool) -> int:
    drivers, missing = make_drivers(names, seed)
    rows: dict[str, dict[str, float]] = {}
    for name, driver in drivers.items():
        f = footprint(driver, seed)
        rows[name] = {"lines_run": f.lines_run, "distinct_lines": f.distinct,
                      "bytecode_bytes": f.bytecode, "functions": f.functions}
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"Python code run a piece (the random player's own left out), pieces {WARM + 1:,}-"
          f"{WARM + TRACED:,}:")
    print(f"{'engine':<14} {'lines run':>10} {'different lines':>16} {'their bytecode':>15} {'functions':>10}")
    for name, row in rows.items():
        print(f"{name:<14} {row['lines_run']:>10,.0f} {row['distinct_lines']:>16,.0f} "
              f"{row['bytecode_bytes'] / 1000:>13.1f} KB {row['functions']:>10}")
    for name, why in missing.items():
        print(f"{name:<14} skipped: {why}")
    return 0


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from engine.cli_args import number, parser as make_parser, whole

    parser = make_parser("peer_bench.py",
                         "Pieces per second of our engine beside pure-Python Tetris engines from PyPI.")
    parser.add_argument("--seconds", type=number(0.0, 600.0, above=True), default=3.0, help="wall time per run")
    parser.add_argument("--runs", type=whole(1, 100), default=5, help="runs per engine, interleaved")
    parser.add_argument("--seed", type=whole(0, 2**31), default=1234, help="the random player's seed")
    parser.add_argument("--only", nargs="+", choices=sorted(ENGINES), help="measure only these engines")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--footprint", action="store_true",
                        help="instead of the speed: how much Python code a piece runs in each engine")
    args = parser.parse_args(argv)
    if args.footprint:
        return print_footprints(args.only or list(ENGINES), args.seed, args.json)
    result = bench(args.only or list(ENGINES), args.seconds, args.runs, args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from engine.cli_args import run

    sys.exit(run(main, prog="peer_bench.py"))
