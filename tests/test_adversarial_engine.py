"""The engine's public API under hostile input: odd times, input floods, odd boards, long random
play in both allocators, with the invariants a run must keep after every step."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import events as ev
from engine import rules as R
from engine.board import Board
from engine.game import CHUNK_MS, MODES, Game, Input
from engine.layouts import check_board
from engine.prefix_cache import PREFIX_OWNER
from engine.pieces import Kind


def check_invariants(game: Game, events: list[ev.Event]) -> None:
    board, s = game.board, game.serving
    for y, row in enumerate(board.grid):
        assert board.masks[y] == sum(1 << x for x, v in enumerate(row) if v), f"row {y} masks"
        assert not board.reserved[y] & ~board.masks[y], f"row {y}: a reservation nobody holds"
    own = [c for r in s.running.values() for c in r.blocks[r.mapped:]]
    shared = {c for r in s.running.values() for c in r.blocks[:r.mapped]}
    assert len(own) == len(set(own)) and not set(own) & shared, "a block held twice, unshared"
    assert s.held == len(own) + len(shared) == sum(map(int.bit_count, board.masks)), "held != running blocks"
    assert s.reserved == sum(r.reserved for r in s.running.values())
    for r in s.running.values():  # its own blocks are its; a mapped prefix's are the prefix's
        assert all(board.grid[y][x] == r.id for x, y in r.blocks[r.mapped:])
        assert all(board.grid[y][x] in (r.id,) or board.grid[y][x] >= PREFIX_OWNER
                   for x, y in r.blocks[:r.mapped])
    assert 0 <= s.cpu_used <= R.CPU_BLOCKS
    assert s.cpu_used == sum(r.swapped for r in s.requests.values())
    for e in events:
        if isinstance(e, ev.Finished):  # a finished request holds nothing
            assert e.request_id not in s.running and e.request_id not in s.requests
            assert all(board.grid[y][x] != e.request_id for x, y in e.cells)
    a = game.active
    if a is not None:
        assert all(board.grid[y][x] == 0 for x, y in a.cells()), "falling over memory in use"
    if game.mode == "paged" and not game.mixed:
        assert game.unreachable_free() == 0 and game.telemetry().fragmentation == 0
    t = game.telemetry()
    assert 0 <= t.utilisation <= 1 and t.free_cells == R.VISIBLE_CELLS - s.held
    if game.over:
        r = game.result
        assert r is not None
        if r.outcome == "oom" and r.cause_code == "memory_full":
            assert r.free_cells < r.need
        if r.outcome == "overload":
            assert r.waiting == len(s.waiting)
            assert (r.waiting > R.QUEUE_MAX) == (r.cause_code == "queue_full")


# ---------------------------------------------------------------------- time


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dt", [math.nan, -math.inf, -1.0, -1e300, 0.0])
def test_time_that_is_not_a_duration_changes_nothing(mode, dt):
    game = Game(seed=3, mode=mode)
    game.update(dt)
    assert game.time_ms == 0.0 and not game.over and game.active is not None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dt", [math.inf, 1e300, 1e7])
def test_endless_time_ends_the_run_honestly(mode, dt):
    """Nothing is played: the first request waits out its deadline and the run ends there."""
    game = Game(seed=3, mode=mode, endless=True)
    events = game.update(dt)
    check_invariants(game, events)
    assert game.over and game.result is not None
    assert game.result.outcome in ("oom", "overload")
    r = game.result
    assert game.time_ms < 10 * R.DEADLINE_MS  # it stopped where the run ended, not at dt
    if r.cause_code == "deadline":  # ended on time, within one slice of simulated time
        assert R.DEADLINE_MS <= r.waited_ms < R.DEADLINE_MS + CHUNK_MS
    assert game.update(dt, list(Input)) == []  # after the end nothing happens


# ---------------------------------------------------------------------- input floods


@pytest.mark.parametrize("mode", MODES)
def test_thousands_of_inputs_in_one_step_keep_every_invariant(mode):
    game = Game(seed=5, mode=mode)
    keys = list(Input)
    for n in range(20):
        events = game.update(16.7, [keys[(i * 5 + n) % len(keys)] for i in range(3000)])
        check_invariants(game, events)
        if game.over:
            break


@pytest.mark.parametrize("mode", MODES)
def test_preempt_and_mode_toggle_spam_is_harmless(mode):
    game = Game(seed=6, mode=mode)
    for _ in range(200):
        events = game.update(16.7, [Input.PREEMPT_TOGGLE] * 7 + [Input.MODE_TOGGLE] * 3)
        check_invariants(game, events)
    assert game.preempt_mode in R.PREEMPT_MODES


@pytest.mark.parametrize("mode", MODES)
def test_hold_every_frame_still_meets_the_deadline(mode):
    game = Game(seed=8, mode=mode)
    frames = 0
    while not game.over:
        frames += 1
        assert frames < 60 * 60, "holding forever kept the run alive"
        check_invariants(game, game.update(1000.0 / 60.0, [Input.HOLD]))
    assert game.result is not None and game.result.outcome == "overload"
    assert game.result.cause_code == "deadline"


@pytest.mark.parametrize("mode", MODES)
def test_split_with_nothing_falling_or_no_room_is_refused_without_harm(mode):
    game = Game(seed=2, mode=mode)
    game.set_board(Board.from_strings(["#" * 10] * 20, owner=100))
    for _ in range(200):
        check_invariants(game, game.update(250.0, [Input.SPLIT, Input.HOLD, Input.SPLIT]))
        if game.over:
            break
    assert game.over  # the full board ends the run: nothing was split into memory in use
    assert game.result is not None and game.result.free_cells == 0


# ---------------------------------------------------------------------- odd boards


def _masks_off() -> Board:
    b = Board()
    b.masks[21] = 0b1111
    return b


def _reserved_free() -> Board:
    b = Board()
    b.reserved[20] = 0b11
    return b


def _negative_owner() -> Board:
    b = Board()
    b.place([(0, 21)], -3)
    return b


def _short() -> Board:
    b = Board()
    b.grid = b.grid[:5]
    return b


@pytest.mark.parametrize("make", [_masks_off, _reserved_free, _negative_owner, _short])
def test_a_board_that_is_not_one_is_refused_and_the_run_is_unchanged(make):
    game = Game(seed=1, mode="paged")
    before = ([row[:] for row in game.board.grid], game.board.masks[:], game.serving.held)
    with pytest.raises(ValueError):
        game.set_board(make())
    assert ([row[:] for row in game.board.grid], game.board.masks[:], game.serving.held) == before
    check_invariants(game, game.update(16.7, [Input.HARD_DROP]))


def test_a_board_written_through_its_methods_passes_the_check():
    b = Board.from_strings(["#.#.#.#.#.", "##########"], owner=7)
    b.reserve([(1, 20)], 8)
    check_board(b)


def test_a_falling_request_never_lies_over_a_block_taken_while_it_waits():
    """Paged: a request decodes into the rest of its own placement; another request resting in
    those cells during its lock delay must not be written over them (found by fuzzing)."""
    game = Game(seed=4, mode="paged")
    game.set_active(Kind.O)
    game.update(0, [Input.HARD_DROP])
    game.update(6000)
    game.set_active(Kind.O)
    game.update(0, [Input.SOFT_DROP] * 30)
    for i in range(40):
        check_invariants(game, game.update(200, [Input.ROTATE_CW] if i % 2 else []))


# ---------------------------------------------------------------------- random play


steps = st.lists(
    st.tuples(st.sampled_from([0.0, 16.7, 250.0, 1200.0, 5000.0]),
              st.lists(st.sampled_from(list(Input)), max_size=6)),
    max_size=150)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), mode=st.sampled_from(MODES), program=steps)
def test_random_play_keeps_every_invariant_in_both_allocators(seed, mode, program):
    game = Game(seed=seed, mode=mode, endless=True)
    for dt, inputs in program:
        check_invariants(game, game.update(dt, inputs))
        if game.over:
            assert game.update(dt, inputs) == []
            break
