"""What the browser page tells the game: which layout fits the iframe it runs in.

The page (web/vram-tetris.tmpl) picks the layout from the iframe's size, with the same rule at
start and on every resize or orientation change, and exposes it as `vtBoot.layout()`; pygbag's
`platform.window` is the page's JavaScript window. Off the web there is no page: None.
"""
from __future__ import annotations

import sys

from ui.layout import NAMES

POLL_FRAMES = 20  # the game asks the page again every third of a second


def page_layout() -> str | None:
    """The layout the page asks for, or None (not in a browser, or an older page)."""
    if sys.platform != "emscripten":
        return None
    try:
        import platform  # pygbag's: platform.window is the JavaScript window

        name = str(platform.window.vtBoot.layout())
    except Exception:  # no page bridge: keep whatever layout runs
        return None
    return name if name in NAMES else None
