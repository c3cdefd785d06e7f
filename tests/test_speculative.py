"""Speculative decoding (engine.speculative): drafts verified a step, lookahead slots, the budget."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Input
from engine import rules as R
from engine import speculative as spec
from engine.chapters import chapter
from engine.features import RULES4, SPECULATIVE
from engine.game import Game
from engine.request import Request


def _play(features, seed: int, minutes: float, keys: list[tuple[int, Input]] = (), check=None) -> Game:
    """Split every request as it comes; press `keys` (frame, input) on the way; `check` after each frame."""
    game = Game(seed=seed, mode="paged", endless=True, features=features)
    presses = dict(keys)
    frame = 0
    while not game.over and game.time_ms < minutes * 60_000:
        inputs = [Input.SPLIT] if game.active is not None or game.blocked is not None else []
        if frame in presses:
            inputs.append(presses[frame])
        game.update(250.0, inputs)
        if check is not None:
            check(game)
        frame += 1
    return game


def test_with_no_drafts_speculation_plays_exactly_as_without_it():
    plain, drafting = _play(RULES4, 4, 6), _play(SPECULATIVE, 4, 6)
    assert drafting.serving.spec_k == 0 and plain.serving.spec_k is None
    assert (plain.time_ms, plain.serving.served, plain.serving.tokens_served, plain.serving.generated) == (
        drafting.time_ms, drafting.serving.served, drafting.serving.tokens_served, drafting.serving.generated)


def test_a_step_gains_one_token_and_up_to_k_drafts_never_past_the_output():
    for k in R.SPEC_KS:
        req = Request(7, 0, 10, 40, 0.0, 0.0)
        gains = [spec.gained(req, n, k) for n in range(60)]
        steps = [b - a for a, b in zip(gains, gains[1:])]
        assert gains[0] == 0 and gains[-1] == 40 and max(gains) == 40
        assert all(1 <= d <= k + 1 for d in steps if d), (k, steps)
        if k == 0:
            assert gains[:41] == list(range(41))
        assert spec.first_step(req, 40, k) == gains.index(40) and spec.first_step(req, 41, k) is None
    # The same request draws the same gains; a code workload accepts more than open chat.
    again = Request(7, 0, 10, 40, 0.0, 0.0)
    assert [spec.gained(again, n, 4) for n in range(60)] == [spec.gained(Request(7, 0, 10, 40, 0.0, 0.0), n, 4)
                                                             for n in range(60)]

    def mean_gain(kind) -> float:
        total = 0
        for i in range(200):
            r = Request(i, kind, 10, 50, 0.0, 0.0)
            total += spec.gained(r, 1, 4)
        return total / 200

    code, chat = R.SPEC_ACCEPT.index(max(R.SPEC_ACCEPT)), R.SPEC_ACCEPT.index(min(R.SPEC_ACCEPT))
    assert mean_gain(code) > mean_gain(chat) + 0.5


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), presses=st.lists(st.tuples(st.integers(0, 1400), st.booleans()), max_size=8))
def test_drafts_have_their_slots_and_no_request_holds_more_tokens_than_blocks(seed, presses):
    keys = [(frame, Input.SPEC_UP if up else Input.SPEC_DOWN) for frame, up in presses]

    def check(game: Game) -> None:
        s = game.serving
        k = s.spec_k
        assert k in R.SPEC_KS
        for req in s.running.values():
            if req.static or req.prefill_left:
                continue
            tokens, room = s.tokens_of(req), len(req.blocks) * R.TOKENS_PER_BLOCK
            assert tokens <= room, (req.id, tokens, room)
            if len(req.blocks) < R.BLOCKS_PER_REQUEST and not req.reserved:  # lookahead slots held
                ahead = min(k, req.output - s.generated_of(req))  # no draft past its output
                assert tokens + ahead <= room, (req.id, tokens, k, room)

    game = _play(SPECULATIVE, seed, 6, keys, check)
    assert game.serving.finished_holding_max == 0


def test_drafts_take_the_steps_budget_and_lengthen_it_less_than_decode_tokens():
    game = Game(seed=2, mode="paged", endless=True, features=SPECULATIVE)
    p = game.serving.prefill
    assert spec.step_ms(40, 0, 4) - spec.step_ms(40, 0, 0) == 40 * 4 * R.SPEC_MS_PER_DRAFT
    assert R.SPEC_MS_PER_DRAFT < R.STEP_MS_PER_TOKEN
    _play_until_running = _play(SPECULATIVE, 2, 3, [(0, Input.SPEC_UP)] * 1 + [(1, Input.SPEC_UP)])
    s = _play_until_running.serving
    p = s.prefill
    assert s.spec_k == 2 and p.drafts == p.decoding * 2
    assert p.decoding * 3 + p.planned <= max(p.budget, p.decoding * 3)


def test_speculation_serves_sooner_and_holds_more_blocks_ahead():
    def run(k: int) -> Game:
        return _play(SPECULATIVE, 9, 4, [(i, Input.SPEC_UP) for i in range(k)])

    none, four = run(0), run(4)
    assert four.serving.spec_k == 4
    assert four.serving.generated > none.serving.generated
    # Requests finish in fewer steps: more of them served by the same time.
    assert four.serving.served >= none.serving.served


def test_the_spec_keys_are_recorded_and_replayed():
    from engine import sharecode
    from engine.replay import Recorder

    rec = Recorder(seed=3, chapter=5)
    assert rec.game.serving.spec_k == chapter(5).spec_k == 2  # the chapter starts drafting
    rec.update(0.0, [Input.SPEC_UP, Input.SPEC_DOWN, Input.SPEC_DOWN])
    for i in range(240):
        rec.update(250.0, [Input.SPLIT] if i % 3 == 0 else [])
    assert rec.game.serving.spec_k == 1
    replay = rec.finish()
    assert sharecode.decode(sharecode.encode(replay, rec.tape.claim())).verify()


@pytest.mark.parametrize("k", [0, 4])
def test_a_run_with_speculation_is_the_same_on_every_machine(k):
    a = _play(SPECULATIVE, 11, 3, [(i, Input.SPEC_UP) for i in range(k)])
    b = _play(SPECULATIVE, 11, 3, [(i, Input.SPEC_UP) for i in range(k)])
    assert (a.time_ms, a.serving.generated, a.serving.served) == (b.time_ms, b.serving.generated, b.serving.served)
    random.seed(0)  # the global stream plays no part
    c = _play(SPECULATIVE, 11, 3, [(i, Input.SPEC_UP) for i in range(k)])
    assert c.serving.generated == a.serving.generated
