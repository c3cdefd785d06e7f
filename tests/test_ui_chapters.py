"""The chapters through the app: from the title to a chapter's intro, its run and its outro, and on;
what a chapter run keeps (its progress, chapter 1's run for chapter 2), and what it holds still for."""
from __future__ import annotations

import sys

import pygame
import pytest
from tests.uikit import click, key, make_app, pump

from engine import Input
from engine.chapters import CHAPTERS, chapter
from ui import packs
from ui.chapter_scenes import ChapterIntroScene, ChapterListScene, ChapterOutroScene
from ui.chapter_text import Pair
from ui.headless import bot_play, settle
from ui.overlays import ResultScene
from ui.play_scene import PlayScene
from ui.storage import chapter_met, chapter_reached, chapters_met, record_chapter
from ui.theme import STEP_MS
from ui.title_scene import TitleScene

pytestmark = pytest.mark.usefixtures("clean_event_queue")


def centre(rect) -> tuple[int, int]:
    return pygame.Rect(rect).center


def _title(tmp_path, **kw):
    app = make_app(tmp_path, **kw)
    app.show_title(seed=1)
    return app


def test_g_or_the_title_button_opens_the_chapters_and_a_new_player_starts_at_chapter_1(tmp_path):
    app = _title(tmp_path)
    key(app, pygame.K_g)
    assert isinstance(app.top, ChapterListScene)
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, TitleScene)
    click(app, centre(app.top.chapters_button.rect))
    listing = app.top
    assert isinstance(listing, ChapterListScene)
    click(app, centre(listing.rows[1].rect))  # chapter 2: not open yet
    assert app.top is listing and "chapter 1" in listing.notice
    key(app, pygame.K_RETURN)  # CONTINUE: the first chapter not met
    intro = app.top
    assert isinstance(intro, ChapterIntroScene) and intro.chapter.number == 1
    key(app, pygame.K_ESCAPE)
    assert app.top is listing
    click(app, centre(listing.rows[0].rect))
    key(app, pygame.K_RETURN)
    play = app.top
    assert isinstance(play, PlayScene) and play.chapter == 1
    assert play.game.mode == "contiguous" and play.game.ready


def test_a_chapter_run_waits_for_the_first_move_and_for_a_card_being_read(tmp_path):
    app = make_app(tmp_path)
    play = app.start_chapter(3, seed=2)
    pump(app, 600)  # ten seconds of reading the screen
    assert play.game.time_ms == 0.0 and play.game.ready and not play.game.over
    key(app, pygame.K_LEFT)
    pump(app, 60)
    assert not play.game.ready and play.game.time_ms > 900
    play.cards.show("finished")
    assert play.cards.current is not None
    before = play.game.time_ms
    pump(app, 120)
    assert play.game.time_ms == before  # nothing runs out while the card is read...
    assert play.cards.current is not None and play.cards.age >= 1900  # ...and the card is there to read
    play.cards.dismiss()
    pump(app, 30)
    assert play.game.time_ms > before
    play.cards.show("split")  # a card left alone goes by itself, and the run goes on
    pump(app, 60 * 10)
    assert play.cards.current is None and play.game.time_ms > before + 1000


def test_free_play_does_not_wait_for_a_card(tmp_path):
    app = make_app(tmp_path)
    play = app.start_game("paged", seed=2)
    pump(app, 5)
    play.cards.show("finished")
    before = play.game.time_ms
    pump(app, 60)
    assert play.game.time_ms > before


def test_a_chapter_keeps_its_allocator(tmp_path):
    app = make_app(tmp_path)
    play = app.start_chapter(2, seed=2)
    for k in (pygame.K_1, pygame.K_TAB):
        key(app, k)
    play.set_mode("contiguous")
    assert play.game.mode == "paged" and not play.game.mixed
    assert Input.MODE_TOGGLE not in {i for _, inputs in play.tape.replay.steps for i in inputs}


def _play_out(app, number: int, seed: int = 5) -> PlayScene:
    play = app.start_chapter(number, seed=seed)
    bot_play(play, 0.8, seed)
    settle(app, play)
    return play


def test_chapter_1_ends_in_its_outro_and_keeps_its_run_for_chapter_2(tmp_path):
    app = make_app(tmp_path)
    one = _play_out(app, 1)
    outro = app.top
    assert isinstance(outro, ChapterOutroScene) and outro.met
    s = app.settings
    assert s.chapters["1"] == one.game.serving.served >= chapter(1).goal
    assert chapter_met(s, 1) and chapter_reached(s, 2) and not chapter_reached(s, 3) and chapters_met(s) == 1
    pair = Pair.from_saved(s.chapter_pair)
    assert pair is not None and pair.seed == 5 and pair.end_ms == pytest.approx(one.game.time_ms, abs=1)
    assert pair.running == len(one.game.serving.running)
    # The report is one button away, and the chapters another.
    outro.click("report")
    report = app.top
    assert isinstance(report, ResultScene)
    # Its third button goes back to the outro, and says so (not TITLE, as free play's does).
    back = next(b for b in report.report_buttons if b.name == "title")
    assert back.label == app.tr.t("chapter.back") != app.tr.t("report.title")
    report.click("title")
    outro = app.top
    assert isinstance(outro, ChapterOutroScene)
    outro.click("next")
    assert isinstance(app.top, ChapterIntroScene) and app.top.chapter.number == 2
    # Chapter 2 plays chapter 1's arrivals (its seed) unless told otherwise.
    two = app.start_chapter(2)
    assert two.seed == 5 and two.moment is not None and two.moment.at_ms == pair.end_ms


def test_the_chapter_2_outro_sets_both_runs_side_by_side_as_their_codes_replay(tmp_path, capsys):
    """The pair's figures on the outro are what `python -m engine.replay` re-simulates from the two
    runs' share codes."""
    import json

    from engine.replay_cli import main as replay_main

    app = make_app(tmp_path)
    one = _play_out(app, 1)
    two = _play_out(app, 2)
    outro = app.top
    assert isinstance(outro, ChapterOutroScene)
    pair = Pair.from_saved(app.settings.chapter_pair)
    assert pair is not None and one.share_code and two.share_code
    assert replay_main([two.share_code, "--beside", one.share_code, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chapter"] == 2 and doc["verified"]
    side = doc["beside"]
    assert side["at_ms"] == pytest.approx(pair.end_ms, abs=1)
    assert side["contiguous"]["running"] == pair.running
    assert side["contiguous"]["held"] == pytest.approx(pair.held, abs=0.001)
    assert side["contiguous"]["waste"] == pytest.approx(pair.waste, abs=0.001)
    assert (side["paged"]["running"], side["paged"]["held"], side["paged"]["waste"]) == (
        two.moment.running, two.moment.held, two.moment.waste)
    running, held = outro.rows[0], outro.rows[1]
    assert running.value == str(side["paged"]["running"])
    assert running.notes[0] == app.tr.t("chapter.outro.then", contiguous=str(side["contiguous"]["running"]),
                                        paged=str(side["paged"]["running"]))
    assert held.value == app.tr.pct(side["paged"]["held"])
    assert held.notes[0] == app.tr.t("chapter.outro.then", contiguous=app.tr.pct(side["contiguous"]["held"]),
                                     paged=app.tr.pct(side["paged"]["held"]))
    blocks = side["paged"]["held"] * 200 / side["paged"]["running"]
    assert f"{blocks:.1f}" in held.notes[1]
    # Codes that are not such a pair are refused in one line.
    assert replay_main([one.share_code, "--beside", two.share_code]) == 1
    assert "replays another" in capsys.readouterr().err


def test_a_locked_chapter_opens_once_a_run_of_the_one_before_has_ended_met_or_not(tmp_path):
    app = make_app(tmp_path)
    s = app.settings
    assert [chapter_reached(s, c.number) for c in CHAPTERS] == [True] + [False] * (len(CHAPTERS) - 1)
    assert not record_chapter(s, 2, -1, 5)  # nonsense is not kept, and opens nothing
    assert not chapter_reached(s, 3)
    record_chapter(s, 1, chapter(1).goal - 1, 10)  # chapter 1 crashed short of its goal: 2 opens all the same
    assert chapter_reached(s, 2) and not chapter_met(s, 1) and not chapter_reached(s, 3)
    assert s.chapter_runs["1"] == 1
    record_chapter(s, 1, chapter(1).goal, 12)
    assert chapter_met(s, 1) and s.chapters["1"] == chapter(1).goal and s.chapter_scores["1"] == 12
    record_chapter(s, 1, 3, 4)  # a worse run keeps the best
    assert s.chapters["1"] == chapter(1).goal and s.chapter_scores["1"] == 12 and s.chapter_runs["1"] == 3
    # A save from before runs were counted: a met chapter still opens the next.
    old = type(s).from_dict({k: v for k, v in s.to_dict().items() if k != "chapter_runs"})
    assert old.chapter_runs["1"] == 0 and chapter_reached(old, 2)


def test_a_missed_outro_goes_on_to_the_next_chapter_or_again_and_the_list_moves_by_arrow_keys(tmp_path):
    app = make_app(tmp_path)
    play = app.start_chapter(1, seed=3)
    for _ in range(2000):  # every request dropped in the middle, the careless way: a short run
        if app.top is not play:
            break
        key(app, pygame.K_SPACE)
        for _ in range(20):
            app.update(STEP_MS)
    settle(app, play)
    outro = app.top
    assert isinstance(outro, ChapterOutroScene) and not outro.met
    assert [b.name for b in outro.buttons] == ["next", "retry", "report"]
    assert outro.ended and outro.ended[0].startswith("ENDED: ")  # what ended it, as its report says
    key(app, pygame.K_t)  # TRY AGAIN: its intro was read a run ago, so straight into a new run
    assert isinstance(app.top, PlayScene) and app.top.chapter == 1 and app.top is not play
    app.show_chapters()
    listing = app.top
    assert isinstance(listing, ChapterListScene) and listing.selected == 2  # chapter 2: next, and open
    key(app, pygame.K_UP)
    assert listing.selected == 1 and listing.buttons[1].label == "PLAY: CHAPTER 1"
    key(app, pygame.K_UP)
    assert listing.selected == 1
    key(app, pygame.K_DOWN)
    key(app, pygame.K_DOWN)  # chapter 3 is not open: the choice stays on 2
    assert listing.selected == 2 and listing.buttons[1].label == "CONTINUE: CHAPTER 2"
    key(app, pygame.K_RETURN)
    assert isinstance(app.top, ChapterIntroScene) and app.top.chapter.number == 2


def test_in_the_browser_the_chapters_are_fetched_the_first_time_they_are_asked_for(tmp_path, monkeypatch):
    screens = sys.modules["ui.chapter_scenes"]  # what arrives with the pack (the same module)
    app = _title(tmp_path)
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "ui.chapter_scenes", None)  # not fetched yet
    monkeypatch.setattr(packs, "missing", lambda name, root=None: ["ui/chapter_scenes.py"])
    key(app, pygame.K_g)
    assert isinstance(app.top, TitleScene) and app.wanted_packs == ["chapters"]
    assert app.tr.msg(app.top.notice) == "loading the chapters ..."
    monkeypatch.setitem(sys.modules, "ui.chapter_scenes", screens)
    app.pack_arrived("chapters", None)
    assert isinstance(app.top, ChapterListScene) and app.wanted_packs == []
    # A pack that cannot come: the title says why.
    app.show_title()
    monkeypatch.setitem(sys.modules, "ui.chapter_scenes", None)
    key(app, pygame.K_g)
    app.pack_arrived("chapters", "later/chapters.tar.gz: offline")
    assert isinstance(app.top, TitleScene) and "offline" in app.tr.msg(app.top.notice)


def test_the_chapter_1_outro_says_what_ended_the_run():
    from dataclasses import replace

    from engine.outro import Figures
    from engine.reports import RunReport
    from ui import i18n
    from ui.chapter_text import meaning

    tr, one = i18n.catalogue("en"), chapter(1)
    fig = Figures(1.0, 10, 100, 8, 9, 0.3, 0.5, 140, 0, 0, None, None, None, None, None,
                  memory=(200, 0, 80, 0, 140 * 16))
    report = RunReport("oom", "", 3, "x", 0, 140, 0, 0.0, 0.3, 10, 12, 100, 100, 60_000.0, "contiguous",
                       cause_code="ceiling", usable_blocks=60, need=4)
    assert meaning(tr, one, report, fig) == tr.t("chapter.reserve.meaning_placed")  # mostly free: placement
    tight = replace(fig, reserved=40, memory=(200, 40 * 16, 80, 30 * 16, 70 * 16))
    assert meaning(tr, one, report, tight) == tr.t("chapter.reserve.meaning")  # reservations and holes
    waited = replace(report, outcome="overload", cause_code="deadline")
    assert meaning(tr, one, waited, fig) == tr.t("chapter.reserve.meaning_waited")


def test_a_paged_outro_whose_queue_filled_with_memory_free_says_split_would_have_admitted_them():
    from engine import rules as R
    from engine.outro import Figures
    from engine.reports import RunReport
    from ui import i18n
    from ui.chapter_text import ROOM_LEFT, ended, meaning

    tr, two = i18n.catalogue("en"), chapter(2)
    fig = Figures(1.3, 16, 300, 20, 22, 0.2, 0.1, 127, 0, 0, None, None, None, None, None)
    free = round(ROOM_LEFT * R.VISIBLE_CELLS)
    full = RunReport("overload", "", 40, "x", 0, free, 0, 0.0, 0.5, 16, 40, 300, 300, 78_000.0, "paged",
                     cause_code="queue_full", waiting=41, queue_max=40)
    assert meaning(tr, two, full, fig) == tr.t("chapter.paged.meaning_queue", free=free)
    assert ended(tr, full).startswith("ENDED: queue full: 41 requests waiting, more than 40")
    from dataclasses import replace
    tight = replace(full, free_cells=free - 1)  # memory itself was nearly gone: the chapter's own line
    assert meaning(tr, two, tight, fig) == tr.t("chapter.pages.meaning")
    assert ended(tr, replace(full, outcome="victory", cause_code="victory")) == ""
    # A deadline with memory free is not a full queue: the outro says which.
    late = replace(full, cause_code="deadline", waiting=31, waited_ms=30_000.0, need=2)
    assert meaning(tr, two, late, fig) == tr.t("chapter.paged.meaning_wait", free=free, deadline=30)
    assert "queue" not in meaning(tr, two, late, fig)


def test_a_window_started_with_chapter_n_opens_its_intro_or_with_scene_play_its_run(tmp_path):
    from ui.cli import parse

    app = make_app(tmp_path)
    app.first_screen(parse(["--chapter", "4"]), None, None)
    assert isinstance(app.top, ChapterIntroScene) and app.top.chapter.number == 4
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, TitleScene)
    app.first_screen(parse(["--chapter", "3", "--scene", "play", "--seed", "9"]), None, None)
    assert isinstance(app.top, PlayScene) and app.top.chapter == 3 and app.top.seed == 9


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_an_intro_is_as_tall_as_its_text_and_buttons_and_centred_where_the_dialog_is(tmp_path, layout):
    """(That its text and buttons never overlap is the chapter legibility test's, in test_ui_portrait.)"""
    app = make_app(tmp_path, layout=layout)
    short = 0
    for ch in CHAPTERS:
        app.show_chapter_intro(ch.number, fresh=True)
        intro = app.top
        dialog = pygame.Rect(app.layout.dialog)
        assert intro.rect.height <= dialog.height and abs(intro.rect.centery - dialog.centery) <= 1
        assert all(pygame.Rect(b.rect).bottom < intro.rect.bottom for b in intro.buttons)
        short += intro.rect.height < dialog.height
    assert short >= 4  # most intros are short cards, not tall empty ones
