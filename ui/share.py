"""Sharing a run: the clipboard, and the page's ?replay= link (browser) or the terminal (desktop).

In the browser the page (web/vram-tetris.tmpl) provides `window.vtShare`: `copy(code)` puts a
link to the current page with `?replay=CODE` on the clipboard and, where the clipboard is
refused (an iframe without clipboard rights, an old browser), shows the link in a text box with
the text selected; `status` then reads "copied" or "selected". On the desktop the code goes to
the system clipboard through SDL, and is printed to the terminal as well.
"""
from __future__ import annotations

import sys

import pygame

BROWSER = sys.platform == "emscripten"


def _window():
    import platform  # pygbag's browser bridge, not the stdlib module

    return platform.window


def page_replay_code() -> str | None:
    """The `replay` parameter of the page's address (browser only), if any."""
    if not BROWSER:
        return None
    try:
        search = str(_window().location.search or "")
    except Exception:  # no page bridge: nothing to read
        return None
    from urllib.parse import parse_qs

    values = parse_qs(search.lstrip("?")).get("replay")
    return values[0] if values else None


def copy_code(code: str) -> str:
    """Offer `code` to the player; returns what happened, for the screen to say.

    "pending": the browser is asking the clipboard (read copy_status() next frames);
    "copied": on the clipboard; "selected": shown selected for the player to copy;
    "printed": no clipboard here, the code is in the terminal.
    """
    if BROWSER:
        try:
            _window().vtShare.copy(code)
            return "pending"
        except Exception:
            return "printed"
    print(f"share code: {code}", flush=True)
    try:
        if not pygame.scrap.get_init():
            pygame.scrap.init()
        pygame.scrap.put_text(code)
        return "copied"
    except (pygame.error, AttributeError, NotImplementedError):
        return "printed"


def copy_status() -> str:
    """In the browser: "pending", "copied" or "selected" (what the page did with the link)."""
    if not BROWSER:
        return "copied"
    try:
        return str(_window().vtShare.status or "pending")
    except Exception:
        return "printed"
