"""Reservations, paging on demand and honest OOM causes: the rules the lesson rests on."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Board, Game, Input, Kind, modes
from engine import events as ev
from engine import rules as R
from engine.bot import Bot
from engine.memory import OOM_CAUSES
from engine.paging import page_frames
from engine.pieces import PIECES
from tests.enginekit import game_with, put_piece


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


# ---------------------------------------------------------------- the registry
def test_modes_are_one_registry_and_new_players_start_contiguous():
    assert modes.NAMES == ("contiguous", "paged")
    assert modes.DEFAULT == "contiguous" and Game().mode == "contiguous"
    assert modes.get("contiguous").reserves_max_length and not modes.get("paged").reserves_max_length
    assert modes.get("paged").pages_on_demand and not modes.get("contiguous").pages_on_demand
    assert modes.following("contiguous") == "paged" and modes.following("paged") == "contiguous"


# ---------------------------------------------------------------- reservations
def test_a_contiguous_request_reserves_room_on_top_of_its_lowest_column():
    game = game_with([], Kind.T)  # flat T, nub up, lands on the floor
    events = game.update(0, [Input.HARD_DROP])
    res = of(events, ev.Reserved)
    assert len(res) == 1 and len(res[0].cells) == R.RESERVE_BLOCKS == 1
    locked = of(events, ev.Locked)[0].result
    left_wing = min(locked.cells)  # lowest column tops are the wings; left first
    assert res[0].cells == ((left_wing[0], left_wing[1] - 1),)  # right on top of it
    x, y = res[0].cells[0]
    assert game.board.grid[y][x] == locked.request_id and game.board.reserved[y] >> x & 1
    t = game.telemetry()
    assert t.reserved == 1 and t.free_cells == 200 - 5  # held memory, not free


def test_a_paged_request_reserves_nothing():
    game = game_with([], Kind.T, mode="paged")
    assert of(game.update(0, [Input.HARD_DROP]), ev.Reserved) == []
    assert game.telemetry().reserved == 0 and game.board.reserved_cells() == []


def test_reserved_blocks_stop_falling_pieces():
    board = Board.from_strings(["#########."], owner=100)
    board.reserve([(9, R.HEIGHT - 2)], 100)  # a reservation right above the gap
    game = Game(seed=0, mode="contiguous")
    game.set_board(board)
    put_piece(game, Kind.I, rotation=1, x=7, y=5)  # vertical I over column 9
    locked = of(game.update(0, [Input.HARD_DROP]), ev.Locked)[0].result
    assert max(y for _, y in locked.cells) == R.HEIGHT - 3  # it rests on the reservation
    assert game.board.grid[R.HEIGHT - 1][9] == 0  # the gap under it stays free (sealed)


def test_a_reserved_block_fills_a_row_but_holds_no_tokens():
    board = Board.from_strings(["#####....."], owner=100)
    board.reserve([(9, R.HEIGHT - 1)], 100)
    game = Game(seed=0, mode="contiguous")
    game.set_board(board)
    put_piece(game, Kind.I, rotation=0, x=5, y=5)  # flat I into columns 5-8
    cleared = of(game.update(0, [Input.HARD_DROP]), ev.LinesCleared)[0]
    assert cleared.count == 1 and cleared.tokens == 9 * R.TOKENS_PER_BLOCK
    assert game.board.reserved_cells() == []


def test_finishing_a_request_frees_its_whole_reservation():
    # A hand-made board: request 7 holds tokens in the bottom row and a reserved block higher up.
    game = game_with(["#########."], Kind.I)
    board = game.board
    board.grid[R.HEIGHT - 1][0] = 7
    board.reserve([(0, R.HEIGHT - 3)], 7)
    game.set_board(board)
    put_piece(game, Kind.I, rotation=1, x=7, y=5)
    events = game.update(0, [Input.HARD_DROP])
    cleared = of(events, ev.LinesCleared)[0]
    assert 7 in cleared.finished
    rel = of(events, ev.Released)
    assert [r.request_id for r in rel] == [7]
    (x, y), = rel[0].cells
    assert game.board.grid[y][x] == 0 and not game.board.reserved[y] >> x & 1
    assert cleared.tokens == R.TOKENS_PER_LINE


# ---------------------------------------------------------------- paging on demand
def test_paged_oom_only_when_fewer_free_blocks_than_pages():
    # Three free blocks left, in three rows; the other rows are held to the brim.
    board = Board.from_strings(["#" * 10] * 17 + ["#########."] * 3, owner=100)
    game = Game(seed=1, mode="paged")
    game.set_board(board)
    assert game.memory().free == 3
    events = game.update(0, [Input.HARD_DROP])
    oom = of(events, ev.Oom)
    assert oom and oom[0].report.cause_code == "memory_full" and oom[0].report.free_cells == 3


def test_a_blocked_spawn_in_paged_mode_pages_the_request_into_free_blocks():
    board = Board.from_strings(["#########."] * 20, owner=100)
    board.place([(x, y) for y in range(R.HIDDEN) for x in range(3, 7)], 100)  # spawn blocked
    game = Game(seed=2, mode="paged")
    game.set_board(board)
    events = game.update(0)
    split = of(events, ev.PageSplit)[0]
    assert split.auto and not game.over
    assert [c for _, c in split.block_table.entries] == [(9, y) for y in (21, 20, 19, 18)]
    assert len(split.origin) == 4
    assert of(events, ev.LinesCleared)[0].count == 4  # the pages completed four rows
    contiguous = Game(seed=2, mode="contiguous")
    contiguous.set_board(Board.from_strings(["#########."] * 20, owner=100))
    contiguous.board.place([(x, y) for y in range(R.HIDDEN) for x in range(3, 7)], 100)
    contiguous.set_board(contiguous.board)
    r = contiguous.result
    assert contiguous.over  # a one-wide well: only an I has a range there
    assert r.cause_code == ("spawn_blocked" if r.kind is Kind.I else "no_free_range")


# ---------------------------------------------------------------- OOM causes
def test_contiguous_oom_names_a_blocked_admission_with_room_left():
    board = Board.from_strings(["....#....."] * 20, owner=100)  # column 4 full to the top
    board.place([(4, 0), (4, 1)], 100)
    game = Game(seed=0, mode="contiguous")
    game.set_board(board)
    assert game.over
    r = game.result
    assert r.cause_code == "spawn_blocked" and r.free_cells == 180
    assert r.usable_blocks > 0 and "admission blocked" in r.cause
    assert r.utilisation == 0.1


def test_contiguous_oom_with_no_range_of_the_shape_left():
    rows = [".#.#.#.#.#", "#.#.#.#.#."] * 10  # a checkerboard: 100 free, no tetromino fits
    board = Board.from_strings(rows, owner=100)
    board.place([(x, y) for y in range(R.HIDDEN) for x in range(R.WIDTH)], 100)
    game = Game(seed=0, mode="contiguous")
    game.set_board(board)
    r = game.result
    assert r.cause_code == "no_free_range" and r.usable_blocks == 0
    assert r.free_cells == 100 and r.sealed_holes + r.open_unusable == 100


def test_oom_reports_list_the_cells_for_the_board_view():
    game = game_with(["#.########"] * 2 + ["##########"] * 0, Kind.O)
    while not game.over:
        game.update(0, [Input.HARD_DROP])
    r = game.result
    assert len(r.sealed_cells) == r.sealed_holes
    assert len(r.reserved_cells) == r.reserved_blocks
    assert all(R.HIDDEN <= y < R.HEIGHT for _, y in r.sealed_cells + r.reserved_cells)
    assert r.cause_code in OOM_CAUSES


# ---------------------------------------------------------------- mixed runs
def test_switching_allocator_after_the_first_request_makes_a_mixed_run():
    game = Game(seed=3, mode="contiguous")
    game.update(0, [Input.MODE_PAGED])  # before anything is placed: a choice, not a mix
    assert not game.mixed and game.modes_used == ["paged"]
    game.update(0, [Input.HARD_DROP, Input.MODE_CONTIGUOUS])
    assert game.mixed and game.modes_used == ["paged", "contiguous"]
    while not game.over:
        game.update(0, [Input.HARD_DROP])
    assert game.result.mixed and game.result.record_mode == "mixed"


# ---------------------------------------------------------------- properties
steps = st.lists(
    st.tuples(st.sampled_from([0.0, 16.0, 120.0, 700.0]),
              st.lists(st.sampled_from(list(Input)), max_size=4)),
    max_size=150)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(modes.NAMES), program=steps)
def test_blocks_are_conserved_and_reservations_released(seed, mode, program):
    game = Game(seed=seed, mode=mode)
    tokens = reserved = 0
    finished: set[int] = set()
    current = mode
    for dt, inputs in program:
        for e in game.update(dt, inputs):
            if isinstance(e, ev.ModeSwitched):
                current = e.mode
            elif isinstance(e, ev.Locked):
                tokens += len(e.result.cells)
            elif isinstance(e, ev.PageSplit):
                tokens += len(e.block_table.entries)
            elif isinstance(e, ev.Reserved):
                assert e.request_id not in finished
                reserved += len(e.cells)
                assert modes.get(current).reserves_max_length
            elif isinstance(e, ev.Released):
                reserved -= len(e.cells)
                assert all(not game.board.masks[y] >> x & 1 for x, y in e.cells)
            elif isinstance(e, ev.LinesCleared):
                token_blocks = e.tokens // R.TOKENS_PER_BLOCK
                tokens -= token_blocks
                reserved -= R.WIDTH * e.count - token_blocks
                finished.update(e.finished)
        board = game.board
        held = sum(1 for row in board.grid for v in row if v)
        on_reserve = board.reserved_cells()
        assert reserved == len(on_reserve) and tokens == held - len(on_reserve)
        for x, y in on_reserve:  # a finished request holds no reservation
            assert board.grid[y][x] not in finished
            assert board.masks[y] >> x & 1
        if game.over:
            break


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), program=steps)
def test_paged_runs_end_in_oom_only_when_memory_is_really_full(seed, program):
    game = Game(seed=seed, mode="paged", endless=True)
    for dt, inputs in program:
        inputs = [i for i in inputs if i not in (Input.MODE_CONTIGUOUS, Input.MODE_TOGGLE)]
        for e in game.update(dt, inputs):
            if isinstance(e, ev.Oom):
                assert e.report.cause_code == "memory_full"
                assert e.report.free_cells < R.BLOCKS_PER_REQUEST
        if game.over:
            break
    while not game.over and game.pieces < 400:  # then just stack in the centre
        game.update(0, [Input.HARD_DROP])
    assert not game.over or (game.result.outcome == "oom"
                             and game.result.free_cells < R.BLOCKS_PER_REQUEST)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_contiguous_oom_causes_add_up(seed):
    game = Game(seed=seed, mode="contiguous")
    rng_moves = [Input.LEFT, Input.RIGHT, Input.ROTATE_CW]
    i = 0
    while not game.over and i < 400:
        game.update(0, [rng_moves[(seed + i) % 3]] * ((seed >> (i % 16)) % 5) + [Input.HARD_DROP])
        i += 1
    if game.over and game.result.outcome == "oom":
        r = game.result
        assert r.free_cells == r.usable_blocks + r.sealed_holes + r.open_unusable
        if r.cause_code == "memory_full":
            assert r.free_cells < R.BLOCKS_PER_REQUEST
        elif r.cause_code == "no_free_range":
            assert r.usable_blocks == 0


boards = st.lists(st.integers(0, (1 << R.WIDTH) - 2), min_size=R.VISIBLE, max_size=R.VISIBLE)


@settings(max_examples=80, deadline=None)
@given(rows=boards, kind=st.sampled_from(list(Kind)), seed=st.integers(0, 1000))
def test_the_bot_predicts_the_pages_the_engine_places(rows, kind, seed):
    board = Board()
    for i, bits in enumerate(rows):
        board.place([(x, R.HIDDEN + i) for x in range(R.WIDTH) if bits >> x & 1], 100)
    game = Game(seed=seed, mode="paged")
    game.set_board(board)
    if game.over or game.active is None:
        return
    put_piece(game, kind)
    a = game.active
    shape = PIECES[kind].rotations[a.rotation]
    predicted = Bot.split_cells(game.board.masks, shape, a.x)
    assert predicted == page_frames(game.board.masks, [x for x, _ in a.cells()])
    splits = of(game.update(0, [Input.SPLIT]), ev.PageSplit)
    if predicted is None:
        assert game.over and game.result.cause_code == "memory_full"
    else:
        assert [c for _, c in splits[0].block_table.entries] == predicted


def test_the_block_table_follows_its_pages_through_later_clears():
    from engine.game import after_clear
    game = Game(seed=5, mode="paged", endless=True)
    bot = Bot(skill=0.9, seed=5)
    checked = 0
    table = None
    while not game.over and game.pieces < 400 and checked < 5:
        for e in game.update(0, bot.plan(game)):
            if isinstance(e, ev.PageSplit):
                table = e.block_table
            elif isinstance(e, ev.LinesCleared) and table is not None:
                if e.table is not None and e.table.request_id == table.request_id and e.table is not table:
                    want = tuple((p, None if c is None else after_clear(c, list(e.rows)))
                                 for p, c in table.resident)
                    assert e.table.resident == want
                    checked += 1
                table = e.table
        game.update(400)
    assert checked >= 1


def test_logs_count_rows_as_the_player_does():
    board = Board.from_strings(["###....###"], owner=100)
    game = Game(seed=0, mode="paged")
    game.set_board(board)
    split = of(game.update(0, [Input.SPLIT]), ev.PageSplit)[0]
    assert ",19)" in split.text and ",21)" not in split.text  # the bottom visible row is 19
    assert all(f"({x},{y - R.HIDDEN})" in split.text for _, (x, y) in split.block_table.entries)


def test_the_victory_report_agrees_with_its_numbers():
    game = game_with(["#########."] * 4, Kind.I)
    game.lines = R.VICTORY_LINES - 4
    put_piece(game, Kind.I, rotation=1, x=7, y=5)
    game.update(0, [Input.HARD_DROP])
    r = game.result
    assert r.outcome == "victory"
    assert f"{r.requests_served} requests finished" in r.cause
    assert "Every request" not in " ".join(r.lines_of_text())


def test_paging_on_demand_takes_the_lowest_free_blocks_first():
    from engine.paging import demand_frames
    board = Board.from_strings(["#" * 10] * 2 + ["....#.....", "###.######", "#.########"], owner=100)
    masks = board.masks
    # The two sealed holes at the bottom come first, then the open row, nearest column 4.5 first.
    assert demand_frames(masks, 4, 4.5) == [(1, 21), (3, 20), (5, 19), (3, 19)]
    assert demand_frames(masks, 200, 4.5) is None
    total_free = sum(R.WIDTH - m.bit_count() for m in masks[R.HIDDEN:])
    assert len(demand_frames(masks, total_free, 0)) == total_free
