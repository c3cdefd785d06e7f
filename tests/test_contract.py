"""The checked contract of rules 3 and rules 4, as tests: 6 seeds, 30 game minutes, every policy,
both modes, and the paged bot at 0.8 without the prefix cache and at a quarter and four times
the step's token budget.

`python -m engine.autoplay --mode both --policy P [--skill K] --seeds 6 --max-minutes 30 --json`
is played once per session, in-process (the module fixture below), and every check reads it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from engine import Game, Input
from engine import rules as R
from engine.autoplay import GameStats, ModeSummary, main as autoplay_main, play_one, summarise
from engine.features import DEFAULT

ROOT = Path(__file__).resolve().parent.parent
SEEDS = 6
MINUTES = 30.0
POLICIES = {"idle": ("idle", 0.8), "centre": ("centre", 0.8), "bot 0.3": ("bot", 0.3),
            "bot 0.8": ("bot", 0.8), "bot 1.0": ("bot", 1.0)}
MODES = ("contiguous", "paged")
KEYS = {"games", "oom_count", "pieces_mean", "resident_mean", "frag_peak", "oom_causes",
        "ended_count", "end_causes", "minutes_mean", "tokens_mean", "tokens_per_minute_mean",
        "waste_share_mean", "finished_holding_max", "oom_free_minus_need_max", "preemptions_mean",
        "peak_utilisation_min", "prefix_hit_rate_mean", "prefill_tokens_skipped_mean",
        "reused_after_preemption_mean", "shared_blocks_peak_mean", "ttft_ms_mean", "step_ms_mean", "budget"}


class Played:
    def __init__(self) -> None:
        self.games: dict[tuple[str, str], list[GameStats]] = {}
        self.summary: dict[tuple[str, str], ModeSummary] = {}
        for name, (policy, skill) in POLICIES.items():
            for mode in MODES:
                games = [play_one(mode, seed, policy, skill, MINUTES) for seed in range(SEEDS)]
                self.games[name, mode] = games
                self.summary[name, mode] = summarise(games)
        # The same paged bot with one of rules 4's settings changed.
        no_cache = replace(DEFAULT, prefix_cache=False)
        for name, features, budget in (("no cache", no_cache, None), ("budget / 4", DEFAULT, R.DEFAULT_BUDGET // 4),
                                       ("budget x 4", DEFAULT, R.DEFAULT_BUDGET * 4)):
            games = [play_one("paged", seed, "bot", 0.8, MINUTES, features=features, budget=budget)
                     for seed in range(SEEDS)]
            self.games[name, "paged"] = games
            self.summary[name, "paged"] = summarise(games)

    def __call__(self, name: str, mode: str) -> ModeSummary:
        return self.summary[name, mode]


@pytest.fixture(scope="module")
def played() -> Played:
    return Played()


def test_the_json_output_has_every_key_per_mode():
    out = subprocess.run([sys.executable, "-m", "engine.autoplay", "--mode", "both", "--policy",
                          "idle", "--seeds", str(SEEDS), "--max-minutes", "30", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == set(MODES)
    for row in doc.values():
        assert KEYS <= set(row)
        assert row["games"] == SEEDS and 0 <= row["ended_count"] <= row["games"]
        assert sum(row["end_causes"].values()) == row["ended_count"]
        assert sum(row["oom_causes"].values()) == row["oom_count"]
        assert (row["oom_free_minus_need_max"] is None) == (row["oom_count"] == 0)


def test_the_in_process_summaries_are_what_the_command_prints(played):
    out = subprocess.run([sys.executable, "-m", "engine.autoplay", "--mode", "both", "--policy",
                          "centre", "--seeds", str(SEEDS), "--max-minutes", "30", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    doc = json.loads(out.stdout)
    for mode in MODES:
        assert doc[mode] == json.loads(json.dumps(asdict(played("centre", mode))))


@pytest.mark.parametrize("policy", ["idle", "centre"])
def test_every_paged_idle_and_centre_run_ends(played, policy):
    s = played(policy, "paged")
    assert s.ended_count == s.games == SEEDS, s.end_causes


def test_every_paged_oom_has_fewer_free_blocks_than_the_request_needed(played):
    for name in POLICIES:
        s = played(name, "paged")
        assert s.oom_free_minus_need_max is None or s.oom_free_minus_need_max < 0, (name, s)


def test_paged_fragmentation_peak_is_zero(played):
    for name in POLICIES:
        assert played(name, "paged").frag_peak == 0, name


@pytest.mark.parametrize("mode", MODES)
def test_tokens_rise_with_skill(played, mode):
    idle, low, good = (played(n, mode).tokens_mean for n in ("idle", "bot 0.3", "bot 0.8"))
    assert idle < low < good, (idle, low, good)


@pytest.mark.parametrize("mode", MODES)
def test_the_best_bot_serves_at_least_98_percent_of_the_good_one(played, mode):
    good, best = played("bot 0.8", mode).tokens_mean, played("bot 1.0", mode).tokens_mean
    assert best >= 0.98 * good, f"{mode}: bot 1.0 served {best:.0f} tokens, bot 0.8 {good:.0f}"


def test_in_paged_mode_the_careful_bot_serves_13_times_the_hasty_one_and_twice_the_centre_policy(played):
    best = played("bot 1.0", "paged").tokens_mean
    hasty, centre = played("bot 0.3", "paged").tokens_mean, played("centre", "paged").tokens_mean
    assert best >= 1.3 * hasty and best >= 2 * centre, (best, hasty, centre)


def test_memory_gets_tight_in_every_paged_run_of_the_bot_at_08(played):
    assert played("bot 0.8", "paged").peak_utilisation_min >= 0.90


def test_the_paged_bot_finds_shared_prompts_cached_and_serves_15_percent_fewer_tokens_without(played):
    with_cache, without = played("bot 0.8", "paged"), played("no cache", "paged")
    assert with_cache.prefix_hit_rate_mean >= 0.5 and without.prefix_hit_rate_mean == 0
    assert without.tokens_mean <= 0.85 * with_cache.tokens_mean, (without.tokens_mean, with_cache.tokens_mean)


def test_contiguous_mode_shares_nothing(played):
    for name in POLICIES:
        s = played(name, "contiguous")
        assert s.prefix_hit_rate_mean == 0 and s.shared_blocks_peak_mean == 0, name


def test_picking_from_the_queue_pays_off_in_the_hit_rate(played):
    assert played("bot 1.0", "paged").prefix_hit_rate_mean > played("bot 0.3", "paged").prefix_hit_rate_mean


def test_a_quarter_of_the_budget_delays_first_tokens_and_four_times_it_lengthens_steps(played):
    base = played("bot 0.8", "paged")
    small, big = played("budget / 4", "paged"), played("budget x 4", "paged")
    assert (small.budget, base.budget, big.budget) == (R.DEFAULT_BUDGET // 4, R.DEFAULT_BUDGET, R.DEFAULT_BUDGET * 4)
    assert small.ttft_ms_mean > base.ttft_ms_mean and big.step_ms_mean > base.step_ms_mean


def test_at_skill_08_paged_keeps_twice_the_requests_resident(played):
    c, p = played("bot 0.8", "contiguous"), played("bot 0.8", "paged")
    assert p.resident_mean >= 2 * c.resident_mean, (p.resident_mean, c.resident_mean)


def test_at_skill_08_paged_serves_15_times_the_tokens_per_minute(played):
    c, p = played("bot 0.8", "contiguous"), played("bot 0.8", "paged")
    assert p.tokens_per_minute_mean >= 1.5 * c.tokens_per_minute_mean


def test_at_skill_08_contiguous_wastes_much_and_paged_little(played):
    c, p = played("bot 0.8", "contiguous"), played("bot 0.8", "paged")
    assert c.waste_share_mean >= 0.40, c.waste_share_mean
    assert p.waste_share_mean <= 0.25 and p.waste_share_mean <= c.waste_share_mean / 2


def test_a_contiguous_run_lasts_at_least_60_pieces(played):
    pieces = [g.pieces for g in played.games["bot 0.8", "contiguous"]]
    assert played("bot 0.8", "contiguous").pieces_mean >= 60 and min(pieces) >= 50, pieces


def test_the_contiguous_run_of_the_same_player_ends_clearly_sooner(played):
    for name in ("bot 0.3", "bot 0.8", "bot 1.0"):
        c, p = played(name, "contiguous"), played(name, "paged")
        assert c.minutes_mean < p.minutes_mean / 2, name


def test_no_request_ever_holds_a_block_after_it_finished(played):
    for (name, mode), s in played.summary.items():
        assert s.finished_holding_max == 0, (name, mode)
        assert all(g.finished_holding == 0 for g in played.games[name, mode])


def test_a_no_input_paged_endless_run_of_108000_frames_ends():
    game = Game(seed=1, mode="paged", endless=True)
    frames = 0
    while not game.over and frames < 108_000:
        game.update(1000.0 / 60.0, ())
        frames += 1
    assert game.over and game.result is not None
    assert game.result.outcome in ("oom", "overload") and frames < 108_000


def test_the_first_printed_line_answers_how_much_sooner_contiguous_runs_out(played, capsys):
    assert autoplay_main(["--mode", "both"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    c, p = played("bot 0.8", "contiguous"), played("bot 0.8", "paged")  # the defaults
    assert first.startswith("contiguous: ") and "; paged: " in first
    assert f"contiguous: {c.minutes_mean:.1f} game minutes, {c.tokens_mean:,.0f} tokens" in first
    assert f"paged: {p.minutes_mean:.1f} game minutes, {p.tokens_mean:,.0f} tokens" in first
    assert "CUDA OOM" in first
