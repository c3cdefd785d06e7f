"""Rendered-text cache and line breaking for English and Korean.

Rendering a string with a TrueType font costs far more than blitting the
result, and most of what the console shows repeats frame after frame, so
each (text, size, colour) is rendered once and reused. Text with Hangul is
drawn (and measured) with the Hangul font, everything else with the game font.

A wrapped message keeps one font: its lines are `Line`s that remember whether the message as a
whole needs the Hangul font, so a continuation line of Latin letters and digits inside a Korean
message is not drawn (nor measured) in the Latin font.

Lines break between words. A word wider than the line (Korean runs words
together with particles, "파편화(fragmentation)로") breaks between two syllables,
or after a slash, hyphen or equals sign (PYTORCH_CUDA_ALLOC_CONF=...), never
inside a syllable and never inside a Latin word while another break fits; only
a word with no such place is cut anywhere.
"""
from __future__ import annotations

import pygame

from ui import theme

Colour = tuple[int, int, int]


class Line(str):
    """One line of a wrapped message, drawn in the font of the whole message."""

    hangul: bool

    def __new__(cls, text: str, hangul: bool) -> Line:
        line = super().__new__(cls, text)
        line.hangul = hangul
        return line


def same_font(text: str, like: str) -> str:
    """`text` (a part of `like`, or `like` with something added) in the font `like` is drawn in."""
    hangul = getattr(like, "hangul", None)
    return text if hangul is None else Line(text, hangul)


class TextCache:
    """Rendered text surfaces keyed by content, size and colour (bounded)."""

    def __init__(self, limit: int = 1500) -> None:
        self._surfaces: dict[tuple[str, int, Colour, bool], pygame.Surface] = {}
        self._limit = limit

    def render(self, text: str, size: int, colour: Colour) -> pygame.Surface:
        key = (text, size, colour, theme.uses_hangul(text))  # a Line is equal to its str, not its font
        surf = self._surfaces.get(key)
        if surf is None:
            if len(self._surfaces) >= self._limit:
                # Forget the older half (dicts keep insertion order) rather than everything.
                for old in list(self._surfaces)[: self._limit // 2]:
                    del self._surfaces[old]
            surf = theme.font_for(text, size).render(text, True, colour)
            self._surfaces[key] = surf
        return surf

    def blit(self, surface: pygame.Surface, text: str, size: int, colour: Colour,
             pos: tuple[int, int], anchor: str = "topleft") -> pygame.Rect:
        """Draw text with `anchor` (a pygame.Rect attribute name) at `pos`."""
        surf = self.render(text, size, colour)
        r = surf.get_rect(**{anchor: pos})
        surface.blit(surf, r)
        return r

    def clear(self) -> None:
        """Forget every rendered surface (a font changed under them)."""
        self._surfaces.clear()

    def __len__(self) -> int:
        return len(self._surfaces)


CLOSING = frozenset(")]}.,:;!?%、。》」")  # never starts a line
OPENING = frozenset("([{《「")  # never ends a line


def is_syllable(ch: str) -> bool:
    """A precomposed Hangul syllable (one whole syllable per character once text is NFC)."""
    return "\uac00" <= ch <= "\ud7a3"


def break_allowed(before: str, after: str) -> bool:
    """Whether a line may end between the characters `before` and `after` inside a word."""
    if after in CLOSING or before in OPENING:
        return False
    if is_syllable(before) or is_syllable(after):
        return True  # between syllables, or where Hangul meets Latin or digits
    return before in "/-="


def _cut(word: str, fits) -> tuple[str, str]:
    """Split a word wider than the line: the longest head that fits, ending at a break place."""
    for cut in range(len(word) - 1, 0, -1):
        if break_allowed(word[cut - 1], word[cut]) and fits(word[:cut]):
            return word[:cut], word[cut:]
    cut = len(word) - 1
    while cut > 1 and not fits(word[:cut]):
        cut -= 1
    return word[:cut], word[cut:]


def wrap(text: str, size: int, width: int) -> list[str]:
    """Split text into lines no wider than `width` pixels at `size`, each in the font of the whole."""
    f = theme.font_for(text, size)
    hangul = theme.uses_hangul(text)

    def fits(s: str) -> bool:
        return f.size(s)[0] <= width

    lines: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split(" ")
        line = ""
        for word in words:
            candidate = word if not line else f"{line} {word}"
            if fits(candidate):
                line = candidate
                continue
            if line:
                lines.append(Line(line, hangul))
            # A single word wider than the line is cut into pieces that fit.
            while not fits(word) and len(word) > 1:
                head, word = _cut(word, fits)
                lines.append(Line(head, hangul))
            line = word
        lines.append(Line(line, hangul))
    return lines


def fit(text: str, size: int, width: int) -> str:
    """Shorten text with an ellipsis so it fits in `width` pixels."""
    f = theme.font_for(text, size)
    if f.size(text)[0] <= width:
        return text
    whole = text
    while text and f.size(text + "...")[0] > width:
        text = text[:-1]
    return same_font(text + "...", whole)


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
    f = theme.font_for(text, size)
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
        if theme.font_for(text, size).size(text)[0] <= width:
            return size
    return sizes[-1]
