"""Title / attract screen: the bot plays in the middle while the player picks a mode."""
from __future__ import annotations

import pygame

from engine import Game, Input, modes
from engine import rules as R
from engine.game import MODE_OF_INPUT
from ui import layout as L
from ui import theme
from ui.autopilot import AutoPilot
from ui.console_view import MODE_NOTES, ViewState, mode_accent
from ui.input import Command, InputMapper
from ui.scene import MenuScene
from ui.session import GameSession
from ui.text import wrap
from ui.widgets import Button, hit, pulse

LEFT_PANEL = (L.MARGIN, L.TOP, 270, 532)
DEMO_SLOT = (L.BOARD[0] - 4, L.CONTROLS_Y, L.BOARD[2] + 8, L.CONTROLS_H)  # under the board
_WELL = pygame.Rect(L.BOARD).inflate(10, 10)  # the board and its frame: drawn live
LAYER_AREAS = (  # the cached title layer, as rectangles around the live board
    pygame.Rect(0, 0, 800, _WELL.top),
    pygame.Rect(0, _WELL.top, _WELL.left, 580 - _WELL.top),
    pygame.Rect(_WELL.right, _WELL.top, 800 - _WELL.right, 580 - _WELL.top),
    pygame.Rect(_WELL.left, _WELL.bottom, _WELL.width, 580 - _WELL.bottom),
)
RIGHT_PANEL = (520, L.TOP, 270, 532)

PITCH = ("Falling pieces are inference requests, the board is GPU memory, "
         f"holes are fragmentation. Serve {R.VICTORY_LINES} lines without running out of VRAM.")

HOW_TO = (
    ("CONTIGUOUS", "whole ranges, plus room reserved (hatched) for the maximum length"),
    ("PAGED", "blocks on demand, wherever free; Shift/P packs pages into holes"),
    ("FULL ROW", "requests done, their blocks freed"),
)


class TitleScene(MenuScene):
    def __init__(self, app, seed: int | None = None) -> None:
        self.app = app
        self.seed = app.next_seed() if seed is None else seed
        self.mapper = InputMapper()
        self.state = ViewState(muted=app.settings.muted, header_buttons=False)
        self.clock_ms = 0.0
        self.hover: tuple[int, int] | None = None
        self._new_demo()
        x = LEFT_PANEL[0] + 10
        n = len(modes.MODES)
        w = (250 - 6 * (n - 1)) // n
        self.mode_buttons = [Button(m.name, (x + i * (w + 6), 262, w, 32), m.label)
                             for i, m in enumerate(modes.MODES)]
        self.start_button = Button("start", (x, 356, 250, 56), "START", "Enter / click")
        rx = RIGHT_PANEL[0] + 10
        self.side_buttons = [Button(name, (rx, 330 + i * 46, 250, 38), label, hint) for i, (name, label, hint) in
                             enumerate((("help", "HELP & CONCEPT MAP", "H"), ("lab", "MEMORY LAB", "L"),
                                        ("cards", "TEACHING CARDS", "T"), ("mute", "SOUND", "M"),
                                        ("endless", "RUN", "E")))]
        self.shade = pygame.Surface(theme.CANVAS_SIZE, pygame.SRCALPHA)
        self.shade.fill((0, 0, 0, 120))
        self.shade.fill((0, 0, 0, 0), pygame.Rect(L.BOARD).inflate(10, 10))
        self.notice = ""
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

    def command(self, cmd: Command) -> None:
        if cmd is Command.START:
            self.start()
        elif cmd is Command.HELP:
            from ui.overlays import HelpScene
            self.app.push(HelpScene(self.app))
        elif cmd is Command.LAB:
            self.open_lab()
        elif cmd is Command.MUTE:
            self.state.muted = self.app.toggle_mute()
        elif cmd is Command.TOGGLE_CARDS:
            self.app.toggle_cards()
        elif cmd is Command.TOGGLE_ENDLESS:
            self.app.toggle_endless()

    def press(self, pos: tuple[int, int]) -> None:
        b = hit(self.mode_buttons, pos)
        if b is not None:
            self.choose_mode(b.name)
            return
        on_demo = pygame.Rect(L.BOARD).collidepoint(pos) or pygame.Rect(DEMO_SLOT).collidepoint(pos)
        if self.start_button.contains(pos) or on_demo:
            self.start()
            return
        b = hit(self.side_buttons, pos)
        if b is not None:
            self.command({"help": Command.HELP, "lab": Command.LAB, "cards": Command.TOGGLE_CARDS,
                          "mute": Command.MUTE, "endless": Command.TOGGLE_ENDLESS}[b.name])

    def choose_mode(self, mode: str) -> None:
        if mode != self.app.settings.mode:
            self.app.set_mode(mode)
            self._new_demo()  # the demo shows the chosen allocator from its first request

    def open_lab(self) -> None:
        def missing(text: str) -> None:
            self.notice = text
        self.app.open_lab(missing)

    def start(self) -> None:
        from ui.play_scene import PlayScene
        self.app.replace(PlayScene(self.app, mode=self.app.settings.mode))

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
        for area in LAYER_AREAS:
            surface.blit(self._layer, area, area)
        self._draw_start(surface)

    def _layer_key(self) -> tuple:
        s = self.app.settings
        over = None
        if self.hover is not None:
            b = hit([*self.mode_buttons, *self.side_buttons], self.hover)
            over = b.name if b is not None else None
        return (s.mode, s.muted, s.cards_enabled, s.endless, *(self.app.best(m) for m in modes.NAMES),
                self.notice, over)

    def _render_layer(self) -> None:
        layer = self._layer
        if layer is None:
            layer = self._layer = pygame.Surface(theme.CANVAS_SIZE).convert()
        layer.blit(self.app.view.background, (0, 0))
        layer.blit(self.shade, (0, 0))
        t = self.app.text
        # The play controls are part of the console's background: hide them under the demo.
        layer.fill(theme.BG, (LEFT_PANEL[0] + LEFT_PANEL[2], L.CONTROLS_Y - 4,
                              RIGHT_PANEL[0] - LEFT_PANEL[0] - LEFT_PANEL[2], theme.CANVAS_H))
        slot = pygame.Rect(DEMO_SLOT)
        pygame.draw.rect(layer, (9, 12, 26), slot, border_radius=6)
        pygame.draw.rect(layer, theme.PANEL_EDGE, slot, 1, border_radius=6)
        t.blit(layer, "DEMO: the bot is playing", theme.SMALL, theme.TEXT_DIM,
               (slot.centerx, slot.y + 22), "center")
        t.blit(layer, "click or tap here to play", theme.SMALL, theme.CYAN,
               (slot.centerx, slot.y + 44), "center")
        self._draw_left(layer)
        self._draw_right(layer)

    def _panel(self, surface: pygame.Surface, rect: L.RectT, edge: theme.Colour) -> pygame.Rect:
        r = pygame.Rect(rect)
        pygame.draw.rect(surface, (9, 12, 26), r, border_radius=6)
        pygame.draw.rect(surface, edge, r, 2, border_radius=6)
        return r

    def _draw_left(self, surface: pygame.Surface) -> None:
        t = self.app.text
        r = self._panel(surface, LEFT_PANEL, theme.CYAN)
        x = r.x + 12
        t.blit(surface, "PagedAttention:", theme.LARGE, theme.MAGENTA, (x, r.y + 14))
        t.blit(surface, "VRAM TETRIS", theme.TITLE + 4, theme.CYAN, (x, r.y + 38))
        y = r.y + 82
        for line in wrap(PITCH, theme.SMALL, r.width - 24):
            t.blit(surface, line, theme.SMALL, theme.TEXT, (x, y))
            y += 17
        t.blit(surface, "ALLOCATOR", theme.SMALL, theme.PANEL_TITLE, (x, 242))
        mode = self.app.settings.mode
        for b in self.mode_buttons:
            hover = self.hover is not None and b.contains(self.hover)
            b.draw(surface, t, active=b.name == mode, hover=hover, accent=mode_accent(b.name))
        for i, line in enumerate(wrap(MODE_NOTES[mode], theme.SMALL, r.width - 24)[:2]):
            t.blit(surface, line, theme.SMALL, theme.TEXT_DIM, (x, 302 + i * 16))
        y = 430
        t.blit(surface, "BEST SCORES", theme.SMALL, theme.PANEL_TITLE, (x, y))
        for i, m in enumerate(modes.NAMES):
            yy = y + 22 + i * 20
            t.blit(surface, m, theme.BODY, theme.TEXT, (x, yy))
            t.blit(surface, f"{self.app.best(m):,}", theme.BODY, theme.AMBER, (r.right - 12, yy), "topright")
        if self.notice:
            t.blit(surface, self.notice, theme.SMALL, theme.AMBER, (x, r.bottom - 22))

    def _draw_start(self, surface: pygame.Surface) -> None:
        t = self.app.text
        sb = pygame.Rect(self.start_button.rect)
        p = pulse(self.clock_ms, 1400)
        pygame.draw.rect(surface, theme.mix((0, 70, 90), (0, 120, 150), p), sb, border_radius=8)
        pygame.draw.rect(surface, theme.CYAN, sb, 2, border_radius=8)
        t.blit(surface, "START", theme.LARGE + 4, (255, 255, 255), (sb.centerx, sb.y + 19), "center")
        t.blit(surface, "press Enter or click", theme.SMALL, theme.TEXT, (sb.centerx, sb.y + 41), "center")

    def _draw_right(self, surface: pygame.Surface) -> None:
        t = self.app.text
        r = self._panel(surface, RIGHT_PANEL, theme.MAGENTA)
        x = r.x + 12
        t.blit(surface, "HOW IT WORKS", theme.SMALL, theme.PANEL_TITLE, (x, r.y + 12))
        y = r.y + 36
        for head, body in HOW_TO:
            t.blit(surface, head, theme.SMALL, theme.MAGENTA, (x, y))
            y += 17
            for line in wrap(body, theme.SMALL, r.width - 24):
                t.blit(surface, line, theme.SMALL, theme.TEXT, (x, y))
                y += 16
            y += 8
        t.blit(surface, "Arrows/WASD move, Up/Z rotate,", theme.SMALL, theme.TEXT_DIM, (x, y + 2))
        t.blit(surface, "Space drops, C holds, Esc pauses.", theme.SMALL, theme.TEXT_DIM, (x, y + 18))
        s = self.app.settings
        labels = {"cards": f"CARDS: {'ON' if s.cards_enabled else 'OFF'}",
                  "mute": f"SOUND: {'OFF' if s.muted else 'ON'}",
                  "endless": f"RUN: {'ENDLESS' if s.endless else '40 LINES'}"}
        for b in self.side_buttons:
            br = pygame.Rect(b.rect)
            over = self.hover is not None and b.contains(self.hover)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, br, border_radius=5)
            pygame.draw.rect(surface, theme.MAGENTA if over else theme.PANEL_EDGE, br, 1, border_radius=5)
            t.blit(surface, labels.get(b.name, b.label), theme.BODY, theme.TEXT, (br.x + 12, br.centery), "midleft")
            t.blit(surface, b.hint, theme.SMALL, theme.TEXT_DIM, (br.right - 12, br.centery), "midright")
