"""The screen's words for engine facts: English identical to the engine's own text, Korean complete."""
from __future__ import annotations

import re
from collections import Counter

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


def _numbers(text: str) -> list[int]:
    return sorted(int(n) for n in re.findall(r"\d+", text))


def test_english_log_lines_carry_every_fact_the_engine_states(runs):
    """Every number of the engine's own line (ids, blocks, tokens, ms, cells) is in the screen's
    English line, and so is the request it is about; paged runs' lines never speak of external
    fragmentation (free blocks can never be out of a paged allocator's reach)."""
    kinds = set()
    for events, game in runs:
        paged = game.mode == "paged"
        for e in events:
            if isinstance(e, (ev.Moved, ev.Rotated)):
                continue
            kinds.add(type(e).__name__ + (f":{e.code}" if isinstance(e, ev.Alert) else ""))
            ours = EN.msg(event_message(e, fragments=not paged))
            theirs = e.text
            if paged and isinstance(e, ev.Locked):
                assert "fragmentation" not in ours and ours == theirs.split(";")[0], ours
                continue
            missing = Counter(_numbers(theirs)) - Counter(_numbers(ours))
            assert not missing, (ours, theirs)
            assert ours.split("]")[0] == theirs.split("]")[0] or isinstance(e, ev.Alert), (ours, theirs)
            m = re.search(r"req#\d+", theirs)
            if m and not isinstance(e, ev.Alert):
                assert m.group(0) in ours, (ours, theirs)
    assert {"Spawned", "Arrived", "Locked", "Admitted", "Grew", "Finished", "PageSplit", "Held",
            "Overloaded"} <= kinds, kinds


def test_paged_lines_never_say_external_fragmentation():
    """A whole placement that covers free blocks: contiguous calls them sealed off (external
    fragmentation); paged never does, though the engine counts the same covered cells."""
    from engine import Kind
    lock = ev.Locked(ev.LockResult(1, Kind.T, ((0, 21),), 2, 0, ((0, 20), (0, 19))))
    assert "external fragmentation" in EN.msg(event_message(lock, fragments=True))
    for tr in (EN, KO):
        line = tr.msg(event_message(lock, fragments=False))
        assert "fragmentation" not in line and "파편화" not in line, line
    split = ev.PageSplit(ev.BlockTable(1, Kind.T, ((0, (0, 21)),)), 1)
    assert "fragmentation" not in EN.msg(event_message(split, fragments=False))


def test_each_new_event_has_its_own_line_in_both_languages():
    from engine import Kind
    table = ev.BlockTable(4, Kind.S, ((0, (1, 21)), (1, (2, 21))), 1, 20)
    lines = {
        "admitted": ev.Admitted(table, "whole", 240.0),
        "admitted_split": ev.Admitted(ev.BlockTable(4, Kind.S, ((0, (1, 21)),), 0, 9), "split", 108.0),
        "admitted_demand": ev.Admitted(ev.BlockTable(4, Kind.S, ((0, (1, 21)),), 0, 9), "on_demand", 108.0,
                                       resumed="swap"),
        "grew": ev.Grew(4, Kind.S, 2, (5, 9)),
        "finished": ev.Finished(4, Kind.S, ((1, 21), (2, 21), (3, 21)), 30, 1),
        "swap": ev.Preempted(4, Kind.S, ((1, 21), (2, 21)), "swap", 12, "swap"),
        "recompute": ev.Preempted(4, Kind.S, ((1, 21),), "recompute", 7, "recompute"),
        "cpu_full": ev.Preempted(4, Kind.S, ((1, 21),), "recompute", 7, "swap"),
        "mode": ev.PreemptModeSwitched("swap"),
        "whole": ev.Alert("waiting_whole", "req#4 cannot be placed whole: it waits"),
        "memory": ev.Alert("waiting_memory", "req#4 waits: needs 3 free block(s), 1 free"),
        "no_room": ev.Alert("split_no_room", "split refused: req#4 needs 3 free block(s), 1 free"),
    }
    english = {name: EN.msg(event_message(e)) for name, e in lines.items()}
    assert "split" in english["admitted_split"] and "on demand" in english["admitted_demand"]
    assert "swapped back in" in english["admitted_demand"] and "1 reserved" in english["admitted"]
    assert "page 2 -> block (5,7)" in english["grew"]
    assert "30 tokens served, 3 block(s) freed" in english["finished"] and "1 reserved, never used" in english["finished"]
    assert "swapped to CPU" in english["swap"] and "7 generated token(s) to recompute" in english["recompute"]
    assert "CPU swap space full" in english["cpu_full"] and "SWAP" in english["mode"]
    assert "needs 3 free block(s), 1 free" in english["memory"] and "needs 3" in english["no_room"]
    assert len(set(english.values())) == len(english)
    for name, e in lines.items():
        message = event_message(e)
        assert not isinstance(message, str), name
        korean = KO.msg(message)
        assert any("\uac00" <= ch <= "\ud7a3" for ch in korean) and "{" not in korean, (name, korean)


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


def test_the_scheduler_lines_of_rules_4_carry_their_facts_in_both_languages():
    """Prefix caching, picking and the step budget (rules 4's switches) log what happened with
    every number the engine's own line states, in English and Korean."""
    from engine.features import RULES4
    from engine.pieces import Kind

    game = Game(seed=2, mode="paged", features=RULES4)
    table = ev.BlockTable(7, Kind.S, ((0, (0, 21)), (1, (1, 21))), 0, 40)
    events = [ev.Picked(12, Kind.T, 2), ev.BudgetSet(256),
              ev.Admitted(table, "whole", 0.0, "", "paged", cached=2), *game.update(0, [Input.BUDGET_UP])]
    for e in events:
        for tr in (EN, KO):
            line = tr.msg(event_message(e))
            assert Counter(_numbers(e.text)) <= Counter(_numbers(line.replace(",", ""))), (line, e.text)
            assert line != e.text or tr is EN


def test_the_step_budget_and_the_drafts_say_when_they_reach_an_end_in_both_languages():
    from engine import rules as R

    most, least = max(R.BUDGETS), min(R.BUDGETS)
    assert "the most" in EN.msg(event_message(ev.BudgetSet(most)))
    assert "the least" in EN.msg(event_message(ev.BudgetSet(least)))
    middle = EN.msg(event_message(ev.BudgetSet(128)))
    assert "the most" not in middle and "the least" not in middle
    assert "(최대)" in KO.msg(event_message(ev.BudgetSet(most)))
    top = max(R.SPEC_KS)
    assert "the most" in EN.msg(event_message(ev.SpecSet(top))) and "2 draft" in EN.msg(event_message(ev.SpecSet(2)))
    assert "off" in EN.msg(event_message(ev.SpecSet(0)))
    for k in R.SPEC_KS:  # the drafts' line speaks Korean too, with its number
        line = KO.msg(event_message(ev.SpecSet(k)))
        assert "추측 디코딩" in line and str(k if k else 1) in line
