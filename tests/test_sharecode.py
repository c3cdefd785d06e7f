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
    assert code.isalnum() and code.startswith(("vt1", "vt2"))  # format 2 once a rules-4 input is in
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
    ("vt3" + "A" * 40, "newer"),
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
    inflated = Claim(honest.score + 1000, honest.served, honest.pieces, honest.outcome, honest.mode,
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
    """The bot's decisions at a person's uneven pace: a look at each new request, 2-12 frames
    between keys, and moves taken back (a few pairs per request, `fidget`)."""

    def __init__(self, seed: int, fidget: tuple[int, int] = (0, 1)) -> None:
        from engine.bot import Bot

        self.rng = random.Random(seed)
        self.bot = Bot(skill=1.0, seed=seed)
        self.fidget = fidget
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
            for _ in range(rng.randint(*self.fidget)):
                self.plan[:0] = rng.choice([(Input.LEFT, Input.RIGHT), (Input.RIGHT, Input.LEFT)])
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


# A contiguous run rarely lasts three minutes (its code is shorter still): two paged players.
@pytest.mark.parametrize("mode,seed,fidget", [("paged", 5, (5, 9)), ("paged", 1, (5, 9))])
def test_a_three_minute_run_fits_in_a_comment(mode, seed, fidget):
    player = UnevenPlayer(seed, fidget)
    code, rec = three_minute_run(mode, seed, player.inputs)
    assert not rec.game.over and rec.game.time_ms >= 3 * 60 * 1000 - STEP  # all three minutes
    presses = sum(len(i) * n for _, i, n in rec.replay.steps.runs())
    assert presses > 800  # over four key presses a second
    assert len(code) <= sharecode.COMMENT_LIMIT
    assert sharecode.decode(code).verify()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=300)


def test_headless_record_code_and_json_agree(tmp_path):
    """The checked contract, command for command: a no-input endless paged run ends, its replay
    says how, and its share code and file agree."""
    path = tmp_path / "run.json"
    made = run("main.py", "--headless", "--frames", "108000", "--scene", "play", "--mode", "paged",
               "--endless", "--seed", "1", "--record", str(path))
    assert made.returncode == 0, made.stderr
    final = json.loads(path.read_text())["final"]
    assert final["over"] is True and final["outcome"] in ("oom", "overload")
    coded = run("-m", "engine.replay", str(path), "--code")
    assert coded.returncode == 0, coded.stderr
    lines = coded.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 2000
    code = lines[0]
    from_code = run("-m", "engine.replay", code, "--json")
    from_file = run("-m", "engine.replay", str(path), "--json")
    assert from_code.returncode == 0 and from_file.returncode == 0, from_code.stderr + from_file.stderr
    a, b = json.loads(from_code.stdout), json.loads(from_file.stdout)
    for key in ("score", "served", "tokens", "pieces", "mode", "outcome"):
        assert a[key] == b[key], key
    middle = len(code) // 2
    changed = code[:middle] + ("B" if code[middle] != "B" else "C") + code[middle + 1:]
    for bad in (changed, ""):
        refused = run("-m", "engine.replay", bad)
        assert refused.returncode == 1
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert refused.stdout == ""


def test_the_engine_plays_the_headless_contract_run_no_input_endless_paged():
    """What main.py --headless --frames 108000 ... --mode paged --endless records, engine-side."""
    rec = Recorder(seed=1, mode="paged", endless=True)
    for _ in range(108_000):
        if rec.game.over:
            break
        rec.update(STEP)
    replay = rec.finish()
    assert replay.final["over"] is True and replay.final["outcome"] in ("oom", "overload")
    code = sharecode.encode(replay)
    assert len(code) <= sharecode.COMMENT_LIMIT and sharecode.decode(code).verify()
    summary = sharecode.decode(code).simulate().summary()
    assert summary["outcome"] == replay.final["outcome"] and summary["mode"] == "paged"


def test_autoplay_records_one_replay_per_game(tmp_path):
    out = tmp_path / "bots"
    done = run("-m", "engine.autoplay", "--mode", "both", "--seeds", "2", "--max-minutes", "2",
               "--record", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    files = sorted(p.name for p in out.iterdir())
    assert files == ["contiguous-seed0.json", "contiguous-seed1.json", "paged-seed0.json", "paged-seed1.json"]
    checked = run("-m", "engine.replay", str(out / "paged-seed1.json"), "--json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["minutes"] <= 2.01
    pieces = [json.loads(run("-m", "engine.replay", str(out / f"paged-seed{s}.json"), "--json").stdout)["pieces"]
              for s in (0, 1)]
    assert sum(pieces) / 2 == summary["paged"]["pieces_mean"]
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
# and inputs play out must bump engine.rules.RULES_VERSION and record new runs here (the current
# version's block is printed by `python -m tests.golden_runs`), so old codes say why they no
# longer verify instead of passing for something they are not.
GOLDEN = {
    # Rules 1 (rows cleared and freed memory): contiguous 40 lines; paged with splits; mixed;
    # sloppy paged play; sloppy contiguous play. Refused now, each with one line.
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
    # Rules 2 (a 1.2 s decode step, ShareGPT lengths ÷ 12, arrivals +0.1/s a minute): refused now.
    2: [
        # paged, every request split at once, preemption by swap: overload, 20 swap / 1 recompute
        (301968, 1290, False,
        "vt1CxybfgTeWuq8g7S8TNr02QKZvQNSOm6UBDWtUR4tX9Dt9N4HJ88lYpOBeDPEeeATF5919JDuvhimy7G1h"
        "uNdHx4y26aUUusDCSW1Q6Xl3F3aXSLtOvy2d8ngeKjUllDds3zgGT0He5lEkmrIbhUktrvjNpArNh6BXvycj"
        "EStYFLWW7iRKEq6O0jQ0uS7c6pyo9monr4JWYEcribc6DNc4KG1wZTOFLwzbQSO0GX70qZlLzFDYvKRqNsIv"
        "5QczLgL0gM53qMIGUfvOww6vG05MnXxlDgo1pJ6OzwJJZ4iv56OcJqyL9uB6uBjkui1R965KnTTiFtcS84YR"
        "Kil0AKkA1XG74QgHWhi54MXZTV7vmJ5YqKsi0KYQvGGvnfkQVGEtJWdzWx6nunl8fnhtEdFbVZLDxlmiWl0A"
        "p61rz0DLsKFHFY1nXymZKQUGgSRjS3i5hPJOUimMBq1nI7shGNTBAkrFBKXgHMjC9Xc6ExakyO64SFCCXPLL"
        "UU71E6rPfkcz5gtE3ZkapEdhE5q4V2UURxSl271fucG1cL3ImLIfov54LP8AJEiqYmhVSfg9CRYypS6JJi3a"
        "kkPx7f9KKIatQ2smCQ129bTFiY5LCnC7qC0ELgyVsXLntyWCPQU69GA52kfCsbRF93yRVzZpuwJFX280NHvp"
        "7z2C0lsXt2Beo5dN6FwIV6Gr1p0hcAr5LjO5n07GpKlU21EULS61xbgkfDGWEtfjvQ5s2HSgfTPWUW7CKpQQ"
        "QpIHELG3YsVhqv6TJIq0NapdG3iA6l55n8oLEvCDxV6Bd5owzJ8WYBmqaD2pk8B5hb8X6qHP7jVeJvysKEU6"
        "IYcwzLw3T2E3v32tQCDdgBTYocJKEori3dHHNxt9x2uFTI2dq2bDEy9CHduCXkz0o2yi7lOojQR3I9KHXptr"
        "G9U0iEarzhGTrCEPoVPwhJpTgKfLeUC5Nih8EN54pyJA95UHDplRAYwLB94cAsJeGVCTLIHMH9cOooiXAQIr"
        "M8mvj2i8z7slPM43wGIHCX2oEEWqOEGZ0GDdxsGML4H5KpD1ZQj6f8QEsG3Ip8JlsXWrg38QLKKuJ9HWt9zz"
        "CRFg6ESyZJX8l3Ke5o6nDH8bD2EDs1aIZHXXgO8LDA0OBnzWNvtHPODEOH3jVl6eAVEQqbGzkOMA66WdCrt1"
        "Jkxw7yItHeWvihlHbYO21Ism10HBPLeNlkVthFgupjVrTr0bEuxFWHJIMJuBMsJu3H4R9g1oHWrGYNu6NClI"
        "lwbfqhpJ9hFSAK6RQMEHDfG3FjfHbeL6HncV0AREU48TmzEVGEOZLo5BaBFQ4YCJh1XhChtofb72pGdngQ2F"
        "zDGpCVhCcKWaIOeWI1vF3ZhCpb9HzXWvnxE0No2z22qYz7TzqNZLnJZy3HfT8CHY4nWDO62pBqM0D43V4Gkn"
        "yU5wEH5KP5JSpknVD9EbquDg3bF6rvSEG2mABkB8yMzP134rb5mToLMknXBk0Oc5SZFiZGt4KFje2QFK2r8Y"
        "zkDPPW31a2BqObfs6xv6IDsnvcfDytD1VpPd9KD9kpEAPIneWx0NV0TIwvysYXuT4TyGAOsq0Z4CcrKQ2whw"
        "9aBpqkwbjIJk98YyTbQbDtJxCjNgHKNcDYmLIhjuIFvwBZGrg9It4FLAJ1EGsgNAmHiJ6mo4DxSFHTR1kMe8"
        "1UeUaC1Y6Hbxs71H11ju5xssqgAG29M6uTweSTC48HT7hOkiJ8KBv8O5J8xM325Qn9VvEYXz1TCfjxJnUFiI"
        "CkcumMu5nwGwJMaJgbyaHCcxPBCsJn4x02BCbEw"),
        # contiguous bot at skill 0.8 until its CUDA OOM: oom, 0 swap / 0 recompute
        (8607, 128, False,
        "vt1HlxXAsJpOwG5aL1MW09JBM5ssT8xqzXDV4B6MagmXjeGLdcmSzDE39d0MeIE5vyGJNBPzQQJ2yCd85b16"
        "1nmoTSz1vYgt5EGCcJ9p8SPXLNwVCIxevJE2sZNbLcLEZNBkZPeJTlLQbNdNDCCgcpjS8IMrVDFjCtSCis5Q"
        "I0r5FLdy1uc1CvZO2d047R8DU37m4lVho1p0cTpbx1Da0PJu3wBnKp53JCs8UU9w2ZC1UhNSpe5m22IcU3Zr"
        "ClI21LWdpXUBUnKJRuhOqcBpTf415thVW5YiaC7KZktWHvCOAunBj2vDpC73p1NqHBIp0jJt6zoYpyJl8DsD"
        "AEoj3ZyT0G4AT5OEzVHA8wWMccdyuq0TITGryvbtSDEV1Ey2IKV9C7crZMlwAvcA0XfwIyXsicJ7UwKkxybG"
        "F3jA0BWzRIiYKUfy7QDAGjO4TilzXK20sEE9hPaYtj7zuJ78mjmjVYSx0hZS1OWF45lCJWIMleq1zmJaPk2p"
        "gq0UCFN0Hsv3HvltE4QxkuXb8qy05oEIXQy30Z8Dd3wg0ixkb5LlOGSAVRXpG680PZGXtB29CHV5KrHf4IHW"
        "RrWNdJbP52KVdvPIcKy0Gk0bj8cJ2SlHhEfKI7k0nZFFTQfJAuhsy5hjQfwh4BOtEuPvGfn1oLQ7tRQnRGKR"
        "ff2odlfYkbiYu3M20J0pZfvR6wtr8dUrqYI873ZUjhRrU9KvPYLJ4bTOF6Oh7hu0izyC7MoXn9T0XNgJ1CR2"
        "FIruX1KMQOQ31ZyDkIxFl0Uas5qU7MHCoQLJWwgKPTPJcAhOJT6msZBVGjDPKLGko0oPza83Cf3zxbBbHCVI"
        "vUE6fb3LqqGQEMTzaMqnX4uH2bZxGUYN77FfgJ9rPMW5EULR16AhNdIzvwIxOds1bKT40RIrfZKR4Wvpt12f"
        "F2vBCXuCftunNJFaKE3cPPprK9ZB19e9OeSZ2XGruY9MDpgAYc8rlTkZo9FpxvgVGZ1f30SXac8z"),
        # paged bot at skill 0.8 until the engine is overloaded: overload, 0 swap / 0 recompute
        (296698, 1235, False,
        "vt1EVtUXvD3rUi7TYUR3Rq9PtIgMMDUqrQvGAceIiDRFQo7AqwmkfNB2pvIUsRhCy9R2SK927OzZlnqG6EM4"
        "3nmiWxW1VRRwThrKj5FTWEct6GA1SEaxt8ArdgAaDlNfEK1xZ8c2sITOOH3EbeKTnO4MZCP66FxtaguQVi9c"
        "6D2O6JVaNGdIN1KFfsVHkC8JKypqsDHRu1p6WSVJTmQAKqOqghQrLfz4VFGqzgIBhjEFMJIIBoPKZDPOL12v"
        "OuUv4a3Z76p98ezFCiJuRW1rOfIRoD9Wc988hFFvqz1uKIIwGFp2iz2UltuGKTcl6CjOwGJICIVpNXMRpHsO"
        "QnfgzWDhKjvGWJU6lHn0fhh92IQ72iLVCvpolY8Aw84r2bEQbAP0BYGUvLvkIplHpRfdS22A854wqLI6N9dJ"
        "B7ltBb4pb0t7KS7c25R13pF9AU7zM3EQBwLn8kHJSFz21GNMdOjyQ68F4VEdmB8SoYUI5QUEKRh3v0IUOphQ"
        "44E9qBzrc89SM43bDsgVl9uF3Y7CkN5BNJuABmJruabqzC0alCwG5RJQXA13BNqGYsbkvUO9Chx33A8861LT"
        "t1QJlBE3nHT6qwNTbEQULJsluf1JAmt1hVgoLeV0ri1EiFZyiFVd860EPmdlXmctB8f0Hsl47Yt5OEqoc2CX"
        "C83cPp4P0UaWEKyeS0n9endkDZzlRyAAuV2DgU2ApPqeGV5dGkvq7HE8T4RTFYJ5iMUh3Ou4VF4fcoPCuQOa"
        "jjGL2cEmSYuQcnQgJ2CnjC3QooHu7VOMcFPfQGKGRl1CuOZxXY4yg0CBQwzuSLoyfOVl8WGq9XEtRx2ttG11"
        "XfpBM7BGgFLSOugu6KmwnD8MpjPT84Mh3YrmycqyoLf9ySTe2UXSXiF2ZytCKXD3d9bEidaCJ8lmKaClSc9H"
        "iQEIVLialtNutLI6a85UNoQl4JN2tM5SrfToDw8z5ih3HN96nmykwg5TT3KiUySowzNp6AsGxE3ubVxQCJUY"
        "RgZK6t0BxM7vMiXdf51yuyLlggfsMLgJrChTWZBELjlLE9Lx15x4kGdsX3zwXE71kPUaWQa1G6dck6OK4iwR"
        "8tFCueYBxLp0mWbgxM1vY8ANuse4e42hv7YxiTiI24VM2xnArdS8pYCBF9dub8fazoJMIa6uEpdRlFkI0U2N"
        "MXLlEL80DnsiOGuAM52UZwsCbWGA9oDKrCJ47Ey2hV7bDXQlIFbYg4nSzgkA7XKVuAZfI6JKXjVwDD524Bwm"
        "JpMhzyQHLcBg49T8eYsB60paD42Dcs1gXFzaqrwPtKKGu4rdkYLO7lK7WwL0ajx0ODmTAaCrLeKaJhLb7mvs"
        "yGpywe5AALVYEFO58HytS3LCVYv5LUcgsZ1cbZ4rR4E0xKojZkUqdcDUB659o7saMW05CHaBzjMFPm3jYdVJ"
        "byvOBBOZpO4UVsl6CC72Uaj9q6714VFyW5W45z0FR3eZqfCIf9DykkJCzlYb3ST8cAProV6BjUhjzImyCm2n"
        "ENyzTKVcp0kuOPfD9dwE4gSair1JtO83PCCZiMBiFcE2othZW0ePVKHRPPdZKt4JExXjCi0bRKYKxiscktbp"
        "Jt2OUrWFgw3t205ZqwlbmerLDqg4b3ZjH9EEdbsAWU9VH24v47XGZ8fGE0PwPfnLSI607BKjZP6B6XfFPzPt"
        "jpjLJw6xndGm8ONl98Cy9oq8dJoJ7vpeA1hdFND2RJXItY228CCB7Mq8BwjB21MNfP1JgQkT6OppYdO3YfEL"
        "lPkCJrWrzOG8xibczbcOc2qxonFU7v0gKIW8pwibB26BwJhZdSbGijBTcCZi1N5QxLDUnrKSE3sfL9p2kPkG"
        "LEu0lBeDKaSw9fAR1hTh6b8zH7cMC8KQJA5xF9EnFAIbP77IYdCjcu1xD72N04MXo5oByCaI43KpaYrJHpA9"
        "ZGlufMdC45WrGooYGA9vtdf0oDkKj33VFLNvBvpm0WpgHgggJ0iIeHSMsV296i5l6RTGvZY1S1pVWwrDQQXd"
        "KRCs23PJ8C44wK4y5A73cz8PSptmYLBKT1TY2DHOz1qE3Ly9c0my9wOG0UjRQsC6uh7BYdFQaNqcwH15MaAl"
        "IWTtHthY5NNLO9GGU6EsVzfWfjItc4sFZRNTrEhkVmRbBsZo4FbeR3qPj2eF4zpqq2krZOIdT02Swk69fKC3"
        "Bhgfzejh1Yet4dnB1Hc9TgkvjMtneZ7Kk34W6G1cGCD13ETw23DY60ubv6HU0MS1sXFVATdDDh93pTMTvlS0"
        "s0yMv7g7p0IjFLq7d62vkcRH9mPN5kG8j0KWyxJWm7LuQGE9Aalo50pk2W6iKHZnh6Y3gdMn8O3lJMJqvTFh"
        "KXsVc9P3PLMdDL81FQfjgFpS4x437MsKbfoILEBqrKQqRD0Rl9NUNIJCatbo8THsjGz9G25CW5DSwX84BxIq"
        "kygu7mlQYGI5YY0houRM916FwQe3nCqFXmPT36fULRACpESYl4d5sGrEp4ODWyf28eZdeCazwTQCGfwDS4s2"
        "fG41nS3BJUX0fIk5sD0Q4GPI9zpFblm5LPNACIriwftq9E8LMqsSt7ph2FzpLOYvADEg7fXTKPtIGIaFQ8HX"
        "NopT4k3UBeanaKAkM7oy0UPXPCxm2z3ZgZXtdri1Er4TqhTZbeIk6eVHaZBx93DJKeonCSqe8bDPPCxVxqi3"
        "byyc0xFR1B4cBgIP2uJO"),
        # mixed: paged for two minutes, then contiguous: oom, 0 swap / 0 recompute
        (1437, 34, True,
        "vt18kyIBDz4CLo6YC676j6iKW6f49ZOtHWSXIF6ryEfelDS0ZUut2sGk8p40rcPqaxf7X7dYqChmSHcW4AZr"
        "F7V3mS899hEnAARx1TC1Jv3uY1QAxDCWoIZQKpUv1vg2aWokzih7StB2fXsOaD0zxtU"),
        # contiguous, hard drops at the spawn pose and a hold now and then: overload, 0 swap / 0 recompute
        (13, 8, False,
        "vt159PGGSLPHIcHmlWkyYrf4P62fH4NYtGfq57cVmOHs0qBGaCxmLCnQHe11zMd6YEkFf5MBRhvhWQkw4FMW"
        "vTgWq9H39"),
    ],
    3: [
        # paged, every request split at once, preemption by swap: overload, 36 swap / 9 recompute
        (117276, 587, False,
        "vt1J97vbNQNL1v9hzkOgzL6zrFfOObdVSM4kDlxchqdrCuVDtQ0Ua4NIDH55fbvXKofoYFIDDC9DfCBgJFil"
        "Pgr9nS90niijLxa1nM3eGrBBL3bPk04gPPAD1VBzKTdICFve1LDLHeDOcpV9i6DIVdhD2WgkwKUOHFAyq89m"
        "31XEODXuUpZLvN4nI9y2772TBnYrFQqDQ8FQnvYtsr1Y7RMnxAKEEBX5psMLxLrbQ2C7zYV0l6Rea2oro50U"
        "EZpaGmcB37qcozXKUWy6dLP2Ip609V0GEjkrlE4K48HGdZQJJkjcLRr7W1S21Lg5kPx90vFYf94KAbyFG4x0"
        "mNgaauqV7yPMhwPJS4aIQQOTxvCVcz3ADMyL9oCtKCGZ0UsYLsfHAWkqF0nKgBjA1WRUiAkcdhGKmQfdwSQm"
        "a4K6k6lnXhAC6hnskjLR1BaIdWHy8oSkf7BIyM5CQIAJkEK3MN8mBrEd2rudFa9gZfFDsZnNnz01VO8hb9qQ"
        "vVNY00TKD9Zn9ljc1SS3aQoBneVAJOy3LFqpP7IbjNGScK3z5FZWJ7HQdqUB0qNatepMpGg5xkIeSadHOs5H"
        "7SStdRFWC87QrLEQLThsCnjIyiTYsUKIsJHTynIT8V17AOXgU1xif5ddRhGPD3BP9KqEit7HiOGFj279srQz"
        "Q5KSQ5WSPEJ0qBkeCWGX2kEZ4Mx7WsrsvumCHmgQIegDugChtBD6GvVlVAfOdvAKoE7I3F1ONe7hgE3GXeAC"
        "XYhxNT76kicD9n1ScJlJiR6bWyt541FXGw77OViAy9Eg9bKuUq6AgxhCKhu8JLfAYVqpyiQcF0WJ4DAUv2wH"
        "eIO2lbpyBQIknDXSoSOftHzWqA4fVkOf5yIAfJWCzBu7tsTVGGz6kcKLqR12fmq2RGX6TOyw0QnQECiNgG0o"
        "asDB56qLhvGsSL6GTDBssUSvp8zAHqT8Ds4zKVVLwtSsq6AFk39HyjhPCY8fJZXxCl0IPAR0E3whGoa3IcwR"
        "VofU1Bm01wIk3y"),
        # contiguous bot at skill 0.8 until its CUDA OOM: oom, 0 swap / 0 recompute
        (8376, 102, False,
        "vt1IySaWSSlhdl5aL1K5z2U5IBAS2xepMP8PIE1TX4GgRWcBsa7796p1gk47XMUa7oGrk8GE1FvgHrrj0hw1"
        "z6glAzEE7rDNyZWgNQ1NWRhGswWpZHkmM3zsSbmdKPn5NzuXZPK4etlagbrpvTDGufXqJ9uVv8YeXx3p9YQq"
        "FbUHB2g2nm8G75M1isNGi0BUJcwZ3s9lBA6i526CLzpS2GRmyt1oHY92A1dK69ETzkBOgP9Qw028j9UH2gy7"
        "rr3wIAYSuLR2n7t94R8dx289ysFNaqsCEEupk2vLym0PFrObDGcLIl0wCO0KgR7S3vtw0b4ggWaXQNGI45nx"
        "z6tSqfmZ0rJX4cSIgEzINivycXUKcxBTCd7aZH2QAAnBwybxFmU34e3dw6weaC6Ev7KaLfG0WQKokV8IuRpO"
        "4BYDt8Z9vjhy8dRK6hhTuHTJnpVs1zMOE4FZ0uGno2NZ16tCtY3VDP379UXScgtKU7C59eCe2i4fIwEZFgHy"
        "5cAyoJMa2Mijql7EAxwY5sHlvnYDxCz7eE19VZ3tMok08qvlQBF4X21bUn3o5AVryGBvAQd7CPwNo1nJbz6K"
        "8L3fXiRbuFrZX7xyMpoZ6HYgOP4epUI8UySyJ3vkZGFZgoodBJqkCEgbLbFn0f064WKEWemqxe4DUFkdUpao"
        "Z3Jf2oYKAVbFy2Ps55PSRhDU6OY0Qi8bDhbHyhGou9Szv1ILtKwmcztdTFb5MlPV7fj96Xq9NuqEfAt41pZM"
        "uMzhsVBvBDLpWPEVA0D9ZsnXynleKlP1dzfw3Xr3LV26mcAGL1LQ4ITdyQPEAJL1vPVEGJ37E34w9MSPDWW1"
        "0pLP"),
        # paged bot at skill 0.8 until the engine is overloaded: overload, 3 swap / 11 recompute
        (146797, 655, False,
        "vt1LNbih5XWp9g5vhmkdISoDFAnyZE42jcXlE8PTvhUGGV00jLRcQWsGBQ3kOIm9RcAW82lMHDhrUekCIb5g"
        "s7kAcDQBiv3eN0vJKM5c2kaZarHlo1TuBCcGBEHI2jeCOSRfBzXLCOb8irp9PDIwws8qp9ZS28q2YxfJI6VU"
        "DQn5kFAk0fs3q5nVUJsr6fLuZbFB9HNruHQImnvz7iNC2jeT6bUVWnLKxA2FVcFyGG03VD6GEdIZZDiYMOdy"
        "icgZIz8g7JkCpUK1AMm2JzRd4U3Fh2q44CbrM5C7QFTPa7CaI3i4hXzpRMx9JFsustKO9F5u5DnelzrJS8hr"
        "Rh1X2kc2EBkAV4D3eKY1UNmmMhFsUrKcYPvjfIxC062AmbHzuNIv9ui49DP9H7tLiLmizqPe6H4SJebXwvuu"
        "H1sHTse1rOR49RR1tyvM0THFf6KkrelAAbEbxNlc5cyD8GT86VXnB3eLHp1rm4cthik4X1wWnf7sSqDwpjiH"
        "AlznC771a5xDc3X829BoKx6slLO84UrPA6UYAr1bGqZBmQTf74a6EMwpWUtd4uQn49rpA0Q3NmOZlCx5uF4u"
        "GTtQCSt3AANF6nZjwrgzCiTYZAwdEk555s8aqxwPNh1iAYvr9SKvF3GuZG1OYh03JZR7iqwUsfiKR02zQAjl"
        "ra9kUJN1W3YvFCzt69zizzF4IzAnXMl6hBBIPBqodEHxZg8j8JBKoa9dUBMJcOD5PGTTKxP8lBxoH1h4E3Bg"
        "FzNlUSCrA3eGNKt4yDgusZGAt08wIyQuH71j4LD41ChgR7jfRj9UjjZ4UylmfH8laZwQ93OjDkIZ0vv2IMpG"
        "QV4nXq9hyqEG2uLZnhIImHMLUmTqt5Pt9ndIs1BgMtxGgXX579OuaCJUZN1k8n8vx31IpvKz8qyQ1Z8hrfej"
        "63U6EA1ZanEaifEIaRogPgrQx9kApfbII8qU0lKvjfCEtDVKQuOZ8VASwz4SkkXiLhHGa3huNDDlZPHt5sN9"
        "FDEqaPi6uWG87lFX073gFG4XeWp546bows2EGUQmGPM6MdWaLaSFtSC0jRi0DCEneUnFxo1sY90FRdyWAgOa"
        "6sS2akskK5i4B21TYFrayL58kRHAhz37UIPaWhQutsiPLq1sUzj6piFBJIgFvC8p2iJPwdHKEzkVt3D7g0Qx"
        "uLOr1jg8XshwqWrBpLuRf8QboRAbQ6WpYCKmT5TcpLsHReoS0xZ32qLF4idE2pkiW0OWwsLk6gmjD85DP3bG"
        "3n6LmlGe18tKJMguSsP04w31AMqzHKKpIb7qXp7eMDzG6udMxRYEJ7c9ViChSP18b4EltvWxZ6Fqex8ZmCrd"
        "wALIh7iueBMZCeNYxwmp9y8F3sJcvQRHQ45AIyIQ53mkK7cVr6L9NwNfIqp9NOHA67aBxusyHEI2D3AFqJ7Z"
        "3lxm7A0bNMuNn3PYCbyOQwRo17XEJiphfZ2hdsEKIz7EIXU6I3lYlJsSkYo7AofinFrrEUbKdDOAWJFAS9DU"
        "1aSbUOuad9PZGUOhxmCXKnuTFWHYJz4BkHjUF0YZD1AMVyfdUESAf8ICVscGq1uVBNHelmGONhn49IfVXwgL"
        "bd4noURVKXZj9H6dUSNWpaDKFCXyjGbjr95Acn1n8SkicP8Q6aDvVLd0VDxuRLHSNBFNKiXP6XrseKnBW3YE"
        "QTo2qA7wLh8PMYWAC4coLgetlzUR8QUdmjRKIHgALaSXex7f8D6xC4ccBcB7g1mXccxPdKZt4IpXFJK3fD"),
        # mixed: paged for two minutes, then contiguous: oom, 0 swap / 0 recompute
        (1058, 34, True,
        "vt196GOGvwPxqC6YC676j6iKW6djbzP081LPH93liFzr4yZGaCxmKcjXw60IIhhjsNatQFdgHoZyz9yo9OJU"
        "upYdOLg9kMYpI24D8k1lugYioOVO0LYbaqUcx7N8H9joELZdGPhAkbhwXAViwu1SgjZjQXwA"),
        # contiguous, hard drops at the spawn pose and a hold now and then: overload, 0 swap / 0 recompute
        (1, 8, False,
        "vt1545EkPIOYtqHmlWkyYrf4P62eJ7jdj6uTFzmVQtr1u0OF73ET6MAFgv5kf5nvGgyDcAxBLw4CDnNp6XZ2"
        "7Tl0yuU"),
    ],
    # Rules 4 (vLLM V1: prefix caching, chunked prefill, picking from the queue): the runs above
    # again, and one that sets the step budget and picks.
    4: [
        # paged, every request split at once, preemption by swap: overload, 4 swap / 25 recompute
        (173897, 761, False,
        "vt1D3ElPSfN84bA3NySHB4A50Fxu4gTIKV38Gp5kOQ5c3zKL6qJfrz7TWC2veZBxn3WhM3Bj8NgGfkku4fIv"
        "eQWM9Yp3f25I6vxzs64bH00B0vopZFduivTL3tnKIBivPlNC7WA5R26d8XpTKvArIA9p1DEEpJtd7PILXq32"
        "7YttPLyO82j8DD4K3yOldE2EB79ZeA2s4JNejQs19JKy8pnIW3sj47k7E3jL5quItBDswgbLZD0pG4Ta3MhC"
        "crwt277yWcSIgzZCrQMTIy5TV0IS2RJB3d9QN8nY98jQGUOoBkZBoPHYxbM7LNdCFs6fHb5TlvPyk4Cc17K9"
        "3vq9ttjiFZCeQzNhyQbAh15pClPyxiJswOnINgOpy51x9wdzt4N3HRejE2fN7LwIPA7O0GHo1iA8bp4dMsHD"
        "98BfIE9xiTJh0KTTmV4X63C0dmu11shBEB39b9A6dVUPg2Zp0uV5B2uHFUyy2qYOtZfCZ1xpzbp2WjJVIJ6H"
        "ssjIL7Mgi9Q6NQILGOLfK1CkCOK8lIDxlecBjb2wGcO5ZSura8t7BHck3zoPEmUY1toB11L2fYYKe5URNC5D"
        "28OR2iioWEwraqEHLvDFLU8fUQzeEgqF87fIdi1Vw7AIQKtDYuQq1CbOSAfwbbK9FfAaRD9MzWf8EseWyDix"
        "m1C9kSWa3nMaSK5E4BcTJbFe6YN4fGghtO16QpNWuJnXw16ea47BYyQbqCoUgGdfeQ5f8e7iCoW9nXP9oTp9"
        "mFT87jLZpNl9b7FPI7RWf7TLZ8Xp3pD7DJ30dH66py1mqB4Lmj5C1gkiyVfj4GuT9cDbf4G767309fEysKOJ"
        "mV7aR3VkN851SdEbLowhg7HBUl37c98EEpq07XXLRJhJdg8KD8kfeB2LO6He3eaGo1aZRfRONwih2nlCtDWb"
        "s68GoHNBgVO9kPFtrnwJTxGscChDb1bG9KldFnBcOqm5rCN92kh6HDNNQvCX1v5DnqoXM4eHBtI0tkyK0u3Q"
        "u9xW22r39lsUL8ZGRg3wGEpGmAMKI0sfniWEXgIVHZ8P5YS6CNS7v10uKL2N8S70O3eJWdUKdACyFUaav883"
        "BRriVDe1khkDSzWOfwn5dMDopMSb74U6XEp9fOzklMbXGGzQhTmmrzL754KQt040NfDS5Oxsapx2SLtp5R47"
        "KKovGap2Uqgh44S9u16itB1ZsqDPHYhdChu4mKgOgd8meCzMLOg33b5HVcTAFmngKgpcUbIuCnEYliLHv5QM"
        "5yjcEPcf1FFlJK4lA"),
        # contiguous bot at skill 0.8 until its CUDA OOM: oom, 0 swap / 0 recompute
        (6253, 93, False,
        "vt1E53BmPnVL1x5aPh8FtXwmd1PwWR3G2TbU6IbMMmWFb86Dy96Zz1ixPx6UrzP3xNKzq36TnGwVzkdJAwi1"
        "WUI3lTFFxjltthrPybH4MnB288ELmKulaWe10yRVK5B4LsZdU7h3sNm8zrSXbIAre1tls1HguLUQ9CTHPjbp"
        "03xs4hSYlHkGN6DGDY0a491OuyUOHpmMCJtj3hV4NqkhFN96eAoeRxRLVWbagL1xRJ3A9TyrkOXZgH3Y4Ee7"
        "lR2j9EjJ3hbhVBF3SfNgHoJEKVF7wX0WmOupt5pYRKykDqnv43sya6BgfgVEaYzQmjO3UyI3VfgqjMVR15KA"
        "Fux0kimJHfczAmdbTOtI9KR3Pl8MgRIuYdzaBXAHs8yGaFnzxTL38VOaywTsrB87Bfjkj8RF9R2Hbm5caZt9"
        "I1Zcsv4jHnlw2NeNHha5apw6rqi15EhN3aEm6uWpGnoLTHqZOZuTJTynDmjgdFBUg9S5TtybhJ288V39TdPu"
        "eyeBR12T0mGZ3L1PCCOTx4dBQ0n0LADq0FQN4k3YpKFj6zsnKKHfYJMNUsi76VOdEMGLyTI2ez5Q0tJXu5G8"
        "pjBgZ5rFM7oOvuOWJaaY88L1h8AKpRHC4rEEa3Tjsf14RYuaDfR9v3SwbxcfNyB708xXfXNeMA53KdApJ4bN"
        "e1ITmZ54vX17p8mdPWXfgGlEB9t085ZvR6tBhhC0rED9ZHChXUa7nFOvR7dX0tHlHIlN3RTjU3uponsIUPik"
        "7VmBqr1bX"),
        # paged bot at skill 0.8 until the engine is overloaded: overload, 0 swap / 0 recompute
        (225983, 905, False,
        "vt2HW9m6rHCVfQ8g3Y6XVXU0PAAZwSRvomj51JOa1OVmx4H6NnaDwr6YUP1MqRyeDF3gq6zze1PCP8b63Iml"
        "mZktsrx6zD0tO1lMtH6Xss0e3YfAoDwxp3ayVAmMCKNHcAaToa2ApvRyHhpieNLnL1fJb0IOr3hMvwLOkKqc"
        "JJFf86Pgcm4HxmfDl4xd0JA9DXEJZLUrPJ5TYvUNWHJjFJmdJ4Lceg10r8oNZFKQFbEnZtOxXjfc3HIMMLTs"
        "82SyHWrrspJjlTW87JXY0NUkIFHXr0KpFW58w1Um2IHi7FMyJLpzpyXgnRDFzAI1NvTJ7YHenqnN1MDqDExp"
        "Mf9rc0Qq2dWUl43Klxl4WesowiwpPh9PfqtLdI3tE8zuKADQ2fLk2ZJL5f3tODlDX3iPRsM8fz0iei3TPJDd"
        "z4OL9ZcN15fjDWZxnxO9f577btmj4GOoXk4B2TuLHtvEK7oygpXov17X4ouqSlMFWM71Uoj13MHhWC0eHbJf"
        "q553KDQqyMNcqTAC82gikxQzQXu8UGBG48fxm55LIMRRKXK3t1yEgqqGTi1kK5M9CJjwiD13IlS3Z7lDmUJp"
        "rp97Y7HFHE79kqz8CI483sacX3rUwn9DeoVvOtuh1a4ANx4HdMSGXFsdoCSqQWvT7TrB4eey1PX7KsSpMKcv"
        "jD1j5d6MsrLXgAune5UzJnylI98ERAYEkMlHMRbhT3Yid1Hw804wtAPwWISnBTgnWg2W8ujkHYEjW55J3gWu"
        "n4PazL1UbxPOSwBrsDmO3kqge6skHhkR2Rr7PB6DEY7WoEHFUJDekpHMZ2MOBACzTYLPzXpDLpVs5EZzHRC0"
        "NafF0KljwlBSNbMwaOocFAukieIwjFA5FBVTu1sWFuxLhDrSmwyJDn6IMb2GwLmzjBClLIsjPLzGAoVyx2Ip"
        "ecx0QlAtfE4gmJ8dcK7HaBl0047ZZPlaNBEDE1z6tAvOoSZ0tdXhLdWflnGqdKViO3PnrBfwYP0VdUyZ5WwE"
        "UJ2A2kqKQ1mzyVIh4a80ljYCViU6RGm3iwBxmifcCAZqLbVQOgT5a4OnCeFJ6GCDqdiI5r2uc9eBvWgUuk5y"
        "8Zea3qn1IrRFgQFasklU1I9jaxt5tT1hc3zgtD7wjf6lDyAO2JhBBLp5FciiXod5UuF8cOBE47s0LBBCBY9T"
        "c3keF6WWTzZa2KT1vmFWbZjChw3CO7SFeJjHI8myIOGlejX54It2gkEoQRuI0BPgwmEzNn5joIi9u1zYdCPD"
        "7GIIfWOSDWPaUIllqroGYbi3A2IwcsB4sJpGewu8X2OUsmUG7KPC5dOjFbnHEGZEeWZw4ZmgSM6GqoQxNYNU"
        "u8KtieQS1KorLP78832wdph2DkEzQuXl6iLG35Jeo8HCEJH18OuNOpOs0rjs2cN47auIlWUtJarFysAlY7D3"
        "Wm7GfBhwYZUMVYXuCLEv1IMHIYl4mH6XkFWWesBQzENVhsWeL4y5QjzOdVT7674NuUybkuK3eYArp9Ospc62"
        "JKvFpdkUG8Lfxm0oPDKSIL22HlFg1N4CNwmX65Be33E5zLkifKv996Jp7LpqOQ1z1FHxO9AB0F88JMNKOjrK"
        "dt3igKzRSN55a5qa2Sbyv1uuL1nycIhjF6QIFqB3Euv9lU9HIczPITrSWLkRuJL0ebvRHnP6ULiB8S31T1zW"
        "oOZX9L5csSHgXrYciLmYwrSJHM0bAeNrftMcWmGC7vFP0fcYXA67yHkPb4rgyG3EoL8zkcWZ6AUJIidztctH"
        "lmezYvNz2s7wVrm6p5JeI4DZowaSP0iyBHOP8IeP7CHJiGxSssydYA8mO4hTJDedCFRysDJr2Dss8nFGeTYP"
        "nmz0m0HF25PBT7KWHP4Qg6P57InWQ7db1WDu8x6vBbOtcsS5DvtM5y2DCqJWLy0r6PsMSIG2UnSILnWUHz3t"
        "zwKuCysAgB3DOadmny0hqtwAXsMuaBCNX2DA2aPx94YWO26AjLR48qAvubWRblItngx9HjuMA59JkK4M4IQA"
        "5qQGL8WtSNn99GFg6kN9h28Y6TIfTAVJoKm5pONMen5w8ahKu9d8JsfDiBY1L6R7jq8aEb9SjLkSE8OxPYHr"
        "wvfDFEzXdKcHQ4h0ryYloKQx7DC4sZagGLzGp4m9nD2KXCgQAPl9NUB2FL3GAX7ZqCmzQJ2M6EnmTIcyH6lN"
        "D5tKTabOJR2TMKpw2FI51hUOsH8YHDFPL0gbiwHKDCbGc90uyxw40htlO4pIDK5HMarHA9l4I00mbMARvmdK"
        "1AuRHNEZqKsN0io8vsXYn2RIUohZ6hOs0VLU7GHPKZUEIH3d7hIsq702LHoT4RhSicMAjRsoKT7C0LI9nRl8"
        "oWQyoFdp4Adl03YC2eB7wg3pjM876gG9ejjEukKt58jMxNDSU04p"),
        # mixed: paged for two minutes, then contiguous: oom, 0 swap / 0 recompute
        (1127, 29, True,
        "vt18aKF8Rh3Yng6YC676j6iKW6eOunjNadFwCNddicfdRlXBH4xQRnfKE10fvQSnK6tiL9IhZfJG0rhEImcz"
        "WEGInkvJPNoW3tOZJk3XpN7Rdv8B7LDqvdOe4cW5CFTJMKGYwcNLVClmku2DkU2S"),
        # contiguous, hard drops at the spawn pose and a hold now and then: overload, 0 swap / 0 recompute
        (1, 8, False,
        "vt1545Ek1r4KvWHmlWkyYrf4P62eJ7jdj4n2KYE3UneOjh38FRTHi8OiuZBVKBIUN4vZhLuMiBUXbf51D584"
        "EwiPDcg"),
        # paged, the step budget set and waiting requests picked: overload, 0 swap / 0 recompute
        (62250, 420, False,
        "vt2Gui06i1ByC39i5sMrlI2ObIq33PyCYy4FCivWeNY612BLuvOzgG55PUBslIyU6Pioa0rbdDHJ404C1Ysq"
        "rE0NRlk2vkw4oJfKYBEPH3A9WurNX1CsuWDF1YSV6l7dilTclcQI18OMU1n0fOAw1PoHWQd05EDHaT6JvzWt"
        "GSw3sndietX2ZfkCRZpfSb1mauaHgR6Et9VunQf8Hp8j5cXGdvHgTLM70dW3jv4rff7cSJiaga8OH5OiUgNZ"
        "1GmADpeogREvE2409EZgYdXyDrHveD8FXAzVNKAHIw0fhd4T55wn4e7dGtaKlfWN7ZwAJu9LFCT2hrgjjLLB"
        "GTEzWxINCljvQ8mSNh4D6ZmJV6nQxt9UdKTPX2sfaHMpAeSikbSLD4KUYjkITiwIC7sBaZSLvc4KC3QNpOzC"
        "u7A6xr67nVOT80rrOs8QD2M1n4zsWw01bjJ0ngPzeqB6lIr5Kqiib8M881j7kTdbApdKI0dczL58Zk4MLIyv"
        "sPIIe3Z8Dpx1Quk36tOuzIZcrSlCfZZJYZuM9R7MXkCUElOYnKleDtnaHNzUAXlZvPt6kq2J3OgMuW2FXvFQ"
        "vk17tmXREKpcSu10v7zf4sKFju7YQwvHsP4tMYqJLj5pqKOiOqi1q8cwfh6Btwt4EAyB5xoFI0VEFI8IODAB"
        "2dEr6MBBfQoCq6Ku7vTbZdkRHPH6JxJUt10HezC68noMbTIYGKmj2Eh9bKsHhshoa9J56C7ma9KAqhMBvJKy"
        "xkrIzm1xrB7YEPUQC3elfdKdpMBKHeG0IDDW4OM8m6GPznl4s20j5LI"),
    ],
}


def test_runs_recorded_under_the_current_rules_still_verify():
    """Fails when a rule change alters old runs: bump RULES_VERSION and record new ones above."""
    from engine.rules import RULES_VERSION

    assert RULES_VERSION == 4 and RULES_VERSION in GOLDEN, "record runs under the new rules in GOLDEN"
    for score, pieces, mixed, code in GOLDEN[RULES_VERSION]:
        out, problem = sharecode.decode(code).check()
        assert problem is None, f"{problem}: did the rules change? bump engine.rules.RULES_VERSION"
        assert (out.game.score, out.game.pieces, out.mode == "mixed") == (score, pieces, mixed)
        assert out.game.over and out.game.result is not None


def test_the_golden_runs_cover_preemption_both_ways_and_every_ending():
    games = [sharecode.decode(code).simulate().game for *_, code in GOLDEN[4]]
    assert sum(g.serving.preempted_swap for g in games) > 0
    assert sum(g.serving.preempted_recompute for g in games) > 0
    assert {g.result.outcome for g in games} == {"oom", "overload"}
    assert {g.mode for g in games} == {"contiguous", "paged"}


def test_a_code_of_old_rules_is_refused_with_one_line():
    for old in (1, 2, 3):
        for *_, code in GOLDEN[old]:
            with pytest.raises(ReplayError) as err:
                sharecode.decode(code)
            assert str(err.value) == f"recorded under rules {old}; this build plays rules 4"
    done = run("-m", "engine.replay", GOLDEN[2][0][3])
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().endswith("recorded under rules 2; this build plays rules 4")
    assert done.stderr.count("\n") == 1


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
        with pytest.raises(ReplayError, match="not a real run: more than 100,000 recorded items"):
            sharecode.decode(code)  # refused by its token count, before any token is read
        assert CountingTimeline.most == 0
        with pytest.raises(ReplayError, match="not a real run: 10,001 key presses in 0.0 s"):
            sharecode.decode(hostile_share_code(90_000))  # within the count, refused by its pace
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
