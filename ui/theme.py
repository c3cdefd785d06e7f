"""Colours, fonts and canvas size: the look of the game lives here only.

Piece colours are not here: they come from engine.pieces (PIECES[kind].colour).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pygame

from ui.layout import SIZES

# The landscape canvas (ui.layout has both). The page scales it into a 680 x 600 iframe (factor 0.85).
CANVAS_SIZE = SIZES["landscape"]
CANVAS_W, CANVAS_H = CANVAS_SIZE
EMBED_SCALE = min(680 / CANVAS_W, 600 / CANVAS_H)

STEP_MS = 1000.0 / 60.0  # fixed engine step
MAX_STEPS_PER_FRAME = 4  # stall cap: a hidden tab does not make pieces teleport

Colour = tuple[int, int, int]

BG: Colour = (7, 9, 20)
BG_GRID: Colour = (16, 22, 42)
PANEL: Colour = (13, 17, 33)
PANEL_EDGE: Colour = (32, 64, 96)
PANEL_TITLE: Colour = (90, 160, 200)
TEXT: Colour = (214, 226, 240)
TEXT_DIM: Colour = (130, 146, 172)
CYAN: Colour = (0, 229, 255)
MAGENTA: Colour = (255, 46, 170)
AMBER: Colour = (255, 190, 40)
RED: Colour = (255, 64, 88)
GREEN: Colour = (60, 240, 150)
VIOLET: Colour = (160, 110, 255)
BUTTON: Colour = (20, 30, 56)
BUTTON_HOVER: Colour = (30, 48, 86)
BUTTON_ACTIVE: Colour = (0, 120, 150)
BOARD_BG: Colour = (5, 7, 16)
GRID_LINE: Colour = (20, 28, 50)
OVERLAY_DIM = (0, 0, 0, 170)

LEVEL_COLOURS: dict[str, Colour] = {"INFO": CYAN, "WARN": AMBER, "ERROR": RED}

# Text sizes in logical pixels. 13 px is the floor: scaled by EMBED_SCALE into the
# article's iframe it is still 11 px on screen.
MIN_TEXT_PX = 13
SMALL = 13
BODY = 15
LARGE = 19
TITLE = 28
HUGE = 40

# A 14 KB subset of DejaVu Sans Condensed Bold: crisp at small sizes, narrow enough for
# the console columns, and the same on desktop and in the browser.
FONT_FILE = Path(__file__).resolve().parent / "fonts" / "DejaVuSansCondensed-Bold.ttf"
# Hangul: NanumSquare Bold (SIL OFL) cut down by tools/subset_font.py to exactly the characters of
# the Korean catalogue, renamed as the OFL asks of a modified font. The web build serves it beside
# the game archive and the browser fetches it only when Korean is chosen (ui.packs).
HANGUL_FONT_NAME = "VRAMTetrisHangul-Bold.ttf"
HANGUL_FONT_FILE = Path(__file__).resolve().parent / "fonts" / HANGUL_FONT_NAME
# pygame's built-in font, the fallback, renders at 0.6875 of the size asked for.
_DEFAULT_FONT_RATIO = 0.6875
HANGUL_START = "\u1100"  # Hangul Jamo and everything after it (CJK punctuation, syllables)


@lru_cache(maxsize=None)
def font(size: int, file: Path = FONT_FILE) -> pygame.font.Font:
    """The game font (or `file`) at `size` logical pixels, never smaller than MIN_TEXT_PX.

    Falls back to pygame's built-in font if the file cannot be read.
    Call `font.cache_clear()` after re-initialising pygame.font.
    """
    px = max(MIN_TEXT_PX, int(size))
    try:
        return pygame.font.Font(str(file), px)
    except (OSError, pygame.error):
        if file != FONT_FILE:
            return font(size)
        return pygame.font.Font(None, round(px / _DEFAULT_FONT_RATIO))


def needs_hangul(text: str) -> bool:
    """Whether `text` has characters only the Hangul font draws."""
    return not text.isascii() and any(ch >= HANGUL_START for ch in text)


def uses_hangul(text: str) -> bool:
    """Whether `text` is drawn in the Hangul font: it has Hangul, or it is a line of a wrapped message
    that has (ui.text.Line remembers which)."""
    whole = getattr(text, "hangul", None)
    return needs_hangul(text) if whole is None else bool(whole)


def font_for(text: str, size: int) -> pygame.font.Font:
    """The font that draws `text`: the Hangul font for Korean text (a whole message: every line of a
    wrapped one), the game font otherwise."""
    if uses_hangul(text):
        return font(size, HANGUL_FONT_FILE)
    return font(size)


def mix(a: Colour, b: Colour, t: float) -> Colour:
    """Blend colour a towards b by t in 0..1."""
    t = 0.0 if t < 0 else 1.0 if t > 1 else t
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def named(name: str) -> Colour:
    """A palette colour by its name in this module (lower case allowed); violet for an unknown
    name (the engine's mode registry names its colours this way)."""
    colour = globals().get(name.upper())
    return colour if isinstance(colour, tuple) else VIOLET
