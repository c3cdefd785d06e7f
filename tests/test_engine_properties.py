"""Invariants over random input sequences and random bot play, in both modes (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import MODES, Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.bot import Bot
from engine.pieces import COLUMNS, PIECES
from engine.request import RUNNING
from engine.features import RULES3, RULES4
from engine.board import block_at, cell_at
from engine.prefix_cache import PREFIX_OWNER
from engine.workload import Arrival, Scripted, with_prefix

steps = st.lists(
    st.tuples(st.sampled_from([0.0, 1000 / 60, 120.0, 700.0, 3000.0]),
              st.lists(st.sampled_from(list(Input)), max_size=4)),
    max_size=80)


def check(game: Game, finished: set[int]) -> None:
    """Every invariant of the memory model, recounted from the board and the requests."""
    board, s = game.board, game.serving
    grid = board.grid
    assert len(grid) == R.HEIGHT and all(len(row) == R.WIDTH for row in grid)
    cells: dict[int, set[tuple[int, int]]] = {}
    for y, row in enumerate(grid):
        assert board.masks[y] == sum(1 << x for x, v in enumerate(row) if v)  # masks mirror grid
        assert board.reserved[y] & ~board.masks[y] == 0  # a reservation is a held block
        for x, v in enumerate(row):
            if v:
                cells.setdefault(v, set()).add((x, y))
    shared = check_cache(game, cells)
    if s.prefill is not None:  # chunked prefill: the prefilling requests, in admission order
        q = list(s.prefill.queue)
        assert all(r.prefill_left > 0 and s.running.get(r.id) is r for r in q)
        assert [r.order for r in q] == sorted(r.order for r in q)
        assert {r.id for r in s.running.values() if r.prefill_left} == {r.id for r in q}
        assert s.prefill.tokens == sum(r.context - r.prefill_left for r in q)
    # No request holds a block once it finished; every owner is a running request (or a shared
    # prefix that running requests map).
    assert set(cells) - set(shared) <= set(s.running) and not set(cells) & finished
    assert s.finished_holding_max == 0
    # The board's own count of each owner's blocks (what a finish is measured by) is the grid's.
    assert all(board.held_by(o) == len(c) for o, c in cells.items())
    assert all(board.held_by(rid) == 0 for rid in finished)
    assert all(y >= R.HIDDEN for c in cells.values() for _, y in c)  # blocks are VRAM only
    held = reserved = tokens = 0
    for rid, req in s.running.items():
        assert req.state == RUNNING and s.requests[rid] is req
        mapped = req.blocks[:req.mapped]
        assert cells.get(rid, set()) == set(req.blocks) - {c for c in mapped if grid[c[1]][c[0]] != rid}
        assert len(set(req.blocks)) == len(req.blocks)
        n_res = req.reserved
        assert 0 <= n_res <= len(req.blocks)
        for i, (x, y) in enumerate(req.blocks):
            assert bool(board.reserved[y] >> x & 1) == (i >= len(req.blocks) - n_res)
        if req.mode == "paged":
            assert n_res == 0
        full = len(req.blocks) - n_res
        t = s.tokens_of(req)
        if req.prefill_left:  # its chunk's blocks come before the chunk's tokens
            assert req in s.prefill.queue and t == req.context - req.prefill_left
            assert t <= full * R.TOKENS_PER_BLOCK and full <= R.blocks_for(req.context)
        elif not req.static:
            assert (full - 1) * R.TOKENS_PER_BLOCK < t <= full * R.TOKENS_PER_BLOCK, (req, t)
            assert t <= req.prompt + req.output
        held += len(req.blocks) - len(mapped)
        reserved += n_res
        tokens += t
    held += sum(1 for c in {c for r in s.running.values() for c in r.blocks[:r.mapped]})
    tokens -= s.cache.dup_tokens if s.cache is not None else 0
    assert s.held == held == sum(len(c) for c in cells.values())
    # What the running requests may still take from the free pool as they grow.
    assert s.growth == sum(R.BLOCKS_PER_REQUEST - len(r.blocks) for r in s.running.values()
                           if not r.static and not r.alloc.reserves_max_length
                           and len(r.blocks) < R.BLOCKS_PER_REQUEST)
    assert s.reserved == reserved == sum(map(int.bit_count, board.reserved))
    assert s.tokens_stored() == tokens <= held * R.TOKENS_PER_BLOCK
    assert s.cpu_used == sum(r.swapped for r in s.requests.values()) <= R.CPU_BLOCKS
    waiting = [r.id for r in s.waiting]
    assert len(set(waiting)) == len(waiting)
    assert all(r.state == "queued" for r in s.waiting)
    for other in (game.falling, game.hold, game.blocked):
        assert other is None or (other.id not in waiting and other.state == "queued")
    if game.active is not None:
        assert all(grid[y][x] == 0 for x, y in game.active.cells())  # never overlaps
    t = game.telemetry()
    assert 0 <= t.utilisation <= 1 and 0 <= t.fragmentation <= 1 and 0 <= t.waste_share <= 1
    assert t.free_cells == R.VISIBLE_CELLS - held and t.resident == len(s.running)
    assert 0 <= t.usable_free <= t.free_cells
    if game.mode == "paged":
        assert t.sealed_holes == 0 and t.fragmentation == 0
    if game.over:
        check_report(game)


def check_cache(game: Game, cells: dict[int, set[tuple[int, int]]]) -> set[int]:
    """The block pool agrees with the board and the running requests (every held block is
    referenced once per table that maps it), and so does the prefix cache; returns the board's
    owners that are shared prefixes."""
    board, s = game.board, game.serving
    pool = s.pool
    held = {(x, y) for y in range(R.HIDDEN, R.HEIGHT) for x in range(R.WIDTH) if board.masks[y] >> x & 1}
    maps: dict[tuple[int, int], int] = {}
    for req in s.running.values():
        for cell in req.blocks:
            maps[cell] = maps.get(cell, 0) + 1
    assert set(maps) == held  # a block is held exactly while a running request's table has it
    assert all(pool.refs[block_at(c)] == n for c, n in maps.items())
    assert {cell_at(b) for b in pool.free} == {(x, y) for y in range(R.HIDDEN, R.HEIGHT)
                                               for x in range(R.WIDTH)} - held
    assert pool.used == len(held)
    cached = {(x, y) for y, bits in enumerate(board.cached) for x in range(R.WIDTH) if bits >> x & 1}
    assert cached == {cell_at(b) for b in pool.known_free()}  # cached-free: free, content known
    assert all(pool.block_of[k] == b for b, k in pool.content.items()) and len(pool.block_of) == len(pool.content)
    cache = s.cache
    if cache is None:
        assert not cached and not pool.content
        return set()
    for req in s.running.values():  # its own blocks hold no shared content; mapped ones do
        assert all(block_at(c) not in pool.content or pool.content[block_at(c)][1] == req.id
                   for c in req.blocks[req.mapped:])
        assert all(block_at(c) in pool.content for c in req.blocks[:req.mapped])
    assert cache.dup_tokens == sum(n - 1 for n in maps.values()) * R.TOKENS_PER_BLOCK
    assert pool.shared == sum(1 for n in maps.values() if n > 1) <= pool.shared_peak
    return {board.grid[y][x] for x, y in held if board.grid[y][x] >= PREFIX_OWNER}


def check_report(game: Game) -> None:
    r, s = game.result, game.serving
    assert r is not None and r.outcome in ("oom", "overload", "victory")
    assert r.free_cells == R.VISIBLE_CELLS - s.held and r.resident == len(s.running)
    assert r.waiting == len(s.waiting) and r.requests_served == s.served
    assert r.tokens == s.tokens_served and r.score == game.score
    assert r.reserved_blocks == s.reserved and 0 <= r.sealed_holes <= r.free_cells
    if r.outcome == "oom":
        if r.mode == "paged":
            assert r.free_cells < r.need and r.sealed_holes == 0, r
        assert (r.cause_code == "memory_full") == (r.free_cells < r.need), r
        assert r.usable_blocks + r.sealed_holes + r.open_unusable == r.free_cells
        assert str(r.free_cells) in r.cause
    if r.outcome == "overload":
        assert r.cause_code in ("queue_full", "deadline")
        if r.cause_code == "queue_full":
            assert r.waiting > R.QUEUE_MAX
        else:
            assert r.waited_ms >= R.DEADLINE_MS


def finished_ids(events: list[ev.Event], finished: set[int]) -> None:
    for e in events:
        if isinstance(e, ev.Finished):
            finished.add(e.request_id)


RULES = st.sampled_from([RULES3, RULES4])  # without and with shared prefixes and their cache


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps, features=RULES)
def test_random_play_keeps_every_invariant(seed, mode, program, features):
    game = Game(seed=seed, mode=mode, features=features)
    finished: set[int] = set()
    score = 0
    for dt, inputs in program:
        finished_ids(game.update(dt, inputs), finished)
        check(game, finished)
        assert game.score >= score
        score = game.score
        if game.over:
            break


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), skill=st.floats(0.0, 1.0),
       extra=st.floats(0.0, 0.3), features=RULES)
@example(seed=409032583, mode="paged", skill=0.1875, extra=0.0, features=RULES3)  # a page grew under the falling piece
def test_bot_play_under_pressure_keeps_every_invariant(seed, mode, skill, extra, features):
    # The bot fills memory and runs until the queue overflows, with a random split, allocator
    # switch or preemption switch now and then (a hold, which the bot never takes back, would
    # only end the run at its deadline).
    rng = random.Random(seed)
    bot = Bot(skill=skill, seed=seed)
    game = Game(seed=seed, mode=mode, endless=True, features=features)
    finished: set[int] = set()
    keys = [Input.SPLIT, Input.MODE_TOGGLE, Input.PREEMPT_TOGGLE, Input.SOFT_DROP]
    n = 0
    while not game.over and game.time_ms < 12 * 60_000:
        if rng.random() < extra:
            finished_ids(game.update(rng.choice([0.0, 16.0]), [rng.choice(keys)]), finished)
        plan = bot.plan(game) if game.active is not None or game.blocked is not None else []
        finished_ids(game.update(0.0, plan), finished)
        finished_ids(game.update(rng.choice([50.0, 300.0, 1500.0])), finished)
        n += 1
        if n % 4 == 0 or game.over:
            check(game, finished)


def pressure_game(seed: int, rng: random.Random, features=RULES3) -> Game:
    """A paged game of long requests arriving fast (drawn from `rng`): memory runs out while
    they decode. With shared prefixes, most start with their workload's."""
    arrivals, at = [], 0.0
    for rid in range(2, 160):
        at += rng.uniform(100, 900)
        prompt = rng.randint(1, 20)
        kind = rng.choice(list(Kind))
        output = rng.randint(1, R.MAX_SEQ_TOKENS - prompt)
        prefix = 0
        if features.prefixes:
            prefix, prompt, output = with_prefix(kind, prompt, output, rng)
        arrivals.append(Arrival(rid, kind, at, prompt, output, prefix))
    game = Game(seed=seed, mode="paged", endless=True, features=features)
    game.set_workload(Scripted(arrivals))
    return game


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), toggle=st.floats(0.0, 0.5), switch=st.floats(0.0, 0.05),
       features=RULES)
@example(seed=55, toggle=0.5, switch=0.0, features=RULES4)  # a prompt half prefilled was swapped
def test_preemptions_keep_every_invariant(seed, toggle, switch, features):
    # Long requests arriving fast, each split at once: memory runs out while they decode, and
    # the newest are preempted (swap or recompute, as the random toggles leave it).
    rng = random.Random(seed)
    game = pressure_game(seed, rng, features)
    finished: set[int] = set()
    preempted = 0
    while not game.over and game.time_ms < 6 * 60_000:
        inputs = [Input.SPLIT]
        if rng.random() < toggle:
            inputs.append(Input.PREEMPT_TOGGLE)
        if rng.random() < switch:
            inputs.append(Input.MODE_TOGGLE)
        events = game.update(rng.choice([16.0, 200.0, 700.0]), inputs)
        finished_ids(events, finished)
        preempted += len([e for e in events if isinstance(e, ev.Preempted)])
        check(game, finished)
    assert preempted == game.serving.preempted_swap + game.serving.preempted_recompute


def test_the_pressure_workload_does_preempt():
    """The property above is not vacuous: its workload preempts, both ways."""
    swaps = recomputes = 0
    for seed in range(4):
        rng = random.Random(seed)
        game = pressure_game(seed, rng)
        while not game.over and game.time_ms < 6 * 60_000:
            game.update(rng.choice([16.0, 200.0, 700.0]),
                        [Input.SPLIT, *([Input.PREEMPT_TOGGLE] if rng.random() < 0.2 else [])])
        swaps += game.serving.preempted_swap
        recomputes += game.serving.preempted_recompute
    assert swaps > 0 and recomputes > 0


def test_an_idle_jump_ends_before_a_request_can_fall():
    """update(idle_ms()) plays the decode steps up to the next arrival in one call, but stops
    at a step that preempts: the preempted request then enters at the top and has not fallen."""
    jumped_preempting = 0
    for seed in range(3):
        rng = random.Random(seed)
        # Long requests arriving fast fill memory, then a lull: the jumps over it are long.
        arrivals, at = [], 0.0
        for rid in range(2, 70):
            at += rng.uniform(100, 400) if rid < 60 else 20_000.0
            arrivals.append(Arrival(rid, rng.choice(list(Kind)), at, 16, R.MAX_SEQ_TOKENS - 16))
        game = Game(seed=seed, mode="paged", endless=True)
        game.set_workload(Scripted(arrivals))
        while not game.over and game.time_ms < 4 * 60_000:
            game.update(0.0, [Input.SPLIT])
            if game.active is not None or game.blocked is not None:
                game.update(16.0)
                continue
            spans = game.idle_ms()
            events = game.update(max(spans, 1.0))
            a = game.active
            if any(isinstance(e, ev.Preempted) for e in events):
                jumped_preempting += 1
                assert a is not None or game.over
            if a is not None:  # it entered at the end of the jump, at its spawn pose
                p = PIECES[a.kind]
                assert (a.rotation, a.x) == (0, p.spawn_x) and a.y - p.spawn_y in (0, 1)
    assert jumped_preempting > 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps, features=RULES)
def test_same_seed_and_inputs_same_run(seed, mode, program, features):
    def run():
        game = Game(seed=seed, mode=mode, features=features)
        texts = [e.text for dt, inputs in program for e in game.update(dt, inputs)]
        return texts, game.board.grid, game.score, game.tokens, game.time_ms
    assert run() == run()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), mode=st.sampled_from(MODES), program=steps, features=RULES)
def test_cached_counts_match_a_full_recount(seed, mode, program, features):
    game = Game(seed=seed, mode=mode, features=features)
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
