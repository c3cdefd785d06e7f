"""Prefix caching in paged mode (vLLM's automatic prefix caching): shared prefix blocks are
computed once and mapped by every request that starts with them, stay cached when freed, are
evicted least recently used first, and come back to a request resuming after a preemption."""
from __future__ import annotations

from engine import Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.features import RULES3, RULES4, Features
from engine.board import block_at, cell_at
from engine.kvpool import BlockPool
from engine.prefix_cache import OWN, PREFIX, PREFIX_OWNER
from engine.request import Request
from engine.workload import Arrival, Scripted, prefix_blocks, prefix_id
from tests.enginekit import drop, of, run_until

CACHED = Features(prefixes=True, prefix_cache=True)  # the mechanism alone (prefill at admission)
AGENT = prefix_id(Kind.S, 0)  # two blocks: an agent's tool list
CODER = prefix_id(Kind.L, 1)  # two blocks: another repository's context
B = R.TOKENS_PER_BLOCK


def game(features: Features = CACHED, mode: str = "paged") -> Game:
    g = Game(seed=1, mode=mode, endless=True, features=features)
    g.set_workload(Scripted(()))
    return g


def falling(g: Game, prefix: int, prompt: int, output: int) -> Request:
    req = g.falling
    assert req is not None
    req.prefix, req.prompt, req.output = prefix, prompt, output
    return req


def next_up(g: Game, rid: int, prefix: int, prompt: int, output: int, kind: Kind = Kind.O) -> Request:
    """Let a request with this prefix arrive now and fall (the queue is empty)."""
    g.set_workload(Scripted([Arrival(rid, kind, g.time_ms, prompt, output, prefix)]))
    g.update(0.001)
    req = g.falling
    assert req is not None and req.id == rid
    return req


def test_the_workloads_shared_prefixes_are_whole_blocks_inside_every_prompt() -> None:
    from engine.workload import Workload

    seen = set()
    for a in Workload(5, prefixes=True).arrivals_until(3_600_000.0)[:400]:
        k = prefix_blocks(a.prefix)
        assert k == R.PREFIX_BLOCKS[a.kind]
        assert a.prompt > k * B and a.prompt + a.output <= R.MAX_SEQ_TOKENS  # the prefix is full
        seen.add(a.prefix)
    assert len(seen - {0}) == sum(R.PREFIX_VARIANTS)  # every workload's every prefix comes up
    plain = Workload(5).arrivals_until(600_000.0)
    assert all(a.prefix == 0 for a in plain)  # rules 3: no prefixes, the same draws as before


def test_a_second_request_maps_the_cached_prefix_and_skips_its_prefill() -> None:
    g = game()
    first = falling(g, AGENT, 2 * B + 5, 20)
    drop(g, Kind.O, x=0)
    assert first.mapped == 2 and g.serving.held == 3
    prefix_cells = first.blocks[:2]
    assert all(g.board.grid[y][x] == PREFIX_OWNER + AGENT for x, y in prefix_cells)
    second = next_up(g, 50, AGENT, 2 * B + 9, 20)
    events = g.update(0, [Input.HARD_DROP])
    admitted = of(events, ev.Admitted)[-1]
    assert second.blocks[:2] == prefix_cells and second.mapped == 2
    assert admitted.cached == 2 and admitted.stall_ms == R.PREFILL_MS_PER_TOKEN * 9
    s = g.serving
    assert [s.cache.refs(c) for c in prefix_cells] == [2, 2] and s.pool.shared == 2
    assert s.held == 4  # two shared blocks, counted once, and one of each request's own
    assert s.cache.found == 2 and s.cache.lookups == 4 and s.cache.skipped == 2 * B
    assert s.tokens_stored() == (2 * B + 5) + (2 * B + 9) - 2 * B  # shared tokens stored once


def test_freed_prefix_blocks_stay_cached_free_and_are_found_again() -> None:
    g = game()
    first = falling(g, AGENT, 2 * B + 1, 3)
    drop(g, Kind.O, x=0)
    cells = first.blocks[:2]
    run_until(g, lambda: first.state == "finished")
    s = g.serving
    assert s.held == 0 and set(g.board.cached_cells()) == set(cells)  # free memory, still cached
    assert g.telemetry().free_cells == R.VISIBLE_CELLS
    again = next_up(g, 60, AGENT, 2 * B + 4, 10)
    g.update(0, [Input.HARD_DROP])
    assert again.blocks[:2] == cells and not g.board.cached_cells() and s.held == 3


def test_a_request_landing_on_cached_blocks_evicts_them() -> None:
    g = game()
    first = falling(g, AGENT, 2 * B + 1, 3)
    drop(g, Kind.I, x=0)  # the bottom row, columns 0-3: its prefix in columns 0 and 1
    cells = first.blocks[:2]
    run_until(g, lambda: first.state == "finished")
    assert set(g.board.cached_cells()) == set(cells)
    next_up(g, 70, 0, 10, 10)
    other = drop(g, Kind.O, x=0)  # it comes to rest on them: they are its blocks now
    s = g.serving
    assert other.state == "running" and set(cells) <= set(other.blocks) | set(other.preferred)
    assert not g.board.cached_cells() and not s.pool.known_free() and not s.pool.content


def test_the_least_recently_used_cached_block_is_evicted_first() -> None:
    pool = BlockPool(8, B)
    for n in range(3):
        pool.take(n)
        pool.know(n, (PREFIX, 9, n))
    for block in (1, 0, 2):
        assert pool.unref(block)  # freed in this order: block 1 is the least recently used
    assert pool.known_free() == [1, 0, 2] and pool.oldest_known() == 1
    assert pool.oldest_known(skip=[1]) == 0
    assert pool.ref(1)  # found again: held, out of the eviction order
    assert pool.known_free() == [0, 2]
    assert pool.found([(PREFIX, 9, 0), (PREFIX, 9, 1), (PREFIX, 9, 2)]) == [0, 1, 2]
    pool.evict(0)
    assert pool.found([(PREFIX, 9, 0), (PREFIX, 9, 1)]) == []  # a chain: nothing after a miss
    pool.take(2)  # handed out for other tokens: its content goes
    assert (PREFIX, 9, 2) not in pool.block_of and pool.used == 2


def test_the_game_and_the_lab_share_one_block_pool() -> None:
    import engine.lab.memory as lab_memory
    from engine import kvpool

    assert lab_memory.BlockPool is kvpool.BlockPool
    g = game()
    assert isinstance(g.serving.pool, kvpool.BlockPool) and g.serving.pool.num_blocks == R.VISIBLE_CELLS
    assert cell_at(block_at((3, 7))) == (3, 7)


def test_a_recomputed_preemption_keeps_its_full_blocks_cached_tail_first_and_reuses_them() -> None:
    g = game()
    req = falling(g, AGENT, B + 1 + 2 * B, 40)  # its agent prefix (2 blocks) and a block of its own
    req.prefix = prefix_id(Kind.T, 0)  # a one-block prefix: two full blocks of its own follow it
    req.prompt = B + 1
    drop(g, Kind.I, x=0)
    run_until(g, lambda: g.serving.tokens_of(req) >= 3 * B + 2)
    s = g.serving
    head, own1, own2, partial = req.blocks
    s.preempt(req)
    assert s.cache.content_of(own1) == (OWN, req.id, 1) and s.cache.content_of(own2) == (OWN, req.id, 2)
    assert s.cache.content_of(partial) is None  # a part-filled block is never cached
    # freed tail first: the tail is evicted first, the shared head last
    assert [cell_at(b) for b in s.pool.known_free()] == [own2, own1, head]
    run_until(g, lambda: req.state == "running", dt=16.0)
    assert req.blocks[:3] == [head, own1, own2]
    assert s.cache.reused == 3 * B and req.mapped == 3


def test_a_swapped_request_comes_back_with_blocks_of_its_own() -> None:
    g = game()
    g.update(0, [Input.PREEMPT_TOGGLE])
    assert g.preempt_mode == "swap"
    req = falling(g, AGENT, 2 * B + 3, 40)
    drop(g, Kind.I, x=0)
    run_until(g, lambda: g.serving.tokens_of(req) >= 3 * B + 2)
    g.serving.preempt(req)
    assert req.swapped == 4 and req.private and req.mapped == 0
    run_until(g, lambda: req.state == "running", dt=16.0)
    assert req.mapped == 0 and all(g.board.grid[y][x] == req.id for x, y in req.blocks)


def test_contiguous_shares_nothing_and_counts_the_copies() -> None:
    g = game(mode="contiguous")
    first = falling(g, AGENT, 2 * B + 1, 20)
    drop(g, Kind.O, x=0)
    second = next_up(g, 80, AGENT, 2 * B + 1, 20)
    g.update(0, [Input.HARD_DROP])
    s = g.serving
    assert not set(first.blocks) & set(second.blocks) and first.mapped == second.mapped == 0
    assert s.prefix_copies == 2 and s.cache.found == 0 and s.cache.lookups == 0  # asks for none
    assert not g.board.cached_cells() and not s.pool.content


def test_without_the_cache_the_same_workload_shares_nothing() -> None:
    g = game(Features(prefixes=True, prefix_cache=False))
    falling(g, AGENT, 2 * B + 1, 20)
    drop(g, Kind.O, x=0)
    second = next_up(g, 90, AGENT, 2 * B + 1, 20)
    events = g.update(0, [Input.HARD_DROP])
    assert of(events, ev.Admitted)[-1].cached == 0 and second.mapped == 0
    assert g.serving.held == 6 and g.serving.cache is None


def test_rules_3_has_no_shared_prefixes_and_no_cache() -> None:
    """The switches off: no request starts with a shared prefix and nothing is cached (that
    rules 3 plays byte for byte as before is the golden runs' test, tests/test_sharecode.py)."""
    g = Game(seed=7, mode="paged", features=RULES3)
    assert g.serving.cache is None
    run_until(g, lambda: g.served > 5, dt=200.0)
    assert all(r.prefix == 0 for r in g.serving.requests.values())


def test_the_bot_finds_most_shared_prefixes_cached_and_serves_more_for_it() -> None:
    """Two seeds, twenty game minutes: what the cache is worth to the same bot on the same
    workload, once memory gets tight."""
    from engine.autoplay import play_one, summarise

    def play(features: Features, mode: str = "paged"):
        return summarise([play_one(mode, seed, "bot", 0.8, 20.0, features=features) for seed in (0, 1)])

    cached, plain = play(RULES4), play(Features(prefixes=True, prefix_cache=False, chunked_prefill=True))
    assert cached.prefix_hit_rate_mean >= 0.5 and cached.shared_blocks_peak_mean > 0
    assert cached.prefill_tokens_skipped_mean > 0 and plain.prefix_hit_rate_mean == 0
    assert cached.tokens_mean >= 1.15 * plain.tokens_mean
    assert play(RULES4, "contiguous").prefix_hit_rate_mean == 0  # contiguous shares nothing


def test_a_context_found_whole_still_computes_its_last_block() -> None:
    """vLLM caps a hit below the whole context (its last token is computed to sample the next),
    so a request always needs a block of its own: one preempted right as its blocks filled can
    always be paged back in (a request needing no block once waited for frames that never came,
    and its run ended as an OOM with memory free)."""
    from engine.board import Board
    from tests.enginekit import run_until

    for features in (CACHED, RULES4):
        g = Game(seed=1, mode="paged", endless=True, features=features)
        g.set_workload(Scripted(()))
        rows = ["#" * 10] * R.HEIGHT
        rows[-1] = "...#######"  # three free blocks, the entry above them held
        g.set_board(Board.from_strings(rows, owner=100))
        req = g.blocked or g.falling or g.serving.waiting[0]
        req.prompt, req.output = 31, 20  # it fills two blocks, then the third, then preempts itself
        run_until(g, lambda: req.preemptions > 0 or g.over, dt=250.0)
        assert req.preemptions and g.serving.need(req, g.allocator.allocator) >= 1
        run_until(g, lambda: req.state == "running" or g.over, dt=250.0)
        assert req.state == "running", g.result


def test_a_finished_request_leaves_nothing_of_its_own_cached() -> None:
    g = game()
    g.update(0, [Input.PREEMPT_TOGGLE])  # swap: it comes back with copies of its own
    req = falling(g, CODER, 2 * B + 3, 30)
    drop(g, Kind.I, x=0)
    run_until(g, lambda: g.serving.tokens_of(req) >= 3 * B + 2)
    g.update(0, [Input.PREEMPT_TOGGLE])
    g.serving.preempt(req)  # recompute: its third block stays cached as its own
    run_until(g, lambda: req.state == "running", dt=16.0)
    g.update(0, [Input.PREEMPT_TOGGLE])
    g.serving.preempt(req)  # now swapped: what it mapped of its own goes free, still known
    run_until(g, lambda: req.state == "finished", dt=100.0)
    assert not [c for c in g.serving.pool.content.values() if c[0] == OWN and c[1] == req.id]


def test_the_game_evicts_the_cached_block_freed_longest_ago() -> None:
    """Memory full: a growing request takes the least recently freed cached block (its
    contents evicted), not the newest, and no request is preempted for it."""
    from engine.board import Board

    g = game()
    g.set_workload(Scripted(()))
    rows = ["#" * 10] * (R.VISIBLE - 1) + ["#" * 7 + "..."]
    g.set_board(Board.from_strings(rows, owner=100))
    pool = g.serving.pool
    cells = [(7, R.HEIGHT - 1), (8, R.HEIGHT - 1), (9, R.HEIGHT - 1)]
    for i, cell in enumerate(cells):  # three cached-free blocks, freed in this order
        pool.take(block_at(cell))
        pool.know(block_at(cell), (PREFIX, 99, i))
    for cell in (cells[1], cells[0], cells[2]):
        pool.unref(block_at(cell))
        g.board.cache((cell,))
    req = g.falling or g.blocked
    req.prompt, req.output = 5, 30
    g.update(0, [Input.SPLIT])  # paged into the oldest cached block
    assert req.blocks == [cells[1]]
    run_until(g, lambda: len(req.blocks) == 2, dt=100.0)
    assert req.blocks[1] == cells[0] and not g.serving.preempted_recompute
    assert pool.known_free() == [block_at(cells[2])]
