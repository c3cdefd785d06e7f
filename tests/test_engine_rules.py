"""Every rule of the game, on small scripted boards."""

from __future__ import annotations

import random

import pytest

from engine import PIECES, Board, Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.bag import PieceBag
from engine.rotation import I_KICKS, JLSTZ_KICKS
from tests.enginekit import cells_on_board, clear_lines, game_with, put_piece, spend_split


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


# ---------------------------------------------------------------- pieces and rotation
def test_request_names_follow_the_article():
    names = {k.name: PIECES[k].name for k in Kind}
    assert names == {"I": "llama_7b_prompt", "O": "mixtral_moe_gate", "T": "gpt4_search_ref",
                     "S": "claude_3_agent", "Z": "stable_diff_unet", "J": "gemini_flash_ctx",
                     "L": "deepseek_coder_qa"}


def test_every_piece_has_four_cells_in_every_state():
    for p in PIECES.values():
        assert all(len(set(state)) == 4 for state in p.rotations)


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


# ---------------------------------------------------------------- randomizer
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


def test_next_queue_shows_three_and_predicts_the_next_spawn():
    game = Game(seed=3)
    queue = game.next_queue
    assert len(queue) == 3
    events = game.update(0, [Input.HARD_DROP])
    assert of(events, ev.Spawned)[-1].kind == queue[0]
    assert game.next_queue[:2] == queue[1:]


# ---------------------------------------------------------------- hold, ghost, drops
def test_hold_once_per_piece_and_swap_keeps_the_request():
    game = Game(seed=2)
    first = game.active
    events = game.update(0, [Input.HOLD])
    assert of(events, ev.Held)[0].kind == first.kind and game.hold_kind == first.kind
    assert not game.can_hold
    second = game.active.kind
    events = game.update(0, [Input.HOLD])
    assert of(events, ev.Alert)[0].code == "hold_used" and game.active.kind == second
    game.update(0, [Input.HARD_DROP])
    assert game.can_hold
    game.update(0, [Input.HOLD])
    assert game.active.kind == first.kind and game.active.request_id == first.request_id


def test_ghost_is_where_a_hard_drop_lands():
    game = game_with(["...##.....", "..####...#"], Kind.T)
    ghost = sorted(game.ghost_cells())
    events = game.update(0, [Input.HARD_DROP])
    assert sorted(of(events, ev.Locked)[0].result.cells) == ghost


def test_soft_drop_one_point_a_cell_hard_drop_two():
    game = game_with([], Kind.O)
    game.update(0, [Input.SOFT_DROP] * 3)
    assert game.score == 3
    y = game.active.y
    game.update(0, [Input.HARD_DROP])
    distance = R.HEIGHT - 2 - y  # the O's lower row ends on row 21
    assert game.score == 3 + 2 * distance


# ---------------------------------------------------------------- gravity and lock delay
def test_gravity_curve_speeds_up_with_level():
    speeds = [R.gravity_ms(level) for level in range(1, 21)]
    assert speeds[0] == 1000.0
    assert all(a > b for a, b in zip(speeds, speeds[1:]))


def test_gravity_moves_one_row_per_interval():
    game = game_with([], Kind.T, endless=True)
    y = game.active.y
    game.update(999)
    assert game.active.y == y
    events = game.update(1)
    assert game.active.y == y + 1 and of(events, ev.Moved)[0].dy == 1
    clear_lines(game, 90)  # level 10
    put_piece(game, Kind.T)
    y = game.active.y
    assert game.level == 10
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
    game.update(60_000)  # falls 19 rows in 19 s, then 41 s on the floor
    assert game.pieces == 1


def test_spawn_positions_and_the_one_row_drop():
    game = Game(seed=5)
    seen = set()
    for _ in range(7):
        a = game.active
        cells = a.cells()
        seen.add(a.kind)
        assert max(y for _, y in cells) == R.HIDDEN  # on the top visible row at once
        xs = sorted({x for x, _ in cells})
        assert xs[0] == (4 if a.kind is Kind.O else 3)  # centred, left of centre when odd
        game.update(0, [Input.LEFT] * 3 if len(seen) % 2 else [Input.RIGHT] * 3)
        game.update(0, [Input.HARD_DROP])
    assert seen == set(Kind)


# ---------------------------------------------------------------- lines, scoring, tokens, levels
@pytest.mark.parametrize("count,points", [(1, 100), (2, 300), (3, 500), (4, 800)])
def test_line_clear_points_times_level(count, points):
    rows = ["#########."] * count
    for level in (1, 3):
        game = game_with([], Kind.I)
        clear_lines(game, (level - 1) * R.LINES_PER_LEVEL)
        assert game.level == level
        lines, tokens = game.lines, game.tokens
        game.set_board(Board.from_strings(rows, owner=100))
        put_piece(game, Kind.I, rotation=1, x=7, y=10)  # vertical, in column 9
        events = game.update(0, [Input.HARD_DROP])
        cleared = of(events, ev.LinesCleared)[0]
        assert cleared.count == count and cleared.points == points * level
        assert cleared.tokens == count * R.TOKENS_PER_LINE == count * 160  # 16-token blocks
        assert game.tokens - tokens == count * 160 and game.lines - lines == count


def test_a_level_every_ten_lines():
    game = game_with([], Kind.I)
    clear_lines(game, 9)
    assert game.level == 1
    game.set_board(Board.from_strings(["#########."], owner=100))
    put_piece(game, Kind.I, rotation=1, x=7, y=10)
    events = game.update(0, [Input.HARD_DROP])
    assert game.level == 2 and of(events, ev.LevelUp)[0].level_now == 2


def test_cleared_rows_free_their_requests():
    game = game_with(["1111122222"], Kind.O)
    assert game.telemetry().resident == 2
    game.set_board(Board.from_strings(["11111222.."]))
    put_piece(game, Kind.O, x=8, y=5)
    game.update(0, [Input.HARD_DROP])
    # Requests 1 and 2 and the O had tokens in the row: all three finished.
    assert game.lines == 1 and game.served == 3
    assert game.telemetry().resident == 1  # only the O's upper half still holds blocks


# ---------------------------------------------------------------- modes and page split
def test_mode_switch_is_an_event_and_toggles():
    game = Game(seed=1)
    assert of(game.update(0, [Input.MODE_PAGED]), ev.ModeSwitched)[0].mode == "paged"
    assert of(game.update(0, [Input.MODE_PAGED]), ev.ModeSwitched) == []
    assert of(game.update(0, [Input.MODE_TOGGLE]), ev.ModeSwitched)[0].mode == "contiguous"
    with pytest.raises(ValueError):
        Game(mode="buddy")


def test_split_is_refused_in_contiguous_mode():
    game = game_with([], Kind.T)
    before = sorted(game.active.cells())
    events = game.update(0, [Input.SPLIT])
    assert of(events, ev.Alert)[0].code == "split_refused"
    assert sorted(game.active.cells()) == before and game.charge == 1.0


def test_split_needs_a_full_meter():
    game = game_with([], Kind.T, mode="paged")
    spend_split(game)
    game.update(1000)  # recharging, far from full
    assert 0 < game.charge < 1
    assert of(game.update(0, [Input.SPLIT]), ev.Alert)[0].code == "split_uncharged"


SEALED = ["....#.....",
          "####.#####"]


def test_split_fills_a_sealed_hole_and_keeps_a_block_table():
    game = game_with(SEALED, Kind.I, mode="paged")
    assert game.telemetry().sealed_holes == 1
    rid = game.active.request_id
    events = game.update(0, [Input.SPLIT])
    split = of(events, ev.PageSplit)[0]
    table = split.block_table
    assert table.request_id == rid and table.kind is Kind.I
    assert table.entries == ((0, (3, 20)), (1, (4, 21)), (2, (5, 20)), (3, (6, 20)))
    assert split.holes_filled == 1
    # the bottom row is now full: garbage-collected, the rest fell one row
    assert of(events, ev.LinesCleared)[0].count == 1
    assert table.resident == ((0, (3, 21)), (1, None), (2, (5, 21)), (3, (6, 21)))
    assert game.block_table == table
    assert game.board.grid[21][3] == rid and game.board.grid[21][4] == 100
    assert game.charge == pytest.approx(R.CHARGE_PER_LINE)  # spent all, +25 % for the line
    assert game.pieces == 1 and of(events, ev.Spawned)


def test_pages_stack_in_their_own_column():
    game = game_with([], Kind.I, mode="paged")
    put_piece(game, Kind.I, rotation=1, x=0, y=3)  # vertical in column 2
    table = of(game.update(0, [Input.SPLIT]), ev.PageSplit)[0].block_table
    assert [c for _, c in table.entries] == [(2, 21), (2, 20), (2, 19), (2, 18)]


def test_a_full_column_sends_pages_to_the_nearest_column_with_room():
    board = Board.from_strings(["#........."] * 22)
    assert board.column_with_room(0) == 1
    board = Board.from_strings([".####....."] * 22)
    assert board.column_with_room(3) == 5  # column 5 is two away, column 0 three
    board = Board.from_strings(["..###....."] * 22)
    assert board.column_with_room(3) == 1  # equal distance: left first
    assert Board.from_strings(["##########"] * 22).column_with_room(4) == -1


def test_charge_rules():
    game = game_with([], Kind.I, mode="paged")
    spend_split(game)
    game.set_board(Board.from_strings(["#########."], owner=100))
    put_piece(game, Kind.I, rotation=1, x=7, y=10)
    game.update(0, [Input.HARD_DROP])
    assert game.lines == 1 and game.charge == pytest.approx(R.CHARGE_PER_LINE)
    game.update(1000)
    assert game.charge == pytest.approx(R.CHARGE_PER_LINE + R.CHARGE_PER_SECOND)
    game.update(0, [Input.MODE_CONTIGUOUS])
    game.update(1000)
    assert game.charge == pytest.approx(R.CHARGE_PER_LINE + R.CHARGE_PER_SECOND)  # no recharge in contiguous mode
    assert Game().charge == 1.0


# ---------------------------------------------------------------- OOM and victory
def test_oom_when_a_request_cannot_be_admitted():
    game = game_with(["#########."] * 21, Kind.T)  # spawn rows blocked
    assert game.over
    oom = of(game.update(0), ev.Oom)[0]
    report = game.result
    assert oom.report is report and report.outcome == "oom"
    assert report.free_cells == 20 and report.sealed_holes == 0 and report.fragmentation == 0
    assert report.request_name == PIECES[report.kind].name
    assert "CUDA OUT OF MEMORY" in report.lines_of_text()[0]
    assert game.update(16, [Input.LEFT]) == []  # nothing moves after the crash


def test_oom_when_a_piece_locks_above_the_visible_board():
    game = game_with(["#########."] * 20, Kind.O)
    assert not game.over
    game.update(0, [Input.HARD_DROP])
    assert game.over and game.result.outcome == "oom"
    assert game.result.request_name == "mixtral_moe_gate"
    assert game.result.peak_utilisation == pytest.approx(0.9)


def test_a_piece_reaching_into_the_top_visible_row_is_not_an_oom():
    # Columns 0-1 full up to the top visible row: an O moved there rests half in the spawn rows.
    game = game_with(["##........"] * (R.VISIBLE - 1), Kind.O)
    events = game.update(0, [Input.LEFT] * 5 + [Input.HARD_DROP])
    rows = {y for _, y in of(events, ev.Locked)[0].result.cells}
    assert rows == {R.HIDDEN - 1, R.HIDDEN}  # one row in the spawn rows, one on the top visible row
    assert game.pieces == 1 and not game.over and of(events, ev.Oom) == []
    assert game.board_stats()[0] == 2 * (R.VISIBLE - 1) + 2  # its lower half is in VRAM


def test_crash_report_counts_sealed_holes():
    rows = ["##.######."] + ["#########."] * 17 + ["#.#######."] * 2
    game = game_with(rows, Kind.O)
    game.update(0, [Input.HARD_DROP])
    report = game.result
    assert report.outcome == "oom"
    assert report.sealed_holes == 2 and report.free_cells == 23
    assert report.fragmentation == pytest.approx(2 / 23)


def test_victory_at_forty_lines_and_endless_option():
    for endless in (False, True):
        game = game_with([], Kind.I, endless=endless)
        clear_lines(game, 39)
        assert not game.over
        game.set_board(Board.from_strings(["#########."], owner=100))
        put_piece(game, Kind.I, rotation=1, x=7, y=10)
        events = game.update(0, [Input.HARD_DROP])
        if endless:
            assert not game.over and of(events, ev.Victory) == []
        else:
            win = of(events, ev.Victory)[0]
            assert game.over and win.report.outcome == "victory" and win.report.lines == 40


# ---------------------------------------------------------------- telemetry
@pytest.mark.parametrize("rows,sealed,occupied", [
    ([], 0, 0),
    (["##........"], 0, 2),
    (["###.......", "#.#......."], 1, 5),
    ([".#........", "..........", ".........."], 2, 1),
    (["##########", "#.#.#.#.#.", ".........."], 5 + 10, 15),
])
def test_fragmentation_on_hand_made_boards(rows, sealed, occupied):
    board = Board.from_strings(rows)
    occ, seal, _ = board.stats()
    assert (occ, seal) == (occupied, sealed)
    game = Game()
    game.set_board(board)
    t = game.telemetry()
    free = 200 - occupied
    assert t.utilisation == pytest.approx(occupied / 200)
    assert t.fragmentation == pytest.approx(sealed / free)
    assert t.free_cells == free and t.sealed_holes == sealed


def test_usable_free_is_the_free_memory_the_falling_request_could_be_given():
    game = game_with(SEALED, Kind.T)
    t = game.telemetry()
    assert (t.free_cells, t.sealed_holes, t.usable_free) == (190, 1, 189)  # sealed: unusable
    game.update(0, [Input.MODE_PAGED])
    assert game.telemetry().usable_free == 190  # paged: pages go to any free block


def test_open_blocks_in_no_range_of_the_shape_are_not_usable():
    # A one-wide well of depth 3 at column 9: an O fits nowhere in it, an I does.
    rows = ["#########."] * 3
    game = game_with(rows, Kind.O)
    mem = game.memory(Kind.O)
    assert mem.free == 173 and mem.sealed == 0
    assert mem.open_unusable == 3 and mem.usable == 170
    assert game.memory(Kind.I).usable == 173


def test_throughput_is_a_rolling_five_seconds():
    game = game_with(["#########."], Kind.I)
    put_piece(game, Kind.I, rotation=1, x=7, y=10)
    game.update(0, [Input.HARD_DROP])
    assert game.telemetry().throughput == pytest.approx(160 / 5)
    game.update(4999, [Input.HOLD])
    assert game.telemetry().throughput == pytest.approx(32)
    game.update(1)
    assert game.telemetry().throughput == 0


def test_vram_warning_once_per_crossing():
    rows = ["#########."] * 18
    game = game_with(rows, Kind.O)
    put_piece(game, Kind.O, x=0, y=2)
    events = game.update(0, [Input.HARD_DROP])
    assert [w.code for w in of(events, ev.Alert)] == ["vram_high"]
    events = game.update(0, [Input.HARD_DROP])
    assert of(events, ev.Alert) == []


def test_locked_counts_newly_sealed_holes():
    game = game_with([], Kind.S)
    game.update(0, [Input.ROTATE_CW])  # vertical S leaves one cell under its overhang
    locked = of(game.update(0, [Input.HARD_DROP]), ev.Locked)[0]
    assert locked.result.holes_sealed == 1
    assert game.telemetry().sealed_holes == 1


def test_every_event_renders_a_console_line():
    game = Game(seed=4, mode="paged")
    events = list(game.update(0, [Input.LEFT, Input.ROTATE_CW, Input.HOLD, Input.SPLIT,
                                  Input.MODE_CONTIGUOUS, Input.SPLIT, Input.HARD_DROP]))
    rng = random.Random(1)
    while not game.over:
        events += game.update(16, [rng.choice(list(Input)), Input.HARD_DROP])
    kinds = {type(e) for e in events}
    assert {ev.Spawned, ev.Moved, ev.Rotated, ev.Held, ev.PageSplit, ev.ModeSwitched,
            ev.Alert, ev.Locked, ev.Oom} <= kinds
    for e in events:
        assert e.text and e.level in ("INFO", "WARN", "ERROR")
    assert of(events, ev.Oom)[0].level == "ERROR"


def test_cells_are_conserved():
    game = Game(seed=9, mode="paged")
    rng = random.Random(9)
    placed = cleared = 0
    while not game.over and game.pieces < 200:
        for e in game.update(50, [rng.choice(list(Input)) for _ in range(3)]):
            if isinstance(e, ev.Locked):
                placed += len(e.result.cells)
            elif isinstance(e, ev.PageSplit):
                placed += len(e.block_table.entries)
            elif isinstance(e, ev.LinesCleared):
                cleared += e.tokens // R.TOKENS_PER_BLOCK
    reserved = len(game.board.reserved_cells())
    assert placed - cleared == cells_on_board(game) - reserved


# ---------------------------------------------------------------- review cases
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


def test_points_use_the_level_before_the_clear():
    game = game_with([], Kind.I)
    clear_lines(game, 9)
    game.set_board(Board.from_strings(["#########."] * 4, owner=100))
    put_piece(game, Kind.I, rotation=1, x=7, y=10)
    events = game.update(0, [Input.HARD_DROP])
    assert of(events, ev.LinesCleared)[0].points == 800 and game.level == 2


def test_pages_never_go_into_the_hidden_rows():
    game = game_with(["#########."] * 20, Kind.I, mode="paged")  # only column 9 has room
    events = game.update(0, [Input.SPLIT])
    table = of(events, ev.PageSplit)[0].block_table
    assert [c for _, c in table.entries] == [(9, 21), (9, 20), (9, 19), (9, 18)]
    assert not game.over and game.lines == 4


def test_peak_vram_is_taken_before_rows_are_collected():
    game = game_with(["#########."] * 4, Kind.I)
    assert game.peak_utilisation == pytest.approx(36 / 200)  # the starting layout counts
    put_piece(game, Kind.I, rotation=1, x=7, y=10)
    game.update(0, [Input.HARD_DROP])
    assert game.telemetry().utilisation == 0
    assert game.peak_utilisation == pytest.approx(40 / 200)


def test_a_long_move_stops_at_a_wall():
    game = game_with(["......#...", "......#..."], Kind.O)
    put_piece(game, Kind.O, x=3, y=20)
    game.move(3)
    assert game.active.x == 4


def test_board_text_owner_zero_is_free():
    board = Board.from_strings(["0#"])
    assert board.grid[-1][:2] == [0, 1] and board.masks[-1] == 0b10


def test_a_request_stopped_above_vram_holds_nothing_and_seals_nothing():
    # Only the two centre columns are full to the top: the rest of VRAM is open and free.
    game = game_with(["....##...."] * R.VISIBLE, Kind.I)
    put_piece(game, Kind.I, x=3, y=0)  # flat, in the spawn rows, over the full centre
    game.update(0, [Input.HARD_DROP])
    assert game.over and game.result.cause_code == "ceiling"
    report = game.result
    rid = report.request_id
    assert report.sealed_holes == 0 and report.sealed_cells == ()  # the open columns stay open
    assert report.free_cells == 8 * R.VISIBLE
    assert report.usable_blocks == report.free_cells
    assert report.resident == 1  # only the board's own request: the failed one was never admitted
    assert all(v != rid for row in game.board.grid for v in row)
    assert game.telemetry().resident == 1 and game.telemetry().sealed_holes == 0


def test_the_log_never_says_a_request_stopped_above_vram_committed_blocks():
    game = game_with(["....##...."] * R.VISIBLE, Kind.I)
    put_piece(game, Kind.I, x=3, y=0)
    events = game.update(0, [Input.HARD_DROP])
    assert not of(events, ev.Locked) and len(of(events, ev.Oom)) == 1
