"""engine.occupancy: the one-pass fills the view draws agree with the engine's own answer for each
block, and a click on a shared block finds a request that maps it."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from engine import Game
from engine import rules as R
from engine.bot import Bot
from engine.occupancy import fills, holder
from engine.prefix_cache import PREFIX_OWNER


def busy_game(seed: int, minutes: float) -> Game:
    game = Game(seed=seed, mode="paged", endless=True)
    bot = Bot(skill=0.8, seed=seed)
    while not game.over and game.time_ms < minutes * 60_000:
        game.update(150.0, bot.plan(game) or [])
    return game


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), minutes=st.floats(0.5, 12.0))
def test_fills_name_every_held_block_once_as_full_as_the_engine_says(seed, minutes):
    game = busy_game(seed, minutes)
    grid = game.board.grid
    seen = [cell for cell, _, _ in fills(game.serving)]
    held = {(x, y) for y, row in enumerate(grid) for x, v in enumerate(row) if v}
    assert len(seen) == len(set(seen)) and set(seen) == held
    for cell, owner, tokens in fills(game.serving):
        assert owner == grid[cell[1]][cell[0]]
        if owner >= PREFIX_OWNER:
            assert tokens == R.TOKENS_PER_BLOCK  # a shared prompt's block is full
        else:
            found = game.serving.cell_tokens(cell)
            assert found is not None and found[0].id == owner and found[2] == tokens


def test_a_shared_block_is_held_by_its_oldest_mapper_and_a_free_one_by_nobody():
    game = busy_game(3, 6.0)
    running = game.serving.running.values()
    shared = [cell for cell, owner, _ in fills(game.serving) if owner >= PREFIX_OWNER]
    assert shared
    for cell in shared:
        mappers = [r for r in running if cell in r.blocks]
        assert len(mappers) >= 1 and holder(game.serving, cell) is min(mappers, key=lambda r: r.order)
    own = next(cell for cell, owner, _ in fills(game.serving) if owner < PREFIX_OWNER)
    assert holder(game.serving, own).id == game.board.grid[own[1]][own[0]]
    free = next((x, y) for y in range(R.HIDDEN, R.HEIGHT) for x in range(R.WIDTH) if not game.board.grid[y][x])
    assert holder(game.serving, free) is None


def test_a_prompt_waiting_for_its_chunk_shows_where_its_blocks_will_land_until_they_do():
    from engine import Input
    from engine.occupancy import pending

    game = Game(seed=2, mode="paged", endless=True)
    while game.active is None:
        game.update(100)
    req = game.falling
    need = R.blocks_for(req.context)
    game.update(0.0, [Input.HARD_DROP])
    assert req.prefill_left and not req.blocks  # admitted; its first chunk lands at the next step
    shown = [cell for cell, rid in pending(game.serving) if rid == req.id]
    assert len(shown) == need and all(not game.board.grid[y][x] for x, y in shown)
    while req.prefill_left and not game.over:
        game.update(50)
    assert set(req.blocks[req.mapped:]) <= set(shown) and not list(pending(game.serving))
