"""The bot (placement and scheduling) and the autoplay command (policies, caps, output)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from engine import Game, Input, Kind
from engine import events as ev
from engine import replay_json
from engine import rules as R
from engine.autoplay import main as autoplay_main
from engine.autoplay import play_one
from engine.bot import Bot, evaluate
from engine.replay import Replay
from tests.enginekit import arrival, drop, game_with, of, put_piece, run_until


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.autoplay", *args],
                          capture_output=True, text=True, check=False, timeout=120)


# ---------------------------------------------------------------- the bot
def test_bot_plans_end_in_a_drop_or_split_or_wait_through_public_inputs():
    for mode in ("contiguous", "paged"):
        game = Game(seed=3, mode=mode, endless=True)
        bot = Bot(seed=3)
        plans = 0
        while not game.over and game.time_ms < 120_000:
            if game.active is None and game.blocked is None:
                game.update(100)
                continue
            plan = bot.plan(game)
            assert all(isinstance(i, Input) for i in plan)
            finals = [i for i in plan if i in (Input.HARD_DROP, Input.SPLIT)]
            assert finals == [] or (len(finals) == 1 and plan[-1] is finals[0])
            plans += bool(finals)
            game.update(0, plan)
            game.update(200)
        assert plans >= 20 and game.pieces >= 20


def test_every_bot_key_press_is_accepted():
    for mode in ("contiguous", "paged"):
        game = Game(seed=0, mode=mode, endless=True)
        bot = Bot(seed=0, skill=1.0)
        checked = 0
        while not game.over and checked < 40:
            if game.active is None:
                game.update(100)
                continue
            plan = bot.choose(game)
            if plan is None or plan.wait:
                game.update(100)
                continue
            events = game.update(0, plan.moves())
            moved = sum(1 for e in events if isinstance(e, (ev.Moved, ev.Rotated)))
            assert moved == len(plan.moves())  # every slide, drop and turn happened
            game.update(0, [plan.final])
            checked += 1
        assert checked == 40


def hide_outputs(game: Game, salt: int) -> Game:
    """A copy of the game in which every hidden output length is different."""
    other = copy.deepcopy(game)
    s = other.serving
    reqs = {id(r): r for r in (*s.requests.values(), *s.waiting, other.hold, other.blocked)
            if r is not None}
    for n, r in enumerate(reqs.values()):
        r.output = 1 + (r.output * 7 + salt + n) % 40
    return other


@pytest.mark.parametrize("mode", ["contiguous", "paged"])
def test_the_bot_never_reads_the_hidden_output_lengths(mode):
    # A whole run, as autoplay plays it (memory fills, the queue grows, preemptions come):
    # every fifth decision is taken again on a copy whose hidden outputs all differ.
    game = Game(seed=5, mode=mode, endless=True)
    bot = Bot(seed=5, skill=0.8)
    decisions = waits = 0
    while not game.over and game.time_ms < 20 * 60_000:
        if game.active is None and game.blocked is None:
            game.update(100)
            continue
        if decisions % 5 == 0:
            twin_game, twin_bot = hide_outputs(game, decisions), copy.deepcopy(bot)
            plan = bot.plan(game)
            assert twin_bot.plan(twin_game) == plan, (decisions, game.time_ms)
        else:
            plan = bot.plan(game)
        decisions += 1
        if not plan or plan[-1] not in (Input.HARD_DROP, Input.SPLIT):
            waits += 1
            game.update(200, plan)
            continue
        game.update(0, plan[:-1])
        game.update(150)
        game.update(0, plan[-1:])
    assert decisions >= 50 and (mode == "contiguous" or waits > 0)


def test_the_bot_would_notice_a_changed_output_if_it_read_one():
    """The twin above differs where outputs matter: its run diverges when played on."""
    game = Game(seed=5, mode="paged", endless=True)
    for _ in range(40):
        game.update(0, [Input.HARD_DROP])
        game.update(500)
    twin = hide_outputs(game, 0)
    for g in (game, twin):
        g.update(30_000)
    assert game.serving.tokens_served != twin.serving.tokens_served


def test_holes_cost_more_than_flat_stacks():
    flat = [0] * 20 + [0b1111111110, 0b1111111110]
    holed = [0] * 20 + [0b1111111110, 0b1111101110]
    assert evaluate(flat, 2, 0) > evaluate(holed, 2, 0)


def test_skill_is_validated():
    with pytest.raises(ValueError):
        Bot(skill=1.5)


def test_a_careful_contiguous_bot_tucks_into_a_well_rather_than_stacking():
    game = game_with(["#########."] * 4, Kind.I)
    plan = Bot(skill=1.0).plan(game)
    events = game.update(0, plan)
    cells = of(events, ev.Locked)[0].result.cells
    assert {x for x, _ in cells} == {9}


def test_a_careful_paged_bot_splits_and_a_hurried_one_drops_whole():
    careful = Bot(skill=1.0).plan(game_with([], Kind.T, mode="paged", prompt=10))
    assert careful[-1] is Input.SPLIT
    hurried = Bot(skill=0.0).plan(game_with([], Kind.T, mode="paged", prompt=10))
    assert hurried[-1] is Input.HARD_DROP
    contiguous = Bot(skill=1.0).plan(game_with([], Kind.T, prompt=10))
    assert contiguous[-1] is Input.HARD_DROP


def test_the_paged_scheduler_keeps_a_watermark_free_unless_pressed():
    # Three free blocks; the falling request needs two: admitting it would leave one, under
    # the watermark, so a careful bot waits; with the queue about to overflow it admits.
    rows = ["##########"] * 19 + ["#######..."]
    game = game_with(rows, Kind.T, mode="paged", prompt=20)
    bot = Bot(skill=1.0)
    assert not bot.should_admit(game) and bot.plan(game) == []
    many = [arrival(i, 1.0 + i, Kind.O) for i in range(2, 2 + R.QUEUE_MAX - 1)]
    game.set_workload(__import__("engine.workload", fromlist=["Scripted"]).Scripted(many))
    game.update(50)
    assert len(game.queue) == R.QUEUE_MAX - 1 and bot.pressed(game)
    assert bot.should_admit(game) and bot.plan(game)[-1] is Input.SPLIT


def test_the_bot_picks_swap_for_a_long_context_and_recompute_for_a_short_one():
    game = game_with([], Kind.I, mode="paged", prompt=60, output=4)
    long = drop(game, Kind.I, x=0)
    run_until(game, lambda: game.serving.tokens_of(long) >= 60)  # its prompt is prefilled
    bot = Bot(skill=1.0)
    # 60 tokens: recompute costs 720 ms, two swaps of 4 blocks 640 ms
    assert bot.preempt_inputs(game) == [Input.PREEMPT_TOGGLE]
    game.toggle_preempt()
    assert bot.preempt_inputs(game) == []
    short = game_with([], Kind.O, mode="paged", prompt=5, output=4)
    req = drop(short, Kind.O, x=0)
    run_until(short, lambda: short.serving.tokens_of(req) >= 5)
    short.toggle_preempt()  # swap set; a 5-token context is cheaper to recompute
    assert bot.preempt_inputs(short) == [Input.PREEMPT_TOGGLE]


# ---------------------------------------------------------------- autoplay policies
def inputs_of(replay: Replay) -> set[Input]:
    return {i for _, inputs, _ in replay.steps.runs() for i in inputs}


def test_policies_press_what_they_say(tmp_path):
    for policy in ("idle", "centre", "split", "bot"):
        out = tmp_path / policy
        out.mkdir()
        play_one("paged", 2, policy, 0.8, 3.0, str(out))
        replay = replay_json.load(str(out / "paged-seed2.json"))
        assert replay.verify() and replay.endless
        pressed = inputs_of(replay)
        if policy == "idle":
            assert pressed == set()
        elif policy == "centre":
            assert pressed == {Input.HARD_DROP}
        elif policy == "split":
            assert pressed == {Input.SPLIT}
        else:
            assert Input.SPLIT in pressed


def test_the_centre_policy_drops_at_the_spawn_pose_at_once():
    game = Game(seed=4, mode="contiguous", endless=True)
    stats = play_one("contiguous", 4, "centre", 0.8, 30.0)
    # Replaying its rule by hand gives the same run.
    while not game.over and game.time_ms < 30 * 60_000:
        if game.active is not None:
            x = game.active.x
            events = game.update(0, (Input.HARD_DROP,))
            for e in of(events, ev.Locked):
                assert min(c[0] for c in e.result.cells) >= x - 1
        else:
            game.update(100)
    assert (game.pieces, game.tokens) == (stats.pieces, stats.tokens)


def test_the_split_policy_admits_every_request_while_blocks_are_free_and_drops_in_contiguous():
    game = Game(seed=1, mode="paged", endless=True)
    stats = play_one("paged", 1, "split", 0.8, 30.0)
    refusals = 0
    # By hand: split the moment a request appears; a refusal waits for blocks to free.
    while not game.over and game.time_ms < 30 * 60_000:
        if game.active is not None or game.blocked is not None:
            held = game.falling if game.active is not None else game.blocked
            free, need = R.VISIBLE_CELLS - game.serving.held, game.serving.need(held)
            events = game.update(0, (Input.SPLIT,))
            refused = [e for e in of(events, ev.Alert) if e.code == "split_no_room"]
            assert bool(refused) == (held in (game.falling if game.active else None, game.blocked))
            if refused:
                assert free < need
                refusals += 1
                game.update(100)
        else:
            game.update(100)
    assert (game.pieces, game.tokens) == (stats.pieces, stats.tokens)
    assert stats.ended and refusals  # memory ran short before the run ended
    # Where nothing splits, it is the centre policy.
    assert play_one("contiguous", 1, "split", 0.8, 30.0) == play_one("contiguous", 1, "centre", 0.8, 30.0)


def test_max_minutes_caps_a_run_that_would_go_on():
    stats = play_one("paged", 0, "bot", 0.8, 1.0)
    assert not stats.ended and stats.outcome is None
    assert 1.0 <= stats.minutes < 1.0 + 0.01
    longer = play_one("paged", 0, "bot", 0.8, 2.0)
    assert longer.minutes >= 2.0 and longer.tokens > stats.tokens


def test_autoplay_json_is_keyed_by_mode_and_repeatable(capsys):
    args = ["--mode", "both", "--seeds", "2", "--max-minutes", "1.5", "--json"]
    assert autoplay_main(args) == 0
    first = capsys.readouterr().out
    assert autoplay_main(args) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert set(doc) == {"contiguous", "paged"}
    for row in doc.values():
        assert row["games"] == 2 and row["minutes_mean"] <= 1.5 + 0.01
        assert sum(row["end_causes"].values()) == row["ended_count"]
        assert sum(row["oom_causes"].values()) == row["oom_count"]
        assert 0 <= row["waste_share_mean"] <= 1 and 0 <= row["frag_peak"] <= 1


def test_autoplay_one_mode_and_policy(capsys):
    assert autoplay_main(["--mode", "paged", "--policy", "centre", "--seeds", "1",
                          "--max-minutes", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("paged: ") and "tokens served" in out[0]
    assert out[1].startswith("policy centre") and "contiguous" not in "".join(out)


@pytest.mark.parametrize("args,option", [
    (["--mode", "buddy"], "--mode"), (["--seeds", "0"], "--seeds"), (["--seeds", "x"], "--seeds"),
    (["--policy", "random"], "--policy"), (["--max-minutes", "0"], "--max-minutes"),
    (["--max-minutes", "abc"], "--max-minutes"), (["--max-minutes", "241"], "--max-minutes"),
    (["--max-minutes", "nan"], "--max-minutes"), (["--skill", "2"], "--skill"),
    (["--max-pieces", "30"], "--max-pieces"), (["--frobnicate"], "--frobnicate"),
])
def test_autoplay_bad_arguments_exit_2_with_one_error_line(args, option, capsys):
    with pytest.raises(SystemExit) as exit_:
        autoplay_main(args)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if ": error:" in line]
    assert out == "" and len(errors) == 1 and option in errors[0]


def test_autoplay_bad_input_from_the_command_line_is_no_traceback():
    run = run_cli("--policy", "random")
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr and run.stderr.count(": error:") == 1


def test_engine_imports_without_pygame_or_numpy():
    code = ("import sys; sys.modules['pygame'] = None; sys.modules['numpy'] = None; "
            "import engine, engine.bot, engine.autoplay, engine.replay, engine.bench; "
            "g = engine.Game(seed=1); g.update(16, [engine.Input.HARD_DROP]); print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_a_request_gets_one_hand_careful_or_hurried_for_every_decision_about_it():
    # At skill 0.5, asking again about the same request (nothing changed) gives the same plan:
    # one draw a request, not one a decision; the next request draws again.
    game = Game(seed=3, mode="paged", endless=True)
    bot = Bot(skill=0.5, seed=3)
    plans = []
    for _ in range(40):
        while game.active is None and not game.over:
            game.update(100)
        first = bot.plan(game)
        assert all(bot.plan(game) == first for _ in range(6))
        plans.append(first[-1] if first else None)
        game.update(0.0, [Input.SPLIT])
    assert {Input.SPLIT, Input.HARD_DROP} <= set(plans)  # both hands came up over the requests
