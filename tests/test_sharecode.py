"""Share codes: a recorded run survives record -> code -> decode -> replay, and a damaged code
is refused with a one-line reason, never a traceback."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Input
from engine import sharecode
from engine.replay import Recorder, ReplayError, final_state

ROOT = Path(__file__).resolve().parents[1]
STEP = 1000.0 / 60.0
ENV = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
       "PYGAME_HIDE_SUPPORT_PROMPT": "1"}

inputs = st.lists(st.sampled_from(list(Input)), max_size=3).map(tuple)
# (idle steps before, step length, inputs): mostly the 60 Hz step, sometimes a zero-length
# step (a mode button) or an odd one.
steps = st.tuples(st.integers(0, 40), st.sampled_from([STEP, STEP, STEP, 0.0, 7.5, 400.0]), inputs)


def record(seed: int, mode: str, endless: bool, plan: list) -> Recorder:
    rec = Recorder(seed=seed, mode=mode, endless=endless)
    for idle, dt, step_inputs in plan:
        for _ in range(idle):
            rec.update(STEP)
        rec.update(dt, step_inputs)
    return rec


@pytest.mark.parametrize("mode", ["contiguous", "paged"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), endless=st.booleans(), plan=st.lists(steps, max_size=60))
def test_random_runs_round_trip_through_a_share_code(mode, seed, endless, plan):
    rec = record(seed, mode, endless, plan)
    replay = rec.finish()
    code = sharecode.encode(replay)
    assert code.isalnum() and code.startswith("vt1")
    back = sharecode.decode(code)
    assert (back.seed, back.mode, back.endless, back.rules) == (replay.seed, mode, endless, replay.rules)
    assert back.steps == replay.steps  # every step, its length and its inputs
    out, problem = back.check()
    assert problem is None
    assert final_state(out.game) == final_state(rec.game)
    assert out.summary() == replay.simulate().summary()
    assert out.mode == rec.tape.mode  # "mixed" exactly when the allocator changed


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_changed_character_is_refused(data):
    rec = record(3, "paged", False, [(5, STEP, (Input.LEFT,)), (3, STEP, (Input.HARD_DROP,))] * 6)
    code = sharecode.encode(rec.finish())
    i = data.draw(st.integers(0, len(code) - 1))
    ch = data.draw(st.sampled_from(sharecode.ALPHABET).filter(lambda c: c != code[i]))
    with pytest.raises(ReplayError):
        sharecode.decode(code[:i] + ch + code[i + 1:])


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(0, 400))
def test_a_cut_short_code_says_so(cut):
    rec = record(5, "contiguous", False, [(4, STEP, (Input.RIGHT,)), (6, STEP, (Input.HARD_DROP,))] * 10)
    code = sharecode.encode(rec.finish())
    short = code[:max(0, len(code) - 1 - cut)]
    with pytest.raises(ReplayError) as err:
        sharecode.decode(short)
    message = str(err.value)
    assert "\n" not in message
    if len(short) > 6:
        assert "truncated" in message or "corrupt" in message


@pytest.mark.parametrize("text,reason", [
    ("", "empty"),
    ("   \n", "empty"),
    ("hello", "not a share code"),
    ("vt2" + "A" * 40, "newer"),
    ("vtZ" + "A" * 40, "newer"),
    ("vt1abc$def", "corrupt"),
    ("vt1", "truncated"),
])
def test_bad_codes_give_a_one_line_reason(text, reason):
    with pytest.raises(ReplayError, match=reason) as err:
        sharecode.decode(text)
    assert "\n" not in str(err.value)


def test_a_link_or_a_wrapped_code_is_read_too():
    rec = record(8, "paged", True, [(2, STEP, (Input.HOLD,))])
    code = sharecode.encode(rec.finish())
    link = f"https://example.org/vram-tetris/?replay={code}#top"
    wrapped = "\n".join(code[i:i + 40] for i in range(0, len(code), 40))
    for text in (link, wrapped, f"  {code}  "):
        assert sharecode.decode(text).steps == rec.replay.steps


def test_a_code_with_a_false_claim_does_not_verify():
    rec = record(2, "paged", False, [(3, STEP, (Input.HARD_DROP,))] * 5)
    replay = rec.finish()
    out = replay.simulate()
    from engine.replay import Claim

    honest = Claim.of(out.game)
    inflated = Claim(honest.score + 1000, honest.lines, honest.pieces, honest.outcome, honest.mode,
                     honest.digest)
    decoded = sharecode.decode(sharecode.encode(replay, inflated))
    _, problem = decoded.check()
    assert problem is not None and "score" in problem


def test_base62_blocks_round_trip_every_length():
    rng = random.Random(1)
    for n in range(0, 40):
        data = bytes(rng.randrange(256) for _ in range(n))
        text = sharecode.b62encode(data)
        assert set(text) <= set(string.ascii_letters + string.digits)
        assert sharecode.b62decode(text) == data


class UnevenPlayer:
    """The bot's placements at a person's uneven pace: a look at each new request, 2-12 frames
    between keys, and now and then a move taken back."""

    def __init__(self, seed: int) -> None:
        from engine.bot import Bot

        self.rng = random.Random(seed)
        self.bot = Bot(skill=1.0, seed=seed)
        self.plan: list[Input] = []
        self.request = 0
        self.wait = 0

    def inputs(self, game, frame: int) -> list[Input]:
        a, rng = game.active, self.rng
        if game.over or a is None:
            return []
        if a.request_id != self.request:
            self.request = a.request_id
            self.plan = list(self.bot.plan(game))
            if rng.random() < 0.3:
                self.plan[:0] = rng.choice([(Input.LEFT, Input.RIGHT), (Input.RIGHT, Input.LEFT),
                                            (Input.ROTATE_CW, Input.ROTATE_CCW)])
            self.wait = rng.randint(6, 40)
        self.wait -= 1
        if self.wait > 0 or not self.plan:
            return []
        self.wait = rng.randint(2, 12)
        return [self.plan.pop(0)]


def three_minute_run(mode: str, seed: int, pick) -> tuple[str, Recorder]:
    """3 minutes of 60 Hz steps with inputs chosen by `pick(game, frame)`."""
    rec = Recorder(seed=seed, mode=mode, endless=True)
    for frame in range(3 * 60 * 60):
        if rec.game.over:
            break
        rec.update(STEP, pick(rec.game, frame))
    return sharecode.encode(rec.finish()), rec


@pytest.mark.parametrize("mode", ["contiguous", "paged"])
def test_a_three_minute_run_fits_in_a_comment(mode):
    player = UnevenPlayer(seed=1)
    code, rec = three_minute_run(mode, 1, player.inputs)
    assert not rec.game.over and rec.game.time_ms >= 3 * 60 * 1000 - STEP  # all three minutes
    presses = sum(len(i) * n for _, i, n in rec.replay.steps.runs())
    assert presses > 900  # about six key presses a second
    assert len(code) <= sharecode.COMMENT_LIMIT
    assert sharecode.decode(code).verify()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=300)


def test_headless_record_code_and_json_agree(tmp_path):
    """The checked contract, command for command."""
    path = tmp_path / "run.json"
    made = run("main.py", "--headless", "--frames", "10800", "--scene", "play", "--autoplay", "--seed", "5",
               "--record", str(path))
    assert made.returncode == 0, made.stderr
    coded = run("-m", "engine.replay", str(path), "--code")
    assert coded.returncode == 0, coded.stderr
    lines = coded.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 2000
    code = lines[0]
    from_code = run("-m", "engine.replay", code, "--json")
    from_file = run("-m", "engine.replay", str(path), "--json")
    assert from_code.returncode == 0 and from_file.returncode == 0, from_code.stderr + from_file.stderr
    a, b = json.loads(from_code.stdout), json.loads(from_file.stdout)
    for key in ("score", "lines", "pieces", "mode", "outcome"):
        assert a[key] == b[key], key
    assert a["pieces"] > 0
    middle = len(code) // 2
    changed = code[:middle] + ("B" if code[middle] != "B" else "C") + code[middle + 1:]
    for bad in (changed, ""):
        refused = run("-m", "engine.replay", bad)
        assert refused.returncode == 1
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert refused.stdout == ""


def test_autoplay_records_one_replay_per_game(tmp_path):
    out = tmp_path / "bots"
    done = run("-m", "engine.autoplay", "--mode", "both", "--seeds", "2", "--max-pieces", "30",
               "--record", str(out))
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == ["contiguous-seed0.json", "contiguous-seed1.json", "paged-seed0.json", "paged-seed1.json"]
    checked = run("-m", "engine.replay", str(out / "paged-seed1.json"), "--json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["pieces"] == 30
    blocked = tmp_path / "file"
    blocked.write_text("")
    refused = run("-m", "engine.autoplay", "--seeds", "1", "--record", str(blocked / "sub"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr


def test_codes_are_made_and_read_without_pygame_or_numpy():
    code = ("import sys; sys.modules['pygame'] = None; sys.modules['numpy'] = None\n"
            "from engine import sharecode, daily\nfrom engine.replay import Recorder\n"
            "rec = Recorder(seed=daily.daily_seed(daily.utc_day(0)), mode='paged', daily='1970-01-01')\n"
            "rec.update(16, ['HARD_DROP'])\n"
            "print(sharecode.decode(sharecode.encode(rec.finish())).verify())\n")
    done = run("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


# Runs recorded under each rules version: a change to the game's rules that alters how a seed
# and inputs play out must bump engine.rules.RULES_VERSION and record new runs here, so old codes
# say why they no longer verify instead of passing for something they are not.
GOLDEN = {
    # contiguous 40 lines; paged with splits; paged switched to contiguous mid-run (mixed);
    # sloppy paged play (83 requests paged on demand); sloppy contiguous play (reservations, OOM)
    1: [
        (15612, 103, False,
        "vt1LtNYQoUIhne4D5NgnZmdxW29uIxpuqJe8B6q2l96rKM6ESR2s5UJYkTJVUMRGNSnRWDTMAfsNtVIE1MfR"
        "QzHU6gOL773vlmuFlzEm2pud5KIUBKkumwiYGDwW2l8txMuW5237vQAbs6QplSB7luRztjWYy5XwD1Raw6cw"
        "F2zJ8U5InpLK6ZEPMdh0hdBwIufaDDvBG6IJIe9wN38F6dFB1Nhjp1WBCB3Tfx24D5I4m8shL4ZNg7aHNe6r"
        "SQPhLJjaBzHBeOO4rZQdpbXVk998UbC23cF1k7lHREydExNk5TnoU0Eer703aqvrSdlo1iF64iQWbdbR2B3T"
        "DuNpmk842IN0lQAoVbBJJSl10T"),
        (15178, 101, False,
        "vt1EqupYIKUhMp4D5PxnYIngO0cfIVwp3zra13yupNWD8Fu1E9ED9vhFByLCVUMWouDJeATZNus8H1bAGzvV"
        "chukKWhLSVtBG1h0QvIiIZlR4RFiEIYTUDlUNwVM6wJEkmRNtap17tEXpwO9jn3Y6UCbLPpYG2Bw5zW0Kenn"
        "7cdBXJw9qOw67vAK9UojBO4rMRuk1m6QV7PoaFLcPBGkDXlpJoChocrA2PMy6G1b9i5VknbQxcpu4HsZj2zh"
        "l9yl5L7wcHStcuXKsBN21MmKfA8fwdhEmvWRo0lAagZCgTIW05OF0K6FTC8GqYGA7ewulq0yieJm6TOIUKW0"
        "RPmj8KPh2WmCUyIKKys8robdqrCXGp9V5lmUbv5NxHFzIAkkLY566aIivOlAJd8AX85lwp2uyP4VqZbvjZ1S"
        "B09KVg"),
        (14706, 106, True,
        "vt1F6su7xEIC8q4D5a1OQgmCb2gGxbse0HgL2ovjiFI6u5tCJokdjovkxc01QD3OvfyWIGCupJ1TpsOdKXqk"
        "nlm3cc81N4kWjGHxgC5HzkN8OwoPeGOIAY9SzcgL0luqbqhfTYM8rheO43k5Yy7mpi3FCxaMY1F3GxavE9Ue"
        "ETYpWAjuyUMBiP8RkwE1zN7JqoSWxg5vI7vJ9PCFUADQKtzjX14uy8WG0RoZK0nH5WHh2l921Qlf40VoSjnU"
        "tZE16KNe06WRft2DMz4Sp5Dl85DQAySDlY0is89jHV3Sd6XtFz1pGcsvsj5DaLKGNMMW4k772L1w2UvZK4Zo"
        "FoDvQODC9yL4iUN9trAG9OZkgt6zq5LqtZjetPQR00JG43ugmQXjA3thHIUbO0WHDsz0s5OwfrC0zK2FswcN"
        "t1HIwMLbCB"),
        (14432, 138, False,
        "vt1JkPNwpLSsLc5vczjDrvi897N3IhdYHYjvAbiKuPYWWWh8L0zpxT5q7t7m3pHOz557HDNQuausyTGg7WZO"
        "xwB4djDAtx66b9Xe6JGRDwujantngAtvvdzGn5IXJtGJqEtG4CsHf844BFAol96pJnmCPsK5h8lseT3VQeLO"
        "CE7prSveNtQ9wVA6XMVyztHhXM9OfCN7s9g37McIIYZ75aoIIpVtXeN4my0RFzKZweBuqWvP0o2p78RmAy1n"
        "HMCa6qB6SD9zqlm73jyOpnAYY6LS7T5kRiSzR5w0z1z1JHJy4DcETve3icREH39yhAPPHN8mi50cSkJrQ0Is"
        "p7o4Rhh72bGL6YmVv7r7fwW9SyqeTiI4X62nRcWUEF4I4nLbCgsS85jaoX8th6R9exnZEGCW9QHHCvZ9RLjK"
        "q9K1ooSsCotu23kgx2zEjVjBEMN7E2RtosBjSHiQeFKnM9iawWgFXakl0d2GE5EQjECJAy3ysVXeKJL6F8UJ"
        "GT9QT36yMpH5Q5yw1ZNlsDX0G786sdhHT7VrJ2CVFZHePcw3lGVx1PGswZcW4bg6nmFys7fL9BQeraYb372c"
        "jOfBttVXV2weBwVS32MqFyI0NFqTynF1zMcB3H05ZIB1pKIZAI1847EKZu8jMyjlIAuDDXZrVQ2HdXCqYuAt"
        "3QAv6f4ZMEo6rJgPXnvHV2wmALy1mdjLyuTJYvrtieURTN9g4wJ2ah7Y3E4sttXCscCUHpEza7gqLFr8Wjcz"
        "WpI7fj8qWvcOXiMLoE9fdjKiuA73DnAkHfEhxuMJeRKWYzfBgf7Hxox3W0JZz28kP1gJ1QpOB9EYbycAlDo8"
        "ZDWv4JyC6lJM3v4Ym2E4L2cnbB9H3j7N6yy5mrw6szxIkVMxEIJq1S3HJ2GguwvNx86hW5uKVZ6FGJ6OS3G5"
        "qOrDjzOwNjUTZF81ZDWDUCzKXId883urDCmz3TSfrdkdXUcFM7HGCe67097je8v7mUK3ZKnstb9QYzqJ59Wf"
        "OqSSuyFC4eL4dsmwqmIUIVof61IDTJ9UetiSqpoK8FAqP52C9gS9zqtHDDDz2cFzvhtJrujt36ZZzPRTcpas"
        "7DlQKUv13COK3BHefyw5Do8cKg5X9F7ybEKWn4syztta3l8DvT9AA9Q6dR8CIcWz0W2auVgtNLFfy0K1A0P5"
        "PMbY0djBMow562OGCIH4l7RE4N3SRRaK"),
        (225, 11, False,
        "vt1BFKVgn34kny5V16HQBOVc20hSh5NwuyUTD5m2si0a7ru4ZOcuVeTAvAA0ipBhUsEvXKNuQqpmpDp4F4BE"
        "mo0p8TuAnJMVSso3q5ITcRtM3Tco00gv13J951Sn73XdkPEJynw8ggYfRLorneIReRxnLg2nE6RvJo8A1QMR"
        "83EFg73S6gc1x7jZwpN3Sr2E"),
    ],
}


def test_runs_recorded_under_the_current_rules_still_verify():
    """Fails when a rule change alters old runs: bump RULES_VERSION and record new ones above."""
    from engine.rules import RULES_VERSION

    assert RULES_VERSION in GOLDEN, "record runs under the new rules in GOLDEN"
    for score, pieces, mixed, code in GOLDEN[RULES_VERSION]:
        out, problem = sharecode.decode(code).check()
        assert problem is None, f"{problem}: did the rules change? bump engine.rules.RULES_VERSION"
        assert (out.game.score, out.game.pieces, out.mode == "mixed") == (score, pieces, mixed)
    for version, runs in GOLDEN.items():
        if version < RULES_VERSION:
            _, problem = sharecode.decode(runs[0][3]).check()
            assert problem is None or f"rules v{version}" in problem


# --- Codes beyond what a real run holds -------------------------------------------------------


class CountingTimeline(sharecode.Timeline):
    """A Timeline that remembers the most presses it was ever given (the decoded size)."""

    most = 0

    def add(self, dt_ms, inputs=(), repeat=1):
        super().add(dt_ms, inputs, repeat)
        self.presses = getattr(self, "presses", 0) + len(inputs) * repeat
        CountingTimeline.most = max(CountingTimeline.most, self.presses)


def test_a_hostile_code_of_millions_of_zero_length_presses_is_refused_before_it_is_expanded(monkeypatch):
    """9.9 million alternating LEFT/RIGHT presses at dt 0 in 26,509 characters once took 16 s and
    234 MB to decode. Refused while it is read: no more presses are ever expanded than a run of
    that game time may hold, and the memory stays far below the size of the unpacked code."""
    import tracemalloc

    from engine.bench import hostile_share_code
    from engine.replay import INPUT_SLACK

    code = hostile_share_code(3_000_000)
    assert len(code) < sharecode.MAX_CODE_CHARS
    monkeypatch.setattr(sharecode, "Timeline", CountingTimeline)
    CountingTimeline.most = 0
    tracemalloc.start()
    try:
        with pytest.raises(ReplayError, match="not a real run: 10,001 key presses in 0.0 s"):
            sharecode.decode(code)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert CountingTimeline.most <= INPUT_SLACK  # the refused press is never expanded
    assert peak < 2_000_000, f"{peak / 1e6:.1f} MB to refuse (the unpacked code is 6 MB)"


def test_a_run_within_the_bound_still_decodes():
    from engine.bench import hostile_share_code
    from engine.replay import INPUT_SLACK

    replay = sharecode.decode(hostile_share_code(INPUT_SLACK))
    assert len(replay.steps) == INPUT_SLACK


def test_a_seed_out_of_range_is_refused_in_a_code_and_never_encoded(monkeypatch):
    from engine.replay import MAX_SEED, Claim, Replay

    claim = Claim(0, 0, 0, "unfinished", "paged", bytes(8))
    for seed in (-5, MAX_SEED + 1):
        with pytest.raises(ReplayError, match="seed must be a whole number from 0 to 2,147,483,647"):
            sharecode.encode(Replay(seed, "paged"), claim)
    monkeypatch.setattr(sharecode, "check_seed", lambda seed: seed)
    code = sharecode.encode(Replay(MAX_SEED + 1, "paged"), claim)
    monkeypatch.undo()
    with pytest.raises(ReplayError, match="seed 2147483648 is out of range"):
        sharecode.decode(code)
    assert sharecode.decode(sharecode.encode(Replay(MAX_SEED, "paged"), claim)).seed == MAX_SEED


def test_a_daily_before_1970_is_never_encoded():
    from engine.replay import Claim, Replay

    claim = Claim(0, 0, 0, "unfinished", "paged", bytes(8))
    with pytest.raises(ReplayError, match="1970-01-01 or later"):
        sharecode.encode(Replay(5, "paged", daily="1969-12-31"), claim)
