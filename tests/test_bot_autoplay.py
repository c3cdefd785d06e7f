"""The heuristic bot and the contiguous-vs-paged experiment."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine import Game, Input, Kind
from engine import events as ev
from engine.autoplay import main as autoplay_main
from engine.autoplay import summarise
from engine.bot import DEFAULT_SKILL, Bot, evaluate
from tests.enginekit import game_with
from tests.prockit import is_usage_error


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.autoplay", *args],
                          capture_output=True, text=True, check=False, timeout=120)


def test_bot_plans_end_in_a_drop_or_split_through_public_inputs():
    game = Game(seed=3, mode="paged", endless=True)
    bot = Bot(seed=3)
    for _ in range(60):
        plan = bot.plan(game)
        assert plan and plan[-1] in (Input.HARD_DROP, Input.SPLIT)
        assert all(isinstance(i, Input) for i in plan)
        game.update(0, plan)
        game.update(400)
        if game.over:
            break
    assert game.pieces >= 30


def test_a_perfect_bot_clears_a_ready_line():
    game = game_with(["#########."] * 4, Kind.I)
    plan = Bot(skill=1.0).plan(game)
    events = game.update(0, plan)
    assert [e.count for e in events if isinstance(e, ev.LinesCleared)] == [4]


def test_the_bot_splits_into_sealed_holes_when_it_pays():
    game = game_with(["##.#######", "#.#######."], Kind.I, mode="paged")
    plan = Bot(skill=1.0).plan(game)
    assert plan[-1] is Input.SPLIT
    game2 = game_with(["##.#######", "#.#######."], Kind.I, mode="contiguous")
    assert Bot(skill=1.0).plan(game2)[-1] is Input.HARD_DROP


def test_holes_cost_more_than_flat_stacks():
    flat = [0] * 20 + [0b1111111110, 0b1111111110]
    holed = [0] * 20 + [0b1111111110, 0b1111101110]
    assert evaluate(flat, 2, 0) > evaluate(holed, 2, 0)


def test_skill_is_validated():
    with pytest.raises(ValueError):
        Bot(skill=1.5)


def test_default_skill_contiguous_is_still_a_game_and_paged_lasts_longer():
    contiguous = summarise("contiguous", seeds=10, max_pieces=600, skill=DEFAULT_SKILL)
    assert contiguous.oom_count == 10 and 60 <= contiguous.pieces_mean < 400
    paged = summarise("paged", seeds=6, max_pieces=600, skill=DEFAULT_SKILL)
    assert paged.pieces_mean > 2 * contiguous.pieces_mean
    assert paged.frag_mean < contiguous.frag_mean


def test_the_contract_a_hurried_player_sees_the_paper_story():
    """--skill 0.3 --seeds 6 --max-pieces 3000: contiguous runs out of memory with much of it
    unused and a real share held by reservations; paged runs out only when memory is full."""
    contiguous = summarise("contiguous", seeds=6, max_pieces=3000, skill=0.3)
    paged = summarise("paged", seeds=6, max_pieces=3000, skill=0.3)
    assert contiguous.oom_count > 0 and contiguous.reserved_share_mean > 0.1
    assert contiguous.vram_at_oom_mean is not None and contiguous.vram_at_oom_mean < 0.8
    assert paged.reserved_share_mean == 0
    assert paged.free_at_oom_max is None or paged.free_at_oom_max <= 3
    if paged.vram_at_oom_mean is not None:
        assert contiguous.vram_at_oom_mean < paged.vram_at_oom_mean - 0.15
    assert paged.pieces_mean > contiguous.pieces_mean
    assert sum(contiguous.oom_causes.values()) == contiguous.oom_count
    assert set(contiguous.oom_causes) == set(paged.oom_causes) >= {"memory_full"}


def test_autoplay_json_is_keyed_by_mode_and_repeatable(capsys):
    args = ["--mode", "both", "--seeds", "2", "--max-pieces", "60", "--json"]
    assert autoplay_main(args) == 0
    first = capsys.readouterr().out
    assert autoplay_main(args) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert set(doc) == {"contiguous", "paged"}
    for row in doc.values():
        for key in ("pieces_mean", "pieces_median", "lines_mean", "frag_mean", "frag_peak",
                    "resident_mean", "oom_count", "splits_mean", "vram_at_oom_mean",
                    "free_at_oom_max", "reserved_share_mean", "oom_causes"):
            assert key in row
        assert sum(row["oom_causes"].values()) == row["oom_count"]
        assert (row["vram_at_oom_mean"] is None) == (row["oom_count"] == 0)
        assert 0 <= row["frag_mean"] <= row["frag_peak"] <= 1


def test_autoplay_table_names_both_modes(capsys):
    assert autoplay_main(["--seeds", "1", "--max-pieces", "30", "--skill", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "contiguous" in out and "paged" in out and "pieces mean" in out


@pytest.mark.parametrize("args", [
    ["--mode", "buddy"], ["--seeds", "0"], ["--seeds", "x"], ["--max-pieces", "-3"],
    ["--skill", "2"], ["--skill", "abc"], ["--frobnicate"],
])
def test_autoplay_bad_arguments_exit_2_in_one_line(args):
    run = run_cli(*args)
    assert run.returncode == 2
    assert is_usage_error(run.stderr), run.stderr


def test_engine_imports_without_pygame_or_numpy():
    code = ("import sys; sys.modules['pygame'] = None; sys.modules['numpy'] = None; "
            "import engine, engine.bot, engine.autoplay, engine.replay, engine.bench; "
            "g = engine.Game(seed=1); g.update(16, [engine.Input.HARD_DROP]); print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_every_bot_key_press_is_accepted_and_lands_where_it_was_scored():
    for mode in ("contiguous", "paged"):
        game = Game(seed=0, mode=mode, endless=True)
        bot = Bot(seed=0)
        for _ in range(300):
            plan = bot.choose(game)
            if plan is None:
                break
            events = game.update(0, plan.moves())
            moved = sum(1 for e in events if isinstance(e, ev.Moved) and e.dx)
            turned = sum(1 for e in events if isinstance(e, ev.Rotated))
            assert (moved, turned) == (abs(plan.dx), len(plan.turns))
            game.update(0, [plan.final])
            game.update(400)
