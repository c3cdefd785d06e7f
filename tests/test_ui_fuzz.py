"""A careless player: random keys, clicks, taps and focus changes on every screen never crash the game."""
from __future__ import annotations

import random

import pygame
import pytest
from tests.uikit import canvas, make_app

from ui import theme
from ui.overlays import PauseScene
from ui.play_scene import PlayScene
from ui.title_scene import TitleScene

KEYS = (pygame.K_LEFT, pygame.K_RIGHT, pygame.K_UP, pygame.K_DOWN, pygame.K_SPACE, pygame.K_z,
        pygame.K_x, pygame.K_c, pygame.K_LSHIFT, pygame.K_p, pygame.K_ESCAPE, pygame.K_m, pygame.K_h,
        pygame.K_RETURN, pygame.K_1, pygame.K_2, pygame.K_TAB, pygame.K_t, pygame.K_q, pygame.K_a,
        pygame.K_d, pygame.K_w, pygame.K_s, pygame.K_SLASH)
FOCUS = tuple(getattr(pygame, n) for n in ("WINDOWFOCUSLOST", "WINDOWHIDDEN", "WINDOWFOCUSGAINED",
                                           "WINDOWMINIMIZED", "WINDOWLEAVE"))


def random_event(rng: random.Random) -> pygame.event.Event:
    r = rng.random()
    if r < 0.5:
        kind = pygame.KEYDOWN if rng.random() < 0.6 else pygame.KEYUP
        return pygame.event.Event(kind, key=rng.choice(KEYS), mod=rng.choice((0, pygame.KMOD_SHIFT)),
                                  unicode="", scancode=0)
    if r < 0.75:
        kind = rng.choice((pygame.MOUSEBUTTONDOWN, pygame.MOUSEBUTTONUP, pygame.MOUSEMOTION))
        return pygame.event.Event(kind, pos=(rng.randrange(800), rng.randrange(580)), button=1,
                                  touch=rng.random() < 0.3, rel=(0, 0), buttons=(1, 0, 0))
    if r < 0.95:
        kind = rng.choice((pygame.FINGERDOWN, pygame.FINGERUP, pygame.FINGERMOTION))
        return pygame.event.Event(kind, x=rng.random(), y=rng.random(), dx=0.0, dy=0.0,
                                  finger_id=rng.randrange(3), touch_id=0, pressure=1.0)
    return pygame.event.Event(rng.choice(FOCUS))


@pytest.mark.parametrize("seed", [1, 2])
def test_random_input_never_crashes_and_pause_stops_time(tmp_path, seed):
    canvas()
    app = make_app(tmp_path, seed=seed)
    app.reset(TitleScene(app, seed=seed))
    rng = random.Random(seed)
    screens = set()
    for frame in range(2500):
        for _ in range(rng.choice((0, 0, 0, 1, 2))):
            app.handle(random_event(rng))
        top = app.top
        play = app.find(PlayScene)
        before = play.game.time_ms if play is not None else None
        app.update(theme.STEP_MS)
        if isinstance(top, PauseScene) and app.top is top and play is app.find(PlayScene):
            assert play.game.time_ms == before, "a paused game does not run"
        if frame % 25 == 0:
            app.draw()
        screens.add(type(app.top).__name__)
        assert app.top is not None
    assert {"TitleScene", "PlayScene", "PauseScene"} <= screens
