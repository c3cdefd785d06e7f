"""Every rule of the paper's engine, on small scripted boards and scripted requests.

The Tetris around the requests (rotation and kicks, the 7-bag, hold, ghost, gravity, lock delay,
spawning) and the life of a request (admitted, decoding, finishing by itself), the two
allocators' rules, the queue and how a run ends. The boards here play with rules 4's switches
off (engine.features.RULES3: a prompt prefilled whole at admission, nothing shared), so that each
rule shows on its own; what the switches add is tests/test_prefill.py, test_prefix_cache.py and
test_pick.py.
"""

from __future__ import annotations

import random

import pytest

from engine import PIECES, Board, Game, Input, Kind
from engine import events as ev
from engine import preemption
from engine import rules as R
from engine.bag import PieceBag
from engine.rotation import I_KICKS, JLSTZ_KICKS
from engine.workload import Scripted
from engine.features import RULES3
from tests import enginekit
from tests.enginekit import arrival, cells_of, drop, lengths, of, owners, put_piece, run_until


def game_with(rows: list[str], kind: Kind | None = None, mode: str = "contiguous", **kwargs) -> Game:
    """enginekit.game_with, with rules 4's switches off unless a test asks for them."""
    kwargs.setdefault("features", RULES3)
    return enginekit.game_with(rows, kind, mode, **kwargs)


# ---------------------------------------------------------------- pieces and rotation
def test_request_names_follow_the_article():
    names = {k.name: PIECES[k].name for k in Kind}
    assert names == {"I": "llama_7b_prompt", "O": "mixtral_moe_gate", "T": "gpt4_search_ref",
                     "S": "claude_3_agent", "Z": "stable_diff_unet", "J": "gemini_flash_ctx",
                     "L": "deepseek_coder_qa"}


def test_every_piece_has_four_cells_in_every_state():
    for p in PIECES.values():
        assert all(len(set(state)) == 4 for state in p.rotations)
    assert R.BLOCKS_PER_REQUEST == 4 and R.MAX_SEQ_TOKENS == 4 * R.TOKENS_PER_BLOCK


def test_clockwise_turns_right():
    game = game_with([], Kind.T)
    a = game.active
    x0, y0 = a.x, a.y
    events = game.update(0, [Input.ROTATE_CW])
    assert of(events, ev.Rotated)[0].kick_index == 0
    rel = {(x - x0, y - y0) for x, y in game.active.cells()}
    assert rel == {(1, 0), (1, 1), (1, 2), (2, 1)}  # stem vertical, nub pointing right


def test_four_turns_and_cw_then_ccw_are_identity():
    game = game_with([], Kind.L)
    start = sorted(game.active.cells())
    game.update(0, [Input.ROTATE_CW] * 4)
    assert sorted(game.active.cells()) == start
    game.update(0, [Input.ROTATE_CW, Input.ROTATE_CCW])
    assert sorted(game.active.cells()) == start


def test_kick_tables_are_complete_and_start_with_no_offset():
    for table in (JLSTZ_KICKS, I_KICKS):
        assert set(table) == {(a, (a + d) % 4) for a in range(4) for d in (1, -1)}
        assert all(len(v) == 5 and v[0] == (0, 0) for v in table.values())


PUBLISHED_JLSTZ = {  # the SRS wiki's table, y pointing up
    (0, 1): [(0, 0), (-1, 0), (-1, 1), (0, -2), (-1, -2)],
    (1, 0): [(0, 0), (1, 0), (1, -1), (0, 2), (1, 2)],
    (1, 2): [(0, 0), (1, 0), (1, -1), (0, 2), (1, 2)],
    (2, 1): [(0, 0), (-1, 0), (-1, 1), (0, -2), (-1, -2)],
    (2, 3): [(0, 0), (1, 0), (1, 1), (0, -2), (1, -2)],
    (3, 2): [(0, 0), (-1, 0), (-1, -1), (0, 2), (-1, 2)],
    (3, 0): [(0, 0), (-1, 0), (-1, -1), (0, 2), (-1, 2)],
    (0, 3): [(0, 0), (1, 0), (1, 1), (0, -2), (1, -2)],
}
PUBLISHED_I = {
    (0, 1): [(0, 0), (-2, 0), (1, 0), (-2, -1), (1, 2)],
    (1, 0): [(0, 0), (2, 0), (-1, 0), (2, 1), (-1, -2)],
    (1, 2): [(0, 0), (-1, 0), (2, 0), (-1, 2), (2, -1)],
    (2, 1): [(0, 0), (1, 0), (-2, 0), (1, -2), (-2, 1)],
    (2, 3): [(0, 0), (2, 0), (-1, 0), (2, 1), (-1, -2)],
    (3, 2): [(0, 0), (-2, 0), (1, 0), (-2, -1), (1, 2)],
    (3, 0): [(0, 0), (1, 0), (-2, 0), (1, -2), (-2, 1)],
    (0, 3): [(0, 0), (-1, 0), (2, 0), (-1, 2), (2, -1)],
}


def test_kick_tables_are_the_published_ones_with_y_flipped():
    for ours, published in ((JLSTZ_KICKS, PUBLISHED_JLSTZ), (I_KICKS, PUBLISHED_I)):
        for pair, kicks in published.items():
            assert list(ours[pair]) == [(x, -y) for x, y in kicks]


def test_t_against_left_wall_kicks_right():
    game = game_with([], Kind.T)
    put_piece(game, Kind.T, rotation=1, x=-1, y=5)  # stem in column 0
    events = game.update(0, [Input.ROTATE_CCW])
    rot = of(events, ev.Rotated)[0]
    assert (rot.kick_index, game.active.rotation, game.active.x, game.active.y) == (1, 0, 0, 5)


def test_t_on_floor_kicks_up_and_left_turning_clockwise():
    game = game_with([], Kind.T)
    put_piece(game, Kind.T, rotation=0, x=4, y=20)  # flat side on the floor
    events = game.update(0, [Input.ROTATE_CW])
    rot = of(events, ev.Rotated)[0]
    assert rot.kick_index == 2  # third test of 0->R: (-1, +1 up)
    assert (game.active.x, game.active.y) == (3, 19)


def test_i_on_floor_uses_its_own_table():
    game = game_with([], Kind.I)
    put_piece(game, Kind.I, rotation=0, x=0, y=20)  # lying in the bottom row, left wall
    events = game.update(0, [Input.ROTATE_CW])
    rot = of(events, ev.Rotated)[0]
    assert rot.kick_index == 4  # fifth test of the I table's 0->R: (+1, 2 up)
    assert sorted(game.active.cells()) == [(3, 18), (3, 19), (3, 20), (3, 21)]


def test_blocked_rotation_does_nothing():
    rows = ["#.#######."] * 20
    game = game_with(rows, Kind.I)
    put_piece(game, Kind.I, rotation=1, x=-1, y=2)  # vertical in the one-wide shaft, column 1
    before = sorted(game.active.cells())
    assert of(game.update(0, [Input.ROTATE_CW]), ev.Rotated) == []
    assert sorted(game.active.cells()) == before


def test_a_long_move_stops_at_a_wall():
    game = game_with(["......#...", "......#..."], Kind.O)
    put_piece(game, Kind.O, x=3, y=20)
    game.move(3)
    assert game.active.x == 4


def test_board_text_owner_zero_is_free():
    board = Board.from_strings(["0#"])
    assert board.grid[-1][:2] == [0, 1] and board.masks[-1] == 0b10


# ---------------------------------------------------------------- randomizer and the queue panel
def test_the_bag_deals_each_kind_once_per_bag_of_seven():
    assert len(Kind) == 7  # the seven tetrominoes: a 7-bag
    bag = PieceBag(random.Random(5))
    seq = [bag.pop() for _ in range(70)]
    for i in range(0, 70, 7):
        assert sorted(seq[i:i + 7]) == sorted(Kind)


def test_same_seed_same_pieces_and_seed_zero_is_a_real_seed():
    def first(seed):
        bag = PieceBag(random.Random(seed))
        return [bag.pop() for _ in range(21)]
    assert first(0) == first(0)
    assert first(0) != first(1)


def test_the_bag_shuffles_exactly_as_the_random_module_does():
    """PieceBag writes random.Random.shuffle out: the same seed must deal the same bags as the
    standard library's shuffle would (replays and daily runs depend on it)."""
    for seed in range(40):
        bag, rng = PieceBag(random.Random(seed)), random.Random(seed)
        expected: list[Kind] = []
        for _ in range(5):
            kinds = list(Kind)
            rng.shuffle(kinds)
            expected += kinds
        assert [bag.pop() for _ in range(35)] == expected


def test_requests_arrive_in_seven_bag_order():
    from engine.workload import Workload

    arrivals = Workload(4).arrivals_until(3_600_000.0)
    kinds = [a.kind for a in arrivals[:70]]
    for i in range(0, 70, 7):
        assert sorted(kinds[i:i + 7]) == sorted(Kind)


def test_next_queue_shows_the_waiting_requests_and_predicts_the_next_spawn():
    game = game_with([], Kind.O, arrivals=[arrival(2, 1.0, Kind.T), arrival(3, 2.0, Kind.S),
                                           arrival(4, 3.0, Kind.Z), arrival(5, 4.0, Kind.L)])
    game.update(10)
    assert game.next_queue == (Kind.T, Kind.S, Kind.Z)  # three shown, front first
    assert [r.id for r in game.queue] == [2, 3, 4, 5]
    events = game.update(0, [Input.HARD_DROP])
    assert of(events, ev.Spawned)[-1].kind is Kind.T and game.active.request_id == 2
    assert game.next_queue == (Kind.S, Kind.Z, Kind.L)


# ---------------------------------------------------------------- hold, ghost, drops
def test_hold_once_per_request_and_swap_keeps_the_request():
    game = game_with([], Kind.J, arrivals=[arrival(2, 1.0, Kind.T), arrival(3, 2.0, Kind.S)])
    game.update(10)
    first = game.active
    events = game.update(0, [Input.HOLD])
    assert of(events, ev.Held)[0].kind == first.kind and game.hold_kind == first.kind
    assert game.hold.id == first.request_id and not game.can_hold
    second = game.active
    assert second.kind is Kind.T
    events = game.update(0, [Input.HOLD])
    assert of(events, ev.Alert)[0].code == "hold_used" and game.active.kind == second.kind
    game.update(0, [Input.HARD_DROP])
    assert game.can_hold and game.active.request_id == 3
    game.update(0, [Input.HOLD])
    assert game.active.kind == first.kind and game.active.request_id == first.request_id
    assert game.hold.id == 3


def test_a_held_request_keeps_its_deadline_running():
    game = game_with([], Kind.T)
    game.update(0, [Input.HOLD])
    assert game.active is None and game.hold is not None and game.idle_ms() > 0
    game.update(R.DEADLINE_MS - 1)
    assert not game.over
    events = game.update(1)
    over = of(events, ev.Overloaded)[0].report
    assert over.cause_code == "deadline" and over.request_id == game.hold.id


def test_ghost_is_where_a_hard_drop_lands():
    game = game_with(["...##.....", "..####...#"], Kind.T)
    ghost = sorted(game.ghost_cells())
    events = game.update(0, [Input.HARD_DROP])
    assert sorted(of(events, ev.Locked)[0].result.cells) == ghost


def test_dropping_scores_nothing_only_tokens_score():
    game = game_with([], Kind.O, prompt=10, output=5)
    game.update(0, [Input.SOFT_DROP] * 3)
    game.update(0, [Input.HARD_DROP])
    assert game.score == 0 and game.pieces == 1


# ---------------------------------------------------------------- gravity and lock delay
def test_gravity_curve_speeds_up_with_level():
    speeds = [R.gravity_ms(level) for level in range(1, 21)]
    assert speeds[0] == 1000.0
    assert all(a > b for a, b in zip(speeds, speeds[1:]))


def test_the_level_is_the_game_minute_and_gravity_follows_it():
    assert [R.level_for(t) for t in (0, 59_999, 60_000, 540_000, 10**9)] == [1, 1, 2, 10, R.MAX_LEVEL]
    game = game_with([], Kind.T, prompt=10, output=3, arrivals=[arrival(2, 540_000.0, Kind.T)],
                     endless=True)
    y = game.active.y
    game.update(999)
    assert game.active.y == y
    events = game.update(1)
    assert game.active.y == y + 1 and of(events, ev.Moved)[0].dy == 1
    game.update(0, [Input.HARD_DROP])
    levels = of(game.update(540_000.0 - game.time_ms), ev.LevelUp)
    assert [e.level_now for e in levels] == list(range(2, 11)) and game.level == 10
    assert game.active is not None and game.active.request_id == 2
    y = game.active.y
    game.update(R.gravity_ms(10) * 3 + 0.01)
    assert game.active.y == y + 3


def test_lock_delay_is_500_ms():
    game = game_with([], Kind.O)
    game.update(0, [Input.SOFT_DROP] * 30)  # resting on the floor
    game.update(499)
    assert game.pieces == 0
    events = game.update(1)
    assert game.pieces == 1 and of(events, ev.Locked)


def test_lock_delay_resets_at_most_15_times_then_a_grounded_piece_locks_at_once():
    game = game_with([], Kind.O)
    game.update(0, [Input.SOFT_DROP] * 30)
    for i in range(14):
        game.update(400, [Input.LEFT if i % 2 else Input.RIGHT])
        assert game.pieces == 0
    game.update(0, [Input.LEFT])  # the 15th reset: no more time on the ground after this
    assert game.pieces == 0
    game.update(1)
    assert game.pieces == 1


def test_reaching_a_new_lowest_row_gives_the_resets_back():
    game = game_with(["##........"] * 4, Kind.O)
    put_piece(game, Kind.O, x=0, y=14)  # resting on the ledge in columns 0-1
    for i in range(10):
        game.update(400, [Input.RIGHT if i % 2 == 0 else Input.LEFT])
    game.update(0, [Input.RIGHT, Input.RIGHT])  # off the ledge
    game.update(1000 * 4 + 1)  # falls to the floor: a new lowest row
    assert game.active.y == 20 and game.pieces == 0
    for i in range(14):
        game.update(400, [Input.RIGHT if i % 2 == 0 else Input.LEFT])
        assert game.pieces == 0


def test_a_long_step_carries_its_leftover_time_into_lock_delay():
    game = game_with([], Kind.O)
    game.update(20_000)  # falls 19 rows in 19 s, then 1 s on the floor
    assert game.pieces == 1


def test_spawn_positions_and_the_one_row_drop():
    kinds = list(Kind)
    game = game_with([], Kind.I, arrivals=[arrival(i + 2, 1.0 + i, k) for i, k in enumerate(kinds)])
    game.update(0, [Input.HARD_DROP])
    game.update(10)
    seen = set()
    for n in range(7):
        a = game.active
        cells = a.cells()
        seen.add(a.kind)
        assert max(y for _, y in cells) == R.HIDDEN  # on the top visible row at once
        xs = sorted({x for x, _ in cells})
        assert xs[0] == (4 if a.kind is Kind.O else 3)  # centred, left of centre when odd
        game.update(0, [Input.LEFT] * 4 if n % 2 else [Input.RIGHT] * 4)
        game.update(0, [Input.HARD_DROP])
    assert seen == set(Kind)


# ---------------------------------------------------------------- a request's life
def test_a_request_decodes_a_token_per_step_and_finishes_by_itself_freeing_every_block():
    for mode in ("contiguous", "paged"):
        game = game_with([], Kind.T, mode=mode, prompt=20, output=30)
        req = game.falling
        events = game.update(0, [Input.HARD_DROP])
        admitted = of(events, ev.Admitted)[0]
        assert admitted.table.request_id == req.id and admitted.mode == mode
        assert admitted.stall_ms == R.PREFILL_MS_PER_TOKEN * 20  # prefill stalls the GPU
        s = game.serving
        assert req.id in s.running and s.tokens_of(req) == 20
        seen = [s.tokens_of(req)]
        finished = []
        while not finished:
            finished = of(game.update(R.DECODE_STEP_MS), ev.Finished)
            seen.append(s.tokens_of(req))
        assert seen[-1] == 50 and req.state == "finished"
        steps = [b - a for a, b in zip(seen, seen[1:])]
        assert set(steps) <= {0, 1} and sum(steps) == 30  # one token per decode step, no more
        (done,) = finished
        assert done.request_id == req.id and done.tokens == 30 and len(done.cells) == 4
        assert cells_of(game, req.id) == set() and owners(game) == set()
        assert game.served == 1 and game.tokens == 30 and game.score == 30 * game.level
        assert req.id not in s.running and req.id not in s.requests


def test_a_block_a_finished_request_still_holds_is_counted():
    # A block written for a request outside its block table (a bookkeeping fault) is still the
    # request's when it finishes: the count that must stay 0 sees it.
    game = game_with([], Kind.O, prompt=20, output=4)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    game.serving.board.place([(0, R.HIDDEN)], req.id)
    run_until(game, lambda: req.state == "finished")
    assert req.state == "finished" and game.serving.finished_holding_max == 1
    assert cells_of(game, req.id) == {(0, R.HIDDEN)}


def test_decode_steps_follow_gpu_time_and_prefill_stalls_them():
    game = game_with([], Kind.O, prompt=50, output=10)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    s = game.serving
    stall = R.PREFILL_MS_PER_TOKEN * 50
    assert s.busy_until_ms == pytest.approx(game.time_ms + stall)
    game.update(stall + R.DECODE_STEP_MS - 1)
    assert s.tokens_of(req) == 50
    game.update(1)
    assert s.tokens_of(req) == 51


def test_when_a_request_finishes_nothing_else_moves_and_no_row_clears():
    # A full row of other requests under a T; an O resting on the T's wing stays where it is
    # when the T finishes, hanging over the freed blocks.
    game = game_with(["##########"], Kind.T, prompt=20, output=4,
                     arrivals=[arrival(2, 1.0, Kind.O, prompt=30, output=30)])
    t = drop(game, Kind.T, x=0)  # T flat at columns 0-2, rows 20 (nub) and ... on the full row
    assert game.served == 0 and owners(game) == {100, t.id}  # the full row cleared nothing
    game.update(10)
    o = drop(game, Kind.O, x=1)  # O on top of the T's nub and right wing
    before = {rid: cells_of(game, rid) for rid in (100, o.id)}
    t_cells = cells_of(game, t.id)
    assert len(t_cells) == 4 and len(cells_of(game, o.id)) == 4
    events = run_until(game, lambda: t.state == "finished")
    assert of(events, ev.Finished)[0].request_id == t.id and o.state == "running"
    assert cells_of(game, t.id) == set()
    assert {rid: cells_of(game, rid) for rid in (100, o.id)} == before  # nothing fell
    assert all(game.board.grid[y][x] == 0 for x, y in t_cells)
    assert cells_of(game, 100) == {(x, R.HEIGHT - 1) for x in range(R.WIDTH)}  # the full row stays


def test_a_full_row_frees_nothing():
    game = game_with(["#########."] * 4, Kind.I, prompt=60, output=4)
    put_piece(game, Kind.I, rotation=1, x=7)  # vertical, into the well in column 9
    game.update(0, [Input.HARD_DROP])
    assert all(game.board.masks[y] == (1 << R.WIDTH) - 1 for y in range(R.HEIGHT - 4, R.HEIGHT))
    assert game.served == 0 and game.score == 0 and not hasattr(ev, "LinesCleared")


# ---------------------------------------------------------------- contiguous: the whole range
def test_contiguous_holds_all_four_cells_context_solid_and_the_rest_reserved():
    game = game_with([], Kind.T, prompt=20, output=30)
    req = game.falling
    events = game.update(0, [Input.HARD_DROP])
    table = of(events, ev.Admitted)[0].table
    # logical order: bottom row first, left to right; 20 tokens = 2 blocks of context
    assert [c for _, c in table.entries] == [(3, 21), (4, 21), (5, 21), (4, 20)]
    assert table.reserved == 2 and table.tokens == 20
    assert sorted(game.board.reserved_cells()) == [(4, 20), (5, 21)]
    assert len(cells_of(game, req.id)) == 4
    t = game.telemetry()
    assert (t.reserved, t.slots_held, t.tokens_stored, t.free_cells) == (2, 64, 20, 196)
    assert game.table_of(req.id) == game.block_table == game.serving.table(req)


def test_reserved_blocks_fill_as_decoding_reaches_them():
    game = game_with([], Kind.T, prompt=20, output=30)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    s = game.serving
    filled = []
    while req.state == "running":
        game.update(R.DECODE_STEP_MS)
        if req.state == "running":
            filled.append((s.tokens_of(req), req.reserved, tuple(sorted(game.board.reserved_cells()))))
    at = {tokens: (reserved, cells) for tokens, reserved, cells in filled}
    assert at[32] == (2, ((4, 20), (5, 21)))
    assert at[33] == (1, ((4, 20),))  # the 33rd token is the first in the third block
    assert at[48] == (1, ((4, 20),))
    assert at[49] == (0, ())
    assert of([], ev.Finished) == [] and s.reserved_wasted == 0


def test_reserved_but_never_used_is_counted_at_finish():
    game = game_with([], Kind.L, prompt=20, output=5)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    events = run_until(game, lambda: req.state == "finished")
    done = of(events, ev.Finished)[0]
    assert done.wasted == 2 and game.serving.reserved_wasted == 2
    assert game.telemetry().reserved_wasted == 2 and game.telemetry().reserved == 0
    assert game.board.reserved_cells() == []


def test_split_is_refused_in_contiguous_mode():
    game = game_with([], Kind.T)
    before = sorted(game.active.cells())
    events = game.update(0, [Input.SPLIT])
    assert of(events, ev.Alert)[0].code == "split_refused"
    assert sorted(game.active.cells()) == before and game.pieces == 0


def test_contiguous_oom_when_the_spawn_is_blocked_with_honest_numbers():
    game = game_with([], Kind.T)
    board = Board.from_strings(["#...######"] * 20, owner=100)
    board.place([(x, y) for y in range(R.HIDDEN) for x in range(3, 7)], 100)  # the entry
    game.set_board(board)
    assert game.over
    r = game.result
    assert r.outcome == "oom" and r.cause_code == "spawn_blocked"
    held = sum(1 for y in range(R.HIDDEN, R.HEIGHT) for x in range(R.WIDTH) if game.board.grid[y][x])
    assert r.free_cells == R.VISIBLE_CELLS - held == 60 and r.need == 4
    assert r.sealed_holes == game.unreachable_free() == 60  # nothing can enter: all sealed
    assert r.usable_blocks == 0 and f"{r.free_cells} blocks free" in r.cause
    assert f"{r.sealed_holes} of them sealed off" in r.cause
    assert "CUDA OUT OF MEMORY" in r.lines_of_text()[0]
    assert of(game.update(0), ev.Oom)[0].report is r
    assert game.update(16, [Input.LEFT]) == []  # nothing moves after the crash


def test_contiguous_oom_when_a_request_comes_to_rest_above_vram():
    game = game_with(["#########."] * 20, Kind.O)
    assert not game.over
    events = game.update(0, [Input.HARD_DROP])
    oom = of(events, ev.Oom)[0].report
    assert game.over and oom is game.result and oom.outcome == "oom" and oom.cause_code == "ceiling"
    assert oom.request_name == "mixtral_moe_gate" and oom.need == 4
    # No shape can turn and slide into the one-wide column from the two spawn rows: sealed.
    assert oom.free_cells == 20 and oom.sealed_holes == game.unreachable_free() == 20
    assert oom.usable_blocks == 0 and "20 blocks free, 20 of them sealed off" in oom.cause
    assert oom.peak_utilisation == pytest.approx(0.9)
    assert not of(events, ev.Locked) and not of(events, ev.Admitted)
    assert oom.request_id not in owners(game) and oom.resident == 1  # the board's own request


def test_oom_with_fewer_free_blocks_than_the_request_needs_says_memory_full():
    rows = ["##########"] * 19 + ["#######..."]
    game = game_with(rows, Kind.O)
    game.update(0, [Input.HARD_DROP])
    r = game.result
    assert r.outcome == "oom" and r.cause_code == "memory_full"
    assert r.free_cells == 3 < r.need == 4 and "3 free block(s), the request needs 4" in r.cause


def test_a_request_resting_on_the_top_visible_row_is_admitted():
    # Columns 0-1 full but for the top visible row: an O moved there rests there whole.
    game = game_with(["##........"] * (R.VISIBLE - 2), Kind.O)
    events = game.update(0, [Input.LEFT] * 5 + [Input.HARD_DROP])
    rows = {y for _, y in of(events, ev.Locked)[0].result.cells}
    assert rows == {R.HIDDEN, R.HIDDEN + 1}
    assert game.pieces == 1 and not game.over and of(events, ev.Oom) == []
    # One row higher it would reach the spawn rows: above VRAM.
    game = game_with(["##........"] * (R.VISIBLE - 1), Kind.O)
    game.update(0, [Input.LEFT] * 5 + [Input.HARD_DROP])
    assert game.over and game.result.cause_code == "ceiling"


# ---------------------------------------------------------------- paged: blocks on demand
def test_paged_admission_holds_only_the_context_blocks():
    game = game_with([], Kind.T, mode="paged", prompt=20, output=30)
    req = game.falling
    table = of(game.update(0, [Input.HARD_DROP]), ev.Admitted)[0].table
    assert [c for _, c in table.entries] == [(3, 21), (4, 21)] and table.reserved == 0
    assert cells_of(game, req.id) == {(3, 21), (4, 21)}
    assert game.board.reserved_cells() == [] and game.telemetry().reserved == 0
    t = game.telemetry()
    assert (t.free_cells, t.slots_held, t.tokens_stored) == (198, 32, 20)


def test_a_paged_request_gets_a_new_block_when_its_last_fills_its_own_placement_first():
    game = game_with([], Kind.T, mode="paged", prompt=20, output=30)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    s = game.serving
    grew = []
    while req.state == "running":
        for e in of(game.update(R.DECODE_STEP_MS), ev.Grew):
            grew.append((e.page, e.cell, s.tokens_of(req)))
    assert grew == [(2, (5, 21), 33), (3, (4, 20), 49)]  # the rest of its own placement


def test_a_new_block_goes_anywhere_free_when_its_placement_is_taken():
    # The T holds (0,21), (1,21) and wants (2,21), (1,20) next; an O's page takes (2,21).
    game = game_with([], Kind.T, mode="paged", prompt=32, output=20,
                     arrivals=[arrival(2, 1.0, Kind.O, prompt=16, output=40)])
    t = drop(game, Kind.T, x=0)
    assert t.blocks == [(0, 21), (1, 21)] and t.preferred == [(2, 21), (1, 20)]
    game.update(10)
    put_piece(game, Kind.O, x=2)
    game.update(0, [Input.SPLIT])
    assert cells_of(game, 2) == {(2, 21)}
    events = run_until(game, lambda: t.state == "finished")
    grew = [e.cell for e in of(events, ev.Grew) if e.request_id == t.id]
    # The rest of its own placement while free, then the lowest free block nearest its last
    # one: row 21 has (3,21) taken by the O's own growth by then, so (4,21).
    o_grew = [e.cell for e in of(events, ev.Grew) if e.request_id == 2]
    assert grew == [(1, 20), (4, 21)] and o_grew[0] == (3, 21)


def test_every_running_request_has_a_block_table_in_both_modes():
    for mode in ("contiguous", "paged"):
        game = game_with([], Kind.I, mode=mode, prompt=30, output=20,
                         arrivals=[arrival(2, 1.0, Kind.O, 10, 20), arrival(3, 2.0, Kind.T, 40, 10)])
        drop(game, Kind.I, x=0)
        game.update(10)
        drop(game, Kind.O, x=6)
        drop(game, Kind.T, x=3)
        s = game.serving
        assert set(s.running) == {1, 2, 3} == owners(game)
        for rid, req in s.running.items():
            table = game.table_of(rid)
            assert table.request_id == rid and table.kind is req.kind
            assert {c for _, c in table.entries} == cells_of(game, rid)
            assert [p for p, _ in table.entries] == list(range(len(table.entries)))
            assert table.tokens == s.tokens_of(req)
            for page, cell in table.entries:
                got = s.cell_tokens(cell)
                assert got is not None and got[0] is req and got[1] == page
            assert sum(s.cell_tokens(c)[2] for _, c in table.entries) == s.tokens_of(req)
        assert s.cell_tokens((9, 2)) is None


SEALED = ["....#.....",
          "####.#####"]


def test_paged_fragmentation_is_zero_with_holes_that_contiguous_counts():
    for mode, sealed in (("contiguous", 1), ("paged", 0)):
        game = game_with(SEALED, Kind.T, mode=mode)
        t = game.telemetry()
        assert t.free_cells == 190 and t.sealed_holes == sealed and t.usable_free == 190 - sealed
        assert t.fragmentation == pytest.approx(sealed / 190)
        mem = game.memory()
        assert (mem.free, mem.sealed) == (190, sealed)
        assert game.unreachable_free() == sealed
    # A paged run's report says 0 too, holes or not.
    game = game_with(SEALED, Kind.T, mode="paged")
    game.update(0, [Input.HOLD])
    game.update(R.DEADLINE_MS)
    assert game.over and game.result.sealed_holes == 0 and game.result.fragmentation == 0
    assert game.result.sealed_cells == ()


def test_split_pages_into_the_lowest_free_block_of_each_column_holes_included():
    game = game_with(SEALED, Kind.I, mode="paged", prompt=64, output=0)
    rid = game.active.request_id
    events = game.update(0, [Input.SPLIT])
    split = of(events, ev.PageSplit)[0]
    table = split.block_table
    assert table.request_id == rid and table.kind is Kind.I and not split.auto
    assert table.entries == ((0, (3, 20)), (1, (4, 21)), (2, (5, 20)), (3, (6, 20)))
    assert split.holes_filled == 1 and game.board.grid[21][4] == rid
    assert of(events, ev.Admitted)[0].how == "split"
    assert game.pieces == 1 and game.block_table.entries == table.entries


def test_split_pages_only_the_context_and_a_full_column_sends_pages_to_the_nearest():
    game = game_with([], Kind.I, mode="paged", prompt=20, output=10)
    put_piece(game, Kind.I, rotation=1, x=0, y=3)  # vertical in column 2
    table = of(game.update(0, [Input.SPLIT]), ev.PageSplit)[0].block_table
    assert [c for _, c in table.entries] == [(2, 21), (2, 20)]  # 20 tokens: two pages
    board = Board.from_strings(["#........."] * 22)
    assert board.column_with_room(0) == 1
    board = Board.from_strings([".####....."] * 22)
    assert board.column_with_room(3) == 5  # column 5 is two away, column 0 three
    board = Board.from_strings(["..###....."] * 22)
    assert board.column_with_room(3) == 1  # equal distance: left first
    assert Board.from_strings(["##########"] * 22).column_with_room(4) == -1


def test_pages_never_go_into_the_hidden_rows():
    game = game_with(["#########."] * 20, Kind.I, mode="paged", prompt=64, output=0)
    events = game.update(0, [Input.SPLIT])
    table = of(events, ev.PageSplit)[0].block_table
    assert [c for _, c in table.entries] == [(9, 21), (9, 20), (9, 19), (9, 18)]
    assert not game.over


def test_a_request_that_cannot_be_placed_whole_waits_for_the_next_decode_step_then_is_paged():
    game = game_with(["#########."] * 20, Kind.O, mode="paged", prompt=40, output=10)
    req = game.falling
    events = game.update(0, [Input.HARD_DROP])  # it would rest above VRAM
    assert of(events, ev.Alert)[0].code == "waiting_whole" and not game.over
    assert game.blocked is req and game.active is None and req.state == "queued"
    s = game.serving
    step = s.step
    wait = s.next_step_ms() - game.time_ms
    assert game.paged_in_ms() == wait and 0 < wait <= R.DECODE_STEP_MS
    game.update(wait - 1)
    assert game.paged_in_ms() == pytest.approx(1)
    assert game.blocked is req and s.step == step
    events = game.update(1)
    assert s.step == step + 1 and game.blocked is None and req.state == "running"
    split = of(events, ev.PageSplit)[0]
    assert split.auto and [c for _, c in split.block_table.entries] == [(9, 21), (9, 20), (9, 19)]
    assert of(events, ev.Admitted)[0].how == "on_demand"


def test_split_pages_a_waiting_request_at_once():
    game = game_with(["#########."] * 20, Kind.O, mode="paged", prompt=40, output=10)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    assert game.blocked is req
    events = game.update(0, [Input.SPLIT])
    assert req.state == "running" and game.blocked is None
    assert of(events, ev.Admitted)[0].how == "split"


def test_contiguous_never_waits_it_runs_out_of_memory():
    game = game_with(["#########."] * 20, Kind.O, mode="contiguous", prompt=40, output=10)
    game.update(0, [Input.HARD_DROP])
    assert game.over and game.blocked is None and game.result.outcome == "oom"


def test_a_waiting_request_enters_again_when_the_allocator_switches_to_contiguous():
    game = game_with(["#########."] * 20, Kind.O, mode="paged", prompt=40, output=10)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    assert game.blocked is req
    game.update(0, [Input.MODE_CONTIGUOUS])
    events = game.update(10)
    assert game.blocked is None and game.active is not None and game.active.request_id == req.id
    assert of(events, ev.Spawned)[0].request_id == req.id and not game.over
    game.update(0, [Input.HARD_DROP])  # still no room for an O: now a contiguous OOM
    r = game.result
    assert r.outcome == "oom" and r.cause_code == "ceiling" and r.free_cells == 20 >= r.need


def preempt_board(mode: str = "recompute") -> tuple[Game, object, object]:
    """Two free blocks; A (older, 16 tokens) and B (newer, 10) take one each; A needs a second
    at the first decode step, none is free: B is preempted so A can grow."""
    rows = ["##########"] * 18 + ["#########."] * 2
    game = game_with(rows, Kind.O, mode="paged", prompt=16, output=16,
                     arrivals=[arrival(2, 1.0, Kind.T, prompt=10, output=40)])
    if mode != game.preempt_mode:
        events = game.toggle_preempt()
        assert of(events, ev.PreemptModeSwitched)[0].mode == mode == game.preempt_mode
    a = game.falling
    game.update(0, [Input.SPLIT])
    game.update(10)
    b = game.falling
    assert b.id == 2
    game.update(0, [Input.SPLIT])
    assert set(game.serving.running) >= {a.id, b.id} and game.memory().free == 0
    return game, a, b


def test_no_free_block_preempts_the_newest_running_request_by_recompute():
    game, a, b = preempt_board("recompute")
    s = game.serving
    events = run_until(game, lambda: b.state != "running")
    pre = of(events, ev.Preempted)
    assert [p.request_id for p in pre] == [b.id] and pre[0].how == "recompute"
    assert a.state == "running" and len(a.blocks) == 2 and cells_of(game, b.id) == set()
    assert s.preempted_recompute == 1 and s.preempted_swap == 0 and s.cpu_used == 0
    # Its generated tokens join its prompt: it needs room for all of them again.
    assert b.done == pre[0].generated == 1 and b.recomputed == b.done
    assert s.need(b) == 1 and preemption.resume_ms(b) == R.PREFILL_MS_PER_TOKEN * (10 + 1)
    assert b.state == "queued" and game.time_ms - 100 < b.queued_ms <= game.time_ms
    # It comes back first, before anything newer, when blocks free up.
    run_until(game, lambda: b.state == "running")
    assert a.state == "finished" and b.state == "running"
    assert b.done + b.prompt <= game.serving.tokens_of(b)
    assert game.tokens == a.output


def test_a_request_preempted_in_the_step_it_grows_in_keeps_only_what_its_blocks_hold():
    # A and B both fill their one block at the first step; A grows first and takes B's place.
    rows = ["##########"] * 18 + ["#########."] * 2
    game = game_with(rows, Kind.O, mode="paged", prompt=16, output=16,
                     arrivals=[arrival(2, 1.0, Kind.T, prompt=16, output=40)])
    game.toggle_preempt()  # swap: it comes back with the blocks it had
    game.update(0, [Input.SPLIT])
    game.update(10)
    b = game.falling
    game.update(0, [Input.SPLIT])
    pre = of(run_until(game, lambda: b.state != "running"), ev.Preempted)[0]
    assert pre.how == "swap" and pre.generated == 0 and b.done == 0
    assert game.serving.tokens_of(b) == 16 == len(pre.cells) * R.TOKENS_PER_BLOCK


def test_swap_preemption_moves_blocks_to_the_cpu_and_back():
    game, a, b = preempt_board("swap")
    s = game.serving
    events = run_until(game, lambda: b.state != "running")
    (pre,) = of(events, ev.Preempted)
    assert pre.how == "swap" and pre.asked == "swap" and len(pre.cells) == 1
    assert s.cpu_used == b.swapped == 1 and s.preempted_swap == 1
    assert s.need(b) == 1 and preemption.resume_ms(b) == R.SWAP_MS_PER_BLOCK
    events = run_until(game, lambda: b.state == "running")
    back = [e for e in of(events, ev.Admitted) if e.table.request_id == b.id][0]
    assert back.resumed == "swap" and back.stall_ms == R.SWAP_MS_PER_BLOCK
    assert s.cpu_used == 0 and b.swapped == 0


def test_swap_falls_back_to_recompute_when_the_cpu_swap_space_is_full():
    game = game_with([], Kind.I, mode="paged", prompt=60, output=4,
                     arrivals=[arrival(i, 1.0 + i, Kind.I, prompt=60, output=4) for i in (2, 3)])
    game.toggle_preempt()
    drop(game, Kind.I, rotation=1, x=-2)
    game.update(10)
    drop(game, Kind.I, rotation=1, x=-1)
    drop(game, Kind.I, rotation=1, x=0)
    s = game.serving
    reqs = [s.running[i] for i in (1, 2, 3)]
    assert all(len(r.blocks) == 4 for r in reqs) and R.CPU_BLOCKS == 8
    hows = []
    for r in reqs:
        s.preempt(r)
        hows.append(of(s.events, ev.Preempted)[-1].how)
    assert hows == ["swap", "swap", "recompute"] and s.cpu_used == 8
    assert of(s.events, ev.Preempted)[-1].asked == "swap"
    assert [r.id for r in list(s.waiting)[:3]] == [3, 2, 1]  # each to the front of the queue


def test_a_preempted_request_goes_to_the_front_of_the_queue():
    game, a, b = preempt_board()
    now = game.time_ms
    game.set_workload(Scripted([arrival(5, now + 1, Kind.S), arrival(6, now + 2, Kind.Z)]))
    game.update(10)
    assert game.falling is not None and game.falling.id == 5 and [r.id for r in game.queue] == [6]
    run_until(game, lambda: b.state != "running", dt=50)
    assert b.state == "queued" and [r.id for r in game.queue] == [b.id, 6]  # ahead of 6


def test_the_player_chooses_how_preempted_requests_come_back():
    game = Game(seed=1, mode="paged")
    assert game.preempt_mode == R.DEFAULT_PREEMPT == "recompute"
    assert of(game.update(0, [Input.PREEMPT_TOGGLE]), ev.PreemptModeSwitched)[0].mode == "swap"
    assert game.preempt_mode == "swap"
    game.update(0, [Input.PREEMPT_TOGGLE])
    assert game.preempt_mode == "recompute"


def test_paged_oom_only_when_fewer_blocks_are_free_than_the_request_needs():
    rows = ["##########"] * 19 + ["#########."]
    game = game_with(rows, Kind.O, mode="paged", prompt=40, output=10)
    game.update(0, [Input.HARD_DROP])
    assert game.blocked is not None
    events = run_until(game, lambda: False, dt=500)
    alerts = [e.code for e in of(events, ev.Alert)]
    assert alerts.count("waiting_memory") == 1  # said once
    r = game.result
    assert r.outcome == "oom" and r.cause_code == "memory_full"
    assert r.free_cells == 1 < r.need == 3 and r.waited_ms >= R.DEADLINE_MS
    assert r.sealed_holes == 0 and "1 free block(s), the request needs 3" in r.cause
    assert game.time_ms == pytest.approx(R.DEADLINE_MS, abs=500)


def test_a_paged_request_with_enough_free_blocks_is_never_an_oom():
    rows = ["##########"] * 17 + ["#########."] * 3
    game = game_with(rows, Kind.O, mode="paged", prompt=40, output=10)
    req = game.falling
    game.update(0, [Input.HARD_DROP])
    run_until(game, lambda: req.state != "queued")
    assert not game.over and req.state == "running"


# ---------------------------------------------------------------- the queue and the endings
def test_arrivals_depend_on_the_seed_only_not_on_the_play():
    def arrivals(policy: str) -> list[tuple]:
        game = Game(seed=21, mode="paged", endless=True)
        seen = []
        for n in range(60 * 60):
            inputs = [Input.HARD_DROP] if policy == "drop" and n % 20 == 0 else []
            if policy == "split" and n % 15 == 0:
                inputs = [Input.SPLIT, Input.PREEMPT_TOGGLE]
            for e in game.update(1000 / 60, inputs):
                if isinstance(e, ev.Arrived):
                    r = game.serving.requests[e.request_id]
                    seen.append((r.id, r.kind, r.prompt, r.output, r.arrived_ms))
            if game.over:
                break
        return seen
    idle, dropped, split = arrivals("idle"), arrivals("drop"), arrivals("split")
    n = min(len(idle), len(dropped), len(split))
    assert n >= 5 and idle[:n] == dropped[:n] == split[:n]
    assert len(dropped) > len(idle)  # the dropping player lived long enough to see more
    assert all(1 <= p and 1 <= o and p + o <= R.MAX_SEQ_TOKENS for _, _, p, o, _ in dropped)


def test_the_arrival_rate_rises_with_game_time():
    from engine.workload import Workload

    assert R.arrival_rate(0) == R.RATE_START
    assert R.arrival_rate(600_000) == pytest.approx(R.RATE_START + 10 * R.RATE_PER_MINUTE)
    times = [a.time_ms for a in Workload(2).arrivals_until(30 * 60_000.0)]
    assert times == sorted(times) and times[0] == 0.0
    early = sum(1 for t in times if t < 5 * 60_000)
    late = sum(1 for t in times if t >= 25 * 60_000)

    def expected(start_min: float, end_min: float) -> float:  # the rate's integral, by the second
        return sum(R.arrival_rate(ms) / 1000.0 * 1000.0
                   for ms in range(int(start_min * 60_000), int(end_min * 60_000), 1000))

    assert expected(25, 30) > 3 * expected(0, 5)
    assert 0.7 < early / expected(0, 5) < 1.3 and 0.85 < late / expected(25, 30) < 1.15


def test_a_request_arriving_after_an_idle_stretch_enters_at_the_top():
    """Time jumps over a stretch where nothing falls; the request that ends it has not fallen."""
    for at in (5_000.0, 61_234.5, 540_000.0):
        game = game_with([], Kind.T, prompt=10, output=3, arrivals=[arrival(2, at, Kind.T)], endless=True)
        game.update(0, [Input.HARD_DROP])
        game.update(at - game.time_ms)
        assert game.active is not None and game.active.request_id == 2
        assert game.active.y <= R.HIDDEN, (at, game.active)


def test_the_queue_overflows_past_queue_max():
    many = [arrival(i, 100.0 + i, Kind.O) for i in range(2, 2 + R.QUEUE_MAX)]
    game = game_with([], Kind.T, arrivals=[*many, arrival(99, 500.0, Kind.S)])
    game.update(200)
    assert len(game.queue) == R.QUEUE_MAX and not game.over
    events = game.update(400)
    over = of(events, ev.Overloaded)[0].report
    assert over.outcome == "overload" and over.cause_code == "queue_full"
    assert over.waiting == R.QUEUE_MAX + 1 == len(game.queue) and over.request_id == 99
    assert f"{R.QUEUE_MAX + 1} requests waiting" in over.cause
    assert "SERVING ENGINE OVERLOADED" in over.lines_of_text()[0]


def test_a_request_waiting_deadline_ms_overloads_the_engine():
    game = game_with([], Kind.T, arrivals=[arrival(2, 1000.0, Kind.O)])
    game.update(0, [Input.HOLD])  # the T waits in hold, O falls from 1 s on
    game.update(1000)
    game.update(0, [Input.HOLD])  # hold used: the O stays falling; the T keeps waiting
    assert game.hold.id == 1
    game.update(R.DEADLINE_MS - 1000 - 1)
    assert not game.over
    game.update(1)
    r = game.result
    assert r.outcome == "overload" and r.cause_code == "deadline" and r.request_id == 1
    assert r.waited_ms == R.DEADLINE_MS and "30 s" in r.cause


def test_score_is_tokens_times_the_level_at_finish():
    game = game_with([], Kind.O, prompt=10, output=6,
                     arrivals=[arrival(2, 130_000.0, Kind.O, prompt=10, output=7)])
    first = drop(game, Kind.O)
    run_until(game, lambda: first.state == "finished")
    assert game.score == 6 * 1 and game.tokens == 6
    game.update(130_000 - game.time_ms + 1)
    second = drop(game, Kind.O)
    run_until(game, lambda: second.state == "finished")
    assert game.level == 3 and game.score == 6 + 7 * 3 and game.tokens == 13 and game.served == 2


def test_victory_after_serving_the_goal_and_endless_has_none(monkeypatch):
    monkeypatch.setattr(R, "GOAL_REQUESTS", 2)
    for endless in (False, True):
        game = game_with([], Kind.O, prompt=10, output=3, endless=endless,
                         arrivals=[arrival(2, 1.0, Kind.O, prompt=10, output=3)])
        drop(game, Kind.O, x=0)
        game.update(10)
        drop(game, Kind.O, x=5)
        events = run_until(game, lambda: game.served == 2)
        assert game.goal == ("endless" if endless else "serve")
        if endless:
            assert not game.over and of(events, ev.Victory) == []
        else:
            win = of(events, ev.Victory)[0].report
            assert game.over and win.outcome == "victory" and win.requests_served == 2
            assert win.tokens == 6 and win.goal == "serve"


def test_mode_switch_applies_to_requests_admitted_after_it_and_marks_the_run_mixed():
    game = game_with([], Kind.T, prompt=20, output=30,
                     arrivals=[arrival(2, 1.0, Kind.T, prompt=20, output=30)])
    assert of(game.update(0, [Input.MODE_PAGED]), ev.ModeSwitched)[0].mode == "paged"
    assert of(game.update(0, [Input.MODE_PAGED]), ev.ModeSwitched) == []
    game.update(0, [Input.MODE_TOGGLE])
    assert game.mode == "contiguous" and not game.mixed  # nothing admitted yet
    first = drop(game, Kind.T, x=0)
    game.update(0, [Input.MODE_PAGED])
    game.update(10)
    second = drop(game, Kind.T, x=5)
    assert first.mode == "contiguous" and first.reserved == 2
    assert second.mode == "paged" and second.reserved == 0 and len(second.blocks) == 2
    assert game.mixed and game.modes_used == ["contiguous", "paged"]
    with pytest.raises(ValueError):
        Game(mode="buddy")


def test_every_event_renders_a_console_line():
    game = Game(seed=4, mode="paged", endless=True)
    events = list(game.update(0, [Input.MODE_CONTIGUOUS, Input.SPLIT, Input.MODE_PAGED,
                                  Input.LEFT, Input.ROTATE_CW, Input.HOLD, Input.PREEMPT_TOGGLE]))
    rng = random.Random(1)
    while not game.over:
        events += game.update(100, [rng.choice([Input.HARD_DROP, Input.SPLIT, Input.LEFT])])
    kinds = {type(e) for e in events}
    assert {ev.Spawned, ev.Moved, ev.Rotated, ev.Held, ev.PageSplit, ev.ModeSwitched, ev.Arrived,
            ev.Admitted, ev.Finished, ev.Alert, ev.Locked, ev.PreemptModeSwitched} <= kinds
    assert kinds & {ev.Oom, ev.Overloaded}
    for e in events:
        assert e.text and e.level in ("INFO", "WARN", "ERROR")
    end = of(events, ev.Oom) + of(events, ev.Overloaded)
    assert end[0].level == "ERROR"
