"""Helpers for the UI tests: SDL's dummy drivers, a canvas, a fresh app, keys and clicks through SDL's
event queue. Fixtures live in conftest.py."""
from __future__ import annotations

import os
import re
import sys

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


def make_app(data_dir, seed: int = 3, mode: str | None = None, layout: str = "landscape",
             language: str | None = None) -> GameApp:
    """A fresh app; English unless `language` says otherwise, whatever the machine's locale."""
    app = GameApp(canvas(), storage=Storage(directory=data_dir), seed=seed, audio=False, layout=layout,
                  language=language, reader_language="en")
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


SENTENCE_END = re.compile(r"[.?!](?=[\s)]|$)")


def record_prose(monkeypatch) -> tuple[list[tuple[str, int]], list[str]]:
    """From now on, every text any screen wraps, with its number of lines, and every text it cuts
    short with "..." (ui.text.fit), whichever ui module calls them."""
    from ui import text as text_module
    wraps: list[tuple[str, int]] = []
    cuts: list[str] = []
    wrap0, fit0 = text_module.wrap, text_module.fit

    def wrap(text, size, width):
        lines = wrap0(text, size, width)
        wraps.append((text, len(lines)))
        return lines

    def fit(text, size, width):
        out = fit0(text, size, width)
        if out != text and not text.endswith(" ..."):  # " ...": the log's oldest entry, scrolled past
            cuts.append(text)
        return out

    for name, module in list(sys.modules.items()):
        if name == "ui" or name.startswith("ui."):
            if getattr(module, "wrap", None) is wrap0:
                monkeypatch.setattr(module, "wrap", wrap)
            if getattr(module, "fit", None) is fit0:
                monkeypatch.setattr(module, "fit", fit)
    return wraps, cuts


def prose_faults(wraps: list[tuple[str, int]], cuts: list[str]) -> list[str]:
    """Korean text cut with "...", and a line (a label, a log line, one sentence) that wraps more
    than twice in its panel; a paragraph of two or more sentences may take more lines."""
    from ui.theme import uses_hangul
    faults = [f"cut: {t!r}" for t in dict.fromkeys(cuts) if uses_hangul(t)]
    faults += [f"{n} lines: {t!r}" for t, n in dict.fromkeys(wraps)
               if uses_hangul(t) and n > 3 and len(SENTENCE_END.findall(t)) < 2]
    return faults
