"""Draws the whole game console for a GameSession: telemetry, board, side panels, controls.

Everything that never changes (frames, titles, grid, control buttons) is baked
once into a background surface; each frame only the live numbers, pieces and
animations are drawn over it, with text taken from the TextCache.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pygame

from engine import PIECES, Kind, modes
from engine import rules as R
from ui import theme
from ui.keys import CONTROL_LABELS, HOLD_KEY, MUTE_KEY, SHORT_CONTROL_LABELS, SPLIT_KEY
from ui.layout import BOARD_COLS, BOARD_ROWS, Layout, layout_for
from ui.log_console import TEXT_COLOURS as LOG_TEXT_COLOURS
from ui.session import GameSession
from ui.text import TextCache, fit, largest_fitting, short_number, wrap
from ui.widgets import Button, draw_bar, draw_icon, draw_panel, pulse

Colour = tuple[int, int, int]

THROUGHPUT_FULL = 320.0  # tokens/s that fills the throughput bar
FRAG_ALERT = 0.30  # fragmentation at which its card pulses
VRAM_ALERT = R.VRAM_WARN  # utilisation at which the board frame pulses red
HIDDEN = R.HIDDEN

LANDSCAPE_LAYOUT = layout_for("landscape")

MODE_NOTES: dict[str, str] = {m.name: m.note for m in modes.MODES}
MIXED_NOTE = "Mixed run: it sets no best score."
MODE_ACCENTS: dict[str, Colour] = {"contiguous": theme.CYAN, "paged": theme.MAGENTA}


def mode_accent(name: str) -> Colour:
    return MODE_ACCENTS.get(name, theme.VIOLET)


STAT_TITLES = ("VRAM HELD", "FRAGMENTATION", "THROUGHPUT", "USABLE FREE")

# Score panel: the big number ends before the LINES / LEVEL / BEST labels at x + 160,
# and those values are right-aligned after a label at most "LINES" wide.
SCORE_TEXT_W = 148
VALUE_W = 64

HEADER_LABELS: dict[str, tuple[str, str]] = {  # (label, key) of the header switches
    "help": ("HELP", "H"), "mute": ("SOUND", "M"), "pause": ("PAUSE", "Esc"),
}


def control_buttons(layout: Layout = LANDSCAPE_LAYOUT) -> list[Button]:
    if layout.portrait:  # a phone: short labels, no key hints (a keyboard player sees them in HELP)
        return [Button(name, r, SHORT_CONTROL_LABELS[name], touch=layout.touch)
                for name, r in layout.controls.items()]
    return [Button(name, r, *CONTROL_LABELS[name], touch=layout.touch) for name, r in layout.controls.items()]


def header_buttons(layout: Layout = LANDSCAPE_LAYOUT) -> list[Button]:
    if layout.portrait:
        return [Button(name, r, HEADER_LABELS[name][0], touch=layout.touch)
                for name, r in layout.header_buttons.items()]
    return [Button(name, r, "  ".join(HEADER_LABELS[name]), touch=layout.touch)
            for name, r in layout.header_buttons.items()]


def mode_buttons(layout: Layout = LANDSCAPE_LAYOUT) -> list[Button]:
    """One button per allocator in the registry across the layout's row; a phone has one switch."""
    if "toggle" in layout.mode_buttons:
        return [Button("toggle", layout.mode_buttons["toggle"], "ALLOCATOR", touch=layout.touch)]
    x0, y, w0, h = layout.mode_buttons["contiguous"]
    x1, _, w1, _ = layout.mode_buttons["paged"]
    gap = x1 - (x0 + w0)
    n = len(modes.MODES)
    w = (x1 + w1 - x0 - gap * (n - 1)) // n
    return [Button(m.name, (x0 + i * (w + gap), y, w, h), m.label, touch=layout.touch)
            for i, m in enumerate(modes.MODES)]


@dataclass
class ViewState:
    """UI-only facts the console shows besides the game itself."""

    clock_ms: float = 0.0
    muted: bool = False
    pressed: set[str] = field(default_factory=set)
    hover: tuple[int, int] | None = None
    best: int = 0
    header_buttons: bool = True  # the title screen has its own help and sound buttons


def vram_colour(utilisation: float) -> Colour:
    """Cyan, amber from the engine's caution level, red past its warning level."""
    return theme.RED if utilisation > R.VRAM_WARN else theme.AMBER if utilisation > R.VRAM_CAUTION else theme.CYAN


def _shade(colour: Colour, f: float) -> Colour:
    return (int(colour[0] * f), int(colour[1] * f), int(colour[2] * f))


def outline_cells(surface: pygame.Surface, layout: Layout, cells, colour: Colour, dx: int = 0,
                  width: int = 2) -> None:
    """Outline board cells (x, board row) on the board: what a card or a report points at."""
    c = layout.cell
    bx, by = layout.board[:2]
    for x, y in cells:
        if y >= HIDDEN:
            r = pygame.Rect(bx + dx + x * c - 1, by + (y - HIDDEN) * c - 1, c + 2, c + 2)
            pygame.draw.rect(surface, colour, r, width)


class ConsoleView:
    """Renderer for the play console in one layout; one instance is shared by every scene."""

    def __init__(self, text: TextCache, layout: Layout = LANDSCAPE_LAYOUT) -> None:
        self.text = text
        self.L = layout
        self.T = layout.text
        self.score_sizes = (self.T.title, self.T.large + 4, self.T.large)
        self.toast_sizes = (self.T.large, self.T.body, self.T.small)
        self.controls = control_buttons(layout)
        self.header = header_buttons(layout)
        self.modes = mode_buttons(layout)
        self.details_button = (Button("details", layout.panels["details"], "DETAILS", touch=layout.touch)
                               if "details" in layout.panels else None)
        self._background = self._bake_background()
        self._cells: dict[tuple[Colour, str], pygame.Surface] = {}
        self._flash = pygame.Surface((self.L.cell, self.L.cell)).convert()
        self._flash.fill((255, 255, 255))
        self._mini: dict[tuple[Kind, int, bool], pygame.Surface] = {}
        self._wrapped: dict[tuple, list[str]] = {}  # wrapped and shortened texts
        self._table_key: object = ()
        self._layer = pygame.Surface((self.L.board[2], self.L.board[3])).convert()
        self._layer_owner: GameSession | None = None
        self._layer_key: object = None
        self._toast_plate = pygame.Surface((1, 1)).convert()
        self._table: pygame.Surface | None = None
        self._score_sizes: dict[str, int] = {}  # font size per score or toast text that fits
        self._best_text: tuple[int, str] = (-1, "")

    @property
    def buttons(self) -> list[Button]:
        """Every button of the console, for hit tests."""
        extra = [self.details_button] if self.details_button is not None else []
        return [*self.header, *self.modes, *self.controls, *extra]

    def fit(self, text: str, size: int, width: int) -> str:
        """`text` shortened to `width`, computed once per distinct text."""
        key = ("fit", text, size, width)
        lines = self._wrapped.get(key)
        if lines is None:
            if len(self._wrapped) > 64:
                self._wrapped.clear()
            lines = self._wrapped[key] = [fit(text, size, width)]
        return lines[0]

    def wrap(self, text: str, size: int, width: int) -> list[str]:
        """Word-wrapped lines, computed once per distinct text."""
        key = (text, size, width)
        lines = self._wrapped.get(key)
        if lines is None:
            if len(self._wrapped) > 64:
                self._wrapped.clear()
            lines = self._wrapped[key] = wrap(text, size, width)
        return lines

    # ------------------------------------------------------------------ baking
    def _bake_background(self) -> pygame.Surface:
        t = self.text
        L, T = self.L, self.T
        bg = pygame.Surface(L.size).convert()
        bg.fill(theme.BG)
        # Header strip.
        hy = L.header[3] // 2
        pygame.draw.rect(bg, (10, 14, 30), L.header)
        pygame.draw.line(bg, theme.PANEL_EDGE, (0, L.header[3] - 1), (L.width, L.header[3] - 1))
        if L.portrait:
            r = t.blit(bg, "VRAM", T.large, theme.MAGENTA, (L.margin, hy), "midleft")
            t.blit(bg, "Tetris", T.large, theme.CYAN, (r.right + 6, hy), "midleft")
        else:
            r = t.blit(bg, "PagedAttention:", T.large, theme.MAGENTA, (L.margin, hy), "midleft")
            r = t.blit(bg, "VRAM Tetris", T.large, theme.CYAN, (r.right + 8, hy), "midleft")
            t.blit(bg, "KV-cache allocator console", T.small, theme.TEXT_DIM, (r.right + 14, hy + 1), "midleft")
        # Board well with faint grid.
        board = pygame.Rect(L.board)
        pygame.draw.rect(bg, theme.PANEL_EDGE, board.inflate(8, 8), 2, border_radius=4)
        pygame.draw.rect(bg, theme.BOARD_BG, board)
        for x in range(1, BOARD_COLS):
            px = board.x + x * L.cell
            pygame.draw.line(bg, theme.GRID_LINE, (px, board.y), (px, board.bottom - 1))
        for y in range(1, BOARD_ROWS):
            py = board.y + y * L.cell
            pygame.draw.line(bg, theme.GRID_LINE, (board.x, py), (board.right - 1, py))
        P = L.panels
        if L.portrait:
            draw_panel(bg, P["score"], t, "SCORE", size=T.small)
            draw_panel(bg, P["vram"], t, STAT_TITLES[0], size=T.small)
            draw_panel(bg, P["frag"], t, "FRAGMENTATION", size=T.small)
            draw_panel(bg, P["next"], t, "NEXT", size=T.small)
            draw_panel(bg, P["split"], t, "PAGE SPLIT", size=T.small)
        else:
            for rect, title in zip(L.stats, STAT_TITLES):
                draw_panel(bg, rect, t, title, size=T.small)
            draw_panel(bg, P["mode"], t, "ALLOCATOR", size=T.small)
            draw_panel(bg, P["score"], t, size=T.small)
            t.blit(bg, "SCORE", T.small, theme.PANEL_TITLE, (P["score"][0] + 8, P["score"][1] + 5))
            for i, label in enumerate(("LINES", "LEVEL", "BEST")):
                t.blit(bg, label, T.small, theme.PANEL_TITLE, (P["score"][0] + 160, P["score"][1] + 7 + i * 20))
            draw_panel(bg, P["hold"], t, f"HOLD  {HOLD_KEY}", size=T.small)
            draw_panel(bg, P["next"], t, "NEXT REQUESTS", size=T.small)
            draw_panel(bg, P["split"], t, "PAGE SPLIT", size=T.small)
            t.blit(bg, SPLIT_KEY, T.small, theme.TEXT_DIM,
                   (P["split"][0] + P["split"][2] - 8, P["split"][1] + 4), "topright")
            draw_panel(bg, P["blocks"], t, "BLOCK TABLE", size=T.small)
        # Controls bar.
        for b in self.controls:
            self._draw_control(bg, b, pressed=False)
        return bg

    def _draw_control(self, surface: pygame.Surface, b: Button, pressed: bool) -> None:
        rect = pygame.Rect(b.rect)
        fill = theme.BUTTON_ACTIVE if pressed else theme.BUTTON
        pygame.draw.rect(surface, fill, rect, border_radius=6)
        pygame.draw.rect(surface, theme.CYAN if pressed else theme.PANEL_EDGE, rect, 1, border_radius=6)
        colour = theme.CYAN if not pressed else (255, 255, 255)
        if b.name == "split":
            colour = theme.MAGENTA if not pressed else (255, 255, 255)
        if not b.hint:  # a phone's button: a big icon and its name
            draw_icon(surface, b.name, (rect.centerx, rect.y + 21), colour, 11)
            self.text.blit(surface, b.label, self.T.small, theme.TEXT, (rect.centerx, rect.bottom - 12), "center")
            return
        draw_icon(surface, b.name, (rect.centerx, rect.y + 21), colour, 10)
        self.text.blit(surface, b.label, self.T.small, theme.TEXT, (rect.centerx, rect.y + 45), "center")
        self.text.blit(surface, b.hint, self.T.small, theme.TEXT_DIM, (rect.centerx, rect.y + 62), "center")

    def cell_sprite(self, colour: Colour, style: str = "block") -> pygame.Surface:
        key = (colour, style)
        s = self._cells.get(key)
        if s is not None:
            return s
        c = self.L.cell
        if style == "ghost":
            s = pygame.Surface((c, c), pygame.SRCALPHA)
            pygame.draw.rect(s, (*colour, 28), (1, 1, c - 2, c - 2))
            pygame.draw.rect(s, (*colour, 150), (1, 1, c - 2, c - 2), 1)
        elif style == "reserved":
            # Held but empty: the request's colour as hatching, as in the LAB.
            s = pygame.Surface((c, c)).convert()
            s.fill(theme.BOARD_BG)
            s.set_clip(pygame.Rect(1, 1, c - 2, c - 2))
            hatch = _shade(colour, 0.9)
            for k in range(-c, c, 5):
                pygame.draw.line(s, hatch, (k, c), (k + c, 0), 1)
            s.set_clip(None)
            pygame.draw.rect(s, colour, (1, 1, c - 2, c - 2), 1)
        else:
            s = pygame.Surface((c, c)).convert()
            s.fill(theme.BOARD_BG)
            bright = theme.mix(colour, (255, 255, 255), 0.25) if style == "active" else colour
            pygame.draw.rect(s, _shade(bright, 0.42), (1, 1, c - 2, c - 2))
            pygame.draw.rect(s, bright, (1, 1, c - 2, c - 2), 2)
            pygame.draw.line(s, theme.mix(bright, (255, 255, 255), 0.55), (3, 3), (c - 5, 3))
            pygame.draw.line(s, theme.mix(bright, (255, 255, 255), 0.35), (3, 4), (3, c - 5))
        self._cells[key] = s
        return s

    def mini_piece(self, kind: Kind, cell: int, dim: bool = False) -> pygame.Surface:
        key = (kind, cell, dim)
        s = self._mini.get(key)
        if s is not None:
            return s
        p = PIECES[kind]
        cells = p.rotations[0]
        xs = [x for x, _ in cells]
        ys = [y for _, y in cells]
        w = (max(xs) - min(xs) + 1) * cell
        h = (max(ys) - min(ys) + 1) * cell
        s = pygame.Surface((w, h), pygame.SRCALPHA)
        colour = _shade(p.colour, 0.45) if dim else p.colour
        for x, y in cells:
            r = pygame.Rect((x - min(xs)) * cell, (y - min(ys)) * cell, cell, cell)
            pygame.draw.rect(s, _shade(colour, 0.45), r.inflate(-1, -1))
            pygame.draw.rect(s, colour, r.inflate(-1, -1), 1)
        self._mini[key] = s
        return s

    # ------------------------------------------------------------------ frame
    def draw(self, surface: pygame.Surface, session: GameSession, state: ViewState) -> None:
        surface.blit(self._background, (0, 0))
        game = session.game
        tele = game.telemetry()
        session.log.restyle(self.L.log, self.T.small)
        self._draw_header(surface, state)
        cards = session.cards
        if self.L.portrait:
            self._draw_side(surface, game, tele, state)
            if cards is not None and cards.current is not None:
                cards.draw(surface, self.text)
            else:
                self._draw_ticker(surface, session)
        else:
            self._draw_stats(surface, tele, state)
            self._draw_mode(surface, game.mode, state, game.mixed)
            covered = 0
            if cards is not None and cards.current is not None:
                covered = max(0, cards.rect[1] + cards.rect[3] - self.L.log[1])
            session.log.draw(surface, self.text, covered)
            if cards is not None:
                cards.draw(surface, self.text)
        self._draw_board(surface, session, state)
        if tele.utilisation > VRAM_ALERT:
            self._draw_alert_frame(surface, state)
        if not self.L.portrait:
            self._draw_score(surface, game, state)
            self._draw_hold_next(surface, game)
            self._draw_split(surface, game, state)
            self._draw_block_table(surface, session)
        if state.pressed:
            for b in self.controls:
                if b.name in state.pressed:
                    self._draw_control(surface, b, pressed=True)
        if self.L.portrait:
            self._draw_held(surface, game)
        if state.hover is not None and state.hover[1] >= self.L.controls["left"][1]:
            for b in self.controls:
                if b.name not in state.pressed and pygame.Rect(b.rect).collidepoint(state.hover):
                    pygame.draw.rect(surface, theme.CYAN, b.rect, 1, border_radius=6)

    # ------------------------------------------------------------------ portrait column
    def _draw_side(self, surface: pygame.Surface, game, tele, state: ViewState) -> None:
        """A phone's column: score, the two gauges of the lesson, next, split, allocator, details."""
        t, T, P = self.text, self.T, self.L.panels
        x, y, w, h = P["score"]
        lines = f"{game.lines}" if game.endless else f"{game.lines}/{R.VICTORY_LINES}"
        t.blit(surface, f"LINES {lines}", T.small, theme.TEXT, (x + w - 8, y + 4), "topright")
        level = t.blit(surface, f"LV {game.level}", T.small, theme.TEXT_DIM, (x + w - 8, y + h - 8), "bottomright")
        score = f"{game.score:,}"
        size = self._score_sizes.get(score)
        if size is None:  # a long score steps down a size rather than run into the level
            if len(self._score_sizes) > 256:
                self._score_sizes.clear()
            size = self._score_sizes[score] = largest_fitting(score, (T.large + 4, T.large, T.body, T.small),
                                                              w - 24 - level.width)
        t.blit(surface, score, size, theme.TEXT, (x + 8, y + h - 6), "bottomleft")
        util_colour = vram_colour(tele.utilisation)
        frag_alert = tele.fragmentation >= FRAG_ALERT
        for name, value, frac, colour in (
                ("vram", tele.utilisation, tele.utilisation, util_colour),
                ("frag", tele.fragmentation, tele.fragmentation, theme.RED if frag_alert else theme.MAGENTA)):
            x, y, w, h = P[name]
            if name == "frag" and frag_alert:
                p = pulse(state.clock_ms, 700)
                pygame.draw.rect(surface, theme.mix(theme.PANEL_EDGE, theme.RED, p), P[name], 2, border_radius=4)
            t.blit(surface, f"{value * 100:.0f} %", T.large, theme.TEXT, (x + 8, y + 21))
            draw_bar(surface, (x + 8, y + h - 12, w - 16, 6), frac, colour)
            if name == "vram" and tele.reserved:  # the held share that stores no tokens, in amber
                reserved = tele.reserved / R.VISIBLE_CELLS
                bw = w - 16
                start = round(bw * max(0.0, frac - reserved))
                pygame.draw.rect(surface, theme.AMBER, (x + 8 + start, y + h - 12, max(2, round(bw * reserved)), 6))
                t.blit(surface, f"{tele.reserved} rsvd", T.small, theme.AMBER, (x + w - 8, y + 27), "topright")
        x, y, w, h = P["next"]
        for i, kind in enumerate(game.next_queue[:R.NEXT_QUEUE]):
            cy = y + 32 + i * 24
            mini = self.mini_piece(kind, 7)
            surface.blit(mini, mini.get_rect(center=(x + 22, cy)))
            name = self.fit(PIECES[kind].name, T.small, w - 48)
            t.blit(surface, name, T.small, theme.TEXT if i == 0 else theme.TEXT_DIM, (x + 42, cy), "midleft")
        x, y, w, h = P["split"]
        bar = (x + 8, y + h - 14, w - 16, 8)
        if not game.allocator.player_split:  # no bar: the allocator cannot split
            t.blit(surface, "in PAGED mode only", T.small, theme.TEXT_DIM, (x + 8, y + h - 6), "bottomleft")
        elif game.split_ready:
            p = pulse(state.clock_ms, 800)
            draw_bar(surface, bar, 1.0, theme.mix(theme.MAGENTA, (255, 255, 255), p * 0.5))
            t.blit(surface, "READY", T.small, theme.MAGENTA, (x + w - 8, y + 4), "topright")
        else:
            draw_bar(surface, bar, game.charge, theme.VIOLET)
            t.blit(surface, f"{game.charge * 100:.0f} %", T.small, theme.TEXT, (x + w - 8, y + 4), "topright")
        for b in self.modes:  # one switch: shows the allocator, a tap moves to the next one
            r = pygame.Rect(b.rect)
            accent = mode_accent(game.mode)
            over = state.hover is not None and b.contains(state.hover)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=5)
            pygame.draw.rect(surface, accent, r, 2, border_radius=5)
            t.blit(surface, modes.get(game.mode).label, T.body, accent, (r.centerx, r.y + 17), "center")
            if game.mixed:  # the allocator changed mid-run: say so for as long as the run lasts
                t.blit(surface, "mixed: no best", T.small, theme.AMBER, (r.centerx, r.bottom - 13), "center")
            else:
                t.blit(surface, "tap to switch", T.small, theme.TEXT_DIM, (r.centerx, r.bottom - 13), "center")
        d = self.details_button
        if d is not None:
            over = state.hover is not None and d.contains(state.hover)
            d.draw(surface, t, hover=over, size=T.small)

    def _draw_ticker(self, surface: pygame.Surface, session: GameSession) -> None:
        """No card showing: the newest log lines, and where the rest is."""
        t, T = self.text, self.T
        r = pygame.Rect(self.L.panels["strip"])
        pygame.draw.rect(surface, theme.PANEL, r, border_radius=4)
        pygame.draw.rect(surface, theme.PANEL_EDGE, r, 1, border_radius=4)
        line_h = T.small + 3
        t.blit(surface, "SYSTEM LOG", T.small, theme.PANEL_TITLE, (r.x + 7, r.y + 4))
        t.blit(surface, "tap: full log", T.small, theme.TEXT_DIM, (r.right - 7, r.y + 4), "topright")
        room = (r.height - 24 - 4) // line_h
        shown: list[tuple[str, str]] = []
        for entry in reversed(session.log.entries):
            lines = self.wrap(entry.text, T.small, r.width - 14)
            block = [(entry.level, line) for line in lines]
            if len(shown) + len(block) > room:
                if not shown:
                    shown = [(entry.level, self.fit(lines[0], T.small, r.width - 14))]
                break
            shown = block + shown
        y = r.bottom - 4 - line_h * len(shown)
        for level, line in shown:
            t.blit(surface, line, T.small, LOG_TEXT_COLOURS.get(level, theme.TEXT), (r.x + 7, y))
            y += line_h

    def _draw_held(self, surface: pygame.Surface, game) -> None:
        """The HOLD button shows the request it holds."""
        hold = next((b for b in self.controls if b.name == "hold"), None)
        if hold is None or game.hold_kind is None:
            return
        r = pygame.Rect(hold.rect)
        icon = pygame.Rect(r.x + 3, r.y + 3, r.width - 6, 34)
        pygame.draw.rect(surface, theme.BUTTON, icon)
        mini = self.mini_piece(game.hold_kind, 8, dim=not game.can_hold)
        surface.blit(mini, mini.get_rect(center=icon.center))

    @property
    def background(self) -> pygame.Surface:
        """Everything of the console that never changes (frames, titles, grid, controls)."""
        return self._background

    def draw_board_only(self, surface: pygame.Surface, session: GameSession, state: ViewState) -> None:
        """The board well and its pieces, nothing around it (the title's demo)."""
        well = pygame.Rect(self.L.board).inflate(10, 10)
        surface.blit(self._background, well, well)
        self._draw_board(surface, session, state)
        if session.game.telemetry().utilisation > VRAM_ALERT:
            self._draw_alert_frame(surface, state)

    def _draw_alert_frame(self, surface: pygame.Surface, state: ViewState) -> None:
        """Close to OOM: the board's frame throbs red."""
        p = pulse(state.clock_ms, 650)
        frame = pygame.Rect(self.L.board).inflate(8, 8)
        pygame.draw.rect(surface, theme.mix(theme.PANEL_EDGE, theme.RED, 0.4 + 0.6 * p), frame, 2,
                         border_radius=4)

    def _draw_header(self, surface: pygame.Surface, state: ViewState) -> None:
        if not state.header_buttons:
            return
        for b in self.header:
            label = None
            if b.name == "mute":
                label = "MUTED" if state.muted else "SOUND"
                if not self.L.portrait:
                    label = f"{label}  {MUTE_KEY}"
            hover = state.hover is not None and b.contains(state.hover)
            b.draw(surface, self.text, hover=hover, label=label,
                   active=(b.name == "mute" and state.muted), size=self.T.small)

    def _draw_stats(self, surface: pygame.Surface, tele, state: ViewState) -> None:
        t = self.text
        frag_alert = tele.fragmentation >= FRAG_ALERT
        util_colour = vram_colour(tele.utilisation)
        cards = (
            (f"{tele.utilisation * 100:.0f} %", tele.utilisation, util_colour),
            (f"{tele.fragmentation * 100:.0f} %", tele.fragmentation,
             theme.RED if frag_alert else theme.MAGENTA),
            (f"{tele.throughput:.0f} tok/s", tele.throughput / THROUGHPUT_FULL, theme.GREEN),
            (f"{tele.usable_free} blocks", tele.usable_free / R.VISIBLE_CELLS, theme.VIOLET),
        )
        for i, (rect, (value, frac, colour)) in enumerate(zip(self.L.stats, cards)):
            x, y, w, h = rect
            if i == 1 and frag_alert:
                p = pulse(state.clock_ms, 700)
                pygame.draw.rect(surface, theme.mix(theme.PANEL_EDGE, theme.RED, p), rect, 2, border_radius=4)
                colour = theme.mix(theme.RED, (255, 200, 200), p * 0.6)
            t.blit(surface, value, self.T.large, theme.TEXT, (x + 8, y + 22))
            draw_bar(surface, (x + 8, y + h - 12, w - 16, 6), frac, colour)
            if i == 0 and tele.reserved:  # the held share that stores no tokens, in amber
                reserved = tele.reserved / R.VISIBLE_CELLS
                bw = w - 16
                start = round(bw * max(0.0, frac - reserved))
                pygame.draw.rect(surface, theme.AMBER, (x + 8 + start, y + h - 12,
                                                        max(2, round(bw * reserved)), 6))
                t.blit(surface, f"{tele.reserved} rsvd", self.T.small, theme.AMBER,
                       (x + w - 8, y + 30), "topright")
        t.blit(surface, f"RESIDENT {tele.resident}   FREE {tele.free_cells}   SEALED {tele.sealed_holes}",
               self.T.small, theme.TEXT_DIM, (self.L.panels["resident"][0] + 4, self.L.panels["resident"][1] + 3))

    def _draw_mode(self, surface: pygame.Surface, mode: str, state: ViewState, mixed: bool = False) -> None:
        for b in self.modes:
            hover = state.hover is not None and b.contains(state.hover)
            b.draw(surface, self.text, active=(b.name == mode), hover=hover, accent=mode_accent(b.name))
        x, y, w, _ = self.L.panels["mode_note"]
        if mixed:  # the allocator changed mid-run: say so for as long as the run lasts
            self.text.blit(surface, self.fit(MIXED_NOTE, self.T.small, w), self.T.small, theme.AMBER, (x, y))
            return
        self.text.blit(surface, self.fit(MODE_NOTES[mode], self.T.small, w), self.T.small, theme.TEXT_DIM, (x, y))

    # ------------------------------------------------------------------ board
    def _draw_board(self, surface: pygame.Surface, session: GameSession, state: ViewState) -> None:
        game = session.game
        fx = session.effects
        bx, by, bw, bh = self.L.board
        ox = 0
        if fx.shake > 0:
            ox = int(math.sin(fx.shake / 18.0) * 5 * fx.shake / 450.0)
        bx += ox
        hidden = frozenset(fx.hidden_cells()) if fx.cascades else frozenset()
        cell = self.L.cell
        key = (session.board_version, hidden)
        if self._layer_owner is not session or self._layer_key != key:
            self._render_layer(session, hidden)
            self._layer_owner = session
            self._layer_key = key
        surface.blit(self._layer, (bx, by))
        sprite = self.cell_sprite
        blits = []
        a = game.active
        if a is not None:
            colour = PIECES[a.kind].colour
            ghost = sprite(colour, "ghost")
            active_cells = set(a.cells())
            for x, y in game.ghost_cells():
                if y >= HIDDEN and (x, y) not in active_cells:
                    blits.append((ghost, (bx + x * cell, by + (y - HIDDEN) * cell)))
            act = sprite(colour, "active")
            for x, y in active_cells:
                if y >= HIDDEN:
                    blits.append((act, (bx + x * cell, by + (y - HIDDEN) * cell)))
        surface.fblits(blits)
        if fx.landings or fx.clears or fx.cascades or fx.highlight is not None:
            self._draw_effects(surface, session, bx, by, state)
        cards = session.cards
        if cards is not None and cards.current is not None and cards.cells:
            outline_cells(surface, self.L, cards.cells, theme.mix(theme.AMBER, (255, 255, 255),
                                                          pulse(state.clock_ms, 600) * 0.6), ox)
        if fx.toasts:
            self._draw_toast(surface, fx.toasts[-1])

    def _draw_toast(self, surface: pygame.Surface, toast) -> None:
        """A word rising over the board and fading out."""
        p = toast.age / toast.duration
        size = self._score_sizes.get(toast.text)
        if size is None:  # a long toast steps down a size rather than spill over the columns
            size = self._score_sizes[toast.text] = largest_fitting(toast.text, self.toast_sizes, self.L.board[2] - 24)
        label = self.text.render(toast.text, size, toast.colour)
        box = label.get_rect(center=(self.L.board[0] + self.L.board[2] // 2, self.L.board[1] + 150 - int(30 * p)))
        plate = box.inflate(18, 10)
        alpha = 255 if p < 0.7 else int(255 * (1 - p) / 0.3)
        shade = self._toast_plate
        if shade.get_size() != plate.size:
            shade = self._toast_plate = pygame.Surface(plate.size).convert()
        shade.fill((6, 8, 18))
        pygame.draw.rect(shade, toast.colour, shade.get_rect(), 1)
        shade.blit(label, label.get_rect(center=shade.get_rect().center))
        shade.set_alpha(None if alpha >= 255 else max(0, alpha))
        surface.blit(shade, plate)

    def _render_layer(self, session: GameSession, hidden: frozenset[tuple[int, int]]) -> None:
        """The board well with every committed block, redrawn only when the board changes."""
        layer = self._layer
        layer.blit(self._background, (0, 0), pygame.Rect(self.L.board))
        cell = self.L.cell
        sprite = self.cell_sprite
        colour_of = session.colour_of
        colours: dict[int, Colour] = {}
        blits = []
        board = session.game.board
        grid = board.grid
        for y in range(HIDDEN, len(grid)):
            row = grid[y]
            reserved = board.reserved[y]
            py = (y - HIDDEN) * cell
            for x, rid in enumerate(row):
                if rid and (x, y) not in hidden:
                    c = colours.get(rid)
                    if c is None:
                        c = colours[rid] = colour_of(rid)
                    blits.append((sprite(c, "reserved" if reserved >> x & 1 else "block"), (x * cell, py)))
        layer.fblits(blits)

    def _draw_effects(self, surface: pygame.Surface, session: GameSession, bx: int, by: int,
                      state: ViewState) -> None:
        fx = session.effects
        cell = self.L.cell
        flash = self._flash
        for land in fx.landings:
            flash.set_alpha(int(110 * (1 - land.age / land.duration)))
            for x, y in land.cells:
                if y >= HIDDEN:
                    surface.blit(flash, (bx + x * cell, by + (y - HIDDEN) * cell))
        clip = surface.get_clip()
        surface.set_clip(pygame.Rect(bx, by, self.L.board[2], self.L.board[3]))
        for clear in fx.clears:
            p = clear.age / clear.duration
            for y in clear.rows:
                if y < HIDDEN:
                    continue
                py = by + (y - HIDDEN) * cell
                h = max(1, int(cell * (1 - p)))
                top = py + (cell - h) // 2
                for x, colour in enumerate(clear.cells.get(y, ())):
                    c = theme.mix(colour or (255, 255, 255), (255, 255, 255), min(1.0, p * 2.2))
                    pygame.draw.rect(surface, c, (bx + x * cell + 1, top, cell - 2, h))
                # A sweeping bar: the garbage collector passing over the row.
                sweep = bx + int(self.L.board[2] * min(1.0, p * 1.6))
                pygame.draw.line(surface, theme.GREEN, (bx, py + cell // 2), (sweep, py + cell // 2), 2)
        for cascade in fx.cascades:
            for page, (fx0, fy0), (fx1, fy1), colour in cascade.pages:
                t = cascade.progress(page)
                fly_x = bx + (fx0 + (fx1 - fx0) * t) * cell
                fly_y = by + (fy0 + (fy1 - fy0) * t - HIDDEN) * cell
                spr = self.cell_sprite(colour, "active")
                surface.blit(spr, (int(fly_x), int(fly_y)))
                self.text.blit(surface, str(page), self.T.small, (255, 255, 255),
                               (int(fly_x) + cell // 2, int(fly_y) + cell // 2 + 1), "center")
        surface.set_clip(clip)
        hl = fx.highlight
        if hl is not None and not fx.cascades:
            p = pulse(state.clock_ms, 600)
            fade = 1.0 - max(0.0, (hl.age - hl.duration + 500) / 500)
            colour = theme.mix(theme.BOARD_BG, theme.mix(theme.MAGENTA, (255, 255, 255), p), fade)
            for page, (x, y) in hl.cells:
                if y < HIDDEN:
                    continue
                r = pygame.Rect(bx + x * cell - 1, by + (y - HIDDEN) * cell - 1, cell + 2, cell + 2)
                pygame.draw.rect(surface, colour, r, 2)
                self.text.blit(surface, str(page), self.T.small, (255, 255, 255), r.center, "center")

    # ------------------------------------------------------------------ right column
    def _draw_score(self, surface: pygame.Surface, game, state: ViewState) -> None:
        t = self.text
        x, y, _, _ = self.L.panels["score"]
        score = f"{game.score:,}"
        size = self._score_sizes.get(score)
        if size is None:  # a long score steps down a size rather than run into LINES
            if len(self._score_sizes) > 256:
                self._score_sizes.clear()
            size = self._score_sizes[score] = largest_fitting(score, self.score_sizes, SCORE_TEXT_W)
        t.blit(surface, score, size, theme.TEXT, (x + 8, y + 43), "midleft")
        best = max(state.best, 0)
        if self._best_text[0] != best:
            self._best_text = (best, short_number(best, self.T.small, VALUE_W))
        vals = (f"{game.lines}" if game.endless else f"{game.lines} / {R.VICTORY_LINES}",
                f"{game.level}", self._best_text[1])
        for i, v in enumerate(vals):
            t.blit(surface, v, self.T.small, theme.TEXT, (x + 262, y + 7 + i * 20), "topright")

    def _draw_hold_next(self, surface: pygame.Surface, game) -> None:
        t = self.text
        hx, hy, hw, hh = self.L.panels["hold"]
        if game.hold_kind is not None:
            mini = self.mini_piece(game.hold_kind, 14, dim=not game.can_hold)
            surface.blit(mini, mini.get_rect(center=(hx + hw // 2, hy + 62)))
            name = self.fit(PIECES[game.hold_kind].name.split("_")[0], self.T.small, hw - 8)
            t.blit(surface, name, self.T.small, theme.TEXT_DIM, (hx + hw // 2, hy + hh - 14), "center")
        else:
            t.blit(surface, "empty", self.T.small, theme.TEXT_DIM, (hx + hw // 2, hy + 62), "center")
        nx, ny, nw, nh = self.L.panels["next"]
        queue = game.next_queue[:R.NEXT_QUEUE]
        step = min(32, (nh - 44) // max(1, len(queue) - 1)) if len(queue) > 1 else 0
        for i, kind in enumerate(queue):
            cy = ny + 38 + i * step
            mini = self.mini_piece(kind, 9)
            surface.blit(mini, mini.get_rect(center=(nx + 26, cy)))
            name = self.fit(PIECES[kind].name, self.T.small, nw - 54)
            t.blit(surface, name, self.T.small, theme.TEXT if i == 0 else theme.TEXT_DIM, (nx + 50, cy), "midleft")

    def _draw_split(self, surface: pygame.Surface, game, state: ViewState) -> None:
        t = self.text
        x, y, w, h = self.L.panels["split"]
        bar = (x + 8, y + 28, w - 96, 10)
        if not game.allocator.player_split:
            draw_bar(surface, bar, game.charge, (70, 70, 100))
            t.blit(surface, "PAGED only", self.T.small, theme.TEXT_DIM, (x + w - 8, y + 33), "midright")
            return
        if game.split_ready:
            p = pulse(state.clock_ms, 800)
            draw_bar(surface, bar, 1.0, theme.mix(theme.MAGENTA, (255, 255, 255), p * 0.5))
            t.blit(surface, "READY", self.T.body, theme.MAGENTA, (x + w - 8, y + 33), "midright")
        else:
            draw_bar(surface, bar, game.charge, theme.VIOLET)
            t.blit(surface, f"{game.charge * 100:.0f} %", self.T.body, theme.TEXT, (x + w - 8, y + 33), "midright")

    def _draw_block_table(self, surface: pygame.Surface, session: GameSession) -> None:
        """The table changes only when a split happens: render it once per table."""
        bt = session.game.block_table
        key = (bt, session.table_pages)
        if self._table is None or self._table_key != key:
            self._table = self._render_block_table(bt, dict(session.table_pages))
            self._table_key = key
        surface.blit(self._table, (self.L.panels["blocks"][0] + 2, self.L.panels["blocks"][1] + 22))

    def block_table(self, session: GameSession, size: tuple[int, int]) -> pygame.Surface:
        """The block table of the last split, rendered into a panel's inside of `size`."""
        bt = session.game.block_table
        key = (bt, session.table_pages, size)
        if self._table is None or self._table_key != key:
            # Shown beside no board (the phone's DETAILS sheet): say how to read the coordinates.
            footer = f"(col, row): row 0 is the top, {R.VISIBLE - 1} the bottom"
            self._table = self._render_block_table(bt, dict(session.table_pages), (size[0] + 4, size[1] + 24),
                                                   footer)
            self._table_key = key
        return self._table

    def _render_block_table(self, bt, pages: dict[int, tuple[int, int] | None],
                            panel: tuple[int, int] | None = None,
                            footer: str = "blocks outlined on the board") -> pygame.Surface:
        t = self.text
        w, h = panel if panel is not None else self.L.panels["blocks"][2:]
        surf = pygame.Surface((w - 4, h - 24)).convert()
        surf.fill(theme.PANEL)
        x, y = -2, -22  # draw in panel coordinates
        if bt is None:
            msg = ("In PAGED mode a request paged on demand, or split with Shift/P, shows its "
                   "block table here: logical pages mapped to scattered physical blocks.")
            for i, line in enumerate(wrap(msg, self.T.small, w - 16)):
                t.blit(surf, line, self.T.small, theme.TEXT_DIM, (x + 8, y + 28 + i * (self.T.small + 4)))
            return surf
        colour = PIECES[bt.kind].colour
        t.blit(surf, fit(f"req#{bt.request_id} {bt.name}", self.T.small, w - 16), self.T.small, colour,
               (x + 8, y + 24))
        t.blit(surf, "logical", self.T.small, theme.TEXT_DIM, (x + 8, y + 46))
        t.blit(surf, "physical block (col, row)", self.T.small, theme.TEXT_DIM, (x + 84, y + 46))
        resident = dict(bt.resident)
        rows = max(1, min(6, (h - 90) // 19))
        for i, (page, cell) in enumerate(bt.entries[:rows]):
            ry = y + 66 + i * 19
            t.blit(surf, f"page {page}", self.T.small, theme.TEXT, (x + 8, ry))
            t.blit(surf, "->", self.T.small, theme.TEXT_DIM, (x + 62, ry))
            now = pages.get(page, resident.get(page, cell))
            if now is None:
                t.blit(surf, "freed by GC", self.T.small, theme.GREEN, (x + 84, ry))
            else:
                cx, cy = now
                row = R.visible_row(cy)
                t.blit(surf, f"#{row * R.WIDTH + cx:03d}  ({cx}, {row})", self.T.small, theme.TEXT, (x + 84, ry))
        t.blit(surf, fit(footer, self.T.small, w - 16), self.T.small, theme.TEXT_DIM, (x + 8, y + h - 20))
        return surf
