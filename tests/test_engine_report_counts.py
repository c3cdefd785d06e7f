"""The end-of-run report's counted figures (engine.reports.COUNTED): a contiguous run's report
counts them from its final board when first read; they equal what the game's own gauges say of
that board, and the report behaves as one made with every field given."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MODES, Board, Game, Input
from engine import memory
from engine import rules as R
from engine.reports import COUNTED, RunReport


def played_out(seed: int, mode: str, moves: int = 400) -> Game:
    """A seeded random player's game, hard drops only, time running between arrivals."""
    rng = random.Random(seed)
    game = Game(seed=seed, mode=mode)
    for _ in range(moves):
        keys = [Input.ROTATE_CW] * rng.randrange(4)
        shift = rng.randint(-5, 5)
        keys += [Input.RIGHT if shift > 0 else Input.LEFT] * abs(shift)
        game.update(0.0, [*keys, Input.HARD_DROP])
        while game.active is None and not game.over:
            game.update(max(game.idle_ms(), 1.0))
        if game.over:
            break
    return game


def whole(report: RunReport) -> RunReport:
    """The same report made with every field given."""
    return RunReport(**{f.name: getattr(report, f.name) for f in dataclasses.fields(report)})


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES))
def test_counted_figures_equal_the_games_gauges_on_the_final_board(seed, mode):
    game = played_out(seed, mode)
    r = game.result
    assert game.over and r is not None
    mem = game.memory(r.kind)
    if r.outcome == "oom":
        assert (r.usable_blocks, r.open_unusable) == (mem.usable, mem.open_unusable)
        assert memory.cause_text(r.cause_code, mem, r.need) == r.cause
    lost = game.unreachable_free()
    assert r.sealed_holes == lost == mem.sealed
    assert r.fragmentation == (lost / r.free_cells if r.free_cells else 0.0)
    assert r.sealed_cells == (memory.sealed_cells(game.board) if lost else ())
    assert whole(r) == r and repr(whole(r)) == repr(r) and hash(whole(r)) == hash(r)


@pytest.mark.parametrize("first", COUNTED)
def test_any_counted_field_read_first_counts_them_all(first):
    a, b = played_out(11, "contiguous").result, played_out(11, "contiguous").result
    assert a is not None and b is not None
    getattr(a, first)
    assert {n: getattr(a, n) for n in COUNTED} == {n: getattr(b, n) for n in COUNTED}
    assert a == b


def test_the_counts_are_of_the_board_the_run_ended_on():
    game, again = played_out(5, "contiguous"), played_out(5, "contiguous")
    assert game.result is not None and again.result is not None
    game.set_board(Board())  # a later layout (puzzles) does not change how the run ended
    assert game.result == again.result and game.unreachable_free() == 0


def test_a_report_is_a_plain_frozen_dataclass():
    r = played_out(3, "contiguous").result
    assert r is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.sealed_holes = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        r.no_such_field  # type: ignore[attr-defined]  # noqa: B018
    assert dataclasses.replace(r, score=1).sealed_holes == r.sealed_holes
    with pytest.raises(TypeError):
        RunReport.counted(lambda: (), outcome="oom")


def test_paged_reports_seal_no_free_block():
    r = played_out(8, "paged").result
    assert r is not None and r.sealed_holes == 0 and r.sealed_cells == ()
    assert r.usable_blocks == r.free_cells <= R.VISIBLE_CELLS and whole(r) == r
