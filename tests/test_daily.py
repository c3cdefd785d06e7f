"""The daily challenge: one seed per UTC date, its code says which day, its best is kept per day."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pygame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import sharecode
from engine.daily import daily_seed, utc_day
from engine.replay import Recorder
from tests.uikit import key, make_app, pump
from ui.play_scene import PlayScene
from ui.storage import MAX_DAILY_DAYS, Settings, Storage
from ui.title_scene import TitleScene

days = st.dates(min_value=date(2000, 1, 1), max_value=date(2200, 12, 31))


@given(days)
def test_the_same_utc_date_gives_the_same_seed(day):
    assert daily_seed(day) == daily_seed(date.fromisoformat(day.isoformat()))
    assert 1 <= daily_seed(day) < 2**31


@given(days, days)
def test_different_dates_give_different_seeds(a, b):
    if a != b:
        assert daily_seed(a) != daily_seed(b)


def test_neighbouring_days_over_years_never_share_a_seed():
    start = date(2024, 1, 1)
    seeds = [daily_seed(start + timedelta(days=n)) for n in range(3 * 366)]
    assert len(set(seeds)) == len(seeds)


def test_the_day_turns_at_midnight_utc_whatever_the_local_zone():
    midnight = datetime(2026, 12, 1, tzinfo=timezone.utc).timestamp()
    assert utc_day(midnight - 1) == date(2026, 11, 30)
    assert utc_day(midnight) == date(2026, 12, 1)


@settings(max_examples=15, deadline=None)
@given(days)
def test_a_daily_code_says_which_day_and_replays(day):
    rec = Recorder(seed=daily_seed(day), mode="paged", daily=day.isoformat())
    for n in range(120):
        rec.update(1000 / 60, ["HARD_DROP"] if n % 20 == 0 else [])
    back = sharecode.decode(sharecode.encode(rec.finish()))
    assert back.daily == day.isoformat() and back.seed == daily_seed(day)
    assert back.verify()


def test_a_daily_file_with_another_days_seed_does_not_verify():
    rec = Recorder(seed=daily_seed(date(2026, 12, 1)), mode="paged", daily="2026-12-02")
    rec.update(16.0, ["HARD_DROP"])
    out, problem = rec.finish().check()
    assert problem is not None and "daily seed" in problem


@pytest.mark.usefixtures("clean_event_queue")
def test_daily_run_from_the_title_uses_todays_seed_and_keeps_its_best(tmp_path):
    app = make_app(tmp_path)
    app.reset(TitleScene(app))
    pump(app, 2)
    key(app, pygame.K_d)
    play = app.top
    assert isinstance(play, PlayScene)
    today = app.today()
    assert play.daily == today and play.seed == daily_seed(today) and not play.game.endless
    from ui.headless import force_oom
    from ui.play_scene import END_DELAY_MS
    from ui import theme

    force_oom(play)
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    mode, day = play.game.mode, today.isoformat()
    assert play.game.score > 0 and app.daily_best(day, mode) == play.game.score
    assert app.best(mode, "serve") == 0, "a daily run keeps its own best, not the ordinary one"
    assert Storage(directory=tmp_path).load().daily == {day: {m: play.game.score if m == mode else 0
                                                             for m in ("contiguous", "paged")}}
    assert sharecode.decode(play.share_code).daily == today.isoformat()
    # A restart from the report plays the same day's requests again.
    key(app, pygame.K_RETURN)
    assert isinstance(app.top, PlayScene) and app.top.seed == play.seed and app.top.daily == today


def test_daily_bests_are_validated_and_bounded():
    raw = {f"2026-{m:02d}-{d:02d}": {"paged": 10 * d} for m in range(1, 6) for d in range(1, 29)}
    raw.update({"yesterday": {"paged": 5}, "2026-13-01": {"paged": 7}, "2026-06-01": {"paged": -3},
                "2026-06-02": {"paged": True, "contiguous": 4, "mixed": 9}})
    settings_ = Settings.from_dict({"daily": raw})
    assert len(settings_.daily) == MAX_DAILY_DAYS
    assert "yesterday" not in settings_.daily and "2026-13-01" not in settings_.daily
    assert settings_.daily["2026-06-01"] == {"contiguous": 0, "paged": 0}
    assert settings_.daily["2026-06-02"] == {"contiguous": 4, "paged": 0}  # no mixed entry, no bool score
    assert max(settings_.daily) == "2026-06-02"
