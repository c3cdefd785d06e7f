"""Screens drawn over the game: pause, help with the concept map, and the run report."""
from __future__ import annotations

import itertools
import re

import pygame

from engine import PIECES, RunReport, modes
from engine.ending import serving_figures
from engine import rules as R
from ui import theme
from ui.console_view import outline_cells
from ui.help_content import concepts, controls, goal, rules, touch_controls
from ui.i18n.game_text import goal_name, mode_name, report_text
from ui.input import Command, InputMapper
from ui.keys import (BOARD_KEY, CARDS_KEY, COPY_KEY, HELP_KEY, LANGUAGE_KEY, MUTE_KEY, PAUSE_KEY, QUIT_KEY, START_KEY,
                     WATCH_KEY)
from ui.layout import Layout, RectT
from ui.scene import MenuScene
from ui.text import fit, same_font, short_number, wrap
from ui.widgets import Button, draw_panel, hit, pulse


def shade_surface(alpha: int, size: tuple[int, int]) -> pygame.Surface:
    s = pygame.Surface(size, pygame.SRCALPHA)
    s.fill((0, 0, 0, alpha))
    return s


def column_buttons(lay: Layout, specs: list[tuple[str, str, str]], top: int) -> list[Button]:
    """A centred column of the layout's menu buttons under `top`."""
    width, height, gap = lay.menu_button
    x = (lay.width - width) // 2
    return [Button(name, (x, top + i * (height + gap), width, height), label, hint, touch=lay.touch)
            for i, (name, label, hint) in enumerate(specs)]


def draw_dialog(surface: pygame.Surface, rect: RectT, edge: theme.Colour) -> pygame.Rect:
    r = pygame.Rect(rect)
    pygame.draw.rect(surface, (9, 12, 26), r, border_radius=8)
    pygame.draw.rect(surface, edge, r, 2, border_radius=8)
    return r


def draw_row_button(surface: pygame.Surface, app, b: Button, hover: tuple[int, int] | None,
                    label: str | None = None, accent: theme.Colour = theme.CYAN) -> None:
    """A wide button: label on the left, key hint on the right."""
    r = pygame.Rect(b.rect)
    T = app.layout.text
    over = hover is not None and b.contains(hover)
    pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=5)
    pygame.draw.rect(surface, accent if over else theme.PANEL_EDGE, r, 1, border_radius=5)
    if not b.hint and app.layout.portrait:  # a phone's button: its name in the middle
        app.text.blit(surface, label or b.label, T.body, theme.TEXT, r.center, "center")
        return
    app.text.blit(surface, label or b.label, T.body, theme.TEXT, (r.x + 14, r.centery), "midleft")
    if b.hint:
        app.text.blit(surface, b.hint, T.small, theme.TEXT_DIM, (r.right - 12, r.centery), "midright")


SIZE = re.compile(r"(\d) (bytes|KiB|MiB|GiB)\b")  # a size in PyTorch's message: its figure and unit


def sizes_unbroken(text: str, size: int, width: int) -> list[str]:
    """`text` wrapped as ui.text.wrap does, never between a size's figure and its unit."""
    glued = SIZE.sub("\\1\u00a0\\2", text)  # a no-break space, given back as a space once wrapped
    return [same_font(line.replace("\u00a0", " "), line) for line in wrap(glued, size, width)]


def fact_rows(facts, size: int, width: int) -> list[tuple[tuple[str, str], ...]]:
    """The report's (label, value) facts in rows: two to a row where both fit half the width,
    one to a row otherwise, in reading order (a half-width fact may pair up past a wide one)."""
    half = (width - 8) // 2
    rows: list[tuple[tuple[str, str], ...]] = []
    pending: tuple[str, str] | None = None

    def fits(fact: tuple[str, str], room: int) -> bool:
        text = f"{fact[0]}  {fact[1]}"
        return theme.font_for(text, size).size(text)[0] + 8 <= room

    for fact in facts:
        if not fits(fact, half):  # a wide one takes a row; a half-width one waits for its partner
            rows.append((fact,))
        elif pending is None:
            pending = fact
        else:
            rows.append((pending, fact))
            pending = None
    if pending is not None:
        rows.append((pending,))
    return rows


class Overlay(MenuScene):
    """Base for screens over the game: commands from the keyboard, buttons from the pointer.

    The game under an overlay is frozen (only the top scene runs), so the overlay draws it
    once, shaded, into a snapshot and blits that each frame: one opaque blit instead of the
    whole console plus a full-canvas alpha blend.
    """

    opaque = True  # the snapshot stands for everything below
    shade_alpha = 160

    def __init__(self, app) -> None:
        self.app = app
        self.mapper = InputMapper()
        self.hover: tuple[int, int] | None = None
        self.clock_ms = 0.0
        self.buttons: list[Button] = []
        self._backdrop: pygame.Surface | None = None
        self._plain: pygame.Surface | None = None

    def enter(self) -> None:
        self.refresh_backdrop()  # back from a screen above: settings may have changed

    def relayout(self) -> None:
        self.refresh_backdrop()
        self.build()

    def language_changed(self) -> None:
        self.relayout()  # the screen below is redrawn, and every label and wrapped line anew

    def build(self) -> None:
        """Place the buttons for `app.layout` (at creation and when the layout changes)."""

    def refresh_backdrop(self) -> None:
        """Take a new snapshot of the screen below on the next draw."""
        self._backdrop = None

    def draw_backdrop(self, surface: pygame.Surface) -> None:
        if self._backdrop is None:
            snap = pygame.Surface(self.app.layout.size).convert()
            self.app.draw_below(self, snap)
            self._plain = snap.copy()
            snap.blit(shade_surface(self.shade_alpha, snap.get_size()), (0, 0))
            self._backdrop = snap
        surface.blit(self._backdrop, (0, 0))

    def draw_plain_backdrop(self, surface: pygame.Surface) -> None:
        """The screen below without the shade (after draw_backdrop has made the snapshot)."""
        if self._backdrop is None or self._plain is None:
            self.draw_backdrop(surface)
        plain = self._plain
        assert plain is not None  # made by draw_backdrop
        surface.blit(plain, (0, 0))

    def press(self, pos: tuple[int, int]) -> None:
        b = hit(self.buttons, pos)
        if b is not None:
            self.click(b.name)
        else:
            self.click_outside(pos)

    def update(self, dt_ms: float) -> None:
        self.clock_ms += dt_ms
        self.mapper.update(dt_ms)  # keep key-repeat state consistent; no game inputs here

    def command(self, cmd: Command) -> None:
        """React to a UI command."""

    def click(self, name: str) -> None:
        """React to a button."""

    def click_outside(self, pos: tuple[int, int]) -> None:
        """A click that hit no button."""


class PlayOverlay(Overlay):
    """An overlay over the running game, which it keeps as ``play``; its buttons are placed at once."""

    def __init__(self, app, play) -> None:
        super().__init__(app)
        self.play = play
        self.build()


class PauseScene(PlayOverlay):
    """Esc or focus loss: everything stops until the player comes back."""

    can_open_lab = True

    shade_alpha = 165

    def build(self) -> None:
        lay = self.app.layout
        keys = not lay.portrait  # a phone shows no key hints
        self.buttons = column_buttons(lay, [
            ("resume", "RESUME", PAUSE_KEY if keys else ""),
            ("restart", "RESTART", START_KEY if keys else ""),
            ("help", "HELP", HELP_KEY if keys else ""),
            ("mute", "SOUND", MUTE_KEY if keys else ""),
            ("cards", "TEACHING CARDS", CARDS_KEY if keys else ""),
            ("language", "LANGUAGE", LANGUAGE_KEY if keys else ""),
            ("title", "QUIT TO TITLE", QUIT_KEY if keys else ""),
        ], top=lay.dialog[1] + 96)

    def command(self, cmd: Command) -> None:
        {
            Command.PAUSE: lambda: self.click("resume"),
            Command.START: lambda: self.click("restart"),
            Command.HELP: lambda: self.click("help"),
            Command.MUTE: lambda: self.click("mute"),
            Command.TOGGLE_CARDS: lambda: self.click("cards"),
            Command.QUIT: lambda: self.click("title"),
            Command.LAB: lambda: self.app.open_lab(),
            Command.LANGUAGE: lambda: self.click("language"),
        }.get(cmd, lambda: None)()

    def click(self, name: str) -> None:
        app = self.app
        if name == "resume":
            app.pop()
        elif name == "restart":
            self.play.restart()
        elif name == "help":
            app.show_help()
        elif name == "mute":
            self.play.state.muted = app.toggle_mute()
            self.refresh_backdrop()  # the header's sound switch shows through
        elif name == "cards":
            app.toggle_cards()
        elif name == "language":
            app.next_language()
        elif name == "title":
            app.show_title()

    def draw(self, surface: pygame.Surface) -> None:
        self.draw_backdrop(surface)
        lay = self.app.layout
        dialog = lay.dialog
        if lay.portrait:  # as tall as its buttons
            last = self.buttons[-1].rect
            dialog = (dialog[0], dialog[1], dialog[2], last[1] + last[3] + 24 - dialog[1])
        r = draw_dialog(surface, dialog, theme.CYAN)
        t, T, tr = self.app.text, lay.text, self.app.tr
        t.blit(surface, tr.t("pause.title"), T.title, theme.CYAN, (r.centerx, r.y + 36), "center")
        game = self.play.game
        served = tr.num(game.served)
        if game.goal == "serve":
            served = tr.t("report.value.of_goal", n=served, goal=tr.num(game.goal_requests))
        progress = tr.t("pause.progress", served=served, tokens=tr.num(game.tokens),
                        minutes=f"{game.time_ms / 60_000:.1f}")
        for i, line in enumerate((progress, tr.t("pause.idle"))):  # one line each, at y + 62 and y + 80
            t.blit(surface, fit(line, T.small, r.width - 24), T.small, theme.TEXT if i == 0 else theme.TEXT_DIM,
                   (r.centerx, r.y + 62 + i * (T.small + 5)), "center")
        s = self.app.settings
        labels = {"resume": tr.t("pause.resume"), "restart": tr.t("pause.restart"), "help": tr.t("pause.help"),
                  "mute": tr.t("pause.sound", state=tr.on_off(not s.muted)),
                  "cards": tr.t("pause.cards", state=tr.on_off(s.cards_enabled)),
                  "language": tr.t("common.language_button", name=tr.name),
                  "title": tr.t("pause.quit")}
        for b in self.buttons:
            draw_row_button(surface, self.app, b, self.hover, labels.get(b.name))


HELP_BG = (3, 4, 10)


class HelpScene(Overlay):
    """Controls, what every mechanic stands for in a real serving engine, and which rules are vLLM's
    and which the game's.

    Landscape shows the controls beside one of two pages (the concept map, "vLLM or game?") with a
    tab for each; a phone shows the concept map, "vLLM or game?" and the controls as three pages.
    """

    opaque = True  # a full page: nothing of the game below shows through the text
    PAGES = ("map", "rules", "controls")
    TABS = {"map": "help.concept_map", "rules": "help.vllm_or_game", "controls": "help.controls"}

    def __init__(self, app) -> None:
        super().__init__(app)
        self.page_name = "map"
        self._page: pygame.Surface | None = None
        self.build()

    def build(self) -> None:
        lay = self.app.layout
        self._page = None
        tr = self.app.tr
        if not lay.portrait:
            if self.page_name == "controls":
                self.page_name = "map"  # landscape shows the controls beside every page
            cx, cy, cw, ch = lay.help_close
            tab_w = 124
            self.buttons = [Button("close", lay.help_close, tr.t("help.close_key", key=PAUSE_KEY), touch=lay.touch)]
            self.buttons += [Button(name, (cx - (2 - i) * (tab_w + 8), cy, tab_w, ch), tr.t(self.TABS[name]),
                                    touch=lay.touch) for i, name in enumerate(self.PAGES[:2])]
            return
        w, h = lay.size
        n = len(self.PAGES)
        tab_w = (w - 2 * lay.margin - 8 * (n - 1)) // n
        y = h - lay.margin - lay.touch
        self.buttons = [Button("close", lay.help_close, tr.t("help.close_tap"), touch=lay.touch)]
        self.buttons += [Button(name, (lay.margin + i * (tab_w + 8), y, tab_w, lay.touch), tr.t(self.TABS[name]),
                                touch=lay.touch) for i, name in enumerate(self.PAGES)]

    def command(self, cmd: Command) -> None:
        if cmd in (Command.PAUSE, Command.HELP, Command.START, Command.QUIT):
            self.app.back()
        elif cmd is Command.MUTE:
            self.app.toggle_mute()

    def click(self, name: str) -> None:
        if name in self.PAGES:
            self.page_name = name
            self._page = None
        else:
            self.app.back()

    def click_outside(self, pos: tuple[int, int]) -> None:
        if not self.app.layout.portrait:  # a phone reader taps to read on: only CLOSE closes
            self.app.back()

    def _render(self) -> pygame.Surface:
        lay = self.app.layout
        if lay.portrait:
            return self._render_portrait(lay)
        t, tr = self.app.text, self.app.tr
        page = pygame.Surface(lay.size, pygame.SRCALPHA)
        r = t.blit(page, tr.t("help.title"), theme.LARGE, theme.CYAN, (20, 16))
        subtitle = tr.t("help.subtitle")
        first_tab = min(b.rect[0] for b in self.buttons)
        x0 = max(166, r.right + 12)
        if x0 + theme.font_for(subtitle, theme.SMALL).size(subtitle)[0] <= first_tab - 8:
            t.blit(page, subtitle, theme.SMALL, theme.TEXT_DIM, (x0, 20))
        # Controls column.
        x, y = 20, 54
        t.blit(page, tr.t("help.controls"), theme.SMALL, theme.PANEL_TITLE, (x, y))
        y += 22
        for keys, action in controls(tr):
            t.blit(page, keys, theme.SMALL, theme.AMBER, (x, y))
            y += 16
            for line in wrap(action, theme.SMALL, 220):
                t.blit(page, line, theme.SMALL, theme.TEXT, (x + 12, y))
                y += 16
            y += 4
        W = lay.width
        cx, cy = 280, 54
        if self.page_name == "rules":
            self._render_rules(page, cx, cy, W - 20 - cx, theme.SMALL, lay.height - 8)
            return page
        # Concept map.
        t.blit(page, tr.t("help.concept_map"), theme.SMALL, theme.PANEL_TITLE, (cx, cy))
        t.blit(page, tr.t("help.in_game"), theme.SMALL, theme.TEXT_DIM, (cx, cy + 20))
        t.blit(page, tr.t("help.in_engine"), theme.SMALL, theme.TEXT_DIM, (cx + 150, cy + 20))
        cy += 44
        for mechanic, meaning in concepts(tr):
            pygame.draw.line(page, theme.PANEL_EDGE, (cx, cy - 4), (W - 20, cy - 4))
            for i, line in enumerate(wrap(mechanic, theme.SMALL, 140)[:2]):
                t.blit(page, line, theme.SMALL, theme.MAGENTA, (cx, cy + i * 16))
            lines = wrap(meaning, theme.SMALL, W - 20 - (cx + 150))
            for i, line in enumerate(lines):
                t.blit(page, line, theme.SMALL, theme.TEXT, (cx + 150, cy + i * 16))
            cy += max(1, len(lines), min(2, len(wrap(mechanic, theme.SMALL, 140)))) * 16 + 8
        return page

    def _render_rules(self, page: pygame.Surface, x: int, y: int, width: int, size: int,
                      bottom: int, with_goal: bool = True) -> int:
        """The page "vLLM or game?" from (x, y), `width` px wide, above `bottom` (its gaps close
        up when the text needs the room), the goal under it if `with_goal` (a phone's controls
        page has it instead); returns the y under it."""
        t, tr = self.app.text, self.app.tr
        line_h = theme.font(size).get_linesize()
        sections = [(head, [wrap(text, size, width - 14) for text in lines]) for head, lines in rules(tr)]
        ending = wrap(goal(tr), size, width) if with_goal else []

        def lay_out(item_gap: int, section_gap: int, draw: bool) -> int:
            """Walk the page with these gaps, drawing it if `draw`; the y under it."""
            at = y
            for head, items in sections:
                if draw:
                    t.blit(page, head, size, theme.PANEL_TITLE, (x, at))
                at += line_h + 3
                for item in items:
                    for i, line in enumerate(item):
                        if draw:
                            if i == 0:
                                t.blit(page, "-", size, theme.MAGENTA, (x, at))
                            t.blit(page, line, size, theme.TEXT, (x + 14, at))
                        at += line_h
                    at += item_gap
                at += section_gap
            for line in ending:
                if draw:
                    t.blit(page, line, size, theme.GREEN, (x, at))
                at += line_h
            return at

        gaps = (2, 8) if lay_out(2, 8, False) <= bottom else (0, 3)
        return lay_out(*gaps, True)

    def _render_portrait(self, lay: Layout) -> pygame.Surface:
        t, T, tr = self.app.text, lay.text, self.app.tr
        page = pygame.Surface(lay.size, pygame.SRCALPHA)
        m = lay.margin + 4
        width = lay.width - 2 * m
        hy = lay.header[3] // 2
        title = tr.t(self.TABS[self.page_name]) if self.page_name != "controls" else tr.t("help.title")
        t.blit(page, fit(title, T.large, lay.help_close[0] - m - 8), T.large, theme.CYAN, (m, hy), "midleft")
        line_h = T.small + 3
        y = lay.header[3] + 6
        if self.page_name == "map":
            t.blit(page, tr.t("help.in_game_short"), T.small, theme.TEXT_DIM, (m, y))
            y += line_h + 6
            for mechanic, meaning in concepts(tr):
                pygame.draw.line(page, theme.PANEL_EDGE, (m, y - 3), (m + width, y - 3))
                r = t.blit(page, tr.t("help.mechanic", mechanic=mechanic), T.small, theme.MAGENTA, (m, y))
                first = wrap(meaning, T.small, width - r.width - 8)[0]
                t.blit(page, first, T.small, theme.TEXT, (r.right + 8, y))
                y += line_h
                tail = same_font(meaning[len(first):].strip(), first)  # the message's font, as its first line
                for line in wrap(tail, T.small, width - 10) if first != meaning else ():
                    t.blit(page, line, T.small, theme.TEXT, (m + 10, y))
                    y += line_h
                y += 4
        elif self.page_name == "rules":
            tabs = min(b.rect[1] for b in self.buttons if b.name in self.PAGES)
            self._render_rules(page, m, y, width, T.small, tabs - 6, with_goal=False)
        else:
            for head, rows in ((tr.t("help.on_touch"), touch_controls(tr)), (tr.t("help.with_keyboard"), controls(tr)[:-1])):
                t.blit(page, head, T.small, theme.PANEL_TITLE, (m, y))
                y += line_h + 2
                for keys, action in rows:
                    r = t.blit(page, keys, T.small, theme.AMBER, (m, y))
                    rest = wrap(action, T.small, width - 10 - (r.width + 10 if r.width < width // 2 else 0))
                    if r.width < width // 2:  # key and action on one line when they fit
                        t.blit(page, rest[0], T.small, theme.TEXT, (r.right + 10, y))
                        rest = rest[1:]
                    y += line_h
                    for line in rest:
                        t.blit(page, line, T.small, theme.TEXT, (m + 10, y))
                        y += line_h
                y += 8
            for line in wrap(goal(tr), T.small, width):
                t.blit(page, line, T.small, theme.GREEN, (m, y))
                y += line_h
        return page

    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(HELP_BG)
        if self._page is None:
            self._page = self._render()
        surface.blit(self._page, (0, 0))
        T = self.app.layout.text
        for b in self.buttons:
            over = self.hover is not None and b.contains(self.hover)
            if b.name in self.PAGES:  # tabs: the label in the middle, small enough to fit
                r = pygame.Rect(b.rect)
                chosen = b.name == self.page_name
                pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=5)
                pygame.draw.rect(surface, theme.CYAN if chosen else theme.PANEL_EDGE, r, 2 if chosen else 1,
                                 border_radius=5)
                self.app.text.blit(surface, fit(b.label, T.small, r.width - 8), T.small,
                                   theme.TEXT if chosen else theme.TEXT_DIM, r.center, "center")
            else:
                draw_row_button(surface, self.app, b, self.hover if over else None)


class DetailsScene(PlayOverlay):
    """A phone's DETAILS sheet: every statistic, the block table and the system log.

    The landscape console shows all of this around the board; a phone keeps it one tap away,
    with the game paused underneath while it is read.
    """

    opaque = True

    def build(self) -> None:
        lay = self.app.layout
        self.buttons = [Button("close", lay.details["close"], self.app.tr.t("details.back"), touch=lay.touch)]
        row = self.budget_row(len(self.stats_rows()))
        if row is not None:  # the step's token budget, a phone's only control of it
            x, y, w, h = row
            self.buttons += [Button("budget_down", (x + w - 2 * h - 8, y, h, h), "-", touch=lay.touch),
                             Button("budget_up", (x + w - h, y, h, h), "+", touch=lay.touch)]
            if self.play.game.serving.spec_k is not None:  # and the drafts a step, under it
                y += h + 6
                self.buttons += [Button("spec_down", (x + w - 2 * h - 8, y, h, h), "-", touch=lay.touch),
                                 Button("spec_up", (x + w - h, y, h, h), "+", touch=lay.touch)]

    def stats_height(self, rows: int) -> int:
        """Pixels the statistics panel takes with `rows` rows."""
        return 24 + (self.app.layout.text.small + 3) * rows + 4

    def budget_row(self, rows: int) -> RectT | None:
        """Where the step's token budget and its buttons go, under `rows` rows of statistics
        (chunked prefill only)."""
        if self.play.game.serving.prefill is None:
            return None
        sx, sy, sw, _ = self.app.layout.details["stats"]
        return (sx, sy + self.stats_height(rows) + 6, sw, self.app.layout.touch)

    def relayout(self) -> None:
        if not self.app.layout.details:  # turned to landscape: the console shows all of it
            if self.app.top is self:
                self.app.back()
            return
        super().relayout()

    def command(self, cmd: Command) -> None:
        if cmd in (Command.PAUSE, Command.START, Command.QUIT):
            self.app.back()
        elif cmd is Command.HELP:
            self.app.show_help()
        elif cmd is Command.MUTE:
            self.play.state.muted = self.app.toggle_mute()

    def click(self, name: str) -> None:
        if name in ("budget_down", "budget_up"):
            self.play.set_budget(1 if name == "budget_up" else -1)
            return
        if name in ("spec_down", "spec_up"):
            self.play.set_spec(1 if name == "spec_up" else -1)
            return
        self.app.back()

    def stats_rows(self) -> list[tuple[tuple[str, str], ...]]:
        """Every statistic of the run, as (label, value) pairs two to a row."""
        tr, game = self.app.tr, self.play.game
        tele = game.telemetry()
        served = tr.num(tele.served)
        if game.goal == "serve":
            served = tr.t("report.value.of_goal", n=served, goal=tr.num(game.goal_requests))
        named = [
            ("vram_held", tr.pct(tele.utilisation)), ("reserved", str(tele.reserved)),
            ("fragmentation", tr.pct(tele.fragmentation)), ("usable_free", str(tele.usable_free)),
            ("waste", tr.pct(tele.waste_share)), ("throughput", tr.per_second(tele.throughput)),
            ("running", str(tele.resident)), ("waiting", str(tele.waiting)),
            ("preempted_swap", str(tele.preempted_swap)), ("preempted_recompute", str(tele.preempted_recompute)),
            ("cpu", tr.t("report.value.of_goal", n=tele.cpu_used, goal=R.CPU_BLOCKS)),
            ("never_used", str(tele.reserved_wasted)),
            ("served", served), ("tokens", tr.num(tele.tokens)),
            ("minutes", tr.t("report.value.minutes", value=f"{tele.minutes:.1f}")),
            ("best", tr.num(self.app.best(game.mode, game.goal))),
        ]
        figures = serving_figures(game)
        if not game.allocator.allocator.reserves_max_length and figures["prefix_hit_rate"] is not None:
            # Paged mode reserves nothing and seals nothing off: its slots say what rules 4 do.
            mean = figures["ttft_ms_mean"]
            live = {"reserved": ("shared", str(game.serving.pool.shared)),
                    "fragmentation": ("hit_rate", tr.pct(figures["prefix_hit_rate"])),
                    "never_used": ("ttft", "-" if mean is None else tr.t("details.seconds", seconds=mean / 1000))}
            named = [live.get(name, (name, value)) for name, value in named]
        pairs = [(tr.t(f"details.{name}"), value) for name, value in named]
        return [tuple(pairs[i:i + 2]) for i in range(0, len(pairs), 2)]

    def table_lines(self, rows: int, width: int) -> list[str]:
        """One line per running request, newest first: its block table, logical page by page
        (visible rows counted from the top), its tokens and its reserved blocks."""
        tr, game = self.app.tr, self.play.game
        small = self.app.layout.text.small
        s = game.serving
        running = sorted(s.running.values(), key=lambda r: -r.order)
        if not running:
            return wrap(tr.t("details.no_tables"), small, width)[:rows]
        shown = running if len(running) <= rows else running[:rows - 1]
        out = []
        for req in shown:
            bt = s.table(req)
            held = bt.entries[:len(bt.entries) - bt.reserved]
            cells = " ".join(f"{x},{R.visible_row(y)}" for _, (x, y) in held)
            line = tr.t("details.table", id=bt.request_id, name=PIECES[bt.kind].name, tokens=bt.tokens, cells=cells)
            if bt.reserved:
                line = tr.t("details.table_reserved", line=line, n=bt.reserved)
            out.append(fit(line, small, width))
        if len(shown) < len(running):
            out.append(tr.t("details.more", n=len(running) - len(shown)))
        return out

    def draw(self, surface: pygame.Surface) -> None:
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        surface.fill(theme.BG)
        hy = lay.header[3] // 2
        t.blit(surface, tr.t("details.title"), T.large, theme.CYAN, (lay.margin + 4, hy), "midleft")
        t.blit(surface, tr.t("details.paused"), T.small, theme.TEXT_DIM, (lay.width - lay.margin - 4, hy), "midright")
        game = self.play.game
        line_h = T.small + 3
        stats = self.stats_rows()
        sx, sy, sw, _ = lay.details["stats"]
        bx, by, bw, bh = lay.details["blocks"]
        area_bottom = by + bh  # the statistics take what they need of both panels' room
        sh = self.stats_height(len(stats))
        draw_panel(surface, (sx, sy, sw, sh), t, tr.t("details.telemetry"), size=T.small)
        for i, pair in enumerate(stats):
            y = sy + 24 + i * line_h
            for j, (label, value) in enumerate(pair):
                x0 = sx + 8 + j * (sw // 2)
                right = x0 + sw // 2 - 20
                lr = t.blit(surface, fit(label, T.small, sw // 2 - 70), T.small, theme.TEXT_DIM, (x0, y))
                t.blit(surface, fit(value, T.small, right - lr.right - 6), T.small, theme.TEXT, (right, y), "topright")
        ty = sy + sh + 6
        row = self.budget_row(len(stats))
        if row is not None:
            self._draw_budget(surface, row)
            ty = row[1] + row[3] + 6
            area_bottom += row[3] + 6
            if game.serving.spec_k is not None:
                self._draw_budget(surface, (row[0], ty, row[2], row[3]), drafts=game.serving.spec_k)
                ty += row[3] + 6
                area_bottom += row[3] + 6
        draw_panel(surface, (bx, ty, bw, area_bottom - ty), t, tr.t("details.tables", n=len(game.serving.running)),
                   size=T.small)
        rows = (area_bottom - ty - 24) // line_h - 1  # the last row says how to read the coordinates
        for i, line in enumerate(self.table_lines(rows, bw - 16)):
            t.blit(surface, line, T.small, theme.TEXT_DIM if line.startswith("+") else theme.TEXT,
                   (bx + 8, ty + 22 + i * line_h))
        note = tr.t("details.coords", bottom=R.VISIBLE - 1)
        t.blit(surface, fit(note, T.small, bw - 16), T.small, theme.TEXT_DIM, (bx + 8, ty + 22 + rows * line_h))
        lx, ly, lw, lh = lay.log
        lower = row[3] + 6 if row is not None else 0  # the budget's row takes the log's first lines
        self.play.session.log.restyle((lx, ly + lower, lw, lh - lower), T.small)
        self.play.session.log.draw(surface, t, tr=tr)
        for b in self.buttons:
            draw_row_button(surface, self.app, b, self.hover)

    def _draw_budget(self, surface: pygame.Surface, row: RectT, drafts: int | None = None) -> None:
        """The decode step's token budget as the engine has it (or, with `drafts`, the tokens each
        request drafts a step), beside its - and + buttons."""
        t, T, tr = self.app.text, self.app.layout.text, self.app.tr
        prefill = self.play.game.serving.prefill
        assert prefill is not None  # no budget row without chunked prefill
        x, y, w, h = row
        room = w - 2 * h - 20
        head = tr.t("hud.step") if drafts is None else tr.t("details.spec_head")
        t.blit(surface, fit(head, T.small, room), T.small, theme.PANEL_TITLE, (x + 8, y + 3))
        value = (tr.t("details.budget", budget=prefill.budget) if drafts is None
                 else tr.t("details.spec", k=drafts))
        t.blit(surface, fit(value, T.small, room), T.small, theme.TEXT, (x + 8, y + h - 3), "bottomleft")


KEY_GRACE_MS = 500.0  # keys pressed this soon after the crash were meant for the game
SEALED_COLOUR = theme.RED
RESERVED_COLOUR = theme.AMBER
TERMINAL_BG = (0, 0, 0)  # PyTorch's message, as a terminal shows it
TERMINAL_TEXT = (214, 218, 226)


class ResultScene(Overlay):
    """The end of a run: the engine's own crash (or victory) report, then restart."""

    shade_alpha = 150

    def __init__(self, app, play, report: RunReport, new_best: bool = False,
                 since_end_ms: float = KEY_GRACE_MS) -> None:
        super().__init__(app)
        self.play = play
        self.report = report
        self.new_best = new_best
        self.since_end_ms = since_end_ms  # how long ago the run ended when the report opened
        self.code: str | None = getattr(play, "share_code", None)  # the run's share code
        self.copy_state: str | None = None  # what COPY did (ui.share.copy_code)
        self.oom = report.outcome == "oom"
        self.show_best = True
        self.peeking = False  # the report put aside to look at the board it describes
        self.build()

    def build(self) -> None:
        lay = self.app.layout
        T = lay.text
        tr = self.app.tr
        self.text = report_text(self.report, tr, touch=lay.portrait)  # a phone: controls are buttons
        self.rect = lay.oom_report if self.text.pytorch is not None else lay.dialog
        x, y, w, h = self.rect
        bh = lay.report_buttons_h
        bw = (w - 32 - 2 * 8) // 3
        keys = not lay.portrait
        # A chapter's report was opened from its outro, and its third button goes back there.
        back = "chapter.back" if getattr(self.play, "chapter", None) is not None else "report.title"
        self.report_buttons = [
            Button(name, (x + 16 + i * (bw + 8), y + h - bh - 16, bw, bh), label, hint if keys else "",
                   touch=lay.touch)
            for i, (name, label, hint) in enumerate((("restart", tr.t("report.restart"), START_KEY),
                                                     ("board", tr.t("report.board"), BOARD_KEY),
                                                     ("title", tr.t(back), QUIT_KEY)))]
        # The run's share code over the buttons, with COPY (a link on the clipboard) and WATCH.
        share_y = y + h - 2 * bh - 16 - 8
        sw = 84
        self.share_buttons = [
            Button("copy", (x + w - 16 - 2 * sw - 8, share_y, sw, bh), tr.t("report.copy"), COPY_KEY if keys else "",
                   touch=lay.touch),
            Button("watch", (x + w - 16 - sw, share_y, sw, bh), tr.t("report.watch"), WATCH_KEY if keys else "",
                   touch=lay.touch)]
        self.code_box = (x + 16, share_y, w - 32 - 2 * sw - 16, bh)
        if self.code:
            self.report_buttons = self.report_buttons + self.share_buttons
            self.code_line = self._fit_code(self.code, self.code_box[2] - 16, T.small,
                                            tr.t("report.code_tail", n=len(self.code)))
        self.content_bottom = share_y if self.code else self.report_buttons[0].rect[1]
        self.buttons = [] if self.peeking else self.report_buttons
        self.heading = self.text.heading
        self.heading_px = next((size for size in (T.title, T.large) if
                                theme.font_for(self.heading, size).size(self.heading)[0] <= w - 24), T.body)
        # Wrapped once per layout. Everything is drawn, the tip above all: the fullest form of
        # PyTorch's message that fits, in a phone's tall report at the body size if it all fits;
        # the best-scores line gives way first, then the longer caption of PyTorch's message.
        room = self.content_bottom - 6 - (y + 56)
        torch = self.text.pytorch
        forms, captions = (torch.forms, torch.captions) if torch is not None else (("",), ("",))
        sizes = (T.body, T.small) if lay.portrait else (T.small,)
        self._wrapped: dict[tuple[object, ...], list] = {}  # each part wrapped once per size and width
        for message, size, caption, with_best in itertools.product(forms, sizes, captions, (True, False)):
            self._flow(size, w - 40, message, caption)
            self.show_best = with_best
            if self.height(with_best) <= room:
                break

    def _flow(self, size: int, width: int, message: str = "", caption: str = "") -> None:
        """Wrap every part of the report at `size` for a column `width` px wide, PyTorch's
        `message` and its `caption` (if the report has them) in its small print."""
        text = self.text
        memo = getattr(self, "_wrapped", {})

        def once(how, part, px: int, room: int) -> list:
            key = (how, part, px, room)
            if key not in memo:
                memo[key] = how(part, px, room)
            return memo[key]

        self.px = size
        self.line_h = theme.font_for(text.cause + text.tip, size).get_linesize()
        self.cause = once(wrap, text.cause, size, width)
        self.memory = once(wrap, text.memory, size, width - 16)
        self.rows = once(fact_rows, text.facts, size, width - 16)
        self.tips = once(wrap, text.tip, size, width)
        small = self.app.layout.text.small
        self.best_lines = once(wrap, self.best_line(), small, width)
        torch = text.pytorch
        self.torch_caption = once(wrap, caption, small, width - 16) if torch is not None else []
        self.torch_lines = once(sizes_unbroken, message, small, width - 16) if torch is not None else []
        self.torch_note = once(wrap, torch.note, small, width) if torch is not None else []

    def torch_heights(self) -> tuple[int, int, int]:
        """Line heights of PyTorch's block: its caption, the message, the note under it."""
        torch, small = self.text.pytorch, self.app.layout.text.small
        if torch is None:
            return 0, 0, 0
        return (theme.font_for(torch.captions[0], small).get_linesize(), theme.font(small).get_linesize(),
                theme.font_for(torch.note, small).get_linesize())

    def torch_height(self) -> int:
        """Pixels PyTorch's block takes under the facts, gap above it included (0 without one)."""
        if not self.torch_lines:
            return 0
        caption_h, message_h, note_h = self.torch_heights()
        box = 3 + caption_h * len(self.torch_caption) + 1 + message_h * len(self.torch_lines) + 3
        return 4 + box + 3 + note_h * len(self.torch_note)

    def height(self, with_best: bool) -> int:
        """Pixels the report's text takes under its heading (as draw() places it)."""
        lh = self.line_h
        T = self.app.layout.text
        box = lh * (len(self.memory) + len(self.rows)) + 8 + (4 if self.memory else 0)
        score = theme.font(T.large).get_linesize()
        h = lh * len(self.cause) + 6 + box + self.torch_height() + 6 + score + 4 + lh * len(self.tips)
        if with_best:
            h += 6 + theme.font(T.small).get_linesize() * len(self.best_lines)
        return h

    def best_line(self) -> str:
        """The records this run is measured against: its goal's bests, or the daily's, or none."""
        tr, rep = self.app.tr, self.report
        chapter = getattr(self.play, "chapter", None)
        if chapter is not None:
            return tr.t("report.best_chapter", n=chapter, score=tr.num(self.app.settings.chapter_scores.get(str(chapter), 0)))
        if rep.mixed:
            return tr.t("report.mixed_no_best")
        daily = getattr(self.play, "daily", None)
        each = self.rect[2] // 5
        if daily is not None:
            day = daily.isoformat()
            scores = [(m, self.app.daily_best(day, m) or 0) for m in modes.NAMES]
            head = tr.t("report.best_daily", day=day)
        else:
            scores = [(m, self.app.best(m, rep.goal)) for m in modes.NAMES]
            head = tr.t("report.best_goal", goal=goal_name(tr, rep.goal))
        return tr.t("report.best_scores", head=head, scores="   ".join(
            tr.t("report.best_entry", mode=mode_name(tr, m), score=short_number(v, theme.SMALL, each))
            for m, v in scores))

    def command(self, cmd: Command) -> None:
        if cmd is Command.START:
            self.click("restart")
        elif cmd is Command.PAUSE:  # Esc sets the report aside (BOARD), as it pauses a run
            self.click("board")
        elif cmd is Command.QUIT:
            self.click("title")
        elif cmd is Command.HELP:
            self.app.show_help()
        elif cmd is Command.MUTE:
            self.play.state.muted = self.app.toggle_mute()
            self.refresh_backdrop()

    def handle(self, event: pygame.event.Event) -> None:
        if event.type in (pygame.KEYDOWN, pygame.KEYUP) and self.since_end_ms + self.clock_ms < KEY_GRACE_MS:
            return  # a drop or turn pressed just after the crash must not act on the report
        if event.type == pygame.KEYDOWN and event.key == pygame.K_b:
            self.click("board")
            return
        if event.type == pygame.KEYDOWN and self.code and event.key in (pygame.K_c, pygame.K_w):  # COPY/WATCH_KEY
            self.click("copy" if event.key == pygame.K_c else "watch")
            return
        super().handle(event)

    def update(self, dt_ms: float) -> None:
        super().update(dt_ms)
        if self.copy_state == "pending":
            from ui.share import copy_status
            self.copy_state = copy_status()

    def click(self, name: str) -> None:
        if name == "restart":
            self.play.restart()
        elif name == "title":
            if getattr(self.play, "chapter", None) is not None:  # a chapter's report: back to its outro
                self.app.pop()
                self.app.show_chapter_outro(self.play, self.report)
            else:
                self.app.show_title()
        elif name == "board":
            self.peeking = not self.peeking
            self.buttons = [] if self.peeking else self.report_buttons
        elif name == "copy" and self.code:
            from ui.share import copy_code
            self.copy_state = copy_code(self.code)
        elif name == "watch" and getattr(self.play, "replay", None) is not None:
            self.app.watch(self.play.replay, over_current=True)

    def click_outside(self, pos: tuple[int, int]) -> None:
        if self.peeking:
            self.click("board")  # any tap brings the report back

    def tip(self) -> str:
        """What to take away, matching the cause the engine found."""
        return self.text.tip

    def draw(self, surface: pygame.Surface) -> None:
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        px, line_h = self.px, self.line_h
        edge = {"oom": theme.RED, "overload": theme.AMBER}.get(self.report.outcome, theme.GREEN)
        if self.peeking:
            self._draw_peek(surface, edge)
            return
        self.draw_backdrop(surface)
        r = draw_dialog(surface, self.rect, edge)
        t.blit(surface, self.heading, self.heading_px, edge, (r.centerx, r.y + 30), "center")
        y = r.y + 56
        for line in self.cause:
            t.blit(surface, line, px, theme.AMBER if self.report.outcome != "victory" else theme.TEXT,
                   (r.centerx, y), "midtop")
            y += line_h
        y += 6
        box = pygame.Rect(r.x + 16, y, r.width - 32,
                          line_h * (len(self.memory) + len(self.rows)) + 8 + (4 if self.memory else 0))
        pygame.draw.rect(surface, (4, 6, 14), box, border_radius=4)
        pygame.draw.rect(surface, theme.PANEL_EDGE, box, 1, border_radius=4)
        yy = box.y + 4
        for line in self.memory:
            t.blit(surface, line, px, theme.TEXT, (box.x + 8, yy))
            yy += line_h
        if self.memory:
            yy += 4
        half = (box.width - 16) // 2
        for row in self.rows:
            for i, (label, value) in enumerate(row):
                x0 = box.x + 8 + i * (half + 8 if len(row) > 1 else 0)
                right = x0 + (half - 8 if len(row) > 1 else box.width - 16)
                lr = t.blit(surface, label, px, theme.TEXT_DIM, (x0, yy))
                value = fit(value, px, right - lr.right - 8)
                t.blit(surface, value, px, theme.TEXT, (right, yy), "topright")
            yy += line_h
        y = self._draw_torch(surface, box) + 6
        score = tr.t("report.score", score=tr.num(self.report.score))
        sr = t.blit(surface, score, T.large, theme.TEXT, (r.centerx, y), "midtop")
        if self.new_best:
            p = round(pulse(self.clock_ms, 700) * 6) / 6  # few distinct colours: cached text
            best_label = theme.mix(theme.AMBER, (255, 255, 255), p)
            new_best = tr.t("report.new_best")
            nb = theme.font_for(new_best, T.body).size(new_best)[0]
            if sr.right + 12 + nb <= r.right - 8:
                t.blit(surface, new_best, T.body, best_label, (sr.right + 12, sr.centery), "midleft")
            else:  # a long score: the label goes left of it instead
                t.blit(surface, new_best, T.body, best_label, (max(r.x + 8, sr.left - 12 - nb), sr.centery),
                       "midleft")
        y = sr.bottom + 4
        for line in self.tips:  # always drawn: build() made room for every line
            t.blit(surface, line, px, theme.CYAN, (r.centerx, y), "midtop")
            y += line_h
        if self.show_best:
            y += 6
            for part in self.best_lines:
                t.blit(surface, part, T.small, theme.TEXT_DIM, (r.centerx, y), "midtop")
                y += theme.font(T.small).get_linesize()
        for b in self.report_buttons:
            if b in self.share_buttons:
                b.draw(surface, t, hover=self.hover is not None and b.contains(self.hover), accent=edge,
                       size=T.small)
            else:
                draw_row_button(surface, self.app, b, self.hover, accent=edge)
        if self.code:
            self._draw_code(surface)

    def _draw_torch(self, surface: pygame.Surface, above: pygame.Rect) -> int:
        """PyTorch's message in a terminal's box under the facts box `above`, what serving engines
        do instead under it; the y under all of it (`above`'s bottom when there is none)."""
        if not self.torch_lines:
            return above.bottom
        t, small = self.app.text, self.app.layout.text.small
        caption_h, message_h, note_h = self.torch_heights()
        box = pygame.Rect(above.x, above.bottom + 4, above.width,
                          3 + caption_h * len(self.torch_caption) + 1 + message_h * len(self.torch_lines) + 3)
        pygame.draw.rect(surface, TERMINAL_BG, box, border_radius=4)
        pygame.draw.rect(surface, theme.PANEL_EDGE, box, 1, border_radius=4)
        y = box.y + 3
        for line in self.torch_caption:
            t.blit(surface, line, small, theme.PANEL_TITLE, (box.x + 8, y))
            y += caption_h
        y += 1
        for line in self.torch_lines:
            t.blit(surface, line, small, TERMINAL_TEXT, (box.x + 8, y))
            y += message_h
        y = box.bottom + 3
        for line in self.torch_note:
            t.blit(surface, line, small, theme.GREEN, (box.centerx, y), "midtop")
            y += note_h
        return y

    def _draw_peek(self, surface: pygame.Surface, edge: theme.Colour) -> None:
        """The BOARD view: the board the report describes, its sealed and reserved-empty cells outlined."""
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        self.draw_plain_backdrop(surface)
        if lay.portrait:  # over the teaching-card strip, under the board
            bar = pygame.Rect(lay.panels["strip"])
        else:
            controls = [pygame.Rect(r) for r in lay.controls.values()]
            y, h = controls[0].y, controls[0].height
            bar = pygame.Rect(lay.board[0] - 4, y, lay.board[2] + 8, h)
        rep = self.report
        outline_cells(surface, lay, rep.sealed_cells, SEALED_COLOUR)
        outline_cells(surface, lay, rep.reserved_cells, RESERVED_COLOUR)
        pygame.draw.rect(surface, (9, 12, 26), bar, border_radius=6)
        pygame.draw.rect(surface, edge, bar, 2, border_radius=6)
        back = tr.t("report.peek_back_tap") if lay.portrait else tr.t("report.peek_back", key=BOARD_KEY)
        room = bar.width - 8
        t.blit(surface, fit(tr.t("report.peek_sealed", n=len(rep.sealed_cells)), T.small, room), T.small,
               SEALED_COLOUR, (bar.centerx, bar.centery - 20), "center")
        t.blit(surface, fit(tr.t("report.peek_reserved", n=len(rep.reserved_cells)), T.small, room), T.small,
               RESERVED_COLOUR, (bar.centerx, bar.centery), "center")
        t.blit(surface, fit(back, T.small, room), T.small, theme.CYAN, (bar.centerx, bar.centery + 20), "center")

    COPY_NOTES = ("pending", "copied", "selected", "printed")  # catalogue keys report.copy_note.<state>

    @staticmethod
    def _fit_code(code: str, width: int, size: int, tail: str) -> str:
        """The code, or its start and `tail` (its length), in `width` px."""
        font = theme.font(size)
        if font.size(code)[0] <= width:
            return code
        lo, hi = 0, len(code)  # the longest start that fits with its tail (drawn as one string)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            line = code[:mid] + tail
            if theme.font_for(line, size).size(line)[0] <= width:
                lo = mid
            else:
                hi = mid - 1
        return code[:lo] + tail

    def _draw_code(self, surface: pygame.Surface) -> None:
        """The share code in one box (its start, and its length), or what COPY did."""
        box = pygame.Rect(self.code_box)
        pygame.draw.rect(surface, (4, 6, 14), box, border_radius=4)
        pygame.draw.rect(surface, theme.PANEL_EDGE, box, 1, border_radius=4)
        t, small, tr = self.app.text, self.app.layout.text.small, self.app.tr
        label = getattr(self.play, "tape", None)
        head = tr.t("report.share_code")
        if label is not None and label.mixed:
            head = tr.t("report.share_code_mixed", mode=label.mode)
        t.blit(surface, head, small, theme.PANEL_TITLE, (box.x + 8, box.y + 2))
        if self.copy_state in self.COPY_NOTES:
            line, colour = fit(tr.t(f"report.copy_note.{self.copy_state}"), small, box.width - 16), theme.GREEN
        else:
            line, colour = self.code_line, theme.AMBER
        t.blit(surface, line, small, colour, (box.x + 8, box.bottom - 3), "bottomleft")
