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


def test_the_report_in_both_languages_quotes_the_engines_numbers(runs):
    import re

    reports = [g.result for _, g in runs if g.result is not None]
    assert reports and all(r.outcome in ("oom", "overload", "victory") for r in reports)
    for r in reports:
        ours, ko = report_lines(r, EN), report_lines(r, KO)
        assert ours[0] in ("CUDA OUT OF MEMORY", "SERVING ENGINE OVERLOADED", "WORKLOAD COMPLETE")
        assert len(ko) == len(ours) and all("{" not in line for line in ko + ours)
        engine = set(re.findall(r"\d+", r.cause))  # every figure the engine's own sentence gives
        assert engine <= set(re.findall(r"\d+", ours[1] + ours[2])), (r.cause, ours[1:3])
        assert engine <= set(re.findall(r"\d+", ko[1] + ko[2])), (r.cause, ko[1:3])
        assert tip(r, KO) != tip(r, EN)
