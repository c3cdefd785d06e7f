"""Invariants over random input sequences, in both modes (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MODES, Game, Input
from engine.pieces import COLUMNS
from engine import events as ev
from engine import rules as R

steps = st.lists(
    st.tuples(st.sampled_from([0.0, 16.0, 120.0, 700.0]),
              st.lists(st.sampled_from(list(Input)), max_size=4)),
    max_size=120)


def check_board(game: Game) -> None:
    grid = game.board.grid
    assert len(grid) == R.HEIGHT and all(len(row) == R.WIDTH for row in grid)
    for y, row in enumerate(grid):  # the bitmask mirror agrees with the owners
        assert game.board.masks[y] == sum(1 << x for x, v in enumerate(row) if v)
    if game.active is not None:
        for x, y in game.active.cells():
            assert 0 <= x < R.WIDTH and 0 <= y < R.HEIGHT
            assert grid[y][x] == 0  # the falling piece never overlaps memory in use


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps)
def test_random_play_keeps_every_invariant(seed, mode, program):
    game = Game(seed=seed, mode=mode)
    placed = cleared = 0
    score = 0
    for dt, inputs in program:
        for e in game.update(dt, inputs):
            if isinstance(e, ev.Locked):
                placed += len(e.result.cells)
            elif isinstance(e, ev.PageSplit):
                placed += len(e.block_table.entries)
                assert len({c for _, c in e.block_table.entries}) == len(e.block_table.entries)
            elif isinstance(e, ev.LinesCleared):
                cleared += e.tokens // R.TOKENS_PER_BLOCK  # token blocks; the rest were reserved
        check_board(game)
        on_board = sum(1 for row in game.board.grid for v in row if v)
        assert placed - cleared == on_board - len(game.board.reserved_cells())
        assert game.score >= score
        score = game.score
        t = game.telemetry()
        assert 0 <= t.utilisation <= 1 and 0 <= t.fragmentation <= 1
        assert 0 <= t.usable_free <= t.free_cells and 0 <= t.charge <= 1
        tokens = {v for y, row in enumerate(game.board.grid) for x, v in enumerate(row)
                  if v and not game.board.reserved[y] >> x & 1}
        assert t.resident == len(tokens)
        if game.over:
            break


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps)
def test_same_seed_and_inputs_same_run(seed, mode, program):
    def run():
        game = Game(seed=seed, mode=mode)
        texts = [e.text for dt, inputs in program for e in game.update(dt, inputs)]
        return texts, game.board.grid, game.score
    assert run() == run()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps)
def test_cached_counts_match_a_full_recount(seed, mode, program):
    game = Game(seed=seed, mode=mode)
    for dt, inputs in program:
        game.update(dt, inputs)
        occupied, sealed, tops = game.board.stats()
        assert game.board_stats() == (occupied, sealed)
        a = game.active
        if a is not None:  # the ghost reads the cached column tops; a fresh scan must agree
            d = game.board.drop_distance(COLUMNS[a.kind][a.rotation], a.x, a.y)
            assert game.ghost_cells() == [(x, y + d) for x, y in a.cells()]
        if game.over:
            break
