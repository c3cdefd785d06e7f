"""Replays reproduce a run exactly; bad files give a clear error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine import Input, replay_json
from engine.bot import Bot
from engine.replay import Recorder, Replay, ReplayError, final_state
from engine.replay_cli import main as replay_main
from tests.prockit import is_usage_error


def recorded_run(mode: str, seed: int = 11, frames: int = 6000) -> Recorder:
    """Bot play at 60 Hz, one key a frame, with an allocator switch now and then."""
    rec = Recorder(seed=seed, mode=mode)
    bot = Bot(seed=seed, skill=0.7)
    pending: list[Input] = []
    for frame in range(frames):
        if rec.game.over:
            break
        if not pending and (rec.game.active is not None or rec.game.blocked is not None):
            pending = bot.plan(rec.game)
        inputs = [pending.pop(0)] if pending else []
        if frame % 1500 == 700:
            inputs.append(Input.MODE_TOGGLE)
        if frame % 2000 == 900:
            inputs.append(Input.PREEMPT_TOGGLE)
        rec.update(1000 / 60, inputs)
    return rec


@pytest.mark.parametrize("mode", ["contiguous", "paged"])
def test_replay_round_trip_reproduces_final_state(mode):
    rec = recorded_run(mode)
    replay = rec.finish()
    text = replay_json.to_json(replay)
    again = replay_json.from_json(text)
    game = again.play()
    assert final_state(game) == final_state(rec.game)
    assert game.board.grid == rec.game.board.grid and game.time_ms == rec.game.time_ms
    assert again.verify()
    assert len(text) < 60_000  # idle frames are run-length packed


def test_tampered_replay_does_not_verify():
    replay = replay_json.from_json(replay_json.to_json(recorded_run("paged").finish()))
    replay.seed += 1
    assert not replay.verify()


@pytest.mark.parametrize("extra", [[Input.MODE_TOGGLE], [Input.HOLD], [Input.ROTATE_CW]])
def test_any_extra_input_breaks_verification(extra):
    rec = Recorder(seed=3, mode="paged")
    for n in range(300):
        rec.update(100.0, [Input.HARD_DROP] if n % 10 == 0 else [])
    replay = rec.finish()
    assert replay.verify() and not rec.game.over
    replay.steps.append((300.0, tuple(extra)))
    assert not replay.verify()


def test_recorder_refuses_what_a_file_cannot_hold_and_takes_input_names():
    rec = Recorder(seed=1)
    for bad in (-1.0, float("nan"), 60_001.0):
        with pytest.raises(ValueError):
            rec.update(bad)
    rec.update(16.0, ["LEFT", "HARD_DROP"])
    assert replay_json.from_json(replay_json.to_json(rec.finish())).verify()


def test_a_replay_bomb_is_refused_before_it_is_expanded():
    step = [16, [], 10_000_000]
    doc = {"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "paged",
           "steps": [step] * 30}
    with pytest.raises(ReplayError, match="too long"):
        replay_json.from_json(json.dumps(doc))


BAD = [
    ("", "not a replay: the file is empty"), ("  \n ", "nothing but blank characters"),
    ("[1, 2]", "not a replay"),
    ('{"format": "vram-tetris-replay", "version": 9}', "newer than this game reads"),
    ('{"format": "vram-tetris-replay", "version": 0}', "unsupported replay version"),
    ('{"format": "vram-tetris-replay", "version": 2, "seed": 1, "mode": "paged", "steps": [[16, []]',
     "truncated"),
    ('{"format": "vram-tetris-replay", "version": 1, "seed": "x", "mode": "paged", "steps": []}', "'seed'"),
    ('{"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "buddy", "steps": []}', "'mode'"),
    ('{"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "paged", "steps": 3}', "'steps'"),
    ('{"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "paged", "steps": [[16, ["JUMP"]]]}',
     "unknown input"),
    ('{"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "paged", "steps": [[-5, []]]}',
     "dt_ms"),
    ('{"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "paged", "steps": [[16, [], 0]]}',
     "repeat"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_bad_replays_raise_a_clear_error(text, message):
    with pytest.raises(ReplayError, match=message):
        replay_json.from_json(text)


def test_replay_cli_verifies_and_rejects_bad_files(tmp_path):
    good = tmp_path / "run.json"
    good.write_text(replay_json.to_json(recorded_run("contiguous").finish()))
    ok = subprocess.run([sys.executable, "-m", "engine.replay", str(good)],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "reproduced" in ok.stdout
    # A file that is there but is not a replay it can check: exit 1, one line.
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "nope"}))
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "vram-tetris-replay", "version": 2, "steps": ' + "[" * 200_000)
    for path in (bad, binary, deep):
        run = subprocess.run([sys.executable, "-m", "engine.replay", str(path)],
                             capture_output=True, text=True, check=False)
        assert run.returncode == 1, (path, run.stderr)
        assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    # A file that cannot be opened: one line, exit 1.
    run = subprocess.run([sys.executable, "-m", "engine.replay", str(tmp_path / "missing.json")],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1 and run.stderr.count("\n") == 1
    assert run.stderr.startswith("python -m engine.replay: error: cannot read")
    # A bad command line: one line, exit 2.
    for args in ([], [str(good), "--frobnicate"]):
        run = subprocess.run([sys.executable, "-m", "engine.replay", *args],
                             capture_output=True, text=True, check=False)
        assert run.returncode == 2 and is_usage_error(run.stderr), run.stderr


def test_a_replay_without_its_final_state_is_unverifiable(tmp_path, capsys):
    doc = json.loads(replay_json.to_json(recorded_run("paged").finish()))
    del doc["final"]
    path = tmp_path / "no-final.json"
    path.write_text(json.dumps(doc))
    assert replay_main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "unverifiable" in err and err.count("\n") == 1
    doc["final"] = None
    path.write_text(json.dumps(doc))
    assert replay_main([str(path), "--json"]) == 1


def _big_replay_file(path, idle_steps: int, input_steps: int) -> None:
    """A replay written the long way (every step its own entry, nothing packed)."""
    with open(path, "w") as fh:
        fh.write('{"format": "vram-tetris-replay", "version": 2, "rules": 2, "seed": 4, "mode": "paged", '
                 '"steps": [')
        step = 1000 / 60
        for _ in range(input_steps):
            fh.write(f'[{step}, ["LEFT"]], [{step}, ["RIGHT"]], ')
        for _ in range(idle_steps):
            fh.write(f"[{step}, []], ")
        fh.write(f'[{step}, []]], "final": null}}')


def test_reading_a_big_replay_file_takes_memory_for_its_inputs_not_its_size(tmp_path):
    """A file of mostly idle frames once took ~40x its size in memory; now it is streamed."""
    import tracemalloc

    path = tmp_path / "big.json"
    _big_replay_file(path, idle_steps=200_000, input_steps=5_000)
    size = path.stat().st_size
    assert size > 5_000_000
    tracemalloc.start()
    try:
        code = replay_main([str(path)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 10 000 steps that matter: well under a megabyte of runs, plus a bounded read window.
    assert peak < 3_000_000, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
    assert code == 1  # no final state: unverifiable, but read and replayed in full


def test_a_mixed_run_replays_exactly_and_says_so():
    rec = Recorder(seed=9, mode="contiguous")
    for n in range(400):
        rec.update(1000 / 60, [Input.HARD_DROP] if n % 30 == 0 else [])
        if n == 100:
            rec.update(0.0, [Input.MODE_PAGED])
    replay = rec.finish()
    assert replay.modes == ("contiguous", "paged")
    again = replay_json.from_json(replay_json.to_json(replay))
    out, problem = again.check()
    assert problem is None and out.mode == "mixed" and out.summary()["modes"] == ["contiguous", "paged"]
    assert final_state(out.game) == final_state(rec.game)
    # Claiming it was a single-mode run does not verify.
    again.modes = ("contiguous",)
    assert not again.verify()


def test_replays_record_the_current_rules_version_and_final_states_say_how_the_run_ended():
    from engine.rules import RULES_VERSION

    assert RULES_VERSION == 4
    rec = Recorder(seed=2, mode="paged", endless=True)
    while not rec.game.over:
        rec.update(1000 / 60)
    replay = rec.finish()
    assert replay.rules == 4 and json.loads(replay_json.to_json(replay))["rules"] == 4
    assert replay.final["over"] is True and replay.final["outcome"] == rec.game.result.outcome
    assert replay.final["outcome"] in ("oom", "overload")
    assert replay_json.from_json(replay_json.to_json(replay)).verify()
    running = recorded_run("paged", frames=600).finish()
    assert running.final["over"] is False and "outcome" not in running.final


OLD_RULES = "recorded under rules 1; this build plays rules 4"


def test_a_rules_1_file_is_refused_with_one_line(tmp_path):
    doc = json.loads(replay_json.to_json(recorded_run("contiguous", frames=600).finish()))
    doc["rules"] = 1
    old = replay_json.from_json(json.dumps(doc))
    out, problem = old.check()
    assert out is None and problem == OLD_RULES and not old.verify()
    # A format-1 file has no rules field: it was recorded under rules 1.
    for key in ("rules", "daily", "modes"):
        del doc[key]
    doc["version"] = 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    assert replay_json.load(str(path)).check() == (None, OLD_RULES)
    run = subprocess.run([sys.executable, "-m", "engine.replay", str(path)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and OLD_RULES in run.stderr


@pytest.mark.parametrize("chunk", [1, 2, 7, 64])
def test_a_file_read_in_small_pieces_reads_the_same(tmp_path, monkeypatch, chunk):
    """Numbers, names and lists cut across read windows are put back together."""
    replay = recorded_run("paged", seed=4).finish()
    path = tmp_path / "run.json"
    replay_json.save(replay, str(path))
    monkeypatch.setattr(replay_json, "CHUNK_CHARS", chunk)
    again = replay_json.load(str(path))
    assert again == replay and again.verify()
    spaced = tmp_path / "spaced.json"
    spaced.write_text(json.dumps(json.loads(path.read_text()), indent=3))
    assert replay_json.load(str(spaced)) == replay


# --- Hostile replay files: one line and exit 1 (or accepted when valid), never a traceback ------

BIG = "9" * 5000  # past Python's 4,300-digit limit on turning text into an int


def _hostile_files(tmp_path):
    """name -> (path, expected exit status) for every hostile case of a replay file."""
    import os

    from engine import sharecode

    replay = recorded_run("paged", seed=5).finish()
    text = replay_json.to_json(replay)
    doc = json.loads(text)
    cases = {}

    def put(name, content, status=1, encoding="utf-8"):
        path = tmp_path / name
        path.write_text(content, encoding=encoding)
        cases[name] = (path, status)

    for key in ("seed", "rules", "version"):
        put(f"big-{key}.json", text.replace(f'"{key}":{doc[key]}', f'"{key}":{BIG}', 1))
    put("big-dt.json", text.replace('"steps":[', f'"steps":[[{BIG},[]],', 1))
    put("big-repeat.json", text.replace('"steps":[', f'"steps":[[16,[],{BIG}],', 1))
    put("big-score.json", text.replace('"score":', f'"score":{BIG},"was":', 1))
    put("negative-seed.json", json.dumps(dict(doc, seed=-5)))
    put("huge-seed.json", json.dumps(dict(doc, seed=2**31)))
    put("daily-1969.json", json.dumps(dict(doc, daily="1969-12-31")))
    put("zero-length-flood.json", json.dumps(dict(doc, steps=[[0, ["LEFT"]], [0, ["RIGHT"]]] * 100_000)))
    put("bom.json", text, status=0, encoding="utf-8-sig")
    put("code.txt", sharecode.encode(replay) + "\n", status=0)
    put("link.txt", "https://example.com/vram-tetris/?replay=" + sharecode.encode(replay), status=0)
    put("garbage.txt", "hello, this is not a run")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases["fifo"] = (fifo, 1)
    cases["folder"] = (tmp_path, 1)
    return cases


def test_hostile_replay_files_are_one_line_never_a_traceback_or_a_hang(tmp_path, capsys):
    """5,000-digit numbers in every field, seeds out of range, a daily before 1970, a flood of
    zero-length presses, a FIFO and a folder: exit 1 and one line. A BOM, a file holding a share
    code or a link: read and verified."""
    import signal

    def too_slow(signum, frame):
        raise AssertionError("hung")

    previous = signal.signal(signal.SIGALRM, too_slow)
    problems = []
    try:
        for name, (path, status) in _hostile_files(tmp_path).items():
            signal.alarm(10)
            code = replay_main([str(path)])
            signal.alarm(0)
            out, err = capsys.readouterr()
            lines = err.splitlines()
            if code != status:
                problems.append(f"{name}: exit {code}, {err!r}")
            elif status == 1 and (len(lines) != 1 or not lines[0].startswith("python -m engine.replay: error: ")):
                problems.append(f"{name}: {err!r}")
            elif status == 0 and "reproduced" not in out:
                problems.append(f"{name}: {out!r} {err!r}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert not problems, "\n".join(problems)


def test_a_negative_seed_does_not_pass_for_its_positive_twin(tmp_path, capsys):
    doc = json.loads(replay_json.to_json(recorded_run("paged", seed=5).finish()))
    path = tmp_path / "negative.json"
    path.write_text(json.dumps(dict(doc, seed=-5)))
    assert replay_main([str(path), "--code"]) == 1
    assert "'seed' must be a whole number from 0 to 2,147,483,647" in capsys.readouterr().err
    bad = Replay(-5, "paged", steps=replay_json.from_json(json.dumps(doc)).steps, final=doc["final"])
    out, problem = bad.check()
    assert out is None and "seed must be a whole number" in problem


def test_a_zero_length_flood_in_a_file_is_refused_before_it_is_expanded(monkeypatch):
    from engine.replay import INPUT_SLACK

    added = []

    class Counting(replay_json.Timeline):
        def add(self, dt_ms, inputs=(), repeat=1):
            added.append(len(inputs) * repeat)
            super().add(dt_ms, inputs, repeat)

    monkeypatch.setattr(replay_json, "Timeline", Counting)
    text = json.dumps({"format": "vram-tetris-replay", "version": 2, "seed": 1, "mode": "paged",
                       "steps": [[0, ["LEFT", "RIGHT"]]] * 200_000, "final": None})
    with pytest.raises(ReplayError, match="not a real run: 10,002 key presses in 0.0 s"):
        replay_json.from_json(text)
    assert sum(added) <= INPUT_SLACK


def test_main_watching_a_hostile_file_is_one_line_and_exit_1(tmp_path):
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cases = _hostile_files(tmp_path)
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    procs = {name: subprocess.Popen([sys.executable, str(root / "main.py"), "--replay", str(cases[name][0])],
                                    cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("big-seed.json", "negative-seed.json", "fifo")}
    for name, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        assert proc.returncode == 1, (name, err)
        assert len(err.splitlines()) == 1 and err.startswith("main.py: error: cannot watch"), (name, err)
