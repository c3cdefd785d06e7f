"""Where free memory is: reach (external fragmentation), the allocators' answers, paging frames,
and honest OOM causes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Board, Game, Input, Kind, modes
from engine import memory, paging, reach
from engine import rules as R
from engine.allocators import Contiguous, Paged
from engine.pieces import FOOTPRINTS, PIECES
from engine.rotation import KICKS
from tests.enginekit import game_with, put_piece


# ---------------------------------------------------------------- the registry
def test_modes_are_one_registry_of_allocator_policies():
    assert modes.NAMES == ("contiguous", "paged")
    assert modes.DEFAULT == "contiguous" and Game().mode == "contiguous"
    c, p = modes.get("contiguous"), modes.get("paged")
    assert isinstance(c.allocator, Contiguous) and isinstance(p.allocator, Paged)
    assert c.reserves_max_length and not p.reserves_max_length
    assert p.pages_on_demand and not c.pages_on_demand
    assert p.player_split and not c.player_split
    assert c.allocator.external_fragmentation and not p.allocator.external_fragmentation
    assert p.allocator.preemptible and not c.allocator.preemptible
    assert modes.following("contiguous") == "paged" and modes.following("paged") == "contiguous"


def test_the_allocators_answers():
    cells = [(0, 21), (1, 21), (2, 21), (1, 20)]
    assert Contiguous().whole(cells, 2) == (cells[:2], cells[2:])  # the rest reserved
    assert Paged().whole(cells, 2) == (cells[:2], [])  # context only
    masks = [0] * R.HEIGHT
    assert Contiguous().unplaced(masks, 1, 4.0) is None and Contiguous().split(masks, [4]) is None
    assert Paged().unplaced(masks, 2, 4.0) == [(4, 21), (3, 21)]  # lowest, nearest, left first
    # grow: the rest of its own placement while free, else the lowest free block nearest it
    assert Paged().grow(masks, [(5, 10)], (4, 21)) == (5, 10)
    masks[10] = 1 << 5
    masks[21] = 0b1111110000
    assert Paged().grow(masks, [(5, 10)], (4, 21)) == (3, 21)
    full = [(1 << R.WIDTH) - 1] * R.HEIGHT
    assert Paged().grow(full, [], (4, 21)) is None and Paged().unplaced(full, 1, 0.0) is None


def test_paging_frames_are_visible_rows_only():
    masks = [0] * R.HEIGHT
    for y in range(R.HIDDEN, R.HEIGHT):
        masks[y] = (1 << R.WIDTH) - 1
    assert paging.lowest_frame(masks, 3) == -1  # the spawn rows are not memory
    assert paging.demand_frames(masks, 1, 3.0) is None and paging.page_frames(masks, [3]) is None
    masks[R.HIDDEN] &= ~(1 << 7)
    assert paging.page_frames(masks, [3]) == [(7, R.HIDDEN)]
    assert paging.page_frames(masks, [3, 3]) is None  # all or nothing


# ---------------------------------------------------------------- reach, independently
def poses_reached(board: Board, kind: Kind) -> set[tuple[int, int, int]]:
    """Every pose a player reaches: turned at the top (kicks included), then slid and dropped,
    by a plain search over single moves (not engine.reach's row masks)."""
    p = PIECES[kind]
    fp = FOOTPRINTS[kind]
    x0 = p.spawn_x
    y0 = p.spawn_y + (1 if board.fits(fp[0], x0, p.spawn_y + 1) else 0)
    if not board.fits(fp[0], x0, y0):
        return set()
    starts = [(0, x0, y0)]
    if kind is not Kind.O:
        for turns in ((1,), (1, 1), (-1,)):
            r, x, y = 0, x0, y0
            for d in turns:
                to = (r + d) % 4
                kick = next(((kx, ky) for kx, ky in KICKS[kind][(r, to)]
                             if board.fits(fp[to], x + kx, y + ky)), None)
                if kick is None:
                    break
                r, x, y = to, x + kick[0], y + kick[1]
            else:
                starts.append((r, x, y))
    seen = set(starts)
    todo = list(starts)
    while todo:
        r, x, y = todo.pop()
        for nx, ny in ((x - 1, y), (x + 1, y), (x, y + 1)):
            if (r, nx, ny) not in seen and board.fits(fp[r], nx, ny):
                seen.add((r, nx, ny))
                todo.append((r, nx, ny))
    return seen


def covered(board: Board, kinds=tuple(Kind)) -> set[tuple[int, int]]:
    out = set()
    for kind in kinds:
        for r, x, y in poses_reached(board, kind):
            out |= {(x + cx, y + cy) for cx, cy in PIECES[kind].rotations[r]}
    return out


def free_visible(board: Board) -> set[tuple[int, int]]:
    return {(x, y) for y in range(R.HIDDEN, R.HEIGHT) for x in range(R.WIDTH)
            if not board.grid[y][x]}


stacks = st.tuples(st.lists(st.integers(R.HIDDEN, R.HEIGHT), min_size=R.WIDTH, max_size=R.WIDTH),
                   st.lists(st.integers(0, (1 << R.WIDTH) - 1), min_size=R.HEIGHT,
                            max_size=R.HEIGHT))


def board_of(stack) -> Board:
    heights, holes = stack
    board = Board()
    for x, top in enumerate(heights):
        board.place([(x, y) for y in range(top, R.HEIGHT) if y == top or holes[y] >> x & 1], 100)
    return board


@settings(max_examples=40, deadline=None)
@given(stack=stacks, kind=st.sampled_from(list(Kind)))
def test_external_fragmentation_is_the_free_blocks_no_reachable_pose_covers(stack, kind):
    board = board_of(stack)
    cover = covered(board)
    free = free_visible(board)
    sealed = free - cover
    assert set(memory.sealed_cells(board)) == sealed
    assert reach.reachable_free(board) == len(free & cover)
    game = Game(seed=0, mode="contiguous")
    game.set_board(board)
    if not game.over:
        assert game.unreachable_free() == len(sealed) == game.telemetry().sealed_holes
        mem = game.memory(kind)
        assert mem.usable == len(free & covered(board, (kind,)))
        assert mem.free == len(free) and mem.sealed == len(sealed)
        game.update(0, [Input.MODE_PAGED])
        assert game.unreachable_free() == 0 and game.memory(kind).usable == len(free)


def test_tucks_count_a_block_under_an_overhang_is_reachable():
    # Columns 0-2 are roofed four rows up; a piece slid in from the right reaches under.
    game = game_with(["###.......", "..........", "..........", ".........."])
    assert game.telemetry().sealed_holes == 0
    # Closed on the right too: the blocks under the roof are sealed.
    game = game_with(["####......", "...#......", "...#......", "...#......"])
    assert game.telemetry().sealed_holes == 9 and len(memory.sealed_cells(game.board)) == 9


def test_a_gap_under_an_overhang_an_i_can_slide_into_is_not_fragmentation():
    game = game_with([], Kind.S)
    game.update(0, [Input.ROTATE_CW])  # vertical S leaves one cell under its overhang
    game.update(0, [Input.HARD_DROP])
    assert game.board.grid[R.HEIGHT - 1][4] == 0 and game.board.grid[R.HEIGHT - 2][4]
    assert game.telemetry().sealed_holes == 0  # a flat I slides along the floor under it
    # Walled in on the left as well, nothing reaches it.
    game = game_with(["...#......"], Kind.S)
    game.update(0, [Input.ROTATE_CW, Input.HARD_DROP])
    assert game.telemetry().sealed_holes == len(memory.sealed_cells(game.board)) >= 1


def test_open_blocks_in_no_range_of_the_shape_are_not_usable():
    # A one-wide well of depth 3 at column 9: an O fits nowhere in it, an I does.
    game = game_with(["#########."] * 3, Kind.O)
    mem = game.memory(Kind.O)
    assert mem.free == 173 and mem.sealed == 0
    assert mem.open_unusable == 3 and mem.usable == 170
    assert game.memory(Kind.I).usable == 173


# ---------------------------------------------------------------- honest causes
def test_oom_cause_is_memory_full_only_below_the_need():
    b = memory.Breakdown(free=3, sealed=0, reserved=0, usable=3)
    assert memory.oom_cause(b, 4, "ceiling") == "memory_full"
    assert memory.oom_cause(memory.Breakdown(4, 0, 0, 0), 4, "ceiling") == "ceiling"
    assert memory.cause_text("memory_full", b, 4) == (
        "memory really full: 3 free block(s), the request needs 4")
    text = memory.cause_text("no_free_range", memory.Breakdown(30, 10, 5, 12), 4)
    assert "30 blocks free" in text and "10 sealed" in text and "8 in gaps" in text


def test_crash_report_numbers_agree_with_the_board():
    rows = ["##.######."] + ["#########."] * 17 + ["#.#######."] * 2
    game = game_with(rows, Kind.O)
    game.update(0, [Input.HARD_DROP])
    r = game.result
    assert r.outcome == "oom"
    free = free_visible(game.board)
    sealed = free - covered(game.board)
    assert r.free_cells == len(free) == 23 and r.sealed_holes == len(sealed)
    assert set(r.sealed_cells) == sealed
    assert r.fragmentation == len(sealed) / len(free)
    assert r.usable_blocks + r.sealed_holes + r.open_unusable == r.free_cells


def test_a_request_stopped_above_vram_holds_nothing():
    game = game_with(["....##...."] * R.VISIBLE, Kind.I)
    put_piece(game, Kind.I, x=3, y=0)  # flat, in the spawn rows, over the full centre
    game.update(0, [Input.HARD_DROP])
    assert game.over and game.result.cause_code == "ceiling"
    rid = game.result.request_id
    assert all(v != rid for row in game.board.grid for v in row)
    assert game.result.resident == 1 and game.result.free_cells == 8 * R.VISIBLE
