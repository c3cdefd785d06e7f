"""Telemetry kept up to date per board change reads the same figures as counting from scratch.

The game counts the free-memory breakdown once per board change (and per falling request kind
and allocator), not on every read; these tests recount every figure from the owners on the board
after random play and compare.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MODES, PIECES, Board, Game, Input, Kind
from engine import memory
from engine import modes as M
from engine.bot import Bot
from tests.enginekit import game_with, put_piece
from engine import rules as R

steps = st.lists(
    st.tuples(st.sampled_from([0.0, 16.0, 120.0, 700.0]),
              st.lists(st.sampled_from(list(Input)), max_size=4)),
    max_size=120)


def usable_from_definition(board: Board, kind: Kind) -> set[tuple[int, int]]:
    """Every free visible block with nothing held above it that some placement of `kind`
    (any rotation, anywhere) made of such blocks only would cover."""
    grid = board.grid
    open_free = set()
    for x in range(R.WIDTH):
        for y in range(R.HEIGHT):
            if grid[y][x]:
                break
            if y >= R.HIDDEN:
                open_free.add((x, y))
    covered: set[tuple[int, int]] = set()
    for cells in PIECES[kind].rotations:
        for dx in range(-3, R.WIDTH):
            for dy in range(-3, R.HEIGHT):
                placed = {(x + dx, y + dy) for x, y in cells}
                if placed <= open_free:
                    covered |= placed
    return covered


def figures_from_scratch(game: Game) -> dict[str, object]:
    """The telemetry's board figures, counted from the owners on the board."""
    board = game.board
    grid = board.grid
    visible = [(x, y) for y in range(R.HIDDEN, R.HEIGHT) for x in range(R.WIDTH)]
    held = {(x, y) for x, y in visible if grid[y][x]}
    sealed = sum(1 for x, y in visible
                 if not grid[y][x] and any(grid[above][x] for above in range(y)))
    reserved = sum(1 for x, y in held if board.reserved[y] >> x & 1)
    free = R.VISIBLE_CELLS - len(held)
    kind = game.active.kind if game.active is not None else game.next_queue[0]
    if M.get(game.mode).pages_on_demand:
        usable = free
    else:
        usable = len(usable_from_definition(board, kind))
    token_holders = {grid[y][x] for y in range(R.HEIGHT) for x in range(R.WIDTH)
                     if grid[y][x] and not board.reserved[y] >> x & 1}
    return {
        "utilisation": len(held) / R.VISIBLE_CELLS,
        "fragmentation": sealed / free if free else 0.0,
        "usable_free": usable,
        "reserved": reserved,
        "resident": len(token_holders),
        "free_cells": free,
        "sealed_holes": sealed,
    }


def figures_read(game: Game) -> dict[str, object]:
    t = game.telemetry()._asdict()
    return {name: t[name] for name in ("utilisation", "fragmentation", "usable_free", "reserved",
                                       "resident", "free_cells", "sealed_holes")}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps)
def test_telemetry_reads_what_a_recount_from_scratch_reads(seed, mode, program):
    # Holds change the falling kind and mode keys change the allocator without touching the
    # board: a reading cached on the board alone would go stale there.
    game = Game(seed=seed, mode=mode)
    for dt, inputs in program:
        game.update(dt, inputs)
        want = figures_from_scratch(game)
        assert figures_read(game) == want
        mem = game.memory()
        assert (mem.free, mem.sealed, mem.reserved, mem.usable) == (
            want["free_cells"], want["sealed_holes"], want["reserved"], want["usable_free"])
        pages_on_demand = M.get(game.mode).pages_on_demand
        kind = game.active.kind if game.active is not None else game.next_queue[0]
        assert memory.breakdown(game.board, game.board.stats()[2], kind, pages_on_demand) == mem
        for other in Kind:  # any kind asked for, not only the falling one
            b = game.memory(other)
            assert b.usable == (b.free if pages_on_demand
                                else len(usable_from_definition(game.board, other)))
        if game.over:
            break


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), skill=st.floats(0.0, 1.0))
def test_telemetry_reads_what_a_recount_reads_through_long_games(seed, mode, skill):
    # The bot stacks high and clears rows; now and then a random hold, split, allocator switch
    # or soft drop comes first. Up to 150 requests, endless, so a game ends only in OOM.
    rng = random.Random(seed)
    bot = Bot(skill=skill, seed=seed)
    game = Game(seed=seed, mode=mode, endless=True)
    extra = [Input.HOLD, Input.SPLIT, Input.MODE_TOGGLE, Input.SOFT_DROP, Input.ROTATE_CW]
    while not game.over and game.pieces < 150:
        if rng.random() < 0.1:
            game.update(rng.choice([0.0, 16.0]), [rng.choice(extra)])
            assert figures_read(game) == figures_from_scratch(game)
        for step in bot.plan(game):
            game.update(0.0, [step])
        game.update(16.0)
        assert figures_read(game) == figures_from_scratch(game)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), skill=st.floats(0.0, 1.0))
def test_reading_telemetry_never_changes_the_run(seed, mode, skill):
    def run(read: bool):
        rng = random.Random(seed)
        bot = Bot(skill=skill, seed=seed)
        game = Game(seed=seed, mode=mode, endless=True)
        texts = []
        while not game.over and game.pieces < 80:
            if read:
                game.telemetry()
                game.memory(Kind(game.pieces % len(Kind)))  # any kind may be asked for
            if rng.random() < 0.1:
                texts += [e.text for e in game.update(16.0, [rng.choice([Input.HOLD, Input.MODE_TOGGLE])])]
            for step in bot.plan(game):
                texts += [e.text for e in game.update(0.0, [step])]
                if read:
                    game.telemetry()
            texts += [e.text for e in game.update(16.0)]
        return (texts, game.board.grid, game.board.reserved, game.score, game.next_queue,
                game.telemetry(), game.result)
    assert run(True) == run(False)


# Boards as column tops with random holes under them (tops of HEIGHT: an empty column).
stacks = st.tuples(st.lists(st.integers(0, R.HEIGHT), min_size=R.WIDTH, max_size=R.WIDTH),
                   st.lists(st.integers(0, (1 << R.WIDTH) - 1), min_size=R.HEIGHT,
                            max_size=R.HEIGHT))


@settings(max_examples=200, deadline=None)
@given(stack=stacks, kind=st.sampled_from(list(Kind)))
def test_usable_columns_are_the_blocks_some_placement_covers(stack, kind):
    heights, holes = stack
    board = Board()
    for x, top in enumerate(heights):
        board.place([(x, y) for y in range(top, R.HEIGHT) if y == top or holes[y] >> x & 1], 100)
    tops = board.stats()[2]
    want = usable_from_definition(board, kind)
    cols = memory.usable_columns(tops, kind)
    assert {(x, y) for x in range(R.WIDTH) for y in range(R.HEIGHT) if cols[x] >> y & 1} == want
    assert memory.usable_blocks(tops, kind) == len(want)



def test_a_reservation_under_an_overhang_fills_a_sealed_hole():
    # Columns 0-2 are roofed three rows up; an O slid in under the roof reserves the free block
    # above its left column, which was sealed: the counts follow without a rescan.
    game = game_with(["###.......", "..........", "..........", ".........."])
    assert game.telemetry().sealed_holes == 9
    put_piece(game, Kind.O, x=3, y=R.HEIGHT - 2)
    game.update(0, [Input.LEFT, Input.LEFT, Input.HARD_DROP])
    assert game.board.reserved_cells() == [(1, R.HEIGHT - 3)]
    assert figures_read(game) == figures_from_scratch(game)
    assert game.telemetry().sealed_holes == 9 - 4 - 1
