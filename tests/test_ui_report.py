"""The run report under rules 2: every ending, both layouts, both languages, numbers that agree."""
from __future__ import annotations

import dataclasses
import itertools
import re
import types

import pygame
import pytest
from tests.reportkit import reports
from tests.uikit import make_app

from engine import rules as R
from engine import torch_oom
from ui import overlays
from ui.i18n import catalogue
from ui.i18n.game_text import report_text, tip
from ui.keys import SPLIT_KEY
from ui.overlays import ResultScene

pytestmark = pytest.mark.usefixtures("clean_event_queue")
NAMES = sorted(reports())
EN, KO = catalogue("en"), catalogue("ko")
CODE = "VT2" + "x" * 300  # a share code as long as a long run's: the report then has a share row


def report_scene(tmp_path, layout: str, language: str, report, code: str | None = CODE,
                 daily=None) -> ResultScene:
    """The report over a stand-in for the game below (its snapshot made up front)."""
    app = make_app(tmp_path, layout=layout, language=language)
    play = types.SimpleNamespace(share_code=code, daily=daily, replay=None, tape=None,
                                 restart=lambda: None, state=types.SimpleNamespace(muted=False))
    scene = ResultScene(app, play, report)
    app.scenes.append(scene)
    scene._backdrop = pygame.Surface(app.layout.size)
    scene._plain = pygame.Surface(app.layout.size)
    return scene


def drawn_text(scene: ResultScene, monkeypatch) -> list[tuple[str, pygame.Rect]]:
    drawn: list[tuple[str, pygame.Rect]] = []
    text = scene.app.text
    blit = text.blit

    def recording(surface, s, size, colour, pos, anchor="topleft"):
        r = blit(surface, s, size, colour, pos, anchor)
        drawn.append((s, r))
        return r

    monkeypatch.setattr(text, "blit", recording)
    scene.draw(scene.app.surface)
    return drawn


def numbers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]


def test_the_real_reports_cover_every_ending():
    rs = reports().values()
    assert {r.outcome for r in rs} == {"oom", "overload", "victory"}
    assert {(r.mode, r.cause_code) for r in rs} >= {
        ("contiguous", "ceiling"), ("contiguous", "memory_full"), ("contiguous", "spawn_blocked"),
        ("contiguous", "deadline"), ("paged", "queue_full"), ("paged", "deadline"), ("paged", "memory_full"),
        ("paged", "victory")}


@pytest.mark.parametrize("mixed", [False, True], ids=["", "mixed"])
@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout", ["landscape", "portrait"])
@pytest.mark.parametrize("name", NAMES)
def test_the_tip_is_drawn_whole_in_every_report(tmp_path, monkeypatch, layout, language, name, mixed):
    report = reports()[name]
    if mixed:  # the longest allocator line
        report = dataclasses.replace(report, mixed=True, modes_used=("contiguous", "paged", "contiguous"))
    scene = report_scene(tmp_path, layout, language, report)
    drawn = drawn_text(scene, monkeypatch)
    texts = [t for t, _ in drawn]
    assert scene.tips and " ".join(scene.tips).split() == scene.tip().split()
    assert all(line in texts for line in scene.tips), "every line of the tip is on screen"
    # ... and everything drawn is legible: in the dialog, above the share row, never overlapping.
    dialog = pygame.Rect(scene.rect)
    buttons = [pygame.Rect(b.rect) for b in scene.buttons] + [pygame.Rect(scene.code_box)]
    body = [(t, r) for t, r in drawn if not any(b.contains(r) for b in buttons)]  # a button's own label
    for t, r in body:
        assert dialog.contains(r), (t, r)
        assert r.bottom <= scene.content_bottom, (t, r)
    for (ta, a), (tb, b) in itertools.combinations(body, 2):
        if a != b:
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, tb)
    assert scene.px >= scene.app.layout.text.small


@pytest.mark.parametrize("tr", [EN, KO], ids=["en", "ko"])
@pytest.mark.parametrize("name", NAMES)
def test_the_report_numbers_agree(name, tr):
    r = reports()[name]
    text = report_text(r, tr)
    cause, memory = numbers(text.cause), numbers(text.memory)
    if r.outcome == "victory":
        assert r.requests_served >= R.GOAL_REQUESTS and r.requests_served in cause and r.tokens in cause
        return
    assert r.free_cells in cause and r.free_cells in memory, (text.cause, text.memory)
    assert r.need in memory
    if r.outcome == "oom" and r.mode == "contiguous":
        assert r.need == R.BLOCKS_PER_REQUEST  # a contiguous request holds its whole shape
        assert r.free_cells == r.usable_blocks + r.sealed_holes + r.open_unusable
        assert [r.free_cells, r.usable_blocks, r.sealed_holes, r.open_unusable] == memory[-4:]
        if r.cause_code != "memory_full":
            assert r.sealed_holes in cause
    if r.outcome == "oom" and r.mode == "paged":
        assert r.free_cells < r.need and r.need in cause  # paged: an OOM only when memory is short
    if r.cause_code == "queue_full":
        assert r.waiting > R.QUEUE_MAX and {r.waiting, R.QUEUE_MAX} <= set(cause)
    if r.cause_code == "deadline":
        assert {round(r.waited_ms / 1000), round(R.DEADLINE_MS / 1000), r.need} <= set(cause)
    facts = dict(text.facts)
    assert tr.num(r.tokens) in facts[tr.t("report.fact.tokens")]
    assert str(r.resident) in facts[tr.t("report.fact.end_state")]


def test_sealed_off_memory_says_paging_would_have_used_it():
    r = reports()["contiguous_sealed"]
    assert r.sealed_holes >= R.BLOCKS_PER_REQUEST
    words = tip(r, EN)
    assert f"Paging would have used these {r.sealed_holes} free blocks" in words
    few = dataclasses.replace(r, sealed_holes=1, usable_blocks=r.free_cells - 1, open_unusable=0)
    assert "Paging would have used" not in tip(few, EN)  # one sealed block did not end this run
    assert "in this request's reach could still take it whole" in tip(few, EN)


@pytest.mark.parametrize("tr", [EN, KO], ids=["en", "ko"])
def test_a_tip_names_keys_at_a_keyboard_and_buttons_on_a_phone(tr):
    from ui.keys import BOARD_KEY

    sealed, idle = reports()["contiguous_sealed"], reports()["paged_idle"]
    assert f"({BOARD_KEY})" in tip(sealed, tr) and f"({SPLIT_KEY})" in tip(idle, tr)
    on_phone = tip(sealed, tr, touch=True) + tip(idle, tr, touch=True)
    assert f"({BOARD_KEY})" not in on_phone and SPLIT_KEY not in on_phone and "Space" not in on_phone
    assert tr.t("report.board") in tip(sealed, tr, touch=True)
    assert tr.t("control.split") in tip(idle, tr, touch=True)


def test_a_paged_deadline_with_memory_free_points_at_split():
    r = reports()["paged_idle"]
    assert r.cause_code == "deadline" and r.free_cells >= r.need
    assert f"split ({SPLIT_KEY}) pages one that cannot be placed whole at once" in tip(r, EN)
    assert "a hard drop (Space) admits a request as soon as it falls" in tip(r, EN)
    assert "without being placed" in report_text(r, EN).cause and "놓이지 못한 채" in report_text(r, KO).cause
    short = reports()["paged_short"]
    assert short.cause_code == "deadline" and short.free_cells < short.need
    assert "split" not in tip(short, EN) and "watermark" in tip(short, EN)  # split could not have helped


def test_a_request_starved_of_prefill_budget_is_told_to_raise_the_budget():
    from engine import Input
    from engine.bot import Bot
    from engine.chapter_play import drive
    from engine.chapters import chapter
    from ui.i18n.game_text import prefill_stalled

    game = chapter(4).new_game(seed=0)
    game.update(0.0, (Input.BUDGET_DOWN, Input.BUDGET_DOWN))  # 32 tokens a step: decoding takes nearly all
    drive(game, "bot", Bot(skill=0.8, seed=0, speculate=False), 10 * 60_000.0)
    r = game.result
    assert r.cause_code == "deadline" and r.prefilling_ms >= R.DEADLINE_MS / 2 and r.free_cells >= r.need
    assert prefill_stalled(r)
    text = report_text(r, EN)
    assert "for its first token" in text.cause and "still prefilling, 32 tokens a step" in text.cause
    assert "] raises the budget" in text.tip and "split" not in text.tip.lower()
    assert "DETAILS' + raises the budget" in report_text(r, EN, touch=True).tip
    # A wait spent mostly in the queue, or one that memory ended, is not the budget's.
    assert not prefill_stalled(dataclasses.replace(r, prefilling_ms=R.DEADLINE_MS / 4))
    assert not prefill_stalled(dataclasses.replace(r, free_cells=r.need - 1))
    assert not prefill_stalled(reports()["paged_idle"]) and not prefill_stalled(reports()["paged_short"])


def test_a_full_queue_with_memory_near_full_asks_for_a_watermark():
    busy, idle = reports()["paged_busy"], reports()["paged_centre"]
    assert busy.cause_code == idle.cause_code == "queue_full"
    assert busy.utilisation >= R.VRAM_WARN > idle.utilisation
    assert "keep a few blocks free (a watermark, as vLLM V0 kept)" in tip(busy, EN)
    assert "watermark" not in tip(idle, EN) and "Where a paged request lands does not matter" in tip(idle, EN)


def test_a_paged_oom_gives_both_numbers_and_memory_really_was_full():
    r = reports()["paged_full"]
    assert (r.outcome, r.cause_code) == ("oom", "memory_full")
    text = report_text(r, EN)
    assert f"for {r.need} block(s) with {r.free_cells} free" in text.cause
    assert "Paging used every free block" in text.tip


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_the_board_view_outlines_sealed_and_reserved_empty_cells(tmp_path, monkeypatch, layout):
    r = reports()["contiguous_bot"]
    assert r.sealed_cells and r.reserved_cells
    scene = report_scene(tmp_path, layout, "en", r)
    outlined = []
    monkeypatch.setattr(overlays, "outline_cells", lambda surface, lay, cells, colour: outlined.append((cells, colour)))
    scene.click("board")
    drawn = drawn_text(scene, monkeypatch)
    assert outlined == [(r.sealed_cells, overlays.SEALED_COLOUR), (r.reserved_cells, overlays.RESERVED_COLOUR)]
    assert any(str(len(r.sealed_cells)) in t for t, _ in drawn)
    assert len(r.sealed_cells) == r.sealed_holes  # the outline is the count the report gives


def test_the_best_line_names_the_runs_goal_or_its_daily(tmp_path):
    from datetime import date

    r = reports()["paged_victory"]
    scene = report_scene(tmp_path, "landscape", "en", r)
    assert "serve 300" in scene.best_line()
    daily = report_scene(tmp_path, "landscape", "en", r, daily=date(2026, 12, 1))
    assert "daily 2026-12-01" in daily.best_line()
    mixed = report_scene(tmp_path, "landscape", "en", dataclasses.replace(r, mixed=True))
    assert mixed.best_line() == "mixed run: it sets no best score"


def test_record_run_keeps_bests_per_allocator_and_goal_and_the_daily_apart(tmp_path):
    app = make_app(tmp_path)
    r = reports()["paged_victory"]
    assert r.goal == "serve" and r.score > 0
    assert app.record_run(r)
    assert app.best("paged", "serve") == r.score and app.best("paged", "endless") == 0
    endless = dataclasses.replace(r, goal="endless", score=r.score // 2)
    assert app.record_run(endless) and app.best("paged", "endless") == r.score // 2
    assert app.best("paged", "serve") == r.score
    daily = dataclasses.replace(r, score=r.score * 3)
    assert app.record_run(daily, daily="2026-12-01")
    assert app.daily_best("2026-12-01", "paged") == r.score * 3 and app.daily_best("2026-12-01", "contiguous") is None
    assert app.best("paged", "serve") == r.score, "a daily run sets no ordinary best"
    assert not app.record_run(dataclasses.replace(r, mixed=True, score=r.score * 10))
    assert app.best("paged", "serve") == r.score and app.settings.games_played == 4
    stored = app.storage.load()
    assert stored.best["paged"] == {"serve": r.score, "endless": r.score // 2}
    assert stored.daily == {"2026-12-01": {"contiguous": 0, "paged": r.score * 3}}


@pytest.mark.parametrize("tr", [EN, KO], ids=["en", "ko"])
def test_the_report_shows_the_most_requests_that_ran_at_once(tr):
    for name in ("contiguous_bot", "paged_busy"):
        r = reports()[name]
        assert r.peak_resident >= max(r.resident, 1)
        facts = dict(report_text(r, tr).facts)
        assert r.peak_resident in numbers(facts[tr.t("report.fact.end_state")])
    assert reports()["paged_busy"].peak_resident > 2 * reports()["contiguous_bot"].peak_resident


# ---------------------------------------------------------------- PyTorch's message (engine.torch_oom)
CONTIGUOUS_OOMS = [n for n in NAMES if reports()[n].outcome == "oom" and reports()[n].mode == "contiguous"]


def squash(text: str) -> str:
    return "".join(text.split())


def rejoined(lines: list[str]) -> str:
    """Wrapped lines put back together: a space where a line broke, none after a break at "="."""
    out = ""
    for line in lines:
        out += line if not out or out.endswith("=") else " " + line
    return out


def assert_pytorch_message_drawn(scene: ResultScene, drawn: list[tuple[str, pygame.Rect]]) -> None:
    """The crash report draws a whole form of PyTorch's message with the run's figures, broken only
    between words (or after "="), its caption at the run's scale and what serving engines do now."""
    torch, tr = scene.text.pytorch, scene.app.tr
    assert torch is not None and scene.rect == scene.app.layout.oom_report
    texts = [t for t, _ in drawn]
    for line in scene.torch_caption + scene.torch_lines + scene.torch_note:
        assert line in texts, line
    message = rejoined(scene.torch_lines)
    assert message in torch.forms, message
    sizes = torch_oom.for_report(scene.report).sizes()
    for words in (f"CUDA out of memory. Tried to allocate {sizes['tried']}.", f"of which {sizes['free']} is free.",
                  f"and {sizes['unallocated']} is reserved by PyTorch but unallocated.", "to avoid fragmentation."):
        assert words in message, words
    for line, after in zip(scene.torch_lines, scene.torch_lines[1:]):  # a size's figure keeps its unit
        assert not (re.search(r"\d$", line) and re.match(r"(bytes|KiB|MiB|GiB)\b", after)), (line, after)
    caption = squash("".join(scene.torch_caption))
    assert caption in {squash(c) for c in torch.captions} and "61.44MiB" in caption
    assert squash("".join(scene.torch_note)) == squash(tr.t("report.pytorch.engines"))


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout", ["landscape", "portrait"])
@pytest.mark.parametrize("name", CONTIGUOUS_OOMS)
def test_a_contiguous_crash_says_what_pytorch_would(tmp_path, monkeypatch, layout, language, name):
    scene = report_scene(tmp_path, layout, language, reports()[name])
    assert_pytorch_message_drawn(scene, drawn_text(scene, monkeypatch))


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_the_headless_crash_screen_says_what_pytorch_would(tmp_path, monkeypatch, layout, language):
    """The screen `main.py --headless --scene oom` draws, in every layout and language."""
    from ui.cli import Options
    from ui.headless import build

    app = make_app(tmp_path, layout=layout, language=language)
    build(app, Options(headless=True, frames=60, screenshot="x.png", scene="oom", mode="contiguous", seed=7,
                       lang=language, layout=layout), 7)
    scene = app.top
    assert isinstance(scene, ResultScene)
    scene.draw(app.surface)  # the snapshot of the game under it, made once
    drawn = drawn_text(scene, monkeypatch)
    assert_pytorch_message_drawn(scene, drawn)
    buttons = [pygame.Rect(b.rect) for b in scene.buttons] + [pygame.Rect(scene.code_box)]
    body = [(t, r) for t, r in drawn if not any(b.contains(r) for b in buttons)]
    for t, r in body:
        assert pygame.Rect(scene.rect).contains(r) and r.bottom <= scene.content_bottom, (t, r)
    for (ta, a), (tb, b) in itertools.combinations(body, 2):
        if a != b:
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, tb)


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout", ["landscape", "portrait"])
@pytest.mark.parametrize("name", [n for n in NAMES if n not in CONTIGUOUS_OOMS])
def test_no_other_report_says_it(tmp_path, monkeypatch, layout, language, name):
    """A paged run (its OOM too: memory really was full), an overload or a victory: no PyTorch."""
    scene = report_scene(tmp_path, layout, language, reports()[name])
    assert scene.text.pytorch is None and scene.rect == scene.app.layout.dialog and not scene.torch_lines
    for t, _ in drawn_text(scene, monkeypatch):
        assert "PyTorch" not in t and "out of memory." not in t, t


def test_a_rules_4_report_says_what_the_prefix_cache_and_chunked_prefill_did():
    from engine import Game, Input
    from engine.bot import Bot
    from engine.features import RULES4
    from ui.i18n import catalogue
    from ui.i18n.game_text import report_facts

    game = Game(seed=3, mode="paged", endless=True, features=RULES4)
    bot = Bot(skill=0.8, seed=3)
    while not game.over and game.time_ms < 40 * 60_000:
        game.update(150.0, bot.plan(game) or [])
    r = game.result
    assert r is not None and r.prefix_hit_rate is not None and r.ttft_ms_mean is not None
    for lang in ("en", "ko"):
        tr = catalogue(lang)
        facts = dict(report_facts(r, tr))
        assert tr.t("report.fact.prefix_cache") in facts and tr.t("report.fact.ttft") in facts
        assert f"{r.ttft_ms_max / 1000:,.1f}" in facts[tr.t("report.fact.ttft")]
    from engine.features import RULES3

    plain = Game(seed=3, mode="paged", endless=True, features=RULES3)
    while not plain.over:
        plain.update(1000.0, [Input.HARD_DROP])
    assert len(report_facts(plain.result, catalogue("en"))) == 8  # rules 3: the facts it had
