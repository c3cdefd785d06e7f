"""The chapters (engine.chapters): one mechanism more each, a goal each, played by every policy.

The contract lines are checked over six seeds, played once and shared by the tests below.
"""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from engine import Input
from engine import events as ev
from engine import rules as R
from engine.autoplay import main as autoplay_main
from engine.chapter_play import ChapterSummary, play_chapter, play_chapters
from engine.chapters import ADDS, CHAPTERS, chapter
from engine.features import Features
from engine.game import OVERLOAD_CAUSES
from engine.memory import OOM_CAUSES

SEEDS = 6
POLICIES = {"idle": ("idle", 0.8), "centre": ("centre", 0.8), "bot 0.8": ("bot", 0.8)}


@pytest.fixture(scope="module")
def arc() -> dict[str, dict[int, ChapterSummary]]:
    numbers = [c.number for c in CHAPTERS]
    return {name: {r.chapter: r for r in play_chapters(numbers, SEEDS, policy, skill, 30.0)}
            for name, (policy, skill) in POLICIES.items()}


def _on(features: Features) -> set[str]:
    return {f.name for f in fields(features) if getattr(features, f.name)}


def test_the_chapters_are_numbered_in_order_and_each_adds_its_mechanism():
    assert [c.number for c in CHAPTERS] == list(range(1, len(CHAPTERS) + 1))
    assert tuple(c.adds for c in CHAPTERS) == ADDS
    assert [c.mode for c in CHAPTERS[:2]] == ["contiguous", "paged"]
    # No chapter takes away a mechanism the one before it had.
    for before, after in zip(CHAPTERS, CHAPTERS[1:]):
        assert _on(before.features) <= _on(after.features), (before.key, after.key)
    assert "prefix_cache" in _on(chapter(3).features) - _on(chapter(2).features)
    assert "chunked_prefill" in _on(chapter(4).features) - _on(chapter(3).features)
    assert CHAPTERS[-1].goal is None  # the whole engine is endless
    with pytest.raises(ValueError):
        chapter(len(CHAPTERS) + 1)


def test_a_chapter_waits_for_the_players_first_move():
    for ch in CHAPTERS:
        game = ch.new_game(seed=3)
        first = game.update(60_000.0)  # what its start brought: the first request, falling
        assert {type(e) for e in first} <= {ev.Arrived, ev.Spawned}
        for _ in range(10):
            assert game.update(60_000.0) == []
        assert game.time_ms == 0.0 and not game.over and game.ready
        assert len(game.serving.waiting) == 0 and game.active is not None  # only the first
        game.update(0.0, (Input.LEFT,))
        game.update(5_000.0)
        assert game.time_ms == 5_000.0 and not game.ready


def test_chapter_2_plays_the_arrivals_of_chapter_1():
    one, two = chapter(1), chapter(2)
    assert two.arrivals_of == 1 and two.load == one.load
    assert two.features.prefixes == one.features.prefixes

    def arrivals(ch, seed):  # (id, kind, time, prompt, output) of each request, as the bot plays
        game = ch.new_game(seed)
        game.update(0.0, (Input.HARD_DROP,))
        seen = []
        while not game.over and game.time_ms < 60_000:
            inputs = (Input.SPLIT,) if ch.mode == "paged" else (Input.HARD_DROP,)
            for e in game.update(250.0, inputs):
                if isinstance(e, ev.Arrived):
                    r = game.serving.requests[e.request_id]
                    seen.append((r.id, r.kind, r.arrived_ms, r.prompt, r.output))
        return seen

    for seed in (0, 5):
        a, b = arrivals(one, seed), arrivals(two, seed)
        n = min(len(a), len(b))
        assert n >= 5 and a[:n] == b[:n]


def test_no_chapter_is_completed_by_the_idle_policy(arc):
    for n, row in arc["idle"].items():
        assert row.completed_count == 0 and row.minutes_mean == 0.0, n


def test_the_bot_at_08_meets_every_goal_in_five_of_six_seeds(arc):
    for n, row in arc["bot 0.8"].items():
        if row.goal is not None:
            assert row.completed_count >= SEEDS - 1, (n, row.completed_count)


def test_chapters_1_and_2_take_the_bot_under_four_game_minutes(arc):
    bot = arc["bot 0.8"]
    assert bot[1].minutes_mean + bot[2].minutes_mean < 4.0


def test_paging_forgives_what_contiguous_does_not(arc):
    centre = arc["centre"]
    assert centre[1].completed_count == 0
    assert centre[2].completed_count >= SEEDS / 2


def test_chapter_1_runs_all_end_and_chapter_2_runs_twice_the_requests_at_that_moment(arc):
    one, two = arc["bot 0.8"][1], arc["bot 0.8"][2]
    # Contiguous memory ends every run: an OOM, or requests queued behind its reservations.
    assert sum(one.end_causes.values()) == SEEDS
    assert set(one.end_causes) <= {*OOM_CAUSES, *OVERLOAD_CAUSES} and set(one.end_causes) & set(OOM_CAUSES)
    assert two.running_at_contiguous_end_mean is not None and two.held_at_contiguous_end_mean is not None
    # The paper's headline, on the same arrivals at the same moment: at least twice as many
    # requests running, each in a good deal less memory.
    assert two.running_at_contiguous_end_mean >= 2.0 * one.running_at_end_mean
    per_paged = two.held_at_contiguous_end_mean / two.running_at_contiguous_end_mean
    assert per_paged <= 0.65 * one.held_at_end_mean / one.running_at_end_mean


def test_the_goals_of_chapters_1_and_2_are_bars_their_runs_play_past():
    # The pair runs until memory (or the queue behind it) gives out: how long each allocator
    # lasts on the same arrivals is half of what their outro sets side by side.
    for n in (1, 2):
        ch = chapter(n)
        stats = play_chapter(ch, 0, "bot", 0.8, 30.0)
        assert not stats.won and stats.ended and stats.served > ch.goal, n
        assert ch.met(stats.served, stats.won) and not ch.met(ch.goal - 1, False), n
    three = chapter(3)  # the others end at their goal
    assert play_chapter(three, 0, "bot", 0.8, 30.0).won and not three.met(10**6, False)


def test_autoplay_prints_one_line_a_chapter_and_json_with_the_contract_keys(capsys):
    assert autoplay_main(["--chapter", "all", "--seeds", "1", "--max-minutes", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(CHAPTERS)
    assert all(line.startswith(f"chapter {c.number} {c.name} ({c.adds}") for line, c in zip(lines, CHAPTERS))
    assert autoplay_main(["--chapter", "2", "--seeds", "2", "--max-minutes", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["chapters"]
    assert {"chapter", "name", "adds", "games", "completed_count", "minutes_mean", "minutes_min",
            "tokens_per_minute_mean", "preemptions_mean", "running_at_end_mean",
            "running_at_contiguous_end_mean"} <= set(row)
    assert row["chapter"] == 2 and row["adds"] == "paged" and row["games"] == 2


@pytest.mark.parametrize("args", [["--chapter", "0"], ["--chapter", "x"], ["--chapter", "2", "--mode", "paged"],
                                  ["--chapter", "1", "--budget", "64"]])
def test_autoplay_chapter_arguments_are_checked(args, capsys):
    with pytest.raises(SystemExit) as exc:
        autoplay_main(args)
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_free_play_load_is_the_rules_arrival_rate():
    assert R.LOAD.rate(0) == R.RATE_START == R.arrival_rate(0)
    capped = R.Load(start=0.5, per_minute=1.0, cap=0.8)
    assert capped.trend(60_000) == 0.8 and capped.bound(0, 60_000) == pytest.approx(0.8 * (1 + R.BURST))


def test_a_chapter_run_keeps_its_chapter_in_its_share_code_and_replay_file(tmp_path):
    from engine import replay_json, sharecode
    from engine.replay import Recorder, ReplayError

    rec = Recorder(seed=5, chapter=2)
    assert rec.game.ready and rec.game.mode == "paged"
    for i in range(200):
        rec.update(250.0, (Input.SPLIT,) if i % 2 else ())
    replay = rec.finish()
    code = sharecode.encode(replay, rec.tape.claim())
    back = sharecode.decode(code)
    assert back.chapter == 2 and back.verify()
    assert back.simulate().game.serving.served == rec.game.serving.served > 0
    path = tmp_path / "run.json"
    replay_json.save(replay, str(path))
    assert replay_json.load(str(path)).chapter == 2 and replay_json.load(str(path)).verify()
    # The same inputs as a free-play run (no chapter) play out differently.
    replay.chapter = None
    assert not replay.verify()
    replay.chapter = len(CHAPTERS) + 1
    with pytest.raises(ReplayError, match="chapter"):
        sharecode.encode(replay, rec.tape.claim())
    doc = json.loads(path.read_text())
    doc["chapter"] = 0
    path.write_text(json.dumps(doc))
    with pytest.raises(ReplayError, match="'chapter'"):
        replay_json.load(str(path))


def test_speculation_pays_in_its_own_chapter_and_preempts_more_where_memory_gets_tight(arc):
    guess = next(c.number for c in CHAPTERS if c.adds == "speculative")
    chosen = arc["bot 0.8"][guess]
    assert chosen.spec_k is None  # the bot chose its drafts
    (none,) = play_chapters([guess], SEEDS, "bot", 0.8, 30.0, spec_k=0)
    assert none.spec_k == 0
    assert chosen.tokens_per_minute_mean >= 1.2 * none.tokens_per_minute_mean, (chosen, none)
    whole = CHAPTERS[-1].number
    (four,) = play_chapters([whole], SEEDS, "bot", 0.8, 30.0, spec_k=4)
    (zero,) = play_chapters([whole], SEEDS, "bot", 0.8, 30.0, spec_k=0)
    assert four.preemptions_mean > zero.preemptions_mean, (four.preemptions_mean, zero.preemptions_mean)


def test_spec_k_is_for_the_chapters(capsys):
    with pytest.raises(SystemExit) as exc:
        autoplay_main(["--spec-k", "2"])
    assert exc.value.code == 2 and "--chapter" in capsys.readouterr().err
    assert autoplay_main(["--chapter", "5", "--spec-k", "3", "--seeds", "1", "--max-minutes", "1", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["chapters"]
    assert row["spec_k"] == 3 and row["adds"] == "speculative"
