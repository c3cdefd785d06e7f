"""The system log console: time-stamped, level-tagged lines, newest at the bottom.

The panel is re-rendered only when a line is added, then blitted as one surface.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import pygame

from ui import theme
from ui.i18n import DEFAULT, Catalogue, Msg, catalogue
from ui.layout import RectT
from ui.text import TextCache, fit, same_font, wrap

LINE_H = 16
PAD = 7
TITLE_H = 22
INDENT = 10  # continuation lines hang under the time stamp, so entries stand apart

TEXT_COLOURS: dict[str, tuple[int, int, int]] = {
    "INFO": (190, 205, 225),
    "WARN": (255, 220, 150),
    "ERROR": (255, 150, 160),
}


@dataclass(frozen=True)
class LogEntry:
    time_ms: float
    level: str
    message: Msg | str  # translated when drawn: a language switch rewrites the whole log
    lines: tuple[str, ...] = ()  # the entry wrapped to the console width, computed once
    wrapped_for: tuple[int, int, str] = (0, 0, "")  # (width, font size, language) `lines` was wrapped for

    @property
    def text(self) -> str:
        """The entry in English (tools and tests read the log in one language)."""
        return catalogue(DEFAULT).msg(self.message)


def stamp(time_ms: float) -> str:
    """mm:ss of game time, the console's time stamp."""
    s = int(time_ms // 1000)
    return f"{s // 60:02d}:{s % 60:02d}"


class LogConsole:
    """Keeps the latest entries and draws them into a cached panel surface."""

    def __init__(self, rect: RectT, capacity: int = 40, size: int = theme.SMALL) -> None:
        self.rect = rect
        self.size = size
        self.entries: deque[LogEntry] = deque(maxlen=capacity)
        self._surface: pygame.Surface | None = None
        self._dirty = True
        self._covered = 0  # px at the top hidden by a teaching card: no line is cut by its edge
        self.tr: Catalogue = catalogue(DEFAULT)

    def add(self, time_ms: float, level: str, text: Msg | str) -> None:
        level = level if level in TEXT_COLOURS else "INFO"
        self.entries.append(LogEntry(time_ms, level, text))
        self._dirty = True

    def restyle(self, rect: RectT, size: int) -> None:
        """Show the log in another place or type size (the layout changed)."""
        if rect != self.rect or size != self.size:
            self.rect, self.size = rect, size
            self._surface = None
            self._dirty = True

    @property
    def line_h(self) -> int:
        return theme.font(self.size).get_linesize()

    def wrapped(self, entry: LogEntry) -> tuple[str, ...]:
        """The panel lines of one entry (time stamp and level first), wrapped to the panel width."""
        width = self.rect[2] - 2 * PAD - INDENT
        if entry.wrapped_for != (width, self.size, self.tr.code):
            head = f"{stamp(entry.time_ms)} {entry.level} "
            lines = tuple(wrap(head + self.tr.msg(entry.message), self.size, width))
            object.__setattr__(entry, "lines", lines)  # a cache, not a change of meaning
            object.__setattr__(entry, "wrapped_for", (width, self.size, self.tr.code))
        return entry.lines

    def clear(self) -> None:
        self.entries.clear()
        self._dirty = True

    def shown_lines(self) -> list[tuple[LogEntry, int, str]]:
        """(entry, line index within entry, text) for the lines that fit, newest last."""
        room = (self.rect[3] - max(TITLE_H, self._covered + 2) - PAD) // self.line_h
        out: list[tuple[LogEntry, int, str]] = []
        for entry in reversed(self.entries):
            lines = self.wrapped(entry)
            block = [(entry, i, line) for i, line in enumerate(lines)]
            if len(out) + len(block) > room:
                keep = room - len(out)
                if keep > 0:  # the start of the oldest visible entry, marked as cut short
                    e, i, line = block[keep - 1]
                    cut = fit(same_font(line + " ...", line), self.size, self.rect[2] - 2 * PAD - INDENT)
                    out = block[:keep - 1] + [(e, i, cut if cut.endswith("...") else same_font(line + " ...", line))] + out
                break
            out = block + out
        return out

    def draw(self, surface: pygame.Surface, text: TextCache, covered: int = 0,
             tr: Catalogue | None = None, defer: bool = False) -> None:
        """Blit the panel in `tr`'s language; `covered` px at its top are hidden by something drawn
        over it. With `defer`, new lines wait for the next frame (the panel as it was is shown)."""
        if tr is not None and tr is not self.tr:
            self.tr = tr
            self._dirty = True
        if covered != self._covered:
            self._covered = covered
            self._dirty = True
        if self._surface is None or (self._dirty and not defer):
            self._surface = self._render(text)
            self._dirty = False
        surface.blit(self._surface, (self.rect[0], self.rect[1]))

    def _render(self, text: TextCache) -> pygame.Surface:
        x, y, w, h = self.rect
        surf = self._surface
        if surf is None or surf.get_size() != (w, h):
            surf = pygame.Surface((w, h)).convert()
        surf.fill(theme.PANEL)
        pygame.draw.rect(surf, theme.PANEL_EDGE, surf.get_rect(), 1, border_radius=4)
        size, line_h = self.size, self.line_h
        text.blit(surf, self.tr.t("hud.system_log"), size, theme.PANEL_TITLE, (PAD, 4))
        lines = self.shown_lines()
        cy = h - PAD - line_h * len(lines)
        for entry, index, line in lines:
            colour = TEXT_COLOURS[entry.level]
            if index == 0:
                ts = stamp(entry.time_ms)
                cx = PAD
                r = text.blit(surf, ts, size, theme.TEXT_DIM, (cx, cy))
                cx = r.right + 5
                r = text.blit(surf, entry.level, size, theme.LEVEL_COLOURS[entry.level], (cx, cy))
                rest = line[len(ts) + 1 + len(entry.level):].lstrip()
                if rest:
                    text.blit(surf, rest, size, colour, (r.right + 5, cy))
            else:
                text.blit(surf, line, size, colour, (PAD + INDENT, cy))
            cy += line_h
        return surf
