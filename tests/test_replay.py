"""Replays reproduce a run exactly; bad files give a clear error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine import Input
from engine.bot import Bot
from engine.replay import Recorder, Replay, ReplayError, final_state


def recorded_run(mode: str, seed: int = 11) -> Recorder:
    rec = Recorder(seed=seed, mode=mode)
    bot = Bot(seed=seed, skill=0.7)
    frames = 0
    while not rec.game.over and frames < 4000:
        plan = bot.plan(rec.game)
        for inp in plan:
            rec.update(1000 / 60, [inp])
            frames += 1
        for _ in range(5):
            rec.update(1000 / 60)
        if frames % 300 < 20:
            rec.update(1000 / 60, [Input.MODE_TOGGLE])
    return rec


@pytest.mark.parametrize("mode", ["contiguous", "paged"])
def test_replay_round_trip_reproduces_final_state(mode):
    rec = recorded_run(mode)
    replay = rec.finish()
    text = replay.to_json()
    again = Replay.from_json(text)
    game = again.play()
    assert final_state(game) == final_state(rec.game)
    assert game.board.grid == rec.game.board.grid and game.time_ms == rec.game.time_ms
    assert again.verify()
    assert len(text) < 60_000  # idle frames are run-length packed


def test_tampered_replay_does_not_verify():
    replay = Replay.from_json(recorded_run("paged").finish().to_json())
    replay.seed += 1
    assert not replay.verify()


@pytest.mark.parametrize("extra", [[Input.MODE_TOGGLE], [Input.HOLD], [Input.ROTATE_CW]])
def test_any_extra_input_breaks_verification(extra):
    rec = Recorder(seed=3, mode="paged")
    for _ in range(6):
        rec.update(16.0, [Input.HARD_DROP])
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
    assert Replay.from_json(rec.finish().to_json()).verify()


def test_a_replay_bomb_is_refused_before_it_is_expanded():
    step = [16, [], 10_000_000]
    doc = {"format": "vram-tetris-replay", "version": 1, "seed": 1, "mode": "paged",
           "steps": [step] * 30}
    with pytest.raises(ReplayError, match="too long"):
        Replay.from_json(json.dumps(doc))


BAD = [
    ("", "not a JSON document"),
    ("[1, 2]", "not a replay"),
    ('{"format": "vram-tetris-replay", "version": 9}', "unsupported replay version"),
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
        Replay.from_json(text)


def test_replay_cli_verifies_and_rejects_bad_files(tmp_path):
    good = tmp_path / "run.json"
    good.write_text(recorded_run("contiguous").finish().to_json())
    ok = subprocess.run([sys.executable, "-m", "engine.replay", str(good)],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "reproduced" in ok.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "nope"}))
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    for args in ([str(bad)], [str(tmp_path / "missing.json")], [], [str(binary)], [str(deep)]):
        run = subprocess.run([sys.executable, "-m", "engine.replay", *args],
                             capture_output=True, text=True, check=False)
        assert run.returncode == 2 and "usage" in run.stderr and "Traceback" not in run.stderr
