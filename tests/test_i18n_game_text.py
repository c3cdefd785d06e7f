"""The screen's words for engine facts: English identical to the engine's own text, Korean complete."""
from __future__ import annotations

import pytest

from engine import Game, Input
from engine import events as ev
from engine.bot import Bot
from ui.i18n import catalogue
from ui.i18n.game_text import event_message, report_lines, tip

EN, KO = catalogue("en"), catalogue("ko")


def played(mode: str, seed: int, skill: float, endless: bool = True, pieces: int = 400) -> tuple[list[ev.Event], Game]:
    """Events of a bot game, with the player's own actions (hold, split, mode switch) mixed in."""
    game = Game(seed=seed, mode=mode, endless=endless)
    bot = Bot(skill=skill, seed=seed)
    seen: list[ev.Event] = []
    for i in range(pieces):
        if game.over:
            break
        extra = [Input.HOLD, Input.HOLD] if i % 7 == 3 else [Input.SPLIT] if i % 5 == 1 else []
        seen += game.update(16.7, extra)
        seen += game.update(16.7, bot.plan(game) or [Input.HARD_DROP])
        for _ in range(20):
            seen += game.update(16.7)
    return seen, game


@pytest.fixture(scope="module")
def runs():
    return [played("contiguous", 3, 0.3), played("paged", 5, 0.9), played("paged", 9, 1.0, endless=False),
            played("contiguous", 4, 0.9, pieces=60)]


def test_english_log_lines_are_the_engines_own(runs):
    kinds = set()
    for events, _ in runs:
        for e in events:
            if isinstance(e, (ev.Moved, ev.Rotated)):
                continue
            kinds.add(type(e).__name__ + (f":{e.code}" if isinstance(e, ev.Alert) else ""))
            assert EN.msg(event_message(e)) == e.text
    assert {"Spawned", "Locked", "Reserved", "LinesCleared", "PageSplit", "Oom", "Victory"} <= kinds, kinds


def test_korean_log_lines_are_korean(runs):
    for events, _ in runs:
        for e in events:
            if isinstance(e, (ev.Moved, ev.Rotated)):
                continue
            message = event_message(e)
            assert not isinstance(message, str), f"no Korean for {type(e).__name__}: {e.text}"
            text = KO.msg(message)
            assert any("\uac00" <= ch <= "\ud7a3" for ch in text), text
            assert "{" not in text


def test_mode_switch_names_the_mode_in_each_language():
    e = ev.ModeSwitched("paged")
    assert EN.msg(event_message(e)) == e.text
    assert "페이징" in KO.msg(event_message(e))


def test_report_in_english_says_what_the_engine_says(runs):
    reports = [g.result for _, g in runs if g.result is not None]
    assert {r.outcome for r in reports} == {"oom", "victory"}
    for r in reports:
        ours, theirs = report_lines(r, EN), r.lines_of_text()
        assert ours[:2] == theirs[:2]  # heading and cause, word for word
        assert len(ours) == len(theirs)
        ko = report_lines(r, KO)
        assert len(ko) == len(theirs) and all("{" not in line for line in ko)
        assert tip(r, KO) != tip(r, EN)
