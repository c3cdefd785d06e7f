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


def _korean_screens(tmp_path, layout: str):
    """(name, app) for every Korean screen but the chapters' (tests/test_ui_portrait.py reads
    those): the title, play in both allocators, details, each help page, pause, each run report
    (a contiguous OOM and its BOARD view, both overloads, a victory)."""
    from tests.test_ui_portrait import _extra, _scene
    from ui.headless import bot_play, settle
    from ui.play_scene import PlayScene

    for scene, extra in (("title", None), ("play", None), ("play", "contiguous"), ("play", "details"),
                         ("pause", None), ("oom", None), ("oom", "peek"), ("victory", None)):
        if extra == "details" and layout != "portrait":
            continue  # details is a phone's screen: the landscape console shows it all
        app = _scene(tmp_path / f"{scene}-{extra}", layout, scene, language="ko")
        _extra(app, extra)
        yield f"{scene} {extra or ''}", app
    app = _scene(tmp_path / "help", layout, "help", language="ko")
    for page in app.top.PAGES if app.layout.portrait else app.top.PAGES[:2]:
        app.top.click(page)
        yield f"help {page}", app
    for name, skill, seed in (("deadline", None, 1), ("queue full", 0.3, 2)):
        app = make_app(tmp_path / name, layout=layout, language="ko")
        play = PlayScene(app, mode="paged", seed=seed)
        app.reset(play)
        if skill is None:
            while not play.game.over:  # nobody plays: the first request misses its deadline
                play.session.step(100.0)
        else:
            bot_play(play, skill, seed)
        settle(app, play)
        assert play.game.result.cause_code == name.replace(" ", "_"), play.game.result.cause_code
        yield f"overload, {name}", app


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_no_korean_text_is_cut_or_wraps_more_than_twice(tmp_path, monkeypatch, layout):
    """Every Korean screen, drawn whole: no text cut short with "...", no line (a label, a log
    line, a sentence) wrapped onto more than three lines of its panel."""
    from tests.test_ui_portrait import _draw_recorded
    from tests.uikit import prose_faults, record_prose
    from ui.lab_scene import LabScene

    faults = []
    for name, app in _korean_screens(tmp_path, layout):
        with monkeypatch.context() as m:
            wraps, cuts = record_prose(m)
            assert _draw_recorded(app, m), name
            faults += [f"{name}: {f}" for f in prose_faults(wraps, cuts)]
            assert wraps, name
    app = make_app(tmp_path / "lab", layout=layout, language="ko")
    for select in (False, True):
        lab = LabScene(app, size=app.layout.size)
        while not lab.ready:
            lab.update(theme.STEP_MS)
        for _ in range(240):
            lab.update(theme.STEP_MS)
        if select:
            from ui.lab_cli import select_busiest
            select_busiest(lab)
        lab.bring_up_to_date()
        with monkeypatch.context() as m:
            wraps, cuts = record_prose(m)
            lab.chrome = lab.plot_surface = None
            lab.draw(pygame.Surface(app.layout.size))
            faults += [f"lab: {f}" for f in prose_faults(wraps, cuts)]
    assert not faults, "\n".join(faults)


def test_a_cut_or_a_long_line_is_caught(tmp_path, monkeypatch):
    from tests.uikit import prose_faults, record_prose
    from ui import chapter_scenes
    canvas()
    with monkeypatch.context() as m:
        wraps, cuts = record_prose(m)
        chapter_scenes.fit("오늘의 도전 아주 긴 이름", theme.BODY, 40)
        chapter_scenes.wrap("짧지 않은 한 줄 라벨이 좁은 패널에서 네 줄로 접힌다", theme.BODY, 60)
        chapter_scenes.wrap("한 문장입니다. 두 번째 문장입니다. 문단은 길어도 됩니다.", theme.BODY, 60)
    faults = prose_faults(wraps, cuts)
    assert len(faults) == 2 and faults[0].startswith("cut:") and "라벨" in faults[1], faults


def _long_log_lines() -> dict[str, str]:
    """Every Korean log line as long as a run makes it: the longest request name, a request's
    most blocks and tokens, three-digit counts of the board's blocks, the longest admissions."""
    from engine import rules as R
    from engine.pieces import PIECES
    from ui.i18n import Msg
    ko = catalogue("ko")
    name = max((p.name for p in PIECES.values()), key=len)
    req = Msg.of("log.req", id="167", name=name)
    most, tokens = R.BLOCKS_PER_REQUEST, R.BLOCKS_PER_REQUEST * R.TOKENS_PER_BLOCK
    values = dict(req=req, id="167", name=name, back=name, tokens=tokens, blocks=most, waiting=141, max=140,
                  free=196, running=123, need=4, sealed=157, open=112, seconds=30, waited=30, deadline=30,
                  pages=most, holes=most, cells=" ".join(f"{i}->({i + 3},19)" for i in range(most)), page=3,
                  cell="(5,19)", wasted=most, place=3, budget=2048, level=12, served=1234, mode="연속",
                  label="연속", summary=ko.t("mode.contiguous.summary"), percent="93%", stall=480)
    out = {}
    for key in ko.messages:
        if not key.startswith("log.") or key.startswith(("log.cause.", "log.admitted_", "log.preempt.")):
            continue
        params = dict(values)
        if key.startswith("log.admitted."):
            extras = ("log.admitted_reserved",) if key.endswith("whole") else ()  # contiguous only
            for extra in (*extras, "log.admitted_cached", "log.admitted_resumed.recompute"):
                for tail in ("log.admitted_chunked", "log.admitted_stall"):
                    params.update(extra=Msg.of(extra, reserved=most, cached=most), tail=Msg.of(tail, stall=480))
                    out[f"{key} {extra} {tail}"] = ko.t(key, **params)
            continue
        if key == "log.oom":
            for cause in [k for k in ko.messages if k.startswith("log.cause.")]:
                free = most - 1 if "memory_full" in cause else 196  # memory full: fewer free than it needs
                params["cause"] = Msg.of(cause, need=most, free=free, sealed=157, open=112, seconds=30)
                out[f"{key} {cause}"] = ko.t(key, **params)
            continue
        if key == "log.preempt_mode":
            params["mode"] = Msg.of("log.preempt.recompute")
        if key in ("log.split", "log.paged"):
            params["cells"] = ""  # the block table's cells are data, listed as long as the request
        try:
            out[key] = ko.t(key, **params)
        except KeyError:  # a line with a placeholder of its own (the UI's text)
            params.setdefault("text", "x" * 10)
            out[key] = ko.t(key, **params)
    return out


def test_every_korean_log_line_takes_at_most_three_lines_of_the_narrowest_log():
    from ui import layout as layouts
    from ui.log_console import INDENT, PAD
    canvas()
    lay = layouts.layout_for("landscape")
    width = lay.log[2] - 2 * PAD - INDENT
    long = {key: wrap(f"03:18 {'ERROR' if '[FATAL]' in text else 'INFO'} {text}", lay.text.small, width)
            for key, text in _long_log_lines().items()}
    assert len(long) > 40
    assert {k: len(v) for k, v in long.items() if len(v) > 3} == {}
