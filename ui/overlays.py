"""Screens drawn over the game: pause, help with the concept map, and the run report."""
from __future__ import annotations

import pygame

from engine import RunReport, modes
from engine import rules as R
from ui import layout as L
from ui import theme
from ui.help_content import CONCEPTS, CONTROLS
from ui.input import Command, InputMapper
from ui.scene import MenuScene
from ui.text import wrap
from ui.widgets import Button, hit, pulse


def shade_surface(alpha: int) -> pygame.Surface:
    s = pygame.Surface(theme.CANVAS_SIZE, pygame.SRCALPHA)
    s.fill((0, 0, 0, alpha))
    return s


def column_buttons(specs: list[tuple[str, str, str]], top: int, width: int = 300,
                   height: int = 38, gap: int = 9) -> list[Button]:
    """A centred column of buttons under `top`."""
    x = (theme.CANVAS_W - width) // 2
    return [Button(name, (x, top + i * (height + gap), width, height), label, hint)
            for i, (name, label, hint) in enumerate(specs)]


def draw_dialog(surface: pygame.Surface, rect: L.RectT, edge: theme.Colour) -> pygame.Rect:
    r = pygame.Rect(rect)
    pygame.draw.rect(surface, (9, 12, 26), r, border_radius=8)
    pygame.draw.rect(surface, edge, r, 2, border_radius=8)
    return r


def draw_row_button(surface: pygame.Surface, app, b: Button, hover: tuple[int, int] | None,
                    label: str | None = None, accent: theme.Colour = theme.CYAN) -> None:
    """A wide button: label on the left, key hint on the right."""
    r = pygame.Rect(b.rect)
    over = hover is not None and b.contains(hover)
    pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=5)
    pygame.draw.rect(surface, accent if over else theme.PANEL_EDGE, r, 1, border_radius=5)
    app.text.blit(surface, label or b.label, theme.BODY, theme.TEXT, (r.x + 14, r.centery), "midleft")
    if b.hint:
        app.text.blit(surface, b.hint, theme.SMALL, theme.TEXT_DIM, (r.right - 12, r.centery), "midright")


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

    def refresh_backdrop(self) -> None:
        """Take a new snapshot of the screen below on the next draw."""
        self._backdrop = None

    def draw_backdrop(self, surface: pygame.Surface) -> None:
        if self._backdrop is None:
            snap = pygame.Surface(theme.CANVAS_SIZE).convert()
            self.app.draw_below(self, snap)
            self._plain = snap.copy()
            snap.blit(shade_surface(self.shade_alpha), (0, 0))
            self._backdrop = snap
        surface.blit(self._backdrop, (0, 0))

    def draw_plain_backdrop(self, surface: pygame.Surface) -> None:
        """The screen below without the shade (after draw_backdrop has made the snapshot)."""
        if self._backdrop is None or self._plain is None:
            self.draw_backdrop(surface)
        surface.blit(self._plain, (0, 0))

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


def go_title(app) -> None:
    from ui.title_scene import TitleScene
    app.reset(TitleScene(app))


class PauseScene(Overlay):
    """Esc or focus loss: everything stops until the player comes back."""

    shade_alpha = 165

    def __init__(self, app, play) -> None:
        super().__init__(app)
        self.play = play
        self.buttons = column_buttons([
            ("resume", "RESUME", "Esc"),
            ("restart", "RESTART", "Enter"),
            ("help", "HELP", "H"),
            ("mute", "SOUND", "M"),
            ("cards", "TEACHING CARDS", "T"),
            ("title", "QUIT TO TITLE", "Q"),
        ], top=L.DIALOG[1] + 96)

    def command(self, cmd: Command) -> None:
        {
            Command.PAUSE: lambda: self.click("resume"),
            Command.START: lambda: self.click("restart"),
            Command.HELP: lambda: self.click("help"),
            Command.MUTE: lambda: self.click("mute"),
            Command.TOGGLE_CARDS: lambda: self.click("cards"),
            Command.QUIT: lambda: self.click("title"),
            Command.LAB: lambda: self.app.open_lab(),
        }.get(cmd, lambda: None)()

    def click(self, name: str) -> None:
        app = self.app
        if name == "resume":
            app.pop()
        elif name == "restart":
            self.play.restart()
        elif name == "help":
            app.push(HelpScene(app))
        elif name == "mute":
            self.play.state.muted = app.toggle_mute()
            self.refresh_backdrop()  # the header's sound switch shows through
        elif name == "cards":
            app.toggle_cards()
        elif name == "title":
            go_title(app)

    def draw(self, surface: pygame.Surface) -> None:
        self.draw_backdrop(surface)
        r = draw_dialog(surface, L.DIALOG, theme.CYAN)
        t = self.app.text
        t.blit(surface, "PAUSED", theme.TITLE, theme.CYAN, (r.centerx, r.y + 36), "center")
        t.blit(surface, "The scheduler is idle: no request falls while paused.", theme.SMALL,
               theme.TEXT_DIM, (r.centerx, r.y + 70), "center")
        s = self.app.settings
        labels = {"mute": f"SOUND: {'OFF' if s.muted else 'ON'}",
                  "cards": f"TEACHING CARDS: {'ON' if s.cards_enabled else 'OFF'}"}
        for b in self.buttons:
            draw_row_button(surface, self.app, b, self.hover, labels.get(b.name))


HELP_BG = (3, 4, 10)


class HelpScene(Overlay):
    """Controls, and what every mechanic stands for in a real serving engine."""

    opaque = True  # a full page: nothing of the game below shows through the text

    def __init__(self, app) -> None:
        super().__init__(app)
        self.buttons = [Button("close", (theme.CANVAS_W - 130, 10, 116, 30), "CLOSE  Esc")]
        self._page: pygame.Surface | None = None

    def command(self, cmd: Command) -> None:
        if cmd in (Command.PAUSE, Command.HELP, Command.START, Command.QUIT):
            self.app.pop()
        elif cmd is Command.MUTE:
            self.app.toggle_mute()

    def click(self, name: str) -> None:
        self.app.pop()

    def click_outside(self, pos: tuple[int, int]) -> None:
        self.app.pop()

    def _render(self) -> pygame.Surface:
        t = self.app.text
        page = pygame.Surface(theme.CANVAS_SIZE, pygame.SRCALPHA)
        t.blit(page, "HOW TO PLAY", theme.LARGE, theme.CYAN, (20, 16))
        t.blit(page, "and what it means on a GPU", theme.SMALL, theme.TEXT_DIM, (166, 20))
        # Controls column.
        x, y = 20, 54
        t.blit(page, "CONTROLS", theme.SMALL, theme.PANEL_TITLE, (x, y))
        y += 22
        for keys, action in CONTROLS:
            t.blit(page, keys, theme.SMALL, theme.AMBER, (x, y))
            y += 16
            for line in wrap(action, theme.SMALL, 220):
                t.blit(page, line, theme.SMALL, theme.TEXT, (x + 12, y))
                y += 16
            y += 4
        # Concept map.
        cx, cy = 280, 54
        t.blit(page, "CONCEPT MAP", theme.SMALL, theme.PANEL_TITLE, (cx, cy))
        t.blit(page, "in the game", theme.SMALL, theme.TEXT_DIM, (cx, cy + 20))
        t.blit(page, "in a serving engine (vLLM, TensorRT-LLM, TGI)", theme.SMALL, theme.TEXT_DIM,
               (cx + 150, cy + 20))
        cy += 44
        for mechanic, meaning in CONCEPTS:
            pygame.draw.line(page, theme.PANEL_EDGE, (cx, cy - 4), (theme.CANVAS_W - 20, cy - 4))
            t.blit(page, mechanic, theme.SMALL, theme.MAGENTA, (cx, cy))
            lines = wrap(meaning, theme.SMALL, theme.CANVAS_W - 20 - (cx + 150))
            for i, line in enumerate(lines):
                t.blit(page, line, theme.SMALL, theme.TEXT, (cx + 150, cy + i * 16))
            cy += max(1, len(lines)) * 16 + 10
        foot = (f"Goal: {R.VICTORY_LINES} lines without an OOM. Switching allocator after the "
                "first request makes a MIXED run: no best score.")
        for i, line in enumerate(wrap(foot, theme.SMALL, theme.CANVAS_W - 300)):
            t.blit(page, line, theme.SMALL, theme.GREEN, (cx, max(cy + 6, 500) + i * 16))
        return page

    def draw(self, surface: pygame.Surface) -> None:
        surface.fill(HELP_BG)
        if self._page is None:
            self._page = self._render()
        surface.blit(self._page, (0, 0))
        for b in self.buttons:
            draw_row_button(surface, self.app, b, self.hover)


KEY_GRACE_MS = 500.0  # keys pressed this soon after the crash were meant for the game
SEALED_COLOUR = theme.RED
RESERVED_COLOUR = theme.AMBER


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
        self.oom = report.outcome == "oom"
        self.peeking = False  # the report put aside to look at the board it describes
        x, y, w, h = L.DIALOG
        bw = (w - 32 - 2 * 8) // 3
        self.report_buttons = [
            Button(name, (x + 16 + i * (bw + 8), y + h - 54, bw, 38), label, hint)
            for i, (name, label, hint) in enumerate((("restart", "RESTART", "Enter"),
                                                     ("board", "BOARD", "B"),
                                                     ("title", "TITLE", "Esc")))]
        self.buttons = self.report_buttons
        # Wrapped once: the report's own lines may be long (big numbers, a long cause).
        width = L.DIALOG[2] - 40
        lines = report.lines_of_text()
        self.heading = lines[0]
        self.cause = wrap(lines[1], theme.SMALL, width)[:3]
        self.body = [part for line in lines[2:] for part in wrap(line, theme.SMALL, width - 12)]
        self.tips = wrap(self.tip(), theme.SMALL, width)[:3]

    def command(self, cmd: Command) -> None:
        if cmd is Command.START:
            self.click("restart")
        elif cmd in (Command.PAUSE, Command.QUIT):
            self.click("title")
        elif cmd is Command.HELP:
            self.app.push(HelpScene(self.app))
        elif cmd is Command.MUTE:
            self.play.state.muted = self.app.toggle_mute()
            self.refresh_backdrop()

    def handle(self, event: pygame.event.Event) -> None:
        if event.type in (pygame.KEYDOWN, pygame.KEYUP) and self.since_end_ms + self.clock_ms < KEY_GRACE_MS:
            return  # a drop or turn pressed just after the crash must not act on the report
        if event.type == pygame.KEYDOWN and event.key == pygame.K_b:
            self.click("board")
            return
        super().handle(event)

    def click(self, name: str) -> None:
        if name == "restart":
            self.play.restart()
        elif name == "title":
            go_title(self.app)
        elif name == "board":
            self.peeking = not self.peeking
            self.buttons = [] if self.peeking else self.report_buttons

    def click_outside(self, pos: tuple[int, int]) -> None:
        if self.peeking:
            self.click("board")  # any tap brings the report back

    def tip(self) -> str:
        """What to take away, matching the cause the engine found."""
        r = self.report
        if not self.oom:
            return (f"{R.VICTORY_LINES} lines served at a peak of {r.peak_utilisation * 100:.0f} % "
                    "VRAM. Try the other allocator and compare.")
        if r.cause_code == "memory_full":
            return ("Memory really was full: fewer free blocks than the request needs. With "
                    "paging on demand that is the only way a run ends.")
        if r.cause_code == "no_free_range":
            return ("The free memory was in holes and gaps too small for one unbroken range: "
                    "external fragmentation. PAGED mode would have paged the request into them.")
        if r.cause_code == "spawn_blocked":
            return ("The game admits requests only at the top, and reservations and holes had "
                    "raised the stack. In PAGED mode the request is paged into free blocks.")
        return ("Reservations and holes pushed the stack to the ceiling. In PAGED mode a request "
                "that would lock above VRAM is paged into free blocks.")

    def draw(self, surface: pygame.Surface) -> None:
        edge = theme.RED if self.oom else theme.GREEN
        if self.peeking:
            self.draw_plain_backdrop(surface)
            from ui.console_view import outline_cells
            r = self.report
            outline_cells(surface, r.sealed_cells, SEALED_COLOUR)
            outline_cells(surface, r.reserved_cells, RESERVED_COLOUR)
            bar = pygame.Rect(L.BOARD[0] - 4, L.CONTROLS_Y, L.BOARD[2] + 8, L.CONTROLS_H)
            pygame.draw.rect(surface, (9, 12, 26), bar, border_radius=6)
            pygame.draw.rect(surface, edge, bar, 2, border_radius=6)
            t = self.app.text
            t.blit(surface, f"red: {len(r.sealed_cells)} sealed free", theme.SMALL, SEALED_COLOUR,
                   (bar.centerx, bar.y + 16), "center")
            t.blit(surface, f"amber: {len(r.reserved_cells)} reserved, empty", theme.SMALL,
                   RESERVED_COLOUR, (bar.centerx, bar.y + 36), "center")
            t.blit(surface, "B or tap: back to the report", theme.SMALL, theme.CYAN,
                   (bar.centerx, bar.y + 56), "center")
            return
        self.draw_backdrop(surface)
        r = draw_dialog(surface, L.DIALOG, edge)
        t = self.app.text
        t.blit(surface, self.heading, theme.TITLE, edge, (r.centerx, r.y + 30), "center")
        y = r.y + 56
        for line in self.cause:
            t.blit(surface, line, theme.SMALL, theme.AMBER if self.oom else theme.TEXT, (r.centerx, y), "midtop")
            y += 16
        y += 6
        box = pygame.Rect(r.x + 16, y, r.width - 32, 16 * len(self.body) + 12)
        pygame.draw.rect(surface, (4, 6, 14), box, border_radius=4)
        pygame.draw.rect(surface, theme.PANEL_EDGE, box, 1, border_radius=4)
        yy = box.y + 6
        for line in self.body:
            t.blit(surface, line, theme.SMALL, theme.TEXT, (box.x + 10, yy))
            yy += 16
        y = box.bottom + 10
        score = f"SCORE {self.report.score:,}"
        sr = t.blit(surface, score, theme.LARGE, theme.TEXT, (r.centerx, y), "midtop")
        if self.new_best:
            p = round(pulse(self.clock_ms, 700) * 6) / 6  # few distinct colours: cached text
            t.blit(surface, "NEW BEST", theme.BODY, theme.mix(theme.AMBER, (255, 255, 255), p),
                   (sr.right + 12, sr.centery), "midleft")
        y = sr.bottom + 6
        room = (self.report_buttons[0].rect[1] - 6 - y) // 16  # the tip gives way to a long report
        for line in self.tips if len(self.tips) <= room else ():
            t.blit(surface, line, theme.SMALL, theme.CYAN, (r.centerx, y), "midtop")
            y += 16
        if y + 10 + 16 <= self.report_buttons[0].rect[1] - 6:  # the two allocators side by side
            best = self.app.settings.best_scores
            line = "best scores:  " + "   ".join(f"{m} {best.get(m, 0):,}" for m in modes.NAMES)
            if self.report.mixed:
                line = "mixed run: no best score.  " + line
            t.blit(surface, line, theme.SMALL, theme.TEXT_DIM, (r.centerx, y + 10), "midtop")
        for b in self.report_buttons:
            draw_row_button(surface, self.app, b, self.hover, accent=edge)
