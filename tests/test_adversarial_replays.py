"""Hostile share codes and replay files of rules 2: refused in one line, in bounded work.

Runs are recorded once per module (a short mixed run with preemption-mode toggles and a daily
run); every attack is a variation of them.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from datetime import date
from pathlib import Path

import pytest

from engine import replay_json, sharecode
from engine.bot import Bot
from engine.daily import daily_seed, parse_day
from engine.game import Input
from engine.replay import MAX_ITEMS, STEP_SLACK, Claim, Recorder, Replay, ReplayError, Timeline
from engine.rules import RULES_VERSION

ROOT = Path(__file__).resolve().parent.parent
OLD_RULES = "recorded under rules 1; this build plays rules 4"
# Recorded with the rules-1 engine (a paged run of seed 4, a hard drop every 20 frames).
RULES1_CODE = "vt13baosHDUlsu6YC69VcklGiLQcHb0sVLraEc5Y9UgwQom0LO1LyNM6Cm0s8y3TlxLS"


def _record(seed: int, mode: str, daily: str | None = None, seconds: float = 40.0) -> Recorder:
    rec = Recorder(seed=seed, mode=mode, daily=daily)
    game, bot = rec.game, Bot(skill=0.8, seed=seed)
    i = 0
    while not game.over and game.time_ms < seconds * 1000:
        i += 1
        if i % 7 == 0:
            rec.update(16.7, [Input.PREEMPT_TOGGLE])
        if i % 23 == 0:
            rec.update(0.0, [Input.MODE_TOGGLE])
        if game.active is not None or game.blocked is not None:
            plan = bot.plan(game)
            rec.update(0.0, plan[:-1])
            rec.update(200.0)
            rec.update(0.0, plan[-1:])
        else:
            rec.update(100.0)
    return rec


@pytest.fixture(scope="module")
def mixed() -> tuple[Replay, str]:
    rec = _record(7, "paged")
    assert rec.game.mixed and rec.game.serving.preempt_mode in ("swap", "recompute")
    replay = rec.finish()
    return replay, sharecode.encode(replay, rec.tape.claim())


@pytest.fixture(scope="module")
def daily() -> tuple[Replay, str]:
    day = "2024-02-29"
    rec = _record(daily_seed(parse_day(day)), "paged", day, seconds=15.0)
    replay = rec.finish()
    return replay, sharecode.encode(replay, rec.tape.claim())


def _one_line_refusal(code: str) -> str:
    """The reason `code` is refused (it must be, in one line)."""
    try:
        replay = sharecode.decode(code)
    except ReplayError as exc:
        reason = str(exc)
    else:
        _, problem = replay.check()
        assert problem is not None, "a tampered code verified"
        reason = problem
    assert reason and "\n" not in reason and len(reason) < 400
    return reason


def _wrap(raw: bytes) -> str:
    """A share code around a raw body, with a valid checksum (what a forger can make)."""
    body = bytes([0]) + raw
    payload = sharecode._varint(len(body)) + body + struct.pack(">I", zlib.crc32(body))
    return sharecode.PREFIX + sharecode.ALPHABET[1] + sharecode.b62encode(payload)


def _head(rules: int = RULES_VERSION, seed: int = 5, dt: float = 16.0) -> bytes:
    v = sharecode._varint
    head = v(rules) + bytes([0]) + v(seed)
    for name in (b"paged", b"paged"):
        head += v(len(name)) + name
    return head + v(0) + v(0) + v(0) + bytes([3]) + b"\0" * 8 + struct.pack(">d", dt)


# ---------------------------------------------------------------------- round trips


def test_recorded_rules2_runs_round_trip_as_codes_and_files(mixed, daily):
    for replay, code in (mixed, daily):
        for back in (sharecode.decode(code), replay_json.from_json(replay_json.to_json(replay))):
            out, problem = back.check()
            assert problem is None and out is not None
            assert (back.daily, back.seed, back.rules) == (replay.daily, replay.seed, RULES_VERSION)
    assert sharecode.decode(mixed[1]).claimed_mode() == "mixed"


# ---------------------------------------------------------------------- tampering


def test_every_changed_truncated_or_extended_code_is_refused_in_one_line(mixed):
    _, code = mixed
    other = {c: sharecode.ALPHABET[(sharecode.ALPHABET.index(c) + 17) % 62] for c in sharecode.ALPHABET}
    for i in range(len(code)):
        _one_line_refusal(code[:i] + other[code[i]] + code[i + 1:])
    for n in range(len(code)):
        _one_line_refusal(code[:n])
    for extra in ("0", "zz", "0" * 11, code[-11:]):
        _one_line_refusal(code + extra)


# ---------------------------------------------------------------------- old rules


def test_rules1_codes_and_files_are_refused_with_exactly_the_one_line(mixed):
    replay, _ = mixed
    assert _one_line_refusal(RULES1_CODE) == OLD_RULES
    assert _one_line_refusal(_wrap(_head(rules=1) + sharecode._varint(1) * 2
                                   + bytes([sharecode.OP_END, 0]))) == OLD_RULES
    doc = json.loads(replay_json.to_json(replay))
    doc["rules"] = 1
    assert replay_json.from_json(json.dumps(doc)).check()[1] == OLD_RULES
    for key in ("rules", "daily", "modes"):  # a version-1 file: written before rules 2 existed
        del doc[key]
    doc["version"] = 1
    assert replay_json.from_json(json.dumps(doc)).check()[1] == OLD_RULES


# ---------------------------------------------------------------------- bounded work


def test_a_code_of_millions_of_tiny_steps_is_refused_before_it_is_simulated():
    """A 57-character code of 10 million steps of 1e-9 ms once took 144 s to verify: each step
    is a tick of the game whatever its length, and game time never reached a deadline."""
    steps = Timeline()
    steps.add(1e-9, (), 10_000_000)
    code = sharecode.encode(Replay(5, "paged", True, steps),
                            Claim(0, 0, 0, "unfinished", "paged", b"\0" * 8))
    assert len(code) < 80
    with pytest.raises(ReplayError, match=r"not a real run: [\d,]+ steps in 0\.0 s"):
        sharecode.decode(code)
    doc = {"format": "vram-tetris-replay", "version": 2, "rules": RULES_VERSION, "seed": 5,
           "mode": "paged", "steps": [[1e-9, [], 10_000_000]], "final": {}}
    with pytest.raises(ReplayError, match="not a real run"):
        replay_json.from_json(json.dumps(doc))
    within = {**doc, "steps": [[1e-9, [], STEP_SLACK]]}
    assert len(replay_json.from_json(json.dumps(within)).steps) == STEP_SLACK  # the slack still reads


def _alternating_steps(n: int) -> Timeline:
    """`n` one-step runs whose length alternates: one change-of-step-length token each (built
    straight into the Timeline's arrays, as a forger's encoder would)."""
    from array import array

    steps = Timeline()
    steps._dt = array("d", [16.0, 16.5] * (n // 2))
    steps._set = array("H", [0] * n)
    steps._rep = array("Q", [1] * n)
    steps.steps = n
    return steps


def test_changes_of_step_length_count_against_the_cap_on_what_a_code_holds():
    """3 million step-length tokens fit in an 82 KB code and took 3.7 s to check: they were
    neither a step nor a press to the pace checks. Every token counts now, before any is read."""
    n = MAX_ITEMS + 2
    code = sharecode.encode(Replay(5, "paged", True, _alternating_steps(n)),
                            Claim(0, 0, 0, "unfinished", "paged", b"\0" * 8))
    assert len(code) < 10_000
    with pytest.raises(ReplayError, match=f"more than {MAX_ITEMS:,} recorded items"):
        sharecode.decode(code)
    within = sharecode.decode(sharecode.encode(Replay(5, "paged", True, _alternating_steps(2_000)),
                                               Claim(0, 0, 0, "unfinished", "paged", b"\0" * 8)))
    assert len(within.steps) == 2_000
    doc = {"format": "vram-tetris-replay", "version": 2, "rules": RULES_VERSION, "seed": 5,
           "mode": "paged", "steps": [[16.0 + (i % 2) / 2, []] for i in range(n)], "final": {}}
    with pytest.raises(ReplayError, match="recorded items"):
        replay_json.from_json(json.dumps(doc))


def test_a_code_cut_anywhere_says_it_is_truncated(mixed):
    """docs/replays.md promises "truncated" for a code cut short; a cut inside a block once
    said "corrupt"."""
    _, code = mixed
    for n in range(3, len(code)):
        with pytest.raises(ReplayError, match="^truncated: "):
            sharecode.decode(code[:n])


def test_a_real_run_is_far_inside_the_step_bound(mixed):
    replay, code = mixed
    game_s = sum(dt * n for dt, _, n in replay.steps.runs()) / 1000.0
    assert len(replay.steps) < 100 * game_s  # the game's 60 Hz step, plus the moments at dt 0
    assert sharecode.decode(code).check()[1] is None


# ---------------------------------------------------------------------- the daily challenge


@pytest.mark.parametrize("text", ["20240229xx", "2024-W09-4"])
def test_a_daily_date_has_exactly_one_spelling(text, daily):
    """Python's date.fromisoformat reads "20240229xx" and "2024-W09-4" as 2024-02-29: a daily
    file dated so verified as that day's run under another name."""
    with pytest.raises(ValueError):
        parse_day(text)
    replay, _ = daily
    doc = json.loads(replay_json.to_json(replay))
    doc["daily"] = text
    with pytest.raises(ReplayError, match="'daily' must be a date as YYYY-MM-DD"):
        replay_json.from_json(json.dumps(doc))


@pytest.mark.parametrize("day", ["1970-01-01", "2024-02-29", "9999-12-31"])
def test_dailies_from_the_epoch_to_the_last_date_verify(day):
    rec = _record(daily_seed(date.fromisoformat(day)), "contiguous", day, seconds=3.0)
    replay = rec.finish()
    back = sharecode.decode(sharecode.encode(replay, rec.tape.claim()))
    assert back.daily == day and back.check()[1] is None


def test_dailies_before_1970_or_of_no_calendar_day_are_refused(daily):
    replay, _ = daily
    doc = json.loads(replay_json.to_json(replay))
    for text in ("1969-12-31", "2023-02-29", "0000-01-01"):
        doc["daily"] = text
        with pytest.raises(ReplayError, match="'daily' must be a date"):
            replay_json.from_json(json.dumps(doc))
    with pytest.raises(ReplayError, match="bad daily date"):  # past 9999-12-31
        sharecode.decode(_wrap(sharecode._varint(RULES_VERSION) + bytes([2])
                               + sharecode._varint(2_932_897)))


# ---------------------------------------------------------------------- the command line


def test_the_replay_command_answers_each_hostile_input_in_one_line(tmp_path, mixed):
    replay, code = mixed
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps({"format": "vram-tetris-replay", "version": 2, "rules": 2,
                                "seed": 5, "mode": "paged", "steps": [[1e-9, [], 10**7]],
                                "final": {}}))
    week = tmp_path / "week.json"
    doc = json.loads(replay_json.to_json(replay))
    doc.update(daily="2024-W09-4", seed=daily_seed(date(2024, 2, 29)))
    week.write_text(json.dumps(doc))
    cases = [([RULES1_CODE], 1, OLD_RULES), ([str(tiny)], 1, "not a real run"),
             ([str(week)], 1, "'daily' must be a date"), (["--code", code], 0, "")]
    for args, status, words in cases:
        p = subprocess.run([sys.executable, "-m", "engine.replay", *args], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == status, p.stderr
        assert "Traceback" not in p.stderr
        if status:
            assert len(p.stderr.splitlines()) == 1 and words in p.stderr
            assert p.stderr.startswith("python -m engine.replay: error: ")
        else:
            assert p.stdout.strip() == code


# ---------------------------------------------------------------------- determinism


_DIGEST = """
import sys
from engine.game import Game, Input
from engine.replay import final_state, state_digest
g = Game(seed=11, mode="paged", endless=True)
keys = list(Input)
for i in range(6000):
    g.update((0.0, 16.7, 250.0)[i % 3], [keys[(i * 7) % len(keys)]] if i % 5 == 0 else [])
    if g.over:
        break
print(state_digest(final_state(g)).hex(), g.time_ms, g.score)
"""


def test_the_same_steps_give_the_same_run_in_every_process():
    outs = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        p = subprocess.run([sys.executable, "-c", _DIGEST], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        outs.add(p.stdout)
    assert len(outs) == 1
    exec_globals: dict[str, object] = {}
    exec(compile(_DIGEST.replace("print(", "result = ("), "<digest>", "exec"), exec_globals)
    assert " ".join(map(str, exec_globals["result"])) + "\n" in outs  # type: ignore[arg-type]


def test_blank_characters_around_a_code_or_a_file_are_skipped_at_any_length(tmp_path, mixed):
    from engine.replay_cli import load_file

    replay, code = mixed
    padded = tmp_path / "padded.txt"
    padded.write_text(" \n\t" * 40_000 + code + "\n" * 100)
    assert load_file(str(padded)).check()[1] is None  # once read as JSON past 64 blanks
    doc = tmp_path / "padded.json"
    doc.write_text("\n" * 200_000 + replay_json.to_json(replay))
    assert load_file(str(doc)).check()[1] is None
    blank = tmp_path / "blank.txt"
    blank.write_text(" " * 3_000_000)
    with pytest.raises(ReplayError, match="nothing but blank characters"):
        load_file(str(blank))
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ReplayError, match="the file is empty"):
        load_file(str(empty))
