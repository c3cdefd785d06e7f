"""Draws the whole game console for a GameSession: telemetry, board, side panels, controls.

Everything that never changes (frames, titles, grid, control buttons) is baked
once into a background surface; each frame only the live numbers, pieces and
animations are drawn over it, with text taken from the TextCache. The board's
blocks are redrawn into a layer only when the engine's board or decode step changes,
and every block's fill is what the engine says it holds (Serving.cell_tokens).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pygame

from engine import PIECES, Kind, modes
from engine import rules as R
from engine.ending import serving_figures
from engine.events import BlockTable
from engine.occupancy import drafts, fills, pending
from engine.prefix_cache import PREFIX, PREFIX_OWNER
from engine.request import Request
from ui import theme
from ui.i18n import DEFAULT as DEFAULT_LANGUAGE, Catalogue, catalogue
from ui.i18n.game_text import mode_label, mode_note
from ui.keys import CONTROL_LABELS, HOLD_KEY, MUTE_KEY, PREEMPT_KEY, SPLIT_KEY
from ui.layout import BOARD_COLS, BOARD_ROWS, Layout, layout_for
from ui.log_console import TEXT_COLOURS as LOG_TEXT_COLOURS
from ui.session import GameSession
from ui.text import TextCache, fit, largest_fitting, short_number, wrap
from ui.widgets import Button, draw_bar, draw_icon, draw_panel, pulse

Colour = tuple[int, int, int]
Cell = tuple[int, int]

THROUGHPUT_FULL = 320.0  # tokens/s that fills the throughput bar
FRAG_ALERT = 0.30  # fragmentation at which its card pulses (allocators that have it only)
VRAM_ALERT = R.VRAM_WARN  # utilisation at which the board frame pulses red
WAIT_AMBER = 0.5  # share of the deadline waited at which a wait bar turns amber ...
WAIT_RED = 0.75  # ... and red
HIDDEN = R.HIDDEN
BLOCKED_COLOUR: Colour = (120, 126, 150)  # a request waiting to be paged, greyed at the spawn
FOCUS_COLOUR: Colour = (255, 255, 255)

LANDSCAPE_LAYOUT = layout_for("landscape")

MIXED_NOTE = "hud.mixed_note"  # catalogue key
def mode_accent(name: str) -> Colour:
    """A mode's colour, as the engine's registry names it (violet for a name it lacks)."""
    try:
        return theme.named(modes.get(name).accent)
    except ValueError:
        return theme.VIOLET


STAT_TITLES = ("hud.vram_held", "hud.usable_free", "hud.throughput", "hud.waste")  # catalogue keys

# Score panel: the big number ends before the SERVED / LEVEL / BEST labels at x + 150,
# and those values are right-aligned after a label at most "SERVED" wide.
SCORE_TEXT_W = 148
VALUE_W = 64

HEADER_KEYS: dict[str, str] = {"help": "H", "mute": "M", "pause": "Esc"}  # the header switches' keys


def wait_colour(fraction: float) -> Colour:
    """A wait bar's colour: green, amber past half the deadline, red near it."""
    return theme.RED if fraction >= WAIT_RED else theme.AMBER if fraction >= WAIT_AMBER else theme.GREEN


def block_fill(tokens: int, cell: int) -> int:
    """Pixels of a block's inside (cell - 4 high) that `tokens` of its 16 fill, from the bottom."""
    inner = cell - 4
    return max(0, min(inner, round(inner * tokens / R.TOKENS_PER_BLOCK)))


def control_buttons(layout: Layout = LANDSCAPE_LAYOUT, tr: Catalogue | None = None) -> list[Button]:
    tr = tr or catalogue(DEFAULT_LANGUAGE)
    if layout.portrait:  # a phone: short labels, no key hints (a keyboard player sees them in HELP)
        return [Button(name, r, tr.t(f"control.short.{name}"), touch=layout.touch)
                for name, r in layout.controls.items()]
    return [Button(name, r, tr.t(f"control.{name}"), CONTROL_LABELS[name][1], touch=layout.touch)
            for name, r in layout.controls.items()]


def header_buttons(layout: Layout = LANDSCAPE_LAYOUT, tr: Catalogue | None = None) -> list[Button]:
    tr = tr or catalogue(DEFAULT_LANGUAGE)
    if layout.portrait:
        return [Button(name, r, tr.t(f"hud.header.{name}"), touch=layout.touch)
                for name, r in layout.header_buttons.items()]
    return [Button(name, r, tr.t("hud.header.key", label=tr.t(f"hud.header.{name}"), key=HEADER_KEYS[name]),
                   touch=layout.touch)
            for name, r in layout.header_buttons.items()]


def mode_buttons(layout: Layout = LANDSCAPE_LAYOUT, tr: Catalogue | None = None) -> list[Button]:
    """One button per allocator in the registry across the layout's row; a phone has one switch."""
    tr = tr or catalogue(DEFAULT_LANGUAGE)
    if "toggle" in layout.mode_buttons:
        return [Button("toggle", layout.mode_buttons["toggle"], tr.t("hud.allocator"), touch=layout.touch)]
    x0, y, w0, h = layout.mode_buttons["contiguous"]
    x1, _, w1, _ = layout.mode_buttons["paged"]
    gap = x1 - (x0 + w0)
    n = len(modes.MODES)
    w = (x1 + w1 - x0 - gap * (n - 1)) // n
    return [Button(m.name, (x0 + i * (w + gap), y, w, h), mode_label(tr, m.name), touch=layout.touch)
            for i, m in enumerate(modes.MODES)]


def preempt_button(layout: Layout = LANDSCAPE_LAYOUT, tr: Catalogue | None = None) -> Button:
    """The preemption-mode switch (swap / recompute); its label follows the game's mode."""
    tr = tr or catalogue(DEFAULT_LANGUAGE)
    return Button("preempt", layout.preempt_button, tr.t("hud.preempt"), touch=layout.touch)


@dataclass
class ViewState:
    """UI-only facts the console shows besides the game itself."""

    clock_ms: float = 0.0
    muted: bool = False
    pressed: set[str] = field(default_factory=set)
    hover: tuple[int, int] | None = None
    best: int = 0
    header_buttons: bool = True  # the title screen has its own help and sound buttons
    mode_locked: bool = False  # a chapter sets the allocator: its switch does not switch


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

    def __init__(self, text: TextCache, layout: Layout = LANDSCAPE_LAYOUT, tr: Catalogue | None = None) -> None:
        self.text = text
        self.tr = tr if tr is not None else catalogue(DEFAULT_LANGUAGE)
        self.L = layout
        self.T = layout.text
        self.score_sizes = (self.T.title, self.T.large + 4, self.T.large)
        self.toast_sizes = (self.T.large, self.T.body, self.T.small)
        self.controls = control_buttons(layout, self.tr)
        self.header = header_buttons(layout, self.tr)
        self.modes = mode_buttons(layout, self.tr)
        self.preempt = preempt_button(layout, self.tr)
        self.details_button = (Button("details", layout.panels["details"], self.tr.t("details.title"), touch=layout.touch)
                               if "details" in layout.panels else None)
        self._background = self._bake_background()
        self._cells: dict[tuple[Colour, str], pygame.Surface] = {}
        self._fills: dict[tuple[Colour, int], pygame.Surface] = {}
        self._ghosts: dict[tuple[Colour, int, int], pygame.Surface] = {}  # draft slots (speculative decoding)
        self._flash = pygame.Surface((self.L.cell, self.L.cell)).convert()
        self._flash.fill((255, 255, 255))
        self._fade = pygame.Surface((self.L.cell, self.L.cell)).convert()
        self._mini: dict[tuple[Kind, int, bool], pygame.Surface] = {}
        self._wrapped: dict[tuple, list[str]] = {}  # wrapped and shortened texts
        self._table_key: object = ()
        self._layer = pygame.Surface((self.L.board[2], self.L.board[3])).convert()
        self._layer_owner: GameSession | None = None
        self._colours: dict[int, Colour] = {}  # the board layer's owners' colours, by owner id
        self._deferred = False  # the last frame left its text panels' changes to this one
        self._needs: dict[tuple, tuple[int, int]] = {}  # waiting requests' cached and needed blocks
        self._layer_key: object = None
        self._toast_plate = pygame.Surface((1, 1)).convert()
        self._table: pygame.Surface | None = None
        self._score_sizes: dict[str, int] = {}  # font size per score or toast text that fits
        self._best_text: tuple[int, str] = (-1, "")

    @property
    def buttons(self) -> list[Button]:
        """Every button of the console, for hit tests."""
        extra = [self.details_button] if self.details_button is not None else []
        return [*self.header, *self.modes, self.preempt, *self.controls, *extra]

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
        t, tr = self.text, self.tr
        L, T = self.L, self.T
        bg = pygame.Surface(L.size).convert()
        bg.fill(theme.BG)
        # Header strip.
        hy = L.header[3] // 2
        pygame.draw.rect(bg, (10, 14, 30), L.header)
        pygame.draw.line(bg, theme.PANEL_EDGE, (0, L.header[3] - 1), (L.width, L.header[3] - 1))
        if L.portrait:
            r = t.blit(bg, "VRAM", T.large, theme.MAGENTA, (L.margin, hy), "midleft")
            t.blit(bg, tr.t("game.title_short"), T.large, theme.CYAN, (r.right + 6, hy), "midleft")
        else:
            r = t.blit(bg, tr.t("game.title_prefix"), T.large, theme.MAGENTA, (L.margin, hy), "midleft")
            r = t.blit(bg, tr.t("game.title_header"), T.large, theme.CYAN, (r.right + 8, hy), "midleft")
            t.blit(bg, tr.t("game.subtitle"), T.small, theme.TEXT_DIM, (r.right + 14, hy + 1), "midleft")
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
            draw_panel(bg, P["score"], t, tr.t("hud.score"), size=T.small)
            draw_panel(bg, P["vram"], t, tr.t(STAT_TITLES[0]), size=T.small)
            draw_panel(bg, P["free"], t, tr.t("hud.usable_free"), size=T.small)
            draw_panel(bg, P["queue"], t, tr.t("hud.queue"), size=T.small)
        else:
            for rect, title in zip(L.stats, STAT_TITLES):
                draw_panel(bg, rect, t, tr.t(title), size=T.small)
            draw_panel(bg, P["mode"], t, tr.t("hud.allocator"), size=T.small)
            draw_panel(bg, P["step"], t, tr.t("hud.step"), size=T.small)
            draw_panel(bg, P["score"], t, size=T.small)
            t.blit(bg, tr.t("hud.score"), T.small, theme.PANEL_TITLE, (P["score"][0] + 8, P["score"][1] + 5))
            for i, label in enumerate((tr.t("hud.served"), tr.t("hud.level"), tr.t("hud.best"))):
                t.blit(bg, label, T.small, theme.PANEL_TITLE, (P["score"][0] + 150, P["score"][1] + 7 + i * 20))
            draw_panel(bg, P["hold"], t, tr.t("hud.hold", key=HOLD_KEY), size=T.small)
            draw_panel(bg, P["queue"], t, tr.t("hud.queue"), size=T.small)
            draw_panel(bg, P["preempt"], t, tr.t("hud.preempt"), size=T.small)
            draw_panel(bg, P["blocks"], t, tr.t("hud.block_table"), size=T.small)
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
        elif style == "blocked":
            # A request waiting to be paged: greyed, see-through, at the spawn.
            s = pygame.Surface((c, c), pygame.SRCALPHA)
            pygame.draw.rect(s, (*colour, 90), (1, 1, c - 2, c - 2))
            pygame.draw.rect(s, (*colour, 230), (1, 1, c - 2, c - 2), 1)
            for k in range(-c, c, 6):
                pygame.draw.line(s, (*colour, 160), (k, c), (k + c, 0), 1)
        elif style == "cached":
            # Free memory that still holds cached content (prefix caching): a dashed outline.
            s = pygame.Surface((c, c), pygame.SRCALPHA)
            pygame.draw.rect(s, (*colour, 22), (2, 2, c - 4, c - 4))
            dim = (*_shade(colour, 0.75), 255)
            for k in range(2, c - 2, 4):
                end = min(k + 2, c - 3)
                for a, b in (((k, 2), (end, 2)), ((k, c - 3), (end, c - 3)),
                             ((2, k), (2, end)), ((c - 3, k), (c - 3, end))):
                    pygame.draw.line(s, dim, a, b, 1)
        elif style == "reserved":
            # Held but empty: the request's colour as hatching, as in the LAB.
            s = pygame.Surface((c, c)).convert()
            s.fill(theme.BOARD_BG)
            s.set_clip(pygame.Rect(1, 1, c - 2, c - 2))
            hatch = _shade(colour, 0.9)
            for k in range(-c, c, 6):  # two pixels wide: still hatched, not filled, at a phone's scale
                pygame.draw.line(s, hatch, (k, c), (k + c, 0), 2)
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

    def fill_sprite(self, colour: Colour, tokens: int) -> pygame.Surface:
        """A held block holding `tokens` of its 16: dark inside, filled from the bottom."""
        if tokens >= R.TOKENS_PER_BLOCK:
            return self.cell_sprite(colour)
        key = (colour, tokens)
        s = self._fills.get(key)
        if s is not None:
            return s
        c = self.L.cell
        s = pygame.Surface((c, c)).convert()
        s.fill(theme.BOARD_BG)
        pygame.draw.rect(s, _shade(colour, 0.16), (1, 1, c - 2, c - 2))
        h = block_fill(tokens, c)
        if h:
            pygame.draw.rect(s, _shade(colour, 0.42), (2, c - 2 - h, c - 4, h))
            pygame.draw.line(s, theme.mix(colour, (255, 255, 255), 0.45), (2, c - 2 - h), (c - 3, c - 2 - h))
        pygame.draw.rect(s, colour, (1, 1, c - 2, c - 2), 1)
        self._fills[key] = s
        return s

    def ghost_sprite(self, colour: Colour, first: int, n: int) -> pygame.Surface:
        """Draft tokens (speculative decoding): slots `first` to `first + n` of a block, a pale
        band over where its tokens would go, to be verified this step."""
        key = (colour, first, n)
        s = self._ghosts.get(key)
        if s is not None:
            return s
        c = self.L.cell
        s = pygame.Surface((c, c), pygame.SRCALPHA)
        low, high = block_fill(first, c), block_fill(first + n, c)
        if high > low:
            band = pygame.Rect(3, c - 2 - high, c - 6, high - low)
            s.fill((*theme.mix(colour, (255, 255, 255), 0.6), 120), band)
            for x in range(band.x, band.right, 4):  # a dotted top edge: not there yet
                s.fill((255, 255, 255, 200), (x, band.y, 2, 1))
        self._ghosts[key] = s
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
            self._draw_stats(surface, game, tele, state)
            self._draw_mode(surface, game.mode, state, game.mixed)
            self._draw_step(surface, game, state)
            covered = 0
            if cards is not None and cards.current is not None:
                covered = max(0, cards.rect[1] + cards.rect[3] - self.L.log[1])
            # A frame that draws the board layer again leaves new log lines (and a changed block
            # table) to the next: the board's costliest frame stays within budget, the text lags a
            # frame (16 ms).
            heavy = self._layer_due(session) and not self._deferred  # never two frames running
            self._deferred = heavy
            session.log.draw(surface, self.text, covered, self.tr, defer=heavy)
            if cards is not None:
                cards.draw(surface, self.text)
        self._draw_board(surface, session, state)
        if tele.utilisation > VRAM_ALERT:
            self._draw_alert_frame(surface, state)
        if not self.L.portrait:
            self._draw_score(surface, game, state)
            self._draw_hold(surface, game)
            self._draw_queue(surface, game, self.L.panels["queue"])
            self._draw_preempt(surface, game, state)
            self._draw_block_table(surface, session, defer=heavy)
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
        """A phone's column: score, the two gauges of the lesson, the queue, the preemption and
        allocator switches, details."""
        t, T, P, tr = self.text, self.T, self.L.panels, self.tr
        x, y, w, h = P["score"]
        t.blit(surface, tr.t("hud.level_short", level=game.level), T.small, theme.TEXT_DIM, (x + w - 8, y + 4),
               "topright")
        served = f"{game.served}" if game.endless else f"{game.served}/{game.goal_requests}"
        t.blit(surface, served, T.small, theme.TEXT, (x + w - 8, y + 22), "topright")
        word = t.blit(surface, tr.t("hud.served_word"), T.small, theme.TEXT_DIM, (x + w - 8, y + 39), "topright")
        score = f"{game.score:,}"
        size = self._score_sizes.get(score)
        if size is None:  # a long score steps down a size rather than run into the served count
            if len(self._score_sizes) > 256:
                self._score_sizes.clear()
            size = self._score_sizes[score] = largest_fitting(score, (T.large + 4, T.large, T.body, T.small),
                                                              w - 24 - max(word.width, 60))
        t.blit(surface, score, size, theme.TEXT, (x + 8, y + h - 6), "bottomleft")
        # VRAM held, with the share reserved but empty in amber.
        x, y, w, h = P["vram"]
        t.blit(surface, tr.pct(tele.utilisation), T.large, theme.TEXT, (x + 8, y + 21))
        self._vram_bar(surface, (x + 8, y + h - 12, w - 16, 6), tele)
        if tele.reserved:
            t.blit(surface, tr.t("hud.reserved_short", n=tele.reserved), T.small, theme.AMBER, (x + w - 8, y + 27),
                   "topright")
        # Usable free blocks, and the fragmentation that keeps the rest out of reach.
        x, y, w, h = P["free"]
        frag, alert = self._fragmentation(game, tele)
        if alert:
            p = pulse(state.clock_ms, 700)
            pygame.draw.rect(surface, theme.mix(theme.PANEL_EDGE, theme.RED, p), P["free"], 2, border_radius=4)
        t.blit(surface, f"{tele.usable_free}", T.large, theme.TEXT, (x + 8, y + 21))
        t.blit(surface, tr.t("hud.frag_short", percent=tr.pct(frag)), T.small, theme.RED if alert else theme.TEXT_DIM,
               (x + w - 8, y + 27), "topright")
        draw_bar(surface, (x + 8, y + h - 12, w - 16, 6), tele.usable_free / R.VISIBLE_CELLS, theme.VIOLET)
        self._draw_queue(surface, game, P["queue"])
        self._draw_preempt(surface, game, state)
        for b in self.modes:  # one switch: shows the allocator, a tap moves to the next one
            r = pygame.Rect(b.rect)
            accent = mode_accent(game.mode)
            over = state.hover is not None and b.contains(state.hover)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=5)
            pygame.draw.rect(surface, accent, r, 2, border_radius=5)
            t.blit(surface, mode_label(tr, game.mode), T.body, accent, (r.centerx, r.y + 17), "center")
            if game.mixed:  # the allocator changed mid-run: say so for as long as the run lasts
                t.blit(surface, self.fit(tr.t("hud.mixed_short"), T.small, r.width - 6), T.small, theme.AMBER,
                       (r.centerx, r.bottom - 13), "center")
            else:
                t.blit(surface, self.fit(tr.t("hud.mode_locked" if state.mode_locked else "hud.tap_switch"),
                                         T.small, r.width - 6), T.small, theme.TEXT_DIM, (r.centerx, r.bottom - 13),
                       "center")
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
        t.blit(surface, self.tr.t("hud.system_log"), T.small, theme.PANEL_TITLE, (r.x + 7, r.y + 4))
        t.blit(surface, self.tr.t("hud.full_log"), T.small, theme.TEXT_DIM, (r.right - 7, r.y + 4), "topright")
        room = (r.height - 24 - 4) // line_h
        shown: list[tuple[str, str]] = []
        for entry in reversed(session.log.entries):
            lines = self.wrap(self.tr.msg(entry.message), T.small, r.width - 14)
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
        """The HOLD button shows the request it holds, and how long it has waited."""
        hold = next((b for b in self.controls if b.name == "hold"), None)
        if hold is None or game.hold is None:
            return
        r = pygame.Rect(hold.rect)
        icon = pygame.Rect(r.x + 3, r.y + 3, r.width - 6, 34)
        pygame.draw.rect(surface, theme.BUTTON, icon)
        mini = self.mini_piece(game.hold.kind, 8, dim=not game.can_hold)
        surface.blit(mini, mini.get_rect(center=icon.center))
        frac = min(1.0, game.wait_ms(game.hold) / R.DEADLINE_MS)
        draw_bar(surface, (icon.x + 2, icon.bottom - 4, icon.width - 4, 3), frac, wait_colour(frac))

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
                label = self.tr.t("hud.header.muted" if state.muted else "hud.header.mute")
                if not self.L.portrait:
                    label = self.tr.t("hud.header.key", label=label, key=MUTE_KEY)
            hover = state.hover is not None and b.contains(state.hover)
            b.draw(surface, self.text, hover=hover, label=label,
                   active=(b.name == "mute" and state.muted), size=self.T.small)

    # ------------------------------------------------------------------ gauges
    @staticmethod
    def _fragmentation(game, tele) -> tuple[float, bool]:
        """(external fragmentation, whether it is alarming). An allocator without it (paged)
        shows 0 and never alarms, by construction."""
        if not game.allocator.allocator.external_fragmentation:
            return 0.0, False
        frag = tele.fragmentation
        return frag, frag >= FRAG_ALERT

    def _vram_bar(self, surface: pygame.Surface, bar: tuple[int, int, int, int], tele) -> None:
        """VRAM held, its reserved-but-empty share in amber at the end of the bar."""
        frac = tele.utilisation
        draw_bar(surface, bar, frac, vram_colour(frac))
        if tele.reserved:
            x, y, bw, bh = bar
            reserved = tele.reserved / R.VISIBLE_CELLS
            start = round(bw * max(0.0, frac - reserved))
            pygame.draw.rect(surface, theme.AMBER, (x + start, y, max(2, round(bw * reserved)), bh))

    def _draw_stats(self, surface: pygame.Surface, game, tele, state: ViewState) -> None:
        t, tr, T = self.text, self.tr, self.T
        frag, alert = self._fragmentation(game, tele)
        stats = self.L.stats
        # VRAM held.
        x, y, w, h = stats[0]
        t.blit(surface, tr.pct(tele.utilisation), T.large, theme.TEXT, (x + 8, y + 22))
        self._vram_bar(surface, (x + 8, y + h - 12, w - 16, 6), tele)
        if tele.reserved:
            t.blit(surface, tr.t("hud.reserved_short", n=tele.reserved), T.small, theme.AMBER,
                   (x + w - 8, y + 30), "topright")
        # Usable free, and the external fragmentation that keeps the rest out of reach.
        x, y, w, h = stats[1]
        colour = theme.VIOLET
        if alert:
            p = pulse(state.clock_ms, 700)
            pygame.draw.rect(surface, theme.mix(theme.PANEL_EDGE, theme.RED, p), stats[1], 2, border_radius=4)
            colour = theme.mix(theme.RED, (255, 200, 200), p * 0.6)
        t.blit(surface, f"{tele.usable_free}", T.large, theme.TEXT, (x + 8, y + 22))
        t.blit(surface, tr.t("hud.frag_short", percent=tr.pct(frag)), T.small, theme.RED if alert else theme.TEXT_DIM,
               (x + w - 8, y + 30), "topright")
        draw_bar(surface, (x + 8, y + h - 12, w - 16, 6), tele.usable_free / R.VISIBLE_CELLS, colour)
        # Throughput.
        x, y, w, h = stats[2]
        t.blit(surface, tr.per_second(tele.throughput), T.large, theme.TEXT, (x + 8, y + 22))
        draw_bar(surface, (x + 8, y + h - 12, w - 16, 6), tele.throughput / THROUGHPUT_FULL, theme.GREEN)
        # Waste: of the memory held (or sealed off), the share holding no token.
        x, y, w, h = stats[3]
        shown = tele.resident >= R.WASTE_SHOWN_FROM  # a share of a few requests says little
        waste = tele.waste_share if shown else 0.0
        t.blit(surface, tr.pct(waste) if shown else "-", T.large, theme.TEXT if shown else theme.TEXT_DIM,
               (x + 8, y + 22))
        draw_bar(surface, (x + 8, y + h - 12, w - 16, 6), waste, theme.AMBER)
        rx, ry, rw, _ = self.L.panels["resident"]
        ttft = serving_figures(game)["ttft_ms_mean"]
        if ttft is None:
            key, values = "hud.counts", {"running": tele.resident, "waiting": tele.waiting, "max": game.queue_max}
        else:  # the queue panel counts the waiting: here, how long they wait for a first token
            key, values = "hud.counts_ttft", {"running": tele.resident, "seconds": ttft / 1000}
        counts = tr.t(key, tokens=tr.num(tele.tokens), **values)
        if theme.font_for(counts, T.small).size(counts)[0] > rw - 8:  # a long run's tokens: the counts alone
            counts = tr.t(f"{key}_short", **values)
        t.blit(surface, self.fit(counts, T.small, rw - 8), T.small, theme.TEXT_DIM, (rx + 4, ry + 3))

    def _draw_mode(self, surface: pygame.Surface, mode: str, state: ViewState, mixed: bool = False) -> None:
        for b in self.modes:
            hover = state.hover is not None and b.contains(state.hover)
            b.draw(surface, self.text, active=(b.name == mode), hover=hover, accent=mode_accent(b.name))
        x, y, w, _ = self.L.panels["mode_note"]
        if mixed:  # the allocator changed mid-run: say so for as long as the run lasts
            self.text.blit(surface, self.fit(self.tr.t(MIXED_NOTE), self.T.small, w), self.T.small, theme.AMBER, (x, y))
            return
        self.text.blit(surface, self.fit(mode_note(self.tr, mode), self.T.small, w), self.T.small, theme.TEXT_DIM,
                       (x, y))

    # ------------------------------------------------------------------ board
    def _draw_board(self, surface: pygame.Surface, session: GameSession, state: ViewState) -> None:
        game = session.game
        fx = session.effects
        bx, by, bw, bh = self.L.board
        ox = 0
        if fx.shake > 0:
            ox = int(math.sin(fx.shake / 18.0) * 5 * fx.shake / 450.0)
        bx += ox
        cell = self.L.cell
        key = self._layer_key_of(session)
        if self._layer_due(session, key):
            self._render_layer(session)
            self._layer_owner = session
            self._layer_key = key
        surface.blit(self._layer, (bx, by))
        waiting_blocks = [(self.cell_sprite(session.colour_of(rid), "ghost"), (bx + x * cell, by + (y - HIDDEN) * cell))
                          for (x, y), rid in pending(game.serving) if y >= HIDDEN]
        if waiting_blocks:  # where a prompt's next chunks land: outlined until they do
            surface.fblits(waiting_blocks)
        if session.effects.cascades:  # a split's pages are still on their way: their blocks look free
            background = self._background
            for x, y in session.effects.hidden_cells():
                if y >= HIDDEN:
                    at = (x * cell, (y - HIDDEN) * cell)
                    surface.blit(background, (bx + at[0], by + at[1]),
                                 pygame.Rect(self.L.board[0] + at[0], self.L.board[1] + at[1], cell, cell))
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
        if fx.busy:
            self._draw_effects(surface, session, bx, by, state)
        self._draw_focus(surface, session, bx, by, state)
        if game.blocked is not None and not game.over:
            self._draw_blocked(surface, game, bx, by, state)
        cards = session.cards
        if cards is not None and cards.current is not None and cards.cells:
            outline_cells(surface, self.L, cards.cells, theme.mix(theme.AMBER, (255, 255, 255),
                                                          pulse(state.clock_ms, 600) * 0.6), ox)
        if fx.toasts:
            self._draw_toast(surface, fx.toasts[-1])

    @staticmethod
    def _layer_key_of(session: GameSession) -> tuple:
        """What the board layer shows: blocks fill as decoding steps, so it follows the board, the
        decode step and the cache."""
        game = session.game
        cache = game.serving.cache
        return (game.board.version, game.serving.step, session.board_version,
                cache.version if cache is not None else 0)

    def _layer_due(self, session: GameSession, key: tuple | None = None) -> bool:
        """The board layer is drawn again this frame."""
        return self._layer_owner is not session or self._layer_key != (key or self._layer_key_of(session))

    def request_at(self, session: GameSession, pos: tuple[int, int]) -> int | None:
        """The running request holding the board block under a canvas point, if any."""
        at = self.L.board_cell_at(pos)
        if at is None:
            return None
        found = session.game.serving.cell_tokens((at[0], at[1] + HIDDEN))
        return found[0].id if found is not None else None

    def _draw_focus(self, surface: pygame.Surface, session: GameSession, bx: int, by: int,
                    state: ViewState) -> None:
        """The blocks of the request whose table the panel shows, thinly outlined (and those of
        the one under the mouse, which a click would show)."""
        cell = self.L.cell
        game = session.game
        tables: list[tuple[BlockTable | None, Colour]] = []
        if not self.L.portrait:
            tables.append((session.focus_table(), FOCUS_COLOUR))
            if state.hover is not None:
                rid = self.request_at(session, state.hover)
                if rid is not None and rid != session.focus_id:
                    tables.append((game.table_of(rid), theme.TEXT_DIM))
        for bt, colour in tables:
            if bt is None:
                continue
            for _, (x, y) in bt.entries:
                if y >= HIDDEN:
                    pygame.draw.rect(surface, colour, (bx + x * cell, by + (y - HIDDEN) * cell, cell, cell), 1)

    def _draw_blocked(self, surface: pygame.Surface, game, bx: int, by: int, state: ViewState) -> None:
        """The front request waits to be paged: greyed at the spawn, with what to do about it."""
        req = game.blocked
        p = PIECES[req.kind]
        cell = self.L.cell
        spr = self.cell_sprite(theme.mix(BLOCKED_COLOUR, p.colour, 0.25), "blocked")
        bottom = 0
        for cx, cy in p.rotations[0]:
            vy = p.spawn_y + 1 + cy - HIDDEN  # where a spawn shows it: one row down, in view
            if vy >= 0:
                surface.blit(spr, (bx + (p.spawn_x + cx) * cell, by + vy * cell))
                bottom = max(bottom, vy + 1)
        T, tr = self.T, self.tr
        split = tr.t("control.split") if self.L.portrait else SPLIT_KEY
        lines = [tr.t("hud.blocked")]
        if game.allocator.player_split:
            lines.append(tr.t("hud.blocked_hint", split=split))
        w = self.L.board[2] - 16
        y = by + bottom * cell + 4
        left = game.paged_in_ms()
        h = len(lines) * (T.small + 4) + 6 + (5 if left is not None else 0)
        plate = pygame.Rect(bx + 8, y, w, h)
        pygame.draw.rect(surface, (6, 8, 18), plate)
        glow = theme.mix(theme.PANEL_EDGE, theme.MAGENTA, 0.4 + 0.6 * pulse(state.clock_ms, 900))
        pygame.draw.rect(surface, glow, plate, 1)
        for i, line in enumerate(lines):
            self.text.blit(surface, self.fit(line, T.small, w - 8), T.small, theme.TEXT if i else theme.MAGENTA,
                           (plate.centerx, plate.y + 4 + i * (T.small + 4)), "midtop")
        if left is not None:  # the allocator pages it at the next decode step: the time left, shrinking
            draw_bar(surface, (plate.x + 4, plate.bottom - 5, plate.width - 8, 3),
                     min(1.0, left / R.DECODE_STEP_MS), theme.MAGENTA)

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

    def _render_layer(self, session: GameSession) -> None:
        """The board well with every held block, redrawn only when the board or the decode step
        changes: hatched where reserved and still empty, else filled as far as the engine says
        its tokens reach (engine.occupancy.fills); a shared prompt's block full, with how many
        requests map it; a cached-free block dashed."""
        layer = self._layer
        layer.blit(self._background, (0, 0), pygame.Rect(self.L.board))
        cell = self.L.cell
        game = session.game
        colour_of = session.colour_of
        sprite, fill_sprite = self.cell_sprite, self.fill_sprite
        colours = self._colours  # an owner's colour never changes: kept from layer to layer
        if len(colours) > 4096 or self._layer_owner is not session:
            colours.clear()
        blits = []
        board = game.board
        reserved = board.reserved
        cache = game.serving.cache
        badges: list[tuple[int, int, int]] = []
        drawn = [0] * len(board.masks)
        for (x, y), owner, tokens in fills(game.serving):
            if y < HIDDEN:
                continue
            drawn[y] |= 1 << x
            c = colours.get(owner)
            if c is None:
                c = colours[owner] = colour_of(owner)
            if reserved[y] >> x & 1:
                spr = sprite(c, "reserved")
            elif owner >= PREFIX_OWNER:  # a shared prefix's block: full, mapped by refs requests
                spr = sprite(c)
                refs = cache.refs((x, y)) if cache is not None else 0
                if refs > 1:
                    badges.append((x, y, refs))
            else:
                spr = fill_sprite(c, tokens)
            blits.append((spr, (x * cell, (y - HIDDEN) * cell)))
        grid = board.grid
        for y in range(HIDDEN, len(grid)):
            py = (y - HIDDEN) * cell
            rest = board.masks[y] & ~drawn[y]  # held by no running request: a board's own block
            cached = board.cached[y] if cache is not None else 0  # free, its content still cached
            x = 0
            while rest or cached:
                if (rest | cached) & 1:
                    if rest & 1:
                        rid = grid[y][x]
                        spr = sprite(colour_of(rid), "reserved" if reserved[y] >> x & 1 else "block")
                    else:
                        known = cache.content_of((x, y)) if cache is not None else None
                        tint = colour_of(PREFIX_OWNER + known[1]) \
                            if known is not None and known[0] == PREFIX else theme.TEXT_DIM
                        spr = sprite(tint, "cached")
                    blits.append((spr, (x * cell, py)))
                rest >>= 1
                cached >>= 1
                x += 1
        for (x, y), owner, first, n in drafts(game.serving):  # speculative decoding's draft slots
            if y >= HIDDEN:
                blits.append((self.ghost_sprite(colours.get(owner) or colour_of(owner), first, n),
                               (x * cell, (y - HIDDEN) * cell)))
        layer.fblits(blits)
        for x, y, refs in badges:  # how many running requests map a shared block
            self.text.blit(layer, f"\u00d7{refs}", self.T.small, (255, 255, 255),
                           (x * cell + cell // 2, (y - HIDDEN) * cell + cell // 2 + 1), "center")

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
        fade = self._fade
        for f in fx.fades:
            # Freed in place: the blocks flash and fade where they were; nothing else moves.
            p = f.age / f.duration
            target = (255, 255, 255) if f.kind == "finished" else (255, 120, 60)
            fade.fill(theme.mix(f.colour, target, min(1.0, p * 2.0)))
            fade.set_alpha(int(200 * (1 - p)))
            inset = int(cell * 0.35 * p)
            for x, y in f.cells:
                if y >= HIDDEN:
                    surface.blit(fade, (bx + x * cell + inset, by + (y - HIDDEN) * cell + inset),
                                 pygame.Rect(0, 0, cell - 2 * inset, cell - 2 * inset))
        clip = surface.get_clip()
        surface.set_clip(pygame.Rect(bx, by, self.L.board[2], self.L.board[3]))
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
            fade_out = 1.0 - max(0.0, (hl.age - hl.duration + 500) / 500)
            colour = theme.mix(theme.BOARD_BG, theme.mix(theme.MAGENTA, (255, 255, 255), p), fade_out)
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
        if size is None:  # a long score steps down a size rather than run into SERVED
            if len(self._score_sizes) > 256:
                self._score_sizes.clear()
            size = self._score_sizes[score] = largest_fitting(score, self.score_sizes, SCORE_TEXT_W)
        t.blit(surface, score, size, theme.TEXT, (x + 8, y + 43), "midleft")
        best = max(state.best, 0)
        if self._best_text[0] != best:
            self._best_text = (best, short_number(best, self.T.small, VALUE_W))
        served = f"{game.served}" if game.endless else f"{game.served}/{game.goal_requests}"
        vals = (self.fit(served, self.T.small, VALUE_W), f"{game.level}", self._best_text[1])
        for i, v in enumerate(vals):
            t.blit(surface, v, self.T.small, theme.TEXT, (x + 262, y + 7 + i * 20), "topright")

    def _draw_hold(self, surface: pygame.Surface, game) -> None:
        """The request set aside, and its wait (the deadline keeps running in hold)."""
        t = self.text
        hx, hy, hw, hh = self.L.panels["hold"]
        req = game.hold
        if req is None:
            t.blit(surface, self.tr.t("hud.hold_empty"), self.T.small, theme.TEXT_DIM, (hx + hw // 2, hy + 62), "center")
            return
        mini = self.mini_piece(req.kind, 14, dim=not game.can_hold)
        surface.blit(mini, mini.get_rect(center=(hx + hw // 2, hy + 58)))
        t.blit(surface, self.fit(f"{req.context} tok", self.T.small, hw - 8), self.T.small, theme.TEXT_DIM,
               (hx + hw // 2, hy + 96), "center")
        frac = min(1.0, game.wait_ms(req) / R.DEADLINE_MS)
        draw_bar(surface, (hx + 8, hy + hh - 16, hw - 16, 6), frac, wait_colour(frac))

    def queue_rows(self, game) -> list[tuple[Request, bool]]:
        """The requests the queue panel lists, front first: the one falling (or waiting to be
        paged) marked True, then the waiting queue."""
        rows: list[tuple[Request, bool]] = []
        front = game.falling if game.active is not None else game.blocked
        if front is not None:
            rows.append((front, True))
        rows.extend((req, False) for req in game.serving.waiting)
        return rows

    def _draw_queue(self, surface: pygame.Surface, game, rect: tuple[int, int, int, int]) -> None:
        """The waiting queue: each request's shape, its context (tokens and the blocks it needs
        to be admitted) and how long it has waited, as a bar towards its deadline."""
        t, T, tr = self.text, self.T, self.tr
        x, y, w, h = rect
        waiting = len(game.serving.waiting)
        most = game.queue_max
        count_colour = (theme.RED if waiting >= most - 1 else
                        theme.AMBER if waiting >= most // 2 else theme.TEXT)
        count = t.blit(surface, tr.t("hud.queue_count", n=waiting, max=most), T.small, count_colour,
                       (x + w - 8, y + 4), "topright")
        hits = serving_figures(game)["prefix_hit_rate"]
        if hits is not None and not self.L.portrait:  # of the shared prompts' blocks looked up, found
            title_w = t.render(tr.t("hud.queue"), T.small, theme.PANEL_TITLE).get_width()
            room = count.x - 8 - (x + 8 + title_w + 10)
            t.blit(surface, self.fit(tr.t("hud.hit_rate", percent=tr.pct(hits)), T.small, room), T.small,
                   theme.CYAN, (count.x - 8, y + 4), "topright")
        rows = self.queue_rows(game)
        if not rows:
            t.blit(surface, self.fit(tr.t("hud.queue_empty"), T.small, w - 16), T.small, theme.TEXT_DIM,
                   (x + w // 2, y + h // 2 + 8), "center")
            return
        portrait = self.L.portrait
        shown, row_h = self._queue_layout(rows, rect)
        mini_cell = 5 if not self.L.portrait else 4
        bar_w = 44 if not self.L.portrait else 34
        for i, (req, now) in enumerate(shown):
            cy = y + 24 + i * row_h + row_h // 2
            row = (x + 3, cy - row_h // 2 + 1, w - 6, row_h - 2)
            if now:
                pygame.draw.rect(surface, theme.BUTTON, row, border_radius=3)
            elif req.id == game.picked:  # picked to run next (cache-aware scheduling)
                pygame.draw.rect(surface, theme.MAGENTA, row, 1, border_radius=3)
            mini = self.mini_piece(req.kind, mini_cell)
            surface.blit(mini, mini.get_rect(center=(x + 16, cy)))
            found, need = self._queue_needs(game, req)
            if self.L.portrait:
                label = tr.t("hud.queue_row_short", tokens=req.context)
            else:
                label = tr.t("hud.queue_row", tokens=req.context, blocks=need)
            colour = theme.TEXT if now else (255, 150, 90) if req.preemptions else theme.TEXT_DIM
            room = w - 44 - bar_w
            if found:  # blocks of its context the prefix cache holds: not prefilled again
                mark = tr.t("hud.queue_cached", n=found)
                mark_w = t.render(mark, T.small, theme.CYAN).get_width()
                t.blit(surface, mark, T.small, theme.CYAN, (x + w - 12 - bar_w, cy), "midright")
                room -= mark_w + 4
            t.blit(surface, self.fit(label, T.small, room), T.small, colour, (x + 30, cy), "midleft")
            frac = min(1.0, game.wait_ms(req) / R.DEADLINE_MS)
            draw_bar(surface, (x + w - 8 - bar_w, cy - 3, bar_w, 6), frac, wait_colour(frac))
        if len(shown) < len(rows) and not portrait:
            cy = y + 24 + len(shown) * row_h + row_h // 2
            t.blit(surface, tr.t("hud.queue_more", n=len(rows) - len(shown)), T.small, theme.TEXT_DIM,
                   (x + 30, cy), "midleft")

    def _queue_needs(self, game, req: Request) -> tuple[int, int]:
        """(blocks of its context the prefix cache holds, blocks it needs to be admitted) of a
        waiting request, asked of the engine once per state of the board and the cache."""
        cache = game.serving.cache
        key = (id(game.serving), req.id, req.context, req.prefix, game.allocator.allocator.name,
               game.board.version, cache.version if cache is not None else 0)
        memo = self._needs
        found = memo.get(key)
        if found is None:
            if len(memo) > 256:
                memo.clear()
            alloc = game.allocator.allocator
            hits = game.serving.hits(req, alloc)
            found = memo[key] = (len(hits), game.serving.need(req, alloc, hits))
        return found

    def _queue_layout(self, rows: list[tuple[Request, bool]],
                      rect: tuple[int, int, int, int]) -> tuple[list[tuple[Request, bool]], int]:
        """The rows the queue panel shows, and their height."""
        x, y, w, h = rect
        row_h = self.T.small + (6 if self.L.portrait else 8)
        room = max(1, (h - 24) // row_h)
        # A phone's short list leaves the rest to the count above it; landscape says how many more.
        shown = rows if len(rows) <= room else rows[:room] if self.L.portrait else rows[:room - 1]
        return shown, row_h

    def queue_pick_at(self, game, pos: tuple[int, int]) -> int | None:
        """The place in the waiting queue (0: its front) of the row under a canvas point, when
        the player may pick which request runs next (features.pick) and that one can be."""
        if not game.features.pick or game.over:
            return None
        rect = self.L.panels["queue"]
        x, y, w, h = rect
        shown, row_h = self._queue_layout(self.queue_rows(game), rect)
        px, py = pos
        if not (x <= px < x + w) or py < y + 24:
            return None
        i = (py - y - 24) // row_h
        if i >= len(shown) or shown[i][1]:
            return None
        place = i - (1 if shown[0][1] else 0)
        return place if place < R.NEXT_QUEUE else None

    def step_buttons(self) -> tuple[pygame.Rect, pygame.Rect]:
        """The decode-step panel's budget buttons: one step of rules.BUDGETS down, and up."""
        x, y, w, h = self.L.panels["step"]
        size = h - 24
        return (pygame.Rect(x + 8, y + h - size - 5, size + 6, size),
                pygame.Rect(x + w - 14 - size, y + h - size - 5, size + 6, size))

    def step_button_at(self, game, pos: tuple[int, int]) -> int:
        """-1 or +1 for a budget button under a canvas point (chunked prefill), else 0."""
        if self.L.portrait or game.serving.prefill is None or game.over:
            return 0
        down, up = self.step_buttons()
        return -1 if down.collidepoint(pos) else 1 if up.collidepoint(pos) else 0

    def _draw_step(self, surface: pygame.Surface, game, state: ViewState) -> None:
        """The decode step: how long it takes; with chunked prefill, the step's token budget and
        how this step spends it (decode tokens first, then prefill chunks), with buttons to set
        it; without, how far the step has come and whether a prefill stalls it."""
        t, T, tr = self.text, self.T, self.tr
        x, y, w, h = self.L.panels["step"]
        s = game.serving
        p = s.prefill
        length = p.step_ms if p is not None else R.DECODE_STEP_MS
        bar_y = y + h - 15
        if p is None:
            t.blit(surface, tr.t("hud.step_length", seconds=length / 1000.0), T.small, theme.TEXT,
                   (x + w - 8, y + 4), "topright")
            stalled = s.busy_until_ms > s.time_ms
            frac = 1.0 - (s.next_step_ms() - s.time_ms) / length
            draw_bar(surface, (x + 8, bar_y + 2, w - 16, 6), frac, theme.AMBER if stalled else theme.CYAN)
            return
        text = (tr.t("hud.step_budget", budget=p.budget, seconds=length / 1000.0) if s.spec_k is None else
                tr.t("hud.step_budget_spec_one" if s.spec_k == 1 else "hud.step_budget_spec", budget=p.budget, k=s.spec_k,
                     seconds=length / 1000.0))
        t.blit(surface, self.fit(text, T.small, w - 90), T.small, theme.TEXT, (x + w - 8, y + 4), "topright")
        down, up = self.step_buttons()
        for rect, label, room in ((down, "-", p.budget > min(R.BUDGETS)), (up, "+", p.budget < max(R.BUDGETS))):
            over = state.hover is not None and rect.collidepoint(state.hover)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, rect, border_radius=3)
            pygame.draw.rect(surface, theme.CYAN if room else theme.PANEL_EDGE, rect, 1, border_radius=3)
            t.blit(surface, label, T.small, theme.TEXT if room else theme.TEXT_DIM, rect.center, "center")
        bar = pygame.Rect(down.right + 6, bar_y, up.left - down.right - 12, 9)
        pygame.draw.rect(surface, (28, 36, 60), bar, border_radius=2)
        used = 0
        for tokens, colour in ((p.decoding, theme.CYAN), (p.drafts, theme.AMBER), (p.planned, theme.MAGENTA)):
            width = round(bar.width * min(tokens, p.budget - used) / p.budget) if p.budget else 0
            if width > 0:
                pygame.draw.rect(surface, colour, (bar.x + round(bar.width * used / p.budget), bar.y,
                                                   width, bar.height), border_radius=2)
            used += min(tokens, p.budget - used)

    def _draw_preempt(self, surface: pygame.Surface, game, state: ViewState) -> None:
        """The preemption mode (a switch: the key, or a click or tap), the CPU swap space as a
        strip of its blocks, and how many preemptions each way."""
        t, T, tr = self.text, self.T, self.tr
        s = game.serving
        b = self.preempt
        r = pygame.Rect(b.rect)
        if game.allocator.allocator.reserves_max_length:  # a reservation never runs short: no preemption
            pygame.draw.rect(surface, theme.PANEL, r, border_radius=4)
            pygame.draw.rect(surface, theme.PANEL_EDGE, r, 1, border_radius=4)
            t.blit(surface, self.fit(tr.t("hud.preempt_none"), T.small, r.width - 10), T.small, theme.TEXT_DIM,
                   r.center, "center")
            return
        over = state.hover is not None and b.contains(state.hover)
        mode = tr.t(f"hud.preempt_mode.{game.preempt_mode}")
        accent = theme.CYAN if game.preempt_mode == "swap" else theme.VIOLET
        pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=4)
        pygame.draw.rect(surface, accent, r, 2 if self.L.portrait else 1, border_radius=4)
        if self.L.portrait:  # the whole panel is the switch
            cpu = t.blit(surface, tr.t("hud.cpu", used=s.cpu_used, max=R.CPU_BLOCKS), T.small, theme.TEXT_DIM,
                         (r.right - 7, r.y + 4), "topright")
            t.blit(surface, self.fit(tr.t("hud.preempt_short"), T.small, cpu.left - r.x - 14), T.small,
                   theme.PANEL_TITLE, (r.x + 7, r.y + 4))
            strip_w = 6 * R.CPU_BLOCKS
            t.blit(surface, self.fit(mode, T.small, r.width - 22 - strip_w), T.small, accent,
                   (r.x + 7, r.bottom - 6), "bottomleft")
            strip = (r.right - 7 - strip_w, r.bottom - 19, strip_w, 13)
        else:
            t.blit(surface, self.fit(tr.t("hud.header.key", label=mode, key=PREEMPT_KEY), T.small, r.width - 6),
                   T.small, accent, r.center, "center")
            px, py, pw, _ = self.L.panels["preempt"]
            counts = tr.t("hud.preempt_counts", swap=s.preempted_swap, recompute=s.preempted_recompute)
            t.blit(surface, self.fit(counts, T.small, pw - 110), T.small, theme.TEXT_DIM, (px + pw - 8, py + 4),
                   "topright")
            label = t.blit(surface, tr.t("hud.cpu", used=s.cpu_used, max=R.CPU_BLOCKS), T.small, theme.TEXT_DIM,
                           (r.right + 8, r.centery), "midleft")
            strip = (label.right + 6, r.y + 4, px + pw - 8 - label.right - 6, r.height - 8)
        self._draw_cpu_strip(surface, strip, s.cpu_used)

    def _draw_cpu_strip(self, surface: pygame.Surface, rect: tuple[int, int, int, int], used: int) -> None:
        x, y, w, h = rect
        n = R.CPU_BLOCKS
        step = max(3, w // n)
        for i in range(n):
            cell = pygame.Rect(x + i * step, y, step - 2, h)
            if i < used:
                pygame.draw.rect(surface, _shade(theme.CYAN, 0.55), cell)
                pygame.draw.rect(surface, theme.CYAN, cell, 1)
            else:
                pygame.draw.rect(surface, theme.PANEL_EDGE, cell, 1)

    def _draw_block_table(self, surface: pygame.Surface, session: GameSession, defer: bool = False) -> None:
        """The focused request's table, read from the engine every frame, rendered once per change
        (its tokens change every decode step); with `defer`, a change waits for the next frame."""
        bt = session.focus_table()
        if self._table is None or (self._table_key != bt and not defer):
            self._table = self._render_block_table(bt)
            self._table_key = bt
        surface.blit(self._table, (self.L.panels["blocks"][0] + 2, self.L.panels["blocks"][1] + 22))

    def block_table(self, session: GameSession, size: tuple[int, int]) -> pygame.Surface:
        """The focused request's block table, rendered into a panel's inside of `size`."""
        bt = session.focus_table()
        key = (bt, size)
        if self._table is None or self._table_key != key:
            # Shown beside no board (the phone's DETAILS sheet): say how to read the coordinates.
            footer = self.tr.t("hud.table_coords", bottom=R.VISIBLE - 1)
            self._table = self._render_block_table(bt, (size[0] + 4, size[1] + 24), footer)
            self._table_key = key
        return self._table

    def _render_block_table(self, bt: BlockTable | None, panel: tuple[int, int] | None = None,
                            footer: str = "") -> pygame.Surface:
        t, tr, T = self.text, self.tr, self.T
        w, h = panel if panel is not None else self.L.panels["blocks"][2:]
        surf = pygame.Surface((w - 4, h - 24)).convert()
        surf.fill(theme.PANEL)
        x, y = -2, -22  # draw in panel coordinates
        if bt is None:
            for i, line in enumerate(wrap(tr.t("hud.table_empty"), T.small, w - 16)):
                t.blit(surf, line, T.small, theme.TEXT_DIM, (x + 8, y + 28 + i * (T.small + 4)))
            return surf
        colour = PIECES[bt.kind].colour
        tokens = tr.t("hud.table_tokens", tokens=bt.tokens, max=R.MAX_SEQ_TOKENS)
        tok = t.blit(surf, tokens, T.small, theme.TEXT, (x + w - 10, y + 24), "topright")
        t.blit(surf, fit(f"req#{bt.request_id} {bt.name}", T.small, tok.left - 12 - (x + 8)), T.small, colour,
               (x + 8, y + 24))
        t.blit(surf, tr.t("hud.table_logical"), T.small, theme.TEXT_DIM, (x + 8, y + 44))
        t.blit(surf, fit(tr.t("hud.table_physical"), T.small, w - 96), T.small, theme.TEXT_DIM, (x + 84, y + 44))
        row_h = 18
        rows = max(1, min(R.BLOCKS_PER_REQUEST, (h - 84) // row_h))
        first_reserved = len(bt.entries) - bt.reserved
        c = self.L.cell
        for i, (page, (cx, cy)) in enumerate(bt.entries[:rows]):
            ry = y + 62 + i * row_h
            t.blit(surf, tr.t("hud.table_page", page=page), T.small, theme.TEXT, (x + 8, ry))
            t.blit(surf, "->", T.small, theme.TEXT_DIM, (x + 62, ry))
            row = R.visible_row(cy)
            where = t.blit(surf, f"#{row * R.WIDTH + cx:03d}  ({cx}, {row})", T.small, theme.TEXT, (x + 84, ry))
            # The block as the board draws it: filled as far as its tokens reach, or hatched.
            icon = pygame.Rect(where.right + 10, ry, 14, 14)
            held = max(0, min(R.TOKENS_PER_BLOCK, bt.tokens - page * R.TOKENS_PER_BLOCK))
            if page >= first_reserved:
                pygame.draw.rect(surf, theme.AMBER, icon, 1)
                pygame.draw.line(surf, theme.AMBER, icon.bottomleft, icon.topright)
                t.blit(surf, fit(tr.t("hud.table_reserved"), T.small, w - 8 - icon.right - 8), T.small, theme.AMBER,
                       (icon.right + 6, ry))
            else:
                pygame.draw.rect(surf, _shade(colour, 0.16), icon)
                fill = block_fill(held, c) * icon.height // max(1, c - 4)
                if fill:
                    pygame.draw.rect(surf, _shade(colour, 0.6), (icon.x, icon.bottom - fill, icon.width, fill))
                pygame.draw.rect(surf, colour, icon, 1)
                t.blit(surf, f"{held}/{R.TOKENS_PER_BLOCK}", T.small, theme.TEXT_DIM, (icon.right + 6, ry))
        t.blit(surf, fit(footer or tr.t("hud.table_outlined"), T.small, w - 16), T.small, theme.TEXT_DIM,
               (x + 8, y + h - 20))
        return surf
