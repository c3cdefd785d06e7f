"""Both layouts, every screen: legible text at the target embed, nothing overlapping or off the
canvas, finger-sized targets; screens reached through the app; the layout switched mid-run."""
from __future__ import annotations

import itertools

import pygame
import pytest
from tests.uikit import centre, click, key, make_app, prose_faults, pump, record_prose

from engine import Game
from ui import layout as layouts
from ui.cli import Options
from ui.headless import build
from ui.layout import TOUCH_CSS_PX, layout_for
from ui.overlays import DetailsScene, HelpScene, PauseScene, ResultScene
from ui.play_scene import PlayScene
from ui.title_scene import TitleScene

pytestmark = pytest.mark.usefixtures("clean_event_queue")

LAYOUTS = ("landscape", "portrait")
SCENES = ("title", "play", "help", "pause", "oom", "victory")
MIN_CSS_PX = 11  # smallest readable text in the article's iframe

GAME_DEFAULTS = Game.__init__.__defaults__ or ()  # seed, mode, endless, features, then the rest


def _scene(tmp_path, layout: str, scene: str, frames: int = 60, language: str = "en"):
    app = make_app(tmp_path, layout=layout, language=language)
    build(app, Options(headless=True, frames=frames, screenshot="x.png", scene=scene, mode="paged",
                       autoplay=True, seed=7, layout=layout), 7)
    return app


def _extra(app, extra: str | None) -> None:
    """Screens reached from a built one: the help's second page, the BOARD view, DETAILS."""
    if extra == "controls":
        app.top.click("controls")
    elif extra == "peek":
        app.top.click("board")
    elif extra == "details":
        app.show_details(app.top)
    elif extra == "contiguous":  # the other allocator's panels (no split meter)
        app.top.set_mode("contiguous")


def _record(app, monkeypatch) -> list[tuple[str, int, pygame.Rect, bool]]:
    """(text, size, rect, on the canvas itself) of every string drawn from now on."""
    drawn: list = []
    blit = app.text.blit
    size = app.layout.size

    def recording(surface, text, px, colour, pos, anchor="topleft"):
        r = blit(surface, text, px, colour, pos, anchor)
        drawn.append((text, px, r, surface.get_size() == size))
        return r

    monkeypatch.setattr(app.text, "blit", recording)
    return drawn


CASES = [(layout, scene, None) for layout in LAYOUTS for scene in SCENES] + [
    (layout, scene, extra) for layout in LAYOUTS
    for scene, extra in (("oom", "peek"), ("help", "controls"), ("play", "contiguous"))] + [
    ("portrait", "play", "details")]


def _forget_cached_text(app) -> None:
    """Make every cached text panel render again (the log, cards, the help page)."""
    for scene in app.scenes:
        if isinstance(scene, PlayScene):
            scene.cards.restyle((0, 0, 1, 1), (1, 1), "")
            scene.session.log.restyle((0, 0, 1, 1), 1)
        scene.relayout()


def _draw_recorded(app, monkeypatch) -> list:
    """Draw the top screen with every text rendered under the recorder.

    An overlay's frozen backdrop (the game below) is drawn first, unrecorded: only what the
    overlay itself draws is checked against its own texts.
    """
    surface = pygame.Surface(app.layout.size)
    top = app.top
    if not isinstance(top, (PlayScene, TitleScene)):
        app.draw(surface)
        _forget_cached_text(app)
        app.draw(surface)  # the backdrop again, from fresh caches
        drawn = _record(app, monkeypatch)
        _forget_cached_text(app)
        top.draw_backdrop(surface)
        del drawn[:]
        top.draw(surface)
        return drawn
    drawn = _record(app, monkeypatch)
    if isinstance(top, PlayScene):  # the console's baked background too (the title covers it)
        app.view = type(app.view)(app.text, app.layout, app.tr)
    _forget_cached_text(app)
    app.draw(surface)
    return drawn


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout,scene,extra", CASES)
def test_text_is_legible_inside_the_canvas_and_never_overlaps(tmp_path, monkeypatch, layout, scene, extra, language):
    app = _scene(tmp_path, layout, scene, language=language)
    _extra(app, extra)
    lay = app.layout
    assert lay.text.small * lay.embed_scale >= MIN_CSS_PX
    drawn = _draw_recorded(app, monkeypatch)
    assert len(drawn) >= (2 if extra == "peek" else 8)
    for text, px, r, _ in drawn:
        assert px >= lay.text.small, (text, px)
    on_canvas = [(t, r) for t, _, r, top in drawn if top]
    inside = lay.canvas.inflate(-2, -2)
    for text, r in on_canvas:
        assert inside.contains(r), (text, r)
    for (ta, a), (tb, b) in itertools.combinations(on_canvas, 2):
        if a != b:  # the same string drawn twice in one place (a pulsing label) is fine
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, a, tb, b)


def _buttons(app) -> list:
    top = app.top
    if isinstance(top, PlayScene):
        return app.view.buttons
    if isinstance(top, TitleScene):
        return [*top.mode_buttons, top.start_button, top.chapters_button, top.daily_button, *top.side_buttons]
    return list(top.buttons)


@pytest.mark.parametrize("layout,scene,extra", CASES)
def test_every_control_is_a_finger_sized_target(tmp_path, layout, scene, extra):
    app = _scene(tmp_path, layout, scene, frames=5)
    _extra(app, extra)
    lay = app.layout
    if lay.portrait:
        assert lay.touch * lay.embed_scale >= TOUCH_CSS_PX  # 44 CSS px at 360 px wide
    buttons = _buttons(app)
    assert buttons or (isinstance(app.top, ResultScene) and app.top.peeking)
    for b in buttons:
        target = b.target
        assert target.width >= lay.touch and target.height >= lay.touch, (b.name, target)
        assert lay.canvas.contains(pygame.Rect(b.rect)), b.name
    for a, b in itertools.combinations(buttons, 2):
        assert not a.target.colliderect(b.target), (a.name, b.name)


@pytest.mark.parametrize("name", LAYOUTS)
def test_panels_of_the_console_fit_and_do_not_overlap(name):
    lay = layout_for(name)
    rects = {"board": lay.board, "header": lay.header, **dict(lay.panels),
             **{f"stat{i}": r for i, r in enumerate(lay.stats)},
             **{f"ctl_{k}": r for k, r in lay.controls.items()}}
    rects.pop("mode_note", None)  # inside the allocator panel, by design
    for n, r in rects.items():
        assert lay.canvas.contains(pygame.Rect(r)), n
    inner = {"mode_note"}
    for (a, ra), (b, rb) in itertools.combinations(rects.items(), 2):
        if a not in inner and b not in inner:
            assert not pygame.Rect(ra).colliderect(pygame.Rect(rb)), (a, b)


def test_portrait_fits_a_phone_embed_and_keeps_the_landscape_console():
    p, ls = layout_for("portrait"), layout_for("landscape")
    assert ls.size == (800, 580) and ls.board == (290, 42, 220, 440)
    w, h = p.size
    assert w <= 424 and h <= 706 and h >= 1.35 * w
    assert min(360 / w, 600 / h) >= 0.85
    assert p.cell > ls.cell, "the phone's board cells are bigger on the canvas than the desktop's"
    assert p.board[3] >= 0.65 * h, "the board takes most of the phone's height"
    assert p.card[2] >= w - 2 * p.margin, "teaching cards span the full width"
    with pytest.raises(ValueError, match="portrait"):
        layout_for("sideways")
    assert layouts.BOARD == ls.board  # older names are the landscape console's


def test_screens_move_through_the_app(tmp_path):
    app = make_app(tmp_path, layout="portrait")
    app.show_title(seed=1)
    key(app, pygame.K_RETURN)
    play = app.top
    assert isinstance(play, PlayScene)
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, PauseScene)
    key(app, pygame.K_h)
    assert isinstance(app.top, HelpScene)
    key(app, pygame.K_ESCAPE)
    key(app, pygame.K_ESCAPE)
    assert app.top is play
    click(app, centre(app.view.details_button.rect))
    assert isinstance(app.top, DetailsScene)
    t0 = play.game.time_ms
    pump(app, 30)
    assert play.game.time_ms == t0, "the game waits while DETAILS is read"
    click(app, centre(app.top.buttons[0].rect))
    assert app.top is play
    key(app, pygame.K_ESCAPE)
    key(app, pygame.K_q)
    assert isinstance(app.top, TitleScene)


def test_no_screen_imports_another():
    import ast
    from pathlib import Path

    screens = {"title_scene", "play_scene", "overlays"}
    for name in screens:
        tree = ast.parse((Path(__file__).parents[1] / "ui" / f"{name}.py").read_text())
        imported = {n.module.split(".")[-1] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not imported & (screens - {name}), (name, imported & screens)


def test_the_allocator_switch_and_the_log_strip_answer_a_tap(tmp_path):
    app = make_app(tmp_path, layout="portrait")
    play = app.start_game("contiguous", seed=3)
    pump(app, 2)
    click(app, centre(app.view.modes[0].rect))
    assert play.game.mode == "paged" and app.settings.mode == "paged"
    play.cards.dismiss()
    click(app, centre(app.layout.panels["strip"]))
    assert isinstance(app.top, DetailsScene)


def test_turning_the_phone_mid_run_keeps_the_run(tmp_path):
    app = make_app(tmp_path, layout="landscape")
    play = app.start_game("paged", seed=4, autoplay=True)
    pump(app, 400)
    key(app, pygame.K_ESCAPE)
    pieces, score = play.game.pieces, play.game.score
    assert app.set_layout("portrait") and not app.set_layout("portrait")
    assert app.surface.get_size() == (420, 700)
    assert isinstance(app.top, PauseScene) and app.scenes[0] is play
    assert pygame.Rect(app.top.buttons[0].rect).right <= 420
    app.draw(app.surface)
    key(app, pygame.K_ESCAPE)
    assert app.top is play and (play.game.pieces, play.game.score) == (pieces, score)
    assert play.gestures.region == pygame.Rect(app.layout.board)
    assert play.cards.rect == app.layout.card
    pump(app, 60)
    app.draw(app.surface)
    assert play.game.pieces >= pieces
    app.show_details(play)
    app.draw(app.surface)
    assert app.set_layout("landscape") and app.top is play  # the console shows all DETAILS held
    app.draw(app.surface)
    assert app.surface.get_size() == (800, 580)


def test_key_labels_come_from_the_key_table():
    from ui.console_view import control_buttons
    from ui.input import KEYS, Binding, Command
    from ui.keys import key_hint

    assert key_hint("left") == "A / Left" and key_hint(Command.PAUSE) == "Esc"
    hints = {b.name: b.hint for b in control_buttons(layout_for("landscape"))}
    assert hints["split"] == "Shift / P" and hints["rotate_cw"] == "W / X / Up"
    moved = (*KEYS, Binding(pygame.K_k, "hold", "K"))
    assert "K" in " / ".join(b.label for b in moved if b.target == "hold")


def test_the_page_and_the_game_agree_on_the_canvas_sizes():
    import re
    from pathlib import Path

    page = (Path(__file__).parents[1] / "web" / "vram-tetris.tmpl").read_text()
    found = dict(re.findall(r"(landscape|portrait): \[(\d+, \d+)\]", page))
    assert {k: tuple(map(int, v.split(", "))) for k, v in found.items()} == dict(layouts.SIZES)
    small = dict(re.findall(r"(landscape|portrait): (\d+)[,}\s]", page.split("MIN_TEXT = ")[1][:80]))
    assert {k: int(v) for k, v in small.items()} == {n: layout_for(n).text.small for n in LAYOUTS}


def test_in_the_browser_the_game_follows_the_page(monkeypatch):
    import sys
    import types

    from ui import web

    assert web.page_layout() is None  # not a browser
    answers = iter(["portrait", "upside-down"])
    page = types.SimpleNamespace(vtBoot=types.SimpleNamespace(layout=lambda: next(answers)))
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "platform", types.SimpleNamespace(window=page))
    assert web.page_layout() == "portrait"
    assert web.page_layout() is None  # nonsense from the page changes nothing
    monkeypatch.setitem(sys.modules, "platform", types.SimpleNamespace())
    assert web.page_layout() is None  # an older page without the bridge


def test_layout_reaches_the_command_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from ui.cli import UsageError, parse

    assert parse(["--headless", "--frames", "2", "--screenshot", "a.png", "--layout", "portrait"]).layout == "portrait"
    assert parse([]).layout == "landscape"
    with pytest.raises(UsageError, match="layout"):
        parse(["--layout", "sideways"])
    root = Path(__file__).parents[1]
    env = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin"}
    out = tmp_path / "p.png"
    proc = subprocess.run([sys.executable, str(root / "main.py"), "--headless", "--layout", "portrait",
                           "--frames", "90", "--scene", "oom", "--mode", "paged", "--autoplay",
                           "--seed", "7", "--screenshot", str(out)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    img = pygame.image.load(str(out))
    w, h = img.get_size()
    assert w <= 424 and 1.35 * w <= h <= 706
    colours = {img.get_at((x, y))[:3] for x in range(0, w, 7) for y in range(0, h, 7)}
    assert len(colours) > 20, "not blank"
    bad = subprocess.run([sys.executable, str(root / "main.py"), "--layout", "sideways"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert [line for line in bad.stderr.splitlines() if "error" in line] == [
        "main.py: error: argument --layout: invalid choice: 'sideways' (choose from 'landscape', "
        "'portrait') (try main.py --help)"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_lab_opens_in_the_apps_layout(tmp_path, layout):
    app = make_app(tmp_path, layout=layout)
    app.show_title(seed=1)
    key(app, pygame.K_l)
    lab = app.top
    assert type(lab).__name__ == "LabScene"
    assert lab.layout.portrait == (layout == "portrait")
    pump(app, 5)
    app.draw(app.surface)
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, TitleScene)


def test_a_screen_that_cannot_rearrange_keeps_its_layout_until_it_closes(tmp_path):
    app = make_app(tmp_path, layout="landscape")
    app.show_title(seed=1)
    assert app.open_lab()
    lab = app.top
    assert not lab.can_relayout and app.scenes[0].can_relayout
    assert not app.want_layout("portrait")  # the LAB keeps its landscape arrangement
    assert app.layout.name == "landscape" and app.surface.get_size() == (800, 580)
    app.back()  # the LAB closes: the title follows the frame at once
    assert app.layout.name == "portrait" and app.surface.get_size() == (420, 700)
    assert isinstance(app.top, TitleScene)
    assert app.want_layout("portrait") is False and app.wanted_layout is None
    assert app.want_layout("landscape") and app.layout.name == "landscape"


def test_the_details_block_table_does_not_point_at_a_board_it_hides(tmp_path, monkeypatch):
    app = make_app(tmp_path, layout="portrait")
    play = app.start_game("paged", seed=3, autoplay=True)
    for _ in range(200):
        if play.game.block_table is not None:
            break
        pump(app, 30)
    assert play.game.block_table is not None
    click(app, centre(app.view.details_button.rect))
    assert isinstance(app.top, DetailsScene)
    drawn: list[str] = []
    blit = app.text.blit

    def recording(surface, text, *args, **kwargs):
        drawn.append(text)
        return blit(surface, text, *args, **kwargs)

    monkeypatch.setattr(app.text, "blit", recording)
    app.top.draw(app.surface)
    assert not any("outlined on the board" in text for text in drawn)
    assert any("row 0 is the top" in text for text in drawn)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_phone_title_keeps_clear_of_the_header_switch_and_words_whole(tmp_path, monkeypatch, language):
    app = _scene(tmp_path, "portrait", "title", language=language)
    drawn = _draw_recorded(app, monkeypatch)
    tr = app.tr
    title = [r for text, _, r, _ in drawn if text == tr.t("game.title")]
    assert title, "the game's name is drawn in the header"
    for b in app.top.side_buttons:
        assert not pygame.Rect(b.rect).colliderect(title[0]), b.name
    texts = {text for text, *_ in drawn}
    for name in ("title.switch.sound", "title.switch.cards", "title.switch.goal"):
        label = tr.t(name)
        assert label in texts or all(word in texts for word in label.split()), (name, label)


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_pause_screen_says_what_stops_in_whole_words(tmp_path, monkeypatch, layout, language):
    app = _scene(tmp_path, layout, "pause", language=language)
    drawn = {text for text, *_ in _draw_recorded(app, monkeypatch)}
    assert app.tr.t("pause.idle") in drawn  # drawn whole, not cut short with "..."


def test_a_phone_sets_the_step_budget_on_the_details_sheet_and_the_replay_has_it(tmp_path, monkeypatch):
    from engine import Game, Input
    from engine import rules as R
    from engine.features import RULES3

    app = make_app(tmp_path, layout="portrait")
    play = PlayScene(app, mode="paged", seed=4)
    app.reset(play)
    app.show_details(play)
    details = app.top
    assert isinstance(details, DetailsScene)
    up = next(b for b in details.buttons if b.name == "budget_up")
    down = next(b for b in details.buttons if b.name == "budget_down")
    assert up.rect[2] >= app.layout.touch and down.rect[3] >= app.layout.touch  # finger-sized
    budget = play.game.serving.prefill.budget
    click(app, centre(up.rect))
    assert app.top is details and play.game.serving.prefill.budget == R.BUDGETS[R.BUDGETS.index(budget) + 1]
    click(app, centre(down.rect))
    click(app, centre(down.rect))
    assert play.game.serving.prefill.budget == R.BUDGETS[R.BUDGETS.index(budget) - 1]
    pressed = [i for _, inputs in play.tape.replay.steps for i in inputs]
    assert pressed.count(Input.BUDGET_UP) == 1 and pressed.count(Input.BUDGET_DOWN) == 2
    app.draw(app.surface)
    # Rules without chunked prefill have no budget: no buttons for it.
    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, RULES3, *GAME_DEFAULTS[4:]))
    plain = PlayScene(app, mode="paged", seed=4)
    app.reset(plain)
    app.show_details(plain)
    assert [b.name for b in app.top.buttons] == ["close"]


def _legible(app, drawn, what: str) -> None:
    """Every string at least the small size, inside the canvas, none over another, none cut short."""
    lay = app.layout
    assert len(drawn) >= 4, what
    for text, px, r, _ in drawn:
        assert px >= lay.text.small, (what, text, px)
        assert not text.endswith("..."), (what, text)
    on_canvas = [(t, r) for t, _, r, top in drawn if top]
    inside = lay.canvas.inflate(-2, -2)
    for text, r in on_canvas:
        assert inside.contains(r), (what, text, r)
    for (ta, a), (tb, b) in itertools.combinations(on_canvas, 2):
        if a != b:
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (what, ta, a, tb, b)


def _targets_apart(app, what: str) -> None:
    lay = app.layout
    buttons = list(app.top.buttons)
    for b in buttons:
        assert b.target.width >= lay.touch and b.target.height >= lay.touch, (what, b.name)
        assert lay.canvas.contains(pygame.Rect(b.rect)), (what, b.name)
    for a, b in itertools.combinations(buttons, 2):
        assert not a.target.colliderect(b.target), (what, a.name, b.name)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_chapter_screen_is_legible_and_finger_sized(tmp_path, monkeypatch, layout):
    """The chapter list, and each chapter's intro and (after the bot has played it) its outro, in
    both layouts and both languages (each screen read in English, then switched live to Korean):
    text at least 11 CSS px inside the canvas, nothing over anything, nothing cut with "...",
    no Korean line wrapped more than twice, every button a finger's size."""
    from engine.chapters import CHAPTERS
    from ui.chapter_scenes import ChapterIntroScene, ChapterListScene, ChapterOutroScene
    from ui.headless import bot_play, settle

    app = make_app(tmp_path, layout=layout, language="en")
    assert app.layout.text.small * app.layout.embed_scale >= MIN_CSS_PX

    def check(kind: type, what: str) -> None:
        for language in ("en", "ko"):
            with monkeypatch.context() as m:
                wraps, cuts = record_prose(m)  # a switch lays the screen out again: its wraps are seen
                app.set_language(language)
                assert isinstance(app.top, kind), (what, app.top)
                _legible(app, _draw_recorded(app, m), f"{what} ({language})")
                assert language == "en" or not prose_faults(wraps, cuts), (what, prose_faults(wraps, cuts))
            _targets_apart(app, what)
            if isinstance(app.top, ChapterOutroScene):
                assert app.top.content_bottom <= app.top.buttons[0].rect[1] - 4, f"{what} runs into its buttons"
        app.set_language("en")

    app.show_chapters()
    check(ChapterListScene, "list")
    for ch in CHAPTERS:
        app.show_chapter_intro(ch.number, fresh=True)
        check(ChapterIntroScene, f"intro {ch.number}")
        play = app.start_chapter(ch.number, seed=5)
        bot_play(play, 0.8, 5)
        settle(app, play)
        check(ChapterOutroScene, f"outro {ch.number}")
