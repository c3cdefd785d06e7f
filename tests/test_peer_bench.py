"""The peer benchmark (tools/peer_bench.py): the same random player drives every engine, each
driver does what its key says, and the command reports missing peers instead of failing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import peer_bench  # noqa: E402

from engine import Game, Input  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def test_peers_are_pinned_exactly() -> None:
    pins = peer_bench.pinned()
    assert pins == {"tetris": "1.0.0a0", "tetris-tui": "1.0.0"}
    assert set(pins) == {dist for name, (_, dist) in peer_bench.ENGINES.items() if name != "vram-tetris"}


def test_our_driver_presses_the_keys_the_player_means() -> None:
    """Driven by the benchmark, our engine ends where the same key presses leave a Game."""
    driver = peer_bench.ours(7)
    reference = Game(seed=7, endless=True)
    keys = [(driver.rotate, Input.ROTATE_CW), (lambda: driver.move(1), Input.RIGHT),
            (lambda: driver.move(-1), Input.LEFT), (lambda: driver.move(-1), Input.LEFT)]
    for press, key in keys:
        press()
        reference.update(0.0, (key,))
    lines, over = driver.drop()
    reference.update(0.0, (Input.HARD_DROP,))
    assert (lines, over) == (reference.served, reference.over) == (0, False)
    # The next drop reports the same game: a board holding one piece more, lines counted per drop.
    assert driver.drop() == (0, False)


def test_random_player_plays_whole_games() -> None:
    run = peer_bench.play(peer_bench.ours(3), 0.3, seed=3)
    assert run.pieces >= 16 and run.seconds >= 0.3
    # The random player tops out in a few dozen pieces; a new game starts each time.
    assert run.games >= 2 and run.pieces / run.games < 100


def test_the_player_is_the_same_for_every_engine() -> None:
    """Same seed, same key presses: a recording driver sees one sequence twice."""
    def recording() -> tuple[peer_bench.Driver, list[str]]:
        log: list[str] = []
        count = {"n": 0}

        def drop() -> tuple[int, bool]:
            log.append("drop")
            count["n"] += 1
            return 0, count["n"] % 7 == 0

        return peer_bench.Driver(rotate=lambda: log.append("cw"), move=lambda dx: log.append(f"{dx:+d}"),
                                 drop=drop, restart=lambda: log.append("restart")), log

    a, log_a = recording()
    b, log_b = recording()
    peer_bench.play(a, 0.05, seed=11)
    peer_bench.play(b, 0.05, seed=11)
    n = min(len(log_a), len(log_b))
    assert n > 50 and log_a[:n] == log_b[:n]
    assert {"cw", "+1", "-1", "drop", "restart"} <= set(log_a)


@pytest.mark.parametrize("name", ["tetris", "tetris-tui"])
def test_peer_drivers_when_installed(name: str) -> None:
    """With the pinned peers installed (./build.sh bench-peers), their drivers play real games."""
    factory, dist = peer_bench.ENGINES[name]
    try:
        driver = factory(5)
    except ImportError:
        pytest.skip(f"{dist} is not installed here (./build.sh bench-peers installs it)")
    run = peer_bench.play(driver, 0.3, seed=5)
    assert run.pieces >= 16 and run.games >= 2 and run.lines >= 0


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "peer_bench.py"), *args], capture_output=True,
                          text=True, timeout=60)


# One one-line function, and eight different ones.
def _one_line() -> None: pass


def _f1() -> None: pass
def _f2() -> None: pass
def _f3() -> None: pass
def _f4() -> None: pass
def _f5() -> None: pass
def _f6() -> None: pass
def _f7() -> None: pass
def _f8() -> None: pass


def test_footprint_tells_the_same_lines_run_again_from_different_lines() -> None:
    """Two engines that run as many lines a piece: one the same function eight times, the other
    eight different functions. The footprint counts the lines alike and the different lines
    (and functions) apart, by exactly the seven functions more."""
    def driver(calls: list) -> peer_bench.Driver:
        def drop() -> tuple[int, bool]:
            for call in calls:
                call()
            return 0, False
        return peer_bench.Driver(rotate=lambda: None, move=lambda dx: None, drop=drop,
                                 restart=lambda: None)

    same = peer_bench.footprint(driver([_one_line] * 8), seed=5, warm=3, traced=20)
    varied = peer_bench.footprint(driver([_f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8]), seed=5,
                                  warm=3, traced=20)
    assert same.lines_run == varied.lines_run > 8
    assert varied.distinct - same.distinct == pytest.approx(7)
    assert varied.functions - same.functions == 7
    one = peer_bench._line_bytes(_f1.__code__)[_f1.__code__.co_firstlineno]
    assert varied.bytecode - same.bytecode == pytest.approx(7 * one) and one > 0


def test_cli_footprint() -> None:
    res = run_cli("--footprint", "--only", "vram-tetris", "--json")
    assert res.returncode == 0, res.stderr
    row = json.loads(res.stdout)["vram-tetris"]
    assert row["lines_run"] > row["distinct_lines"] > 50 and row["functions"] > 10
    assert row["bytecode_bytes"] > 10 * row["distinct_lines"]


def test_cli_reports_every_engine_or_why_it_is_missing() -> None:
    res = run_cli("--seconds", "0.1", "--runs", "2", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["runs"] == 2 and doc["engines"]["vram-tetris"]["pieces_per_s"] > 0
    assert set(doc["engines"]) | set(doc["missing"]) == set(peer_bench.ENGINES)
    for why in doc["missing"].values():
        assert "bench-peers" in why or "pins" in why


def test_cli_table() -> None:
    res = run_cli("--seconds", "0.1", "--runs", "1", "--only", "vram-tetris")
    assert res.returncode == 0, res.stderr
    row = next(line for line in res.stdout.splitlines() if line.startswith("vram-tetris"))
    assert "this checkout" in row


@pytest.mark.parametrize("args", [["--seconds", "0"], ["--runs", "x"], ["--only", "nope"], ["--sec", "1"]])
def test_cli_bad_input_is_one_line_and_exit_2(args: list[str]) -> None:
    res = run_cli(*args)
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
