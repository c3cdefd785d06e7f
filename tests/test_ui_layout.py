"""The canvas layout fits, nothing overlaps, and text stays legible in the 680 x 600 embed."""
from __future__ import annotations

import itertools

import pygame
from tests.uikit import canvas

from ui import layout as L
from ui import theme
from ui.text import TextCache, fit, wrap


def test_canvas_fits_the_embed_limit():
    assert theme.CANVAS_W <= 800 and theme.CANVAS_H <= 580
    assert L.BOARD[2] == 10 * 22 and L.BOARD[3] == 20 * 22


def test_smallest_text_stays_above_11_px_in_the_embed():
    canvas()
    assert theme.MIN_TEXT_PX * theme.EMBED_SCALE >= 11
    assert theme.font(8).get_height() == theme.font(theme.MIN_TEXT_PX).get_height()


def _panels() -> dict[str, tuple[int, int, int, int]]:
    panels = {"board": L.BOARD, "header": L.HEADER, "resident": L.RESIDENT, "mode": L.MODE_PANEL,
              "log": L.LOG, "score": L.SCORE, "hold": L.HOLD, "queue": L.QUEUE, "preempt": L.PREEMPT,
              "blocks": L.BLOCK_TABLE}
    panels.update({f"stat{i}": r for i, r in enumerate(L.STATS)})
    panels.update({f"ctl_{k}": r for k, r in L.control_rects().items()})
    return panels


def test_every_panel_is_inside_the_canvas():
    screen = pygame.Rect(0, 0, *theme.CANVAS_SIZE)
    for name, r in _panels().items():
        assert screen.contains(pygame.Rect(r)), name


def test_panels_do_not_overlap():
    for (a, ra), (b, rb) in itertools.combinations(_panels().items(), 2):
        assert not pygame.Rect(ra).colliderect(pygame.Rect(rb)), (a, b)


def test_wrap_and_fit_respect_the_width():
    canvas()
    text = "[PAGED] req#12 deepseek_coder_qa split into 4 pages (2 into sealed holes): 0->(3,17)"
    for line in wrap(text, theme.SMALL, 150):
        assert theme.font(theme.SMALL).size(line)[0] <= 150
    assert theme.font(theme.SMALL).size(fit(text, theme.SMALL, 120))[0] <= 120


def test_text_cache_reuses_surfaces():
    canvas()
    cache = TextCache(limit=4)
    a = cache.render("SCORE", 14, (1, 2, 3))
    assert cache.render("SCORE", 14, (1, 2, 3)) is a
    for i in range(10):
        cache.render(str(i), 14, (1, 2, 3))
    assert len(cache) <= 4


def test_bundled_font_is_small_and_loads():
    canvas()
    assert theme.FONT_FILE.is_file() and theme.FONT_FILE.stat().st_size < 40_000
    f = theme.font(theme.SMALL)
    # The bundled face, not the fallback: DejaVu's line height at 13 px is 16 px.
    assert f.get_linesize() == 16


def _scene_buttons(tmp_path) -> dict[str, list]:
    """Every clickable button of every screen, by screen."""
    from tests.uikit import make_app

    from ui.overlays import HelpScene, PauseScene, ResultScene
    from ui.play_scene import PlayScene
    from ui.title_scene import TitleScene

    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    play = PlayScene(app, seed=1)
    app.reset(play)
    while not play.game.over:  # requests arrive on their own clock: time must pass
        play.session.step(100.0, [__import__("engine").Input.HARD_DROP])
    view = app.view
    return {
        "play": view.buttons,
        "title": [*title.mode_buttons, title.start_button, *title.side_buttons],
        "pause": PauseScene(app, play).buttons,
        "help": HelpScene(app).buttons,
        "result": ResultScene(app, play, play.game.result).buttons,
    }


def test_every_button_is_a_finger_sized_target(tmp_path):
    from ui.widgets import TOUCH_MIN

    canvas()
    for screen, buttons in _scene_buttons(tmp_path).items():
        assert buttons, screen
        for b in buttons:
            target = b.target
            assert target.width >= TOUCH_MIN and target.height >= TOUCH_MIN, (screen, b.name, target)
            assert target.contains(pygame.Rect(b.rect)), (screen, b.name)
            assert target.colliderect(canvas().get_rect())
        for a, b in itertools.combinations(buttons, 2):
            assert not a.target.colliderect(b.target), (screen, a.name, b.name)


def test_short_number_keeps_digits_while_they_fit():
    from ui.text import short_number

    canvas()
    assert short_number(1_234, theme.SMALL, 200) == "1,234"
    for n in (987_654_321, 12_345_678, 1_234_567):
        s = short_number(n, theme.SMALL, 48)
        assert theme.font(theme.SMALL).size(s)[0] <= 48 and s[-1] in "KMG", s
    assert short_number(987_654_321, theme.SMALL, 48).startswith("987")
