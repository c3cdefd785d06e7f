"""Telemetry reads the same figures as counting from scratch, and reading it never changes a run."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MODES, Game, Input, Kind
from engine import rules as R
from engine.bot import Bot
from engine.features import RULES3
from engine.prefix_cache import PREFIX_OWNER
from tests.enginekit import drop, game_with
from tests.test_engine_memory import covered, free_visible


def figures_from_scratch(game: Game) -> dict[str, object]:
    """The gauges, counted from the owners on the board and the requests' token counts."""
    board, s = game.board, game.serving
    grid = board.grid
    held = {(x, y) for y in range(R.HEIGHT) for x in range(R.WIDTH) if grid[y][x]}
    free = free_visible(board)
    paged = not game.allocator.allocator.external_fragmentation
    sealed = 0 if paged else len(free - covered(board))
    tokens = sum(s.tokens_of(r) for r in s.running.values())
    tokens -= s.cache.dup_tokens if s.cache is not None else 0  # a shared block's tokens once
    slots = len(held) * R.TOKENS_PER_BLOCK
    total = slots + sealed * R.TOKENS_PER_BLOCK
    return {
        "utilisation": len(held) / R.VISIBLE_CELLS,
        "free_cells": len(free),
        "sealed_holes": sealed,
        "fragmentation": sealed / len(free) if free else 0.0,
        "usable_free": len(free) - sealed,
        "reserved": sum(1 for x, y in held if board.reserved[y] >> x & 1),
        # every owner but a shared prompt's, and a request that holds nothing of its own yet
        # (its first prefill chunk still to land, or only shared blocks mapped)
        "resident": len({grid[y][x] for x, y in held if grid[y][x] < PREFIX_OWNER}
                        | {rid for rid, r in s.running.items() if not r.blocks[r.mapped:]}),
        "tokens_stored": tokens,
        "slots_held": slots,
        "waste_share": (total - tokens) / total if total else 0.0,
        "tokens": game.tokens,
        "waiting": len(s.waiting),
    }


def figures_read(game: Game) -> dict[str, object]:
    t = game.telemetry().as_dict()
    return {name: t[name] for name in figures_from_scratch(game)}


steps = st.lists(
    st.tuples(st.sampled_from([0.0, 16.0, 120.0, 700.0, 2500.0]),
              st.lists(st.sampled_from(list(Input)), max_size=4)),
    max_size=40)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps)
def test_telemetry_reads_what_a_recount_from_scratch_reads(seed, mode, program):
    game = Game(seed=seed, mode=mode)
    for dt, inputs in program:
        game.update(dt, inputs)
        assert figures_read(game) == pytest.approx(figures_from_scratch(game))
        if game.over:
            break


def test_waste_share_counts_reservations_tails_and_sealed_blocks():
    # A contiguous T with 20 tokens: 64 slots held, 20 used; one sealed block adds 16 more.
    # (The paper's engine: a prompt prefilled whole at admission, so its 20 tokens are there at once.)
    game = game_with(["....#.....", "####.#####"], Kind.T, prompt=20, output=30, features=RULES3)
    drop(game, Kind.T, x=6)
    t = game.telemetry()
    held = (10 + 4) * R.TOKENS_PER_BLOCK
    static = 10 * R.TOKENS_PER_BLOCK  # the board's own request holds full blocks
    assert (t.slots_held, t.tokens_stored, t.sealed_holes) == (held, static + 20, 1)
    assert t.waste_share == pytest.approx((held + 16 - static - 20) / (held + 16))
    assert game.waste_share() == pytest.approx(t.waste_share)
    paged = game_with([], Kind.T, mode="paged", prompt=20, output=30, features=RULES3)
    drop(paged, Kind.T)
    assert paged.telemetry().waste_share == pytest.approx(12 / 32)  # only the tail


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), skill=st.floats(0.0, 1.0))
def test_reading_telemetry_never_changes_the_run(seed, mode, skill):
    def run(read: bool):
        rng = random.Random(seed)
        bot = Bot(skill=skill, seed=seed)
        game = Game(seed=seed, mode=mode, endless=True)
        texts = []
        while not game.over and game.time_ms < 4 * 60_000:
            if read:
                t = game.telemetry()
                t.sealed_holes, t.waste_share  # the lazily counted figures too
                game.memory(Kind(int(game.time_ms) % len(Kind)))
                game.block_table, game.queue, game.ghost_cells()
                for rid in list(game.serving.running):
                    game.table_of(rid)
            if rng.random() < 0.1:
                texts += [e.text for e in game.update(16.0, [Input.MODE_TOGGLE])]
            plan = bot.plan(game) if game.active is not None or game.blocked is not None else []
            texts += [e.text for e in game.update(0.0, plan)]
            texts += [e.text for e in game.update(250.0)]
        return (texts, game.board.grid, game.board.reserved, game.score, game.tokens,
                game.next_queue, game.result)
    assert run(True) == run(False)


def test_static_puzzle_requests_hold_full_blocks_that_never_change():
    game = game_with(["##########"], Kind.O)
    s = game.serving

    def static_tokens() -> int:
        return sum(s.tokens_of(r) for r in s.running.values() if r.static)

    before = game.telemetry().tokens_stored
    assert before == static_tokens() == 10 * R.TOKENS_PER_BLOCK
    game.update(0, [Input.HOLD])
    game.update(10 * R.DECODE_STEP_MS)
    assert static_tokens() == before  # whatever else was admitted meanwhile decodes on its own
    assert game.telemetry().tokens_stored == before + sum(
        s.tokens_of(r) for r in s.running.values() if not r.static)
