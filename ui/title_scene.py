"""Title / attract screen: the bot plays in the middle while the player picks a mode."""
from __future__ import annotations

import re

import pygame

from engine import Game, Input, modes
from engine import rules as R
from engine.game import MODE_OF_INPUT
from ui import theme
from ui.keys import (CARDS_KEY, CHAPTERS_KEY, DAILY_KEY, ENDLESS_KEY, HELP_KEY, HOLD_KEY, LAB_KEY, LANGUAGE_KEY, MUTE_KEY,
                     PAUSE_KEY,
                     SPLIT_KEY, START_KEY, key_hint)
from engine.chapters import CHAPTERS
from ui.autopilot import AutoPilot
from ui.console_view import ViewState, mode_accent
from ui.i18n import Msg
from ui.i18n.game_text import goal_name, mode_label, mode_name, mode_note
from ui.input import Command, InputMapper
from ui.scene import MenuScene
from ui.session import GameSession
from ui.storage import chapters_met
from ui.text import fit, largest_fitting, short_number, wrap
from ui.widgets import LABEL_PAD, Button, hit, pulse

# engine.replay.rules_mismatch: a share code recorded under other rules.
OLD_RULES = re.compile(r"recorded under rules (\d+); this build plays rules (\d+)")
HOW_TO = ("contiguous", "paged", "finish")  # title.how.<name>.head / .body
# The goal switch keeps the layout's button name ("endless"): it steps through rules.GOALS.
SIDE_BUTTONS = (("help", "HELP & CONCEPT MAP", HELP_KEY), ("lab", "MEMORY LAB", LAB_KEY),
                ("cards", "TEACHING CARDS", CARDS_KEY), ("mute", "SOUND", MUTE_KEY),
                ("endless", "GOAL", ENDLESS_KEY), ("language", "LANGUAGE", LANGUAGE_KEY))
BEST_COLUMNS = (*R.GOALS, "daily")  # the landscape best-score table: one column per goal, and today's daily


def layer_areas(lay) -> tuple[pygame.Rect, ...]:
    """The cached title layer, as rectangles around the live board and its frame."""
    w, h = lay.size
    well = pygame.Rect(lay.board).inflate(10, 10)
    return (pygame.Rect(0, 0, w, well.top),
            pygame.Rect(0, well.top, well.left, h - well.top),
            pygame.Rect(well.right, well.top, w - well.right, h - well.top),
            pygame.Rect(well.left, well.bottom, well.width, h - well.bottom))


def mode_choice(lay) -> list[Button]:
    """One button per allocator in the registry: a row on the landscape panel, a column on a phone."""
    x, y, w, h = lay.title["modes"]
    n, gap = len(modes.MODES), 6
    if lay.portrait:
        bh = (h - gap * (n - 1)) // n
        return [Button(m.name, (x, y + i * (bh + gap), w, bh), m.label, touch=lay.touch)
                for i, m in enumerate(modes.MODES)]
    bw = (w - gap * (n - 1)) // n
    return [Button(m.name, (x + i * (bw + gap), y, bw, h), m.label, touch=lay.touch)
            for i, m in enumerate(modes.MODES)]



def score_text(value: int | None, size: int, room: int) -> str:
    """A best score that fits `room` pixels (12.3K, 4.56M beyond), or "-" for none yet."""
    return "-" if value is None else short_number(value, size, max(room, 1))

class TitleScene(MenuScene):
    can_open_lab = True

    def __init__(self, app, seed: int | None = None) -> None:
        self.app = app
        self.seed = app.next_seed() if seed is None else seed
        self.mapper = InputMapper()
        self.state = ViewState(muted=app.settings.muted, header_buttons=False)
        self.clock_ms = 0.0
        self.hover: tuple[int, int] | None = None
        self._new_demo()
        self.notice: Msg | str = ""
        self.today = app.today().isoformat()  # the daily challenge on offer (UTC date)
        self.relayout()

    def relayout(self) -> None:
        lay = self.app.layout
        B, touch = lay.title_buttons, lay.touch
        self.mode_buttons = mode_choice(lay)
        self.start_button = Button("start", B["start"], "START", f"{START_KEY} / click", touch=touch)
        self.side_buttons = [Button(name, B[name], label, hint, touch=touch) for name, label, hint in SIDE_BUTTONS]
        self.daily_button = Button("daily", B["daily"], "DAILY RUN", DAILY_KEY, touch=touch)
        self.chapters_button = Button("chapters", B["chapters"], "CHAPTERS", CHAPTERS_KEY, touch=touch)
        self.demo_slot = lay.title["demo_slot"]
        self.areas = layer_areas(lay)
        self.shade = pygame.Surface(lay.size, pygame.SRCALPHA)
        self.shade.fill((0, 0, 0, 120))
        self.shade.fill((0, 0, 0, 0), pygame.Rect(lay.board).inflate(10, 10))
        self._layer: pygame.Surface | None = None  # everything around the demo board
        self._layer_drawn: tuple | None = None

    def _new_demo(self) -> None:
        demo_seed = self.seed + int(self.clock_ms)
        self.demo = GameSession(Game(seed=demo_seed, mode=self.app.settings.mode, endless=True))
        self.pilot = AutoPilot(skill=0.7, seed=demo_seed, steps_per_input=5)
        self.restart_in: float | None = None

    # ------------------------------------------------------------------ events
    def enter(self) -> None:
        self.mapper.reset()
        self.state.muted = self.app.settings.muted
        if isinstance(self.notice, Msg) and self.notice.key == "title.lab_loading":
            self.notice = ""  # back from the LAB it was fetching: that is past

    def command(self, cmd: Command) -> None:
        if cmd is Command.START:
            self.start()
        elif cmd is Command.HELP:
            self.app.show_help()
        elif cmd is Command.LAB:
            self.open_lab()
        elif cmd is Command.MUTE:
            self.state.muted = self.app.toggle_mute()
        elif cmd is Command.TOGGLE_CARDS:
            self.app.toggle_cards()
        elif cmd is Command.TOGGLE_ENDLESS:
            self.app.next_goal()
        elif cmd is Command.LANGUAGE:
            self.app.next_language()
        elif cmd is Command.CHAPTERS:
            self.app.show_chapters()

    def language_changed(self) -> None:
        self._layer_drawn = None  # every word of the cached layer is redrawn

    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.KEYDOWN and event.key == pygame.K_d:  # DAILY_KEY
            self.app.start_daily()
            return
        super().handle(event)

    def press(self, pos: tuple[int, int]) -> None:
        if self.daily_button.contains(pos):
            self.app.start_daily()
            return
        if self.chapters_button.contains(pos):
            self.app.show_chapters()
            return
        b = hit(self.mode_buttons, pos)
        if b is not None:
            self.choose_mode(b.name)
            return
        on_demo = (pygame.Rect(self.app.layout.board).collidepoint(pos)
                   or pygame.Rect(self.demo_slot).collidepoint(pos))
        if self.start_button.contains(pos) or on_demo:
            self.start()
            return
        b = hit(self.side_buttons, pos)
        if b is not None:
            self.command({"help": Command.HELP, "lab": Command.LAB, "cards": Command.TOGGLE_CARDS,
                          "mute": Command.MUTE, "endless": Command.TOGGLE_ENDLESS,
                          "language": Command.LANGUAGE}[b.name])

    def choose_mode(self, mode: str) -> None:
        if mode != self.app.settings.mode:
            self.app.set_mode(mode)
            self._new_demo()  # the demo shows the chosen allocator from its first request

    def open_lab(self) -> None:
        def missing(text: Msg | str) -> None:
            self.notice = text
        self.app.open_lab(missing)

    def start(self) -> None:
        self.app.start_game(self.app.settings.mode)

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        self.clock_ms += dt_ms
        self.state.clock_ms = self.clock_ms
        for inp in self.mapper.update(dt_ms):  # 1 / 2 / Tab pick the allocator here too
            if inp in MODE_OF_INPUT:
                self.choose_mode(MODE_OF_INPUT[inp])
            elif inp is Input.MODE_TOGGLE:
                self.choose_mode(modes.following(self.app.settings.mode))
        self.demo.step(dt_ms, self.pilot.inputs(self.demo.game))
        if self.demo.game.over:
            if self.restart_in is None:
                self.restart_in = 1500.0
            self.restart_in -= dt_ms
            if self.restart_in <= 0:
                self._new_demo()

    # ------------------------------------------------------------------ drawing
    def draw(self, surface: pygame.Surface) -> None:
        """The demo board live; everything around it from a cached layer; START pulsing."""
        self.app.view.draw_board_only(surface, self.demo, self.state)
        key = self._layer_key()
        if self._layer is None or key != self._layer_drawn:
            self._render_layer()
            self._layer_drawn = key
        layer = self._layer
        assert layer is not None  # made by _render_layer
        for area in self.areas:
            surface.blit(layer, area, area)
        self._draw_start(surface)

    def _layer_key(self) -> tuple:
        s = self.app.settings
        over = None
        if self.hover is not None:
            b = hit([*self.mode_buttons, *self.side_buttons, self.daily_button, self.chapters_button], self.hover)
            over = b.name if b is not None else None
        return (s.mode, s.muted, s.cards_enabled, s.goal, chapters_met(s), *(self._best_of(m, c) for m in modes.NAMES
                                                             for c in BEST_COLUMNS),
                self.notice, over, self.today, self.app.language, self.app.wanted_language, self.app.font_problem)

    def _best_of(self, mode: str, column: str) -> int | None:
        """The best score of `mode` for a goal, or in today's daily challenge (None: none yet)."""
        if column == "daily":
            return self.app.daily_best(self.today, mode)
        return self.app.best(mode, column) or None

    def _best_rows(self) -> list[tuple[str, int | None]]:
        """A phone's best scores: each allocator's for the chosen goal, then today's daily."""
        tr = self.app.tr
        goal = self.app.settings.goal
        return [*((mode_name(tr, m), self._best_of(m, goal)) for m in modes.NAMES),
                *((tr.t("title.daily_of", mode=mode_name(tr, m)), self._best_of(m, "daily")) for m in modes.NAMES)]

    def _render_layer(self) -> None:
        lay = self.app.layout
        layer = self._layer
        if layer is None or layer.get_size() != lay.size:
            layer = self._layer = pygame.Surface(lay.size).convert()
        layer.blit(self.app.view.background, (0, 0))
        layer.blit(self.shade, (0, 0))
        t, T, tr = self.app.text, lay.text, self.app.tr
        # The play controls are part of the console's background: hide them under the menu.
        controls_y = min(r[1] for r in lay.controls.values())
        if lay.portrait:
            layer.fill(theme.BG)
            pygame.draw.rect(layer, (10, 14, 30), lay.header)
            pygame.draw.line(layer, theme.PANEL_EDGE, (0, lay.header[3] - 1), (lay.width, lay.header[3] - 1))
            hy = lay.header[3] // 2
            r = t.blit(layer, tr.t("game.title_prefix"), T.large, theme.MAGENTA, (lay.margin, hy), "midleft")
            edge = min((b.rect[0] for b in self.side_buttons if b.rect[1] < lay.header[3]), default=lay.width)
            title = tr.t("game.title")  # as large as fits before the header's language switch
            size = largest_fitting(title, (T.large + 4, T.large, T.body), edge - 8 - (r.right + 10))
            t.blit(layer, title, size, theme.CYAN, (r.right + 10, hy), "midleft")
            pygame.draw.rect(layer, theme.PANEL_EDGE, pygame.Rect(lay.board).inflate(8, 8), 2, border_radius=4)
        else:
            left, right = lay.title["left"], lay.title["right"]
            layer.fill(theme.BG, (left[0] + left[2], controls_y - 4, right[0] - left[0] - left[2], lay.height))
        slot = pygame.Rect(self.demo_slot)
        pygame.draw.rect(layer, (9, 12, 26), slot, border_radius=6)
        pygame.draw.rect(layer, theme.PANEL_EDGE, slot, 1, border_radius=6)
        if lay.portrait:
            self._draw_pitch(layer, slot)
            self._draw_side(layer)
            self._draw_buttons(layer)
        else:
            t.blit(layer, tr.t("title.demo"), T.small, theme.TEXT_DIM,
                   (slot.centerx, slot.y + 22), "center")
            t.blit(layer, tr.t("title.demo_tap"), T.small, theme.CYAN,
                   (slot.centerx, slot.y + 44), "center")
            self._draw_left(layer)
            self._draw_right(layer)

    def _panel(self, surface: pygame.Surface, rect, edge: theme.Colour) -> pygame.Rect:
        r = pygame.Rect(rect)
        pygame.draw.rect(surface, (9, 12, 26), r, border_radius=6)
        pygame.draw.rect(surface, edge, r, 2, border_radius=6)
        return r

    # ------------------------------------------------------------------ portrait
    def _draw_pitch(self, surface: pygame.Surface, slot: pygame.Rect) -> None:
        """Under the demo board: what the game is, and that a tap on the board plays."""
        t, T, tr = self.app.text, self.app.layout.text, self.app.tr
        line_h = T.small + 3
        y = slot.y + 6
        for line in wrap(tr.t("title.pitch_short", requests=tr.num(R.GOAL_REQUESTS)), T.small, slot.width - 16)[:4]:
            t.blit(surface, line, T.small, theme.TEXT, (slot.x + 8, y))
            y += line_h
        t.blit(surface, fit(tr.t("title.demo_tap_board"), T.small, slot.width - 16), T.small, theme.CYAN,
               (slot.x + 8, slot.bottom - 6), "bottomleft")

    def _draw_side(self, surface: pygame.Surface) -> None:
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        r = pygame.Rect(lay.title["side"])
        t.blit(surface, fit(tr.t("title.allocator"), T.small, r.width), T.small, theme.PANEL_TITLE, (r.x, r.y + 2))
        mode = self.app.settings.mode
        for b in self.mode_buttons:
            hover = self.hover is not None and b.contains(self.hover)
            b.draw(surface, t, active=b.name == mode, hover=hover, size=T.body,
                   accent=mode_accent(b.name), label=mode_label(tr, b.name))
        y = self.mode_buttons[-1].rect[1] + self.mode_buttons[-1].rect[3] + 8
        for line in wrap(mode_note(tr, mode), T.small, r.width)[:3]:
            t.blit(surface, line, T.small, theme.TEXT_DIM, (r.x, y))
            y += T.small + 3
        rows = self._best_rows()
        y = self.chapters_button.rect[1] - 26 - 20 * len(rows)
        head = tr.t("title.best_goal", goal=goal_name(tr, self.app.settings.goal))
        t.blit(surface, fit(head, T.small, r.width), T.small, theme.PANEL_TITLE, (r.x, y))
        for i, (name, value) in enumerate(rows):
            yy = y + 22 + i * 20
            label = t.blit(surface, name, T.small, theme.TEXT, (r.x, yy))
            room = r.right - label.right - 8
            t.blit(surface, score_text(value, T.small, room), T.small, theme.AMBER, (r.right, yy), "topright")
        notice = self._notice_text()
        if notice:  # between the allocator note and the scores
            for i, line in enumerate(wrap(notice, T.small, r.width)[:2]):
                t.blit(surface, line, T.small, theme.AMBER, (r.x, y - 44 + i * (T.small + 3)))

    def _draw_buttons(self, surface: pygame.Surface) -> None:
        """A phone's row of switches: what each is, and its state under it."""
        t, T, tr = self.app.text, self.app.layout.text, self.app.tr
        s = self.app.settings
        run = tr.t(f"title.switch.goal.{s.goal}", requests=tr.num(R.GOAL_REQUESTS))
        labels = {"help": (tr.t("title.switch.help"), tr.t("title.switch.help_state")),
                  "lab": (tr.t("title.switch.lab"), tr.t("title.switch.lab_state")),
                  "cards": (tr.t("title.switch.cards"), tr.t("title.switch.on" if s.cards_enabled else "title.switch.off")),
                  "mute": (tr.t("title.switch.sound"), tr.t("title.switch.off" if s.muted else "title.switch.on")),
                  "endless": (tr.t("title.switch.goal"), run),
                  "daily": (tr.t("title.switch.daily"), self.today[5:]),
                  "language": (tr.t("title.switch.language"), tr.name)}
        for b in (*self.side_buttons, self.daily_button):
            br = pygame.Rect(b.rect)
            over = self.hover is not None and b.contains(self.hover)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, br, border_radius=5)
            pygame.draw.rect(surface, theme.MAGENTA if over else theme.PANEL_EDGE, br, 1, border_radius=5)
            head, state = labels[b.name]
            if b.name == "language":  # the header's small switch: the language the game speaks
                t.blit(surface, fit(tr.t("title.switch.language_short"), T.small, br.width - 4), T.small,
                       theme.AMBER, br.center, "center")
                continue
            lines = [head]
            if " " in head and theme.font_for(head, T.small).size(head)[0] > br.width - 2 * LABEL_PAD:
                lines = wrap(head, T.small, br.width - 2 * LABEL_PAD)
            if len(lines) == 2:  # a name of two words too long for one line ("오늘의 도전") takes both
                head, state = lines
            t.blit(surface, fit(head, T.small, br.width - 4), T.small, theme.TEXT, (br.centerx, br.y + 16), "center")
            t.blit(surface, fit(state, T.small, br.width - 4), T.small,
                   theme.TEXT if len(lines) == 2 else theme.AMBER if b.name not in ("help", "lab", "daily") else theme.TEXT_DIM,
                   (br.centerx, br.bottom - 14), "center")

    # ------------------------------------------------------------------ landscape
    def _draw_left(self, surface: pygame.Surface) -> None:
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        r = self._panel(surface, lay.title["left"], theme.CYAN)
        x = r.x + 12
        t.blit(surface, tr.t("game.title_prefix"), T.large, theme.MAGENTA, (x, r.y + 14))
        t.blit(surface, tr.t("game.title"), T.title + 4, theme.CYAN, (x, r.y + 38))
        y = r.y + 82
        for line in wrap(tr.t("title.pitch", requests=tr.num(R.GOAL_REQUESTS)), T.small, r.width - 24):
            t.blit(surface, line, T.small, theme.TEXT, (x, y))
            y += 17
        t.blit(surface, tr.t("title.allocator"), T.small, theme.PANEL_TITLE, (x, 242))
        mode = self.app.settings.mode
        for b in self.mode_buttons:
            hover = self.hover is not None and b.contains(self.hover)
            b.draw(surface, t, active=b.name == mode, hover=hover, accent=mode_accent(b.name),
                   label=mode_label(tr, b.name))
        for i, line in enumerate(wrap(mode_note(tr, mode), T.small, r.width - 24)[:2]):
            t.blit(surface, line, T.small, theme.TEXT_DIM, (x, 302 + i * 16))
        db = self.daily_button
        over = self.hover is not None and db.contains(self.hover)
        dr = pygame.Rect(db.rect)
        pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, dr, border_radius=5)
        pygame.draw.rect(surface, theme.AMBER if over else theme.PANEL_EDGE, dr, 1, border_radius=5)
        daily, day = tr.t("title.switch.daily"), self.today[5:]  # the day on offer; D plays it
        day_w = theme.font(T.small).size(day)[0]
        if theme.font_for(daily, T.body).size(daily)[0] <= dr.width - 24 - day_w:  # side by side
            t.blit(surface, daily, T.body, theme.AMBER, (dr.x + 8, dr.centery), "midleft")
            t.blit(surface, day, T.small, theme.TEXT_DIM, (dr.right - 8, dr.centery), "midright")
        else:  # the name over the day, as the chapters' button beside it ("오늘의 도전")
            head = t.blit(surface, fit(daily, T.body, dr.width - 16), T.body, theme.AMBER, (dr.x + 8, dr.y + 3))
            t.blit(surface, day, T.small, theme.TEXT_DIM, (dr.x + 8, head.bottom - 2))
        y = dr.bottom + 10
        self._draw_best_table(surface, x, y, r.right - 12)
        notice = self._notice_text()
        if notice:  # up to two lines at the bottom of the panel, under the best scores
            lines = wrap(notice, T.small, r.width - 24)[:2]
            for i, line in enumerate(lines):
                t.blit(surface, fit(line, T.small, r.width - 24), T.small, theme.AMBER,
                       (x, r.bottom - 6 - (len(lines) - i) * 16))

    def _draw_best_table(self, surface: pygame.Surface, x: int, y: int, right: int) -> None:
        """Best scores: a row per allocator, a column per goal and one for today's daily."""
        t, T, tr = self.app.text, self.app.layout.text, self.app.tr
        t.blit(surface, tr.t("title.best_scores"), T.small, theme.PANEL_TITLE, (x, y))
        names = [mode_name(tr, m) for m in modes.NAMES]
        label_w = max(theme.font_for(n, T.small).size(n)[0] for n in names) + 8
        heads = [tr.t("title.best_col.daily") if c == "daily" else
                 tr.t(f"title.best_col.{c}", requests=tr.num(R.GOAL_REQUESTS)) for c in BEST_COLUMNS]
        # Each column as wide as its heading, and the room left shared out evenly.
        least = theme.font(T.small).size("88,888")[0] + 6  # a good score in full
        widths = [max(least, theme.font_for(h, T.small).size(h)[0] + 8) for h in heads]
        spare = max(0, right - x - label_w - sum(widths)) // len(widths)
        rights = [x + label_w + sum(widths[:j + 1]) + (j + 1) * spare for j in range(len(widths))]
        for head, cx, w in zip(heads, rights, widths):
            t.blit(surface, fit(head, T.small, w + spare - 4), T.small, theme.TEXT_DIM, (cx, y + 18), "topright")
        for i, (mode, name) in enumerate(zip(modes.NAMES, names)):
            yy = y + 36 + i * 18
            t.blit(surface, name, T.small, theme.TEXT, (x, yy))
            for column, cx, w in zip(BEST_COLUMNS, rights, widths):
                value = self._best_of(mode, column)
                t.blit(surface, score_text(value, T.small, w + spare - 6), T.small, theme.AMBER, (cx, yy), "topright")

    @staticmethod
    def localised_notice(notice: Msg | str) -> Msg | str:
        """A replay link refused for its rules (engine.replay.rules_mismatch's one line) in the
        player's language; any other notice as it is."""
        if isinstance(notice, Msg) and notice.key == "title.replay_problem":
            m = OLD_RULES.fullmatch(str(dict(notice.params).get("reason", "")))
            if m:
                return Msg.of("title.replay_old_rules", old=int(m.group(1)), now=int(m.group(2)))
        return notice

    def _notice_text(self) -> str:
        """What the title must say: the LAB is missing, or how the Korean font is coming along."""
        tr = self.app.tr
        if self.notice:
            return tr.msg(self.localised_notice(self.notice))
        if self.app.wanted_language is not None:  # the browser is fetching the Korean pack
            return tr.t("common.font_loading")
        if self.app.font_problem:  # it could not: the game stays in English and says why
            return tr.t("common.font_failed", reason=self.app.font_problem)
        return ""

    def _draw_chapters(self, surface: pygame.Surface) -> None:
        """The chapters' button: how many are met, and for a new player, that this is where to start."""
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        b = self.chapters_button
        r = pygame.Rect(b.rect)
        s = self.app.settings
        done = chapters_met(s)
        fresh = done == 0
        p = pulse(self.clock_ms, 1400) if fresh else 0.0
        over = self.hover is not None and b.contains(self.hover)
        pygame.draw.rect(surface, theme.mix(theme.BUTTON_HOVER if over else theme.BUTTON, (20, 80, 50), p), r,
                         border_radius=6)
        pygame.draw.rect(surface, theme.GREEN, r, 2 if fresh else 1, border_radius=6)
        state = (tr.t("title.chapters_new") if fresh
                 else tr.t("title.chapters_state", done=done, total=len(CHAPTERS)))
        name = tr.t("title.chapters")
        if lay.portrait:
            t.blit(surface, fit(name, T.body, r.width - 8), T.body, theme.GREEN, (r.centerx, r.y + 15), "center")
            t.blit(surface, fit(state, T.small, r.width - 8), T.small, theme.TEXT, (r.centerx, r.bottom - 13), "center")
            return
        key = t.blit(surface, CHAPTERS_KEY, T.small, theme.TEXT_DIM, (r.right - 8, r.centery), "midright")
        head = t.blit(surface, fit(name, T.body, r.width - 30), T.body, theme.GREEN, (r.x + 10, r.y + 3))
        t.blit(surface, fit(state, T.small, key.x - r.x - 14), T.small, theme.TEXT, (r.x + 10, head.bottom - 2))

    def _draw_start(self, surface: pygame.Surface) -> None:
        self._draw_chapters(surface)
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        sb = pygame.Rect(self.start_button.rect)
        p = pulse(self.clock_ms, 1400)
        pygame.draw.rect(surface, theme.mix((0, 70, 90), (0, 120, 150), p), sb, border_radius=8)
        pygame.draw.rect(surface, theme.CYAN, sb, 2, border_radius=8)
        hint = tr.t("title.start_tap") if lay.portrait else tr.t("title.start_hint", key=START_KEY)
        t.blit(surface, tr.t("title.start"), T.large + 4, (255, 255, 255), (sb.centerx, sb.centery - 9), "center")
        t.blit(surface, hint, T.small, theme.TEXT, (sb.centerx, sb.centery + 13), "center")

    def _draw_right(self, surface: pygame.Surface) -> None:
        lay = self.app.layout
        t, T, tr = self.app.text, lay.text, self.app.tr
        r = self._panel(surface, lay.title["right"], theme.MAGENTA)
        x = r.x + 12
        t.blit(surface, tr.t("title.how_it_works"), T.small, theme.PANEL_TITLE, (x, r.y + 12))
        y = r.y + 36
        for name in HOW_TO:
            t.blit(surface, tr.t(f"title.how.{name}.head"), T.small, theme.MAGENTA, (x, y))
            y += 17
            for line in wrap(tr.t(f"title.how.{name}.body", split=SPLIT_KEY), T.small, r.width - 24):
                t.blit(surface, line, T.small, theme.TEXT, (x, y))
                y += 16
            y += 8
        t.blit(surface, tr.t("title.keys_1"), T.small, theme.TEXT_DIM, (x, y + 2))
        t.blit(surface, tr.t("title.keys_2", drop=key_hint('hard_drop', 1), hold=HOLD_KEY, pause=PAUSE_KEY), T.small,
               theme.TEXT_DIM, (x, y + 18))
        s = self.app.settings
        labels = {"help": tr.t("title.help"), "lab": tr.t("title.lab"),
                  "cards": tr.t("title.cards", state=tr.on_off(s.cards_enabled)),
                  "mute": tr.t("title.sound", state=tr.on_off(not s.muted)),
                  "endless": tr.t("title.goal", goal=goal_name(tr, s.goal).upper()),
                  "language": tr.t("common.language_button", name=tr.name)}
        for b in self.side_buttons:
            br = pygame.Rect(b.rect)
            over = self.hover is not None and b.contains(self.hover)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, br, border_radius=5)
            pygame.draw.rect(surface, theme.MAGENTA if over else theme.PANEL_EDGE, br, 1, border_radius=5)
            t.blit(surface, labels.get(b.name, b.label), T.body, theme.TEXT, (br.x + 12, br.centery), "midleft")
            t.blit(surface, b.hint, T.small, theme.TEXT_DIM, (br.right - 12, br.centery), "midright")
