"""Chunked prefill (vLLM V1's default): a step's token budget goes to decode tokens first and to
prefill chunks after; a prompt takes as many steps as its chunks need, its first token comes
with its last chunk, and a step takes longer the more tokens it runs."""
from __future__ import annotations

from engine import Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.features import Features
from engine.prefix_cache import PREFIX_OWNER
from engine.request import Request
from engine.workload import Arrival, Scripted, prefix_id
from tests.enginekit import drop, of, run_until

CHUNKED = Features(chunked_prefill=True)
B = R.TOKENS_PER_BLOCK


def game(features: Features = CHUNKED, mode: str = "paged", budget: int = R.DEFAULT_BUDGET) -> Game:
    g = Game(seed=1, mode=mode, endless=True, features=features)
    g.set_workload(Scripted(()))
    assert g.serving.prefill is not None
    g.serving.prefill.budget = budget
    return g


def land(g: Game, rid: int, prompt: int, output: int, x: int, kind: Kind = Kind.O,
         prefix: int = 0) -> Request:
    """A request arrives now, falls and is hard-dropped at column x."""
    if g.falling is None:
        g.set_workload(Scripted([Arrival(rid, kind, g.time_ms, prompt, output, prefix)]))
        g.update(0.001)
    req = g.falling
    assert req is not None
    req.prompt, req.output, req.prefix = prompt, output, prefix
    return drop(g, kind, x=x)


def next_step(g: Game) -> None:
    """Let the step under way end (and the next begin)."""
    step = g.serving.step
    run_until(g, lambda: g.serving.step > step, dt=10.0)


def test_a_prompt_no_longer_stalls_the_running_requests() -> None:
    g = game()
    first = land(g, 1, 40, 30, x=0)
    run_until(g, lambda: not first.prefill_left, dt=10.0)
    g.set_workload(Scripted([Arrival(2, Kind.O, g.time_ms, 60, 10)]))
    g.update(0.001)
    g.falling.prompt = 60
    events = g.update(0, [Input.HARD_DROP])
    assert of(events, ev.Admitted)[0].stall_ms == 0 and g.serving.busy_until_ms == 0.0
    before = g.serving.tokens_of(first)
    next_step(g)
    assert g.serving.tokens_of(first) == before + 1  # it decoded through the other's prefill


def test_a_long_prompt_takes_as_many_steps_as_its_chunks_and_its_first_token_comes_last() -> None:
    g = game(budget=20)
    req = land(g, 1, 55, 10, x=0)
    p = g.serving.prefill
    seen = []
    while req.prefill_left:
        next_step(g)
        seen.append(g.serving.tokens_of(req))
    # The step under way was planned before it came: then 20 tokens a step, the rest with its
    # first token.
    assert seen == [0, 20, 40, 56]
    assert g.serving.generated_of(req) == 1  # the step of its last chunk gave its first token
    assert p.ttft_n == 1 and p.ttft_max >= 3 * R.STEP_BASE_MS


def test_a_step_takes_longer_the_more_tokens_it_runs() -> None:
    g = game(budget=96)
    p = g.serving.prefill
    next_step(g)
    assert p.step_ms == R.STEP_BASE_MS  # nothing to run
    land(g, 1, 60, 40, x=0)
    next_step(g)
    assert p.planned == 60 and p.step_ms == R.STEP_BASE_MS + R.STEP_MS_PER_TOKEN * 60
    next_step(g)
    assert p.decoding == 1 and p.planned == 0 and p.step_ms == R.STEP_BASE_MS + R.STEP_MS_PER_TOKEN


def test_decode_tokens_come_first_and_prefill_gets_what_is_left() -> None:
    g = game(budget=3)
    for rid, x in ((1, 0), (2, 2), (3, 4)):
        req = land(g, rid, 3, 60, x=x)
        run_until(g, lambda: not req.prefill_left, dt=10.0)
    late = land(g, 4, 30, 10, x=6)
    for _ in range(3):
        next_step(g)
    p = g.serving.prefill
    assert p.decoding == 3 and p.planned == 0 and late.prefill_left == 30  # it waits
    g.serving.prefill.budget = 20
    next_step(g)
    next_step(g)
    assert late.prefill_left == 13


def test_paged_blocks_come_with_each_chunk_from_its_own_placement_first() -> None:
    g = game(budget=20)
    req = land(g, 1, 50, 10, x=0)  # an O in columns 0-1 of the bottom rows
    placement = set(req.preferred)
    assert req.blocks == [] and len(placement) == 4 and g.serving.held == 0
    next_step(g)  # the first chunk (20 tokens) is scheduled: two blocks for it
    assert len(req.blocks) == 2 and set(req.blocks) <= placement and g.serving.held == 2
    run_until(g, lambda: not req.prefill_left, dt=10.0)
    assert len(req.blocks) == 4 and set(req.blocks) == placement


def test_contiguous_holds_its_whole_range_reserved_and_chunks_fill_it() -> None:
    g = game(mode="contiguous", budget=20)
    req = land(g, 1, 50, 10, x=0)
    assert len(req.blocks) == 4 and req.reserved == 4 and g.serving.reserved == 4
    next_step(g)
    next_step(g)
    assert req.reserved == 2  # 20 tokens in: two blocks hold tokens now
    run_until(g, lambda: not req.prefill_left, dt=10.0)
    assert req.reserved == 0


def test_a_shared_prefix_is_cached_only_once_its_blocks_are_full() -> None:
    g = game(Features(prefixes=True, prefix_cache=True, chunked_prefill=True), budget=20)
    agent = prefix_id(Kind.S, 0)
    req = land(g, 1, 2 * B + 10, 10, x=0, prefix=agent)
    next_step(g)
    next_step(g)  # 20 tokens in: the first block is full and cached, the second not yet
    assert req.mapped == 1 and g.board.grid[req.blocks[0][1]][req.blocks[0][0]] == PREFIX_OWNER + agent
    run_until(g, lambda: not req.prefill_left, dt=10.0)
    assert req.mapped == 2


def test_a_bigger_budget_gives_first_tokens_sooner_and_longer_steps() -> None:
    from engine.autoplay import play_one
    from engine.features import RULES4

    def play(budget: int) -> tuple[float, float]:
        games = [play_one("paged", seed, "bot", 0.8, 20.0, features=RULES4, budget=budget)
                 for seed in (0, 1)]
        return (sum(g.ttft_ms for g in games) / len(games), sum(g.step_ms for g in games) / len(games))

    small, default, big = play(R.DEFAULT_BUDGET // 4), play(R.DEFAULT_BUDGET), play(R.DEFAULT_BUDGET * 4)
    assert small[0] > default[0] > big[0]  # first tokens wait longer on a small budget...
    assert big[1] > default[1] > small[1]  # ...and steps run longer on a big one, once memory
    # and the queue are busy (twenty game minutes)


def test_autoplay_sets_the_budget_and_turns_the_prefix_cache_off(monkeypatch, capsys) -> None:
    import json

    import engine.autoplay as autoplay
    from engine.features import RULES4

    argv = ["--mode", "paged", "--seeds", "1", "--max-minutes", "3", "--json"]
    assert autoplay.main(argv) == 0  # the rules this build plays
    plain = json.loads(capsys.readouterr().out)["paged"]
    monkeypatch.setattr(autoplay, "DEFAULT_FEATURES", RULES4)
    assert autoplay.main([*argv, "--budget", "32", "--no-prefix-cache"]) == 0
    row = json.loads(capsys.readouterr().out)["paged"]
    assert row["budget"] == 32 and row["prefix_hit_rate_mean"] == 0 and row["ttft_ms_mean"] > 0
    assert autoplay.main(argv) == 0
    cached = json.loads(capsys.readouterr().out)["paged"]
    assert cached["budget"] == R.DEFAULT_BUDGET and cached["prefix_hit_rate_mean"] > 0.5
    from engine.features import DEFAULT
    assert (plain["budget"] is None) == (not DEFAULT.chunked_prefill)  # rules 3: no budget


def test_a_new_board_drops_the_prompts_being_prefilled() -> None:
    from engine.board import Board
    from tests.test_engine_properties import check

    g = game(budget=16)
    land(g, 1, 60, 4, x=0)
    g.set_board(Board())  # a puzzle resets the board while a prompt is half in
    assert not g.serving.prefill.queue and g.serving.prefill.tokens == 0
    for _ in range(3):
        g.update(1500.0)
        check(g, set())


def test_the_first_token_deadline_does_not_depend_on_how_time_is_sliced(monkeypatch) -> None:
    monkeypatch.setattr(R, "DEADLINE_MS", 2_500.0)

    def run(slices: list[float]) -> tuple[bool, float]:
        g = game(budget=16)
        g.serving.prefill.budget = 1  # decode first: the prompt never gets a token of the budget
        land(g, 1, 60, 4, x=0)
        for dt in slices:
            g.update(dt)
            if g.over:
                break
        assert g.result is not None
        return g.over, round(g.result.waited_ms)

    assert run([4000.0]) == run([1000 / 60] * 240) == run([2600.0, 1400.0])


def test_a_request_preempted_before_its_first_token_still_counts_its_time_to_it() -> None:
    g = game(budget=20)
    req = land(g, 1, 55, 10, x=0)
    next_step(g)
    next_step(g)
    assert req.prefill_left and not req.first_token
    g.serving.preempt(req)
    run_until(g, lambda: req.state == "running" and not req.prefill_left, dt=50.0)
    assert req.first_token and g.serving.prefill.ttft_n == 1
