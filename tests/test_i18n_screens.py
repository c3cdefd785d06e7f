"""Every screen in both languages: what the headless tool draws, and Korean text that fits."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pygame
import pytest

from tests.uikit import canvas, make_app
from ui import theme
from ui.cards import CARD_IDS, PAD, card_in
from ui.cli import SCENES, Options
from ui.headless import build
from ui.i18n import catalogue
from ui.layout import CARD
from ui.text import wrap

pytestmark = pytest.mark.usefixtures("clean_event_queue")
ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}


def picture(tmp_path, scene: str, language: str) -> bytes:
    app = make_app(tmp_path / language, language=language)
    build(app, Options(headless=True, frames=90, screenshot="x.png", scene=scene, mode="paged", autoplay=True,
                       seed=7, lang=language), 7)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(surface)
    return pygame.image.tobytes(surface, "RGB")


@pytest.mark.parametrize("scene", SCENES)
def test_every_scene_is_drawn_differently_in_korean(tmp_path, scene):
    assert picture(tmp_path, scene, "ko") != picture(tmp_path, scene, "en")


def test_headless_tool_draws_korean_and_refuses_an_unknown_language(tmp_path):
    out = tmp_path / "ko.png"
    args = [sys.executable, "main.py", "--headless", "--frames", "90", "--scene", "pause", "--mode", "paged",
            "--autoplay", "--seed", "7", "--screenshot"]
    ok = subprocess.run(args + [str(out), "--lang", "ko"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0 and out.is_file(), ok.stderr
    bad = subprocess.run(args + [str(tmp_path / "x.png"), "--lang", "xx"], cwd=ROOT, env=ENV, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "--lang" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "x.png").exists()


def test_lab_tool_takes_a_language(tmp_path):
    out = tmp_path / "lab.png"
    ok = subprocess.run([sys.executable, "-m", "ui.lab_scene", "--lang", "ko", "--frames", "60", "--screenshot",
                         str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and out.is_file(), ok.stderr
    bad = subprocess.run([sys.executable, "-m", "ui.lab_scene", "--lang", "xx"], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_card_title_fits_its_card(language):
    canvas()
    tr = catalogue(language)
    for card_id in CARD_IDS:  # the title fits its row (tests/test_ui_session.py: the body)
        card = card_in(tr, card_id)
        assert theme.font_for(card.title, theme.BODY).size(card.title)[0] <= CARD[2] - 2 * PAD, card_id


def _recorded(text_cache, monkeypatch, size) -> list:
    drawn: list = []
    blit = text_cache.blit

    def recording(surface, text, px, colour, pos, anchor="topleft"):
        r = blit(surface, text, px, colour, pos, anchor)
        if surface.get_size() == size:
            drawn.append((text, r))
        return r

    monkeypatch.setattr(text_cache, "blit", recording)
    return drawn


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("size", [(800, 580), (420, 700)])
@pytest.mark.parametrize("select", [False, True])
def test_lab_text_never_overlaps_or_leaves_the_screen(tmp_path, monkeypatch, language, size, select):
    from ui.lab_cli import select_busiest
    from ui.lab_scene import LabScene

    canvas()
    app = make_app(tmp_path, language=language)
    lab = LabScene(app, size=size)
    while not lab.ready:
        lab.update(theme.STEP_MS)
    for _ in range(240):
        lab.update(theme.STEP_MS)
    if select:
        select_busiest(lab)
    lab.bring_up_to_date()
    drawn = _recorded(lab.text, monkeypatch, size)
    lab.chrome = lab.plot_surface = None
    lab.draw(pygame.Surface(size))
    assert len(drawn) > 15
    screen = pygame.Rect((0, 0), size)
    for text, r in drawn:
        assert screen.contains(r), (text, r)
    for b in lab.buttons:
        inside = [(t, r) for t, r in drawn if pygame.Rect(b.rect).colliderect(r)]
        for t, r in inside:
            assert pygame.Rect(b.rect).inflate(0, 4).contains(r), (b.name, t, r)  # line boxes may poke out 2 px
    for (ta, a), (tb, b) in itertools.combinations(drawn, 2):
        if a != b:
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, a, tb, b)


def _buttons(app) -> list:
    """The buttons on screen: the console's during play, else those of the scene or dialog on top."""
    from ui.play_scene import PlayScene
    from ui.widgets import Button
    if isinstance(app.top, PlayScene):
        return list(app.view.buttons)
    found: list = []
    for value in vars(app.top).values():
        items = value if isinstance(value, (list, tuple)) else [value]
        found += [b for b in items if isinstance(b, Button)]
    return found


@pytest.mark.parametrize("language", ["ko"])
@pytest.mark.parametrize("layout", ["landscape", "portrait"])
@pytest.mark.parametrize("scene", SCENES)
def test_every_label_fits_its_button_with_room_to_spare(tmp_path, monkeypatch, language, layout, scene):
    """No label overflows its button or touches its edges ("일시정지 Esc", "오른 회전" did): a
    line drawn over a button stays LABEL_PAD inside it on both sides, in both layouts."""
    from ui.widgets import LABEL_PAD
    app = make_app(tmp_path, language=language, layout=layout)
    build(app, Options(headless=True, frames=60, screenshot="x.png", scene=scene, mode="paged", autoplay=True,
                       seed=7, lang=language, layout=layout), 7)
    from ui.play_scene import PlayScene
    screen = pygame.Surface(app.layout.size)
    drawn: list = []
    play = isinstance(app.top, PlayScene)
    blit, on_top = app.text.blit, [play]  # play: all of it is the console, with its baked layers

    def recording(surface, text, px, colour, pos, anchor="topleft"):
        r = blit(surface, text, px, colour, pos, anchor)
        if on_top[0] and (surface is screen or (play and surface.get_size() == screen.get_size())):
            drawn.append((text, r))
        return r

    top_draw = app.top.draw

    def drawing_top(surface, *args, **kwargs):  # only what the scene on top draws, not what lies under it
        on_top[0] = True
        return top_draw(surface, *args, **kwargs)

    from ui import overlays
    frame = overlays.draw_dialog

    def dialog(*args, **kwargs):  # what a dialog covers is not its own
        drawn.clear()
        return frame(*args, **kwargs)

    monkeypatch.setattr(app.text, "blit", recording)
    monkeypatch.setattr(app.top, "draw", drawing_top)
    monkeypatch.setattr(overlays, "draw_dialog", dialog)
    if isinstance(app.top, PlayScene):
        app.view._background = app.view._bake_background()  # the controls are baked: bake them again, seen
    app.draw(screen)
    buttons = _buttons(app)
    assert buttons, scene
    tight = []
    for b in buttons:
        rect = pygame.Rect(b.rect)
        for text, r in drawn:
            if rect.collidepoint(r.center) and r.height <= rect.height and r.width > 16:  # its label, not a key letter
                if r.left < rect.left + LABEL_PAD - 1 or r.right > rect.right - LABEL_PAD + 1:
                    tight.append((b.name, text, r.width, rect.width))
    assert not tight, tight


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_every_help_page_ends_above_its_tabs(tmp_path, monkeypatch, language, layout):
    """A help page has no scroll: every line of it stays on screen, above a phone's page tabs
    (the goal's last line once fell behind them)."""
    app = make_app(tmp_path, language=language, layout=layout)
    app.show_help()
    help_scene = app.top
    tabs = [b.rect for b in help_scene.buttons if b.name in help_scene.PAGES]
    bottom = min(r[1] for r in tabs) if app.layout.portrait else app.layout.height
    blit = app.text.blit
    drawn: list = []

    def recording(surface, text, px, colour, pos, anchor="topleft"):
        r = blit(surface, text, px, colour, pos, anchor)
        drawn.append((text, r))
        return r

    monkeypatch.setattr(app.text, "blit", recording)
    pages = help_scene.PAGES if app.layout.portrait else help_scene.PAGES[:2]
    for page in pages:
        help_scene.click(page)
        drawn.clear()
        help_scene._render()
        assert drawn, page
        for text, r in drawn:
            assert r.bottom <= bottom, (page, text, r.bottom, bottom)
