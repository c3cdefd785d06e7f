"""Rendered-text cache and word wrapping.

Rendering a string with a TrueType font costs far more than blitting the
result, and most of what the console shows repeats frame after frame, so
each (text, size, colour) is rendered once and reused.
"""
from __future__ import annotations

import pygame

from ui import theme

Colour = tuple[int, int, int]


class TextCache:
    """Rendered text surfaces keyed by content, size and colour (bounded)."""

    def __init__(self, limit: int = 1500) -> None:
        self._surfaces: dict[tuple[str, int, Colour], pygame.Surface] = {}
        self._limit = limit

    def render(self, text: str, size: int, colour: Colour) -> pygame.Surface:
        key = (text, size, colour)
        surf = self._surfaces.get(key)
        if surf is None:
            if len(self._surfaces) >= self._limit:
                # Forget the older half (dicts keep insertion order) rather than everything.
                for old in list(self._surfaces)[: self._limit // 2]:
                    del self._surfaces[old]
            surf = theme.font(size).render(text, True, colour)
            self._surfaces[key] = surf
        return surf

    def blit(self, surface: pygame.Surface, text: str, size: int, colour: Colour,
             pos: tuple[int, int], anchor: str = "topleft") -> pygame.Rect:
        """Draw text with `anchor` (a pygame.Rect attribute name) at `pos`."""
        surf = self.render(text, size, colour)
        r = surf.get_rect(**{anchor: pos})
        surface.blit(surf, r)
        return r

    def __len__(self) -> int:
        return len(self._surfaces)


def wrap(text: str, size: int, width: int) -> list[str]:
    """Split text into lines no wider than `width` pixels at `size`."""
    f = theme.font(size)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split(" ")
        line = ""
        for word in words:
            candidate = word if not line else f"{line} {word}"
            if f.size(candidate)[0] <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            # A single word wider than the line is cut into pieces that fit.
            while f.size(word)[0] > width and len(word) > 1:
                cut = len(word) - 1
                while cut > 1 and f.size(word[:cut])[0] > width:
                    cut -= 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return lines


def fit(text: str, size: int, width: int) -> str:
    """Shorten text with an ellipsis so it fits in `width` pixels."""
    f = theme.font(size)
    if f.size(text)[0] <= width:
        return text
    while text and f.size(text + "...")[0] > width:
        text = text[:-1]
    return text + "..."


HUGE = 10**18  # beyond any run's score (engine.rules.MAX_SCORE): shown as "10^18+"


def short_number(n: int, size: int, width: int) -> str:
    """n with thousands separators, or as 12.3K / 4.56M / 7.8T when that does not fit in `width`.

    Never raises, whatever the int (a save file is outside data): numbers beyond HUGE are not
    formatted digit by digit, nor divided into a float that could overflow.
    """
    n = int(n)
    if abs(n) >= HUGE:
        return f"{'-' if n < 0 else ''}10^18+"
    text = f"{n:,}"
    f = theme.font(size)
    if f.size(text)[0] <= width:
        return text
    for scale, suffix in ((10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "K")):
        if abs(n) >= scale:
            for digits in (2, 1, 0):
                short = f"{n / scale:.{digits}f}{suffix}"
                if f.size(short)[0] <= width:
                    return short
            return short
    return text


def largest_fitting(text: str, sizes: tuple[int, ...], width: int) -> int:
    """The first of `sizes` (largest first) at which text fits in `width`; else the last."""
    for size in sizes:
        if theme.font(size).size(text)[0] <= width:
            return size
    return sizes[-1]
