"""The game being played: keyboard, mouse and touch in; the console out."""
from __future__ import annotations

import pygame

from engine import Game, Input
from ui.autopilot import AutoPilot
from ui.cards import CardDeck
from ui.console_view import ViewState
from ui.gestures import BoardGesture
from ui.input import Command, InputMapper
from ui.layout import BOARD
from ui.scene import Scene
from ui.session import GameSession
from ui.widgets import hit

END_DELAY_MS = 900.0  # let the crash shake / last clear play before the report opens

FOCUS_LOST_EVENTS = frozenset(
    getattr(pygame, name) for name in ("WINDOWFOCUSLOST", "WINDOWHIDDEN", "WINDOWMINIMIZED")
    if hasattr(pygame, name)
)


def is_focus_loss(event: pygame.event.Event) -> bool:
    """Window or tab lost focus (keyboard focus or visibility, not the mouse leaving)."""
    if event.type in FOCUS_LOST_EVENTS:
        return True
    if event.type == pygame.ACTIVEEVENT:
        return getattr(event, "gain", 1) == 0 and bool(getattr(event, "state", 0) & (pygame.APPINPUTFOCUS | pygame.APPACTIVE))
    return False


class PlayScene(Scene):
    """One run of the game, with the full console around the board."""

    def __init__(self, app, mode: str | None = None, seed: int | None = None,
                 autoplay: bool = False, endless: bool | None = None) -> None:
        self.app = app
        settings = app.settings
        self.seed = app.next_seed() if seed is None else seed
        self.game = Game(seed=self.seed, mode=mode or settings.mode,
                         endless=settings.endless if endless is None else endless)
        self.cards = CardDeck(enabled=lambda: app.settings.cards_enabled,
                              seen=lambda: app.settings.seen_cards,
                              mark_seen=app.mark_card_seen)
        self.session = GameSession(self.game, sound=app.sound, cards=self.cards)
        app.flush_notices(self.session.log)
        self.mapper = InputMapper()
        self.state = ViewState(muted=settings.muted, best=app.best(self.game.mode))
        self.autopilot = AutoPilot(skill=0.85, seed=self.seed) if autoplay else None
        self.queued: list[Input] = []
        self.pointer_control: str | None = None
        self.gesture: BoardGesture | None = None
        self.end_timer: float | None = None
        self.ended = False
        self.new_best = False

    # ------------------------------------------------------------------ events
    def leave(self) -> None:
        self.mapper.reset()
        self._release_pointer()

    def enter(self) -> None:
        self.mapper.reset()
        self.state.muted = self.app.settings.muted

    def handle(self, event: pygame.event.Event) -> None:
        if is_focus_loss(event):
            self.pause()
            return
        for cmd in self.mapper.handle(event):
            self.command(cmd)
            if self.app.top is not self:
                return
        t = event.type
        if t == pygame.MOUSEMOTION:
            self.state.hover = event.pos
            if self.gesture is not None:
                self.queued.extend(self.gesture.move(event.pos))
        elif t == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.pointer_down(event.pos)
        elif t == pygame.MOUSEBUTTONUP and event.button == 1:
            self.pointer_up(event.pos)

    def command(self, cmd: Command) -> None:
        app = self.app
        if cmd is Command.PAUSE:
            self.pause()
        elif cmd is Command.HELP:
            from ui.overlays import HelpScene
            app.push(HelpScene(app))
        elif cmd is Command.MUTE:
            self.state.muted = app.toggle_mute()
        elif cmd is Command.TOGGLE_CARDS:
            on = app.toggle_cards()
            self.session.log.add(self.game.time_ms, "INFO", f"[UI] teaching cards {'on' if on else 'off'}")
        elif cmd is Command.LAB:
            app.open_lab(self._log_notice)
        elif cmd is Command.START and self.game.over:
            self.restart()
        elif cmd is Command.QUIT:
            from ui.title_scene import TitleScene
            app.reset(TitleScene(app))

    def _log_notice(self, text: str) -> None:
        self.session.log.add(self.game.time_ms, "WARN", f"[UI] {text}")

    def pointer_down(self, pos: tuple[int, int]) -> None:
        view = self.app.view
        b = hit(view.header, pos)
        if b is not None:
            if b.name == "help":
                self.command(Command.HELP)
            elif b.name == "mute":
                self.command(Command.MUTE)
            elif b.name == "pause":
                self.pause()
            return
        b = hit(view.modes, pos)
        if b is not None:
            self.set_mode(b.name)
            return
        b = hit(view.controls, pos)
        if b is not None:
            self._release_pointer()
            self.pointer_control = b.name
            self.state.pressed.add(b.name)
            self.mapper.press(b.name)
            return
        if self.cards.contains(pos):
            self.cards.dismiss()
            return
        if pygame.Rect(BOARD).collidepoint(pos):
            self.gesture = BoardGesture(pos, self.state.clock_ms)

    def pointer_up(self, pos: tuple[int, int]) -> None:
        if self.gesture is not None:
            self.queued.extend(self.gesture.end(pos, self.state.clock_ms))
            self.gesture = None
        self._release_pointer()

    def _release_pointer(self) -> None:
        if self.pointer_control is not None:
            self.mapper.release(self.pointer_control)
            self.state.pressed.discard(self.pointer_control)
            self.pointer_control = None
        self.gesture = None

    def set_mode(self, mode: str) -> None:
        self.session.act(self.game.set_mode(mode))
        self.app.set_mode(self.game.mode)
        self.state.best = self.app.best(self.game.mode)

    def pause(self) -> None:
        if self.game.over or self.app.top is not self:
            return
        from ui.overlays import PauseScene
        self.app.push(PauseScene(self.app, self))

    def restart(self) -> None:
        self.app.reset(PlayScene(self.app, mode=self.game.mode))

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        self.state.clock_ms += dt_ms
        inputs = self.mapper.update(dt_ms)
        if self.queued:
            inputs = [*inputs, *self.queued]
            self.queued.clear()
        if self.autopilot is not None:
            inputs = [*inputs, *self.autopilot.inputs(self.game)]
        self.session.step(dt_ms, inputs)
        if self.game.mode != self.app.settings.mode:
            self.app.set_mode(self.game.mode)
            self.state.best = self.app.best(self.game.mode)
        if self.game.over and not self.ended:
            self.ended = True
            result = self.game.result
            if result is not None:
                self.new_best = self.app.record_result(result.mode, result.score)
            self.state.best = self.app.best(self.game.mode)
            self.end_timer = 0.0
            self.mapper.reset()
        if self.end_timer is not None:
            self.end_timer += dt_ms
            if self.end_timer >= END_DELAY_MS:
                self.end_timer = None
                self.show_result()

    def show_result(self) -> None:
        from ui.overlays import ResultScene
        result = self.game.result
        if result is not None:
            self.app.push(ResultScene(self.app, self, result, self.new_best))

    def draw(self, surface: pygame.Surface) -> None:
        self.app.view.draw(surface, self.session, self.state)
