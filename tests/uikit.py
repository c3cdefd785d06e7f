"""Helpers for the UI tests: SDL's dummy drivers, a canvas, a fresh app, keys and clicks through SDL's
event queue. Fixtures live in conftest.py."""
from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame

from ui import theme  # noqa: E402
from ui.app import GameApp  # noqa: E402
from ui.storage import Storage  # noqa: E402


def canvas() -> pygame.Surface:
    """The display surface at the logical canvas size (created once per process)."""
    if not pygame.display.get_init():
        pygame.display.init()
    if not pygame.font.get_init():
        pygame.font.init()
        theme.font.cache_clear()
    surface = pygame.display.get_surface()
    if surface is None or surface.get_size() != theme.CANVAS_SIZE:
        surface = pygame.display.set_mode(theme.CANVAS_SIZE)
    return surface


def make_app(data_dir, seed: int = 3, mode: str | None = None, layout: str = "landscape") -> GameApp:
    app = GameApp(canvas(), storage=Storage(directory=data_dir), seed=seed, audio=False, layout=layout)
    if mode is not None:
        app.settings.mode = mode
    return app


def pump(app: GameApp, steps: int = 1) -> None:
    """Deliver queued pygame events to the app, then run fixed steps."""
    for event in pygame.event.get():
        app.handle(event)
    for _ in range(steps):
        app.update(theme.STEP_MS)


def key(app: GameApp, k: int, steps: int = 1, mod: int = 0) -> None:
    """Press and release a key through SDL's event queue."""
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod, unicode="", scancode=0))
    pump(app, 1)
    pygame.event.post(pygame.event.Event(pygame.KEYUP, key=k, mod=mod, unicode="", scancode=0))
    pump(app, steps)


def click(app: GameApp, pos: tuple[int, int], steps: int = 1) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1, touch=False))
    pump(app, 1)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1, touch=False))
    pump(app, steps)


def centre(rect: tuple[int, int, int, int]) -> tuple[int, int]:
    return rect[0] + rect[2] // 2, rect[1] + rect[3] // 2
