"""The game being played: keyboard, mouse and touch in; the console out."""
from __future__ import annotations

from dataclasses import replace

import pygame

from datetime import date

from engine import Game, Input, modes
from engine import rules as R
from engine import sharecode
from engine.chapters import chapter as chapter_of
from engine.daily import daily_seed
from engine.outro import Moment
from engine.game import MODE_OF_INPUT
from engine.replay import Replay, Tape
from ui import theme
from ui.autopilot import AutoPilot
from ui.cards import CLICK_HINT, TAP_HINT, CardDeck
from ui.console_view import ViewState
from ui.i18n import Msg
from ui.input import TUNING, Command, GestureReader, InputMapper, finger_position
from ui.scene import Scene
from ui.session import GameSession
from ui.text import wrap
from ui.widgets import hit

MODE_SWITCHES = frozenset((*MODE_OF_INPUT, Input.MODE_TOGGLE))
END_DELAY_MS = 900.0  # let the crash shake / last fade play before the report opens

FOCUS_LOST_EVENTS = frozenset(
    getattr(pygame, name) for name in ("WINDOWFOCUSLOST", "WINDOWHIDDEN", "WINDOWMINIMIZED")
    if hasattr(pygame, name)
)
FINGER_EVENTS = frozenset((pygame.FINGERDOWN, pygame.FINGERUP, pygame.FINGERMOTION))


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
                 autoplay: bool = False, endless: bool | None = None, daily: date | None = None,
                 chapter: int | None = None) -> None:
        self.app = app
        settings = app.settings
        self.daily = daily  # the daily challenge's UTC date: its seed, and never an endless run
        if daily is not None:
            seed, endless = daily_seed(daily), False
        # A chapter's run (engine.chapters): its rules, load and goal. Chapter 2 replays the
        # arrivals of the player's last chapter-1 run (its seed) and reads itself at the moment
        # that run ended.
        self.chapter = chapter
        self.pair = app.chapter_pair() if chapter is not None and chapter_of(chapter).arrivals_of else None
        if self.pair is not None and seed is None:
            seed = self.pair.seed
        self.moment = Moment(self.pair.end_ms) if self.pair is not None else None
        self.goal_told = False  # a chapter whose run plays on past its goal says once it is met
        self.seed = app.next_seed() if seed is None else seed
        if chapter is not None:
            self.game = chapter_of(chapter).new_game(self.seed)
        else:
            self.game = Game(seed=self.seed, mode=mode or settings.mode,
                             endless=settings.endless if endless is None else endless)
        # Every run is written down as it is played (a few bytes per input) for its share code.
        self.tape = Tape(self.game, daily=daily.isoformat() if daily is not None else None, chapter=chapter)
        self.share_code: str | None = None
        self.replay: Replay | None = None
        self.cards = CardDeck(enabled=lambda: app.settings.cards_enabled,
                              seen=lambda: app.settings.seen_cards,
                              mark_seen=app.mark_card_seen, tr=lambda: app.tr)
        self.cards.queue_max = self.game.queue_max
        self._style_cards()
        self.session = GameSession(self.game, sound=app.sound, cards=self.cards, tape=self.tape, tr=lambda: app.tr,
                                   moment=self.moment)
        app.flush_notices(self.session.log, 0.0)
        self.mapper = InputMapper()
        self.state = ViewState(muted=settings.muted, best=self._best(), mode_locked=chapter is not None)
        self.autopilot = AutoPilot(skill=0.85, seed=self.seed) if autoplay else None
        self.queued: list[Input] = []
        # Which on-screen control each pointer (mouse or finger) holds down.
        self.held_controls: dict[object, str] = {}
        self.fingers_seen = False
        self.gestures = self._gesture_reader()
        self.end_timer: float | None = None
        self.ended = False
        self.new_best = False

    def _gesture_reader(self) -> GestureReader:
        lay = self.app.layout
        return GestureReader(lay.size, region=lay.board, accept_mouse=True,
                             tuning=replace(TUNING, cell_px=float(lay.cell)))

    def _style_cards(self) -> None:
        lay = self.app.layout
        self.cards.restyle(lay.card, (lay.text.small, lay.text.body), TAP_HINT if lay.portrait else CLICK_HINT)

    def relayout(self) -> None:
        self._release_pointer()
        self.gestures = self._gesture_reader()
        self._style_cards()

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
        if t in FINGER_EVENTS:
            self.fingers_seen = True
            self.finger(event)
        elif t in (pygame.MOUSEMOTION, pygame.MOUSEBUTTONDOWN, pygame.MOUSEBUTTONUP):
            if t == pygame.MOUSEMOTION:
                self.state.hover = event.pos
            if t == pygame.MOUSEBUTTONDOWN and event.button == 1:
                # A touch also arrives as a mouse copy: its finger already holds the controls.
                touch = bool(getattr(event, "touch", False))
                copy = touch and self.fingers_seen
                self.pointer_down(event.pos, "mouse", controls=not copy)
                if not touch and self.pick(event.pos):
                    return  # a click on a running request's block shows its table; it turns nothing
            elif t == pygame.MOUSEBUTTONUP and event.button == 1:
                self.pointer_up("mouse")
        if self.app.top is self:
            self.queued.extend(self.gestures.handle(event))

    def finger(self, event: pygame.event.Event) -> None:
        """Touch: every finger can hold its own control (move while rotating, say)."""
        pid = ("finger", getattr(event, "touch_id", 0), event.finger_id)
        if event.type == pygame.FINGERDOWN:
            found = finger_position(event, self.app.layout.size)
            if found is None:
                return
            pos = (int(found[0]), int(found[1]))
            b = hit(self.app.view.controls, pos)
            if b is not None:
                self._hold_control(pid, b.name)
        elif event.type == pygame.FINGERUP:
            self.pointer_up(pid)

    def command(self, cmd: Command) -> None:
        app = self.app
        if cmd is Command.PAUSE:
            self.pause()
        elif cmd is Command.HELP:
            # Help is read with the game paused, and closing it leaves the game paused.
            self.pause()
            app.show_help()
        elif cmd is Command.MUTE:
            self.state.muted = app.toggle_mute()
        elif cmd is Command.TOGGLE_CARDS:
            on = app.toggle_cards()
            self.session.log.add(self.game.time_ms, "INFO",
                                 Msg.of("log.cards", state=Msg.of("common.on" if on else "common.off")))
        elif cmd is Command.LAB:
            self.pause()  # back from the lab, the game waits for the player
            paused = app.top is not self
            if not app.open_lab(self._log_notice) and paused:
                app.pop()  # no lab in this build: play on, the log says why
        elif self.ended:
            return  # the crash is on screen: keys wait for the report (no restart by a late drop)
        elif cmd is Command.PICK_NEXT:
            self.pick_next()
        elif cmd is Command.QUIT:
            # Q sits next to W and A: mid-run it only pauses, and Q in the pause menu leaves.
            if self.game.over:
                app.show_title()
            else:
                self.pause()

    def _log_notice(self, text: Msg | str) -> None:
        self.session.log.add(self.game.time_ms, "WARN", Msg.of("log.ui", text=text))

    def pointer_down(self, pos: tuple[int, int], pointer: object = "mouse", controls: bool = True) -> None:
        """Mouse (or a touch's mouse copy): header, mode and card buttons, and the controls."""
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
            self.set_mode(modes.following(self.game.mode) if b.name == "toggle" else b.name)
            return
        if view.preempt.contains(pos):
            self.toggle_preempt()
            return
        turn = view.step_button_at(self.game, pos)
        if turn:  # the step's token budget, a notch down or up: queued like a key press
            self.queued.append(Input.BUDGET_UP if turn > 0 else Input.BUDGET_DOWN)
            return
        place = view.queue_pick_at(self.game, pos)
        if place is not None:  # a waiting request picked to run next: queued like a key press
            self.queued.append((Input.PICK_1, Input.PICK_2, Input.PICK_3)[place])
            return
        if view.details_button is not None and view.details_button.contains(pos):
            self.show_details()
            return
        b = hit(view.controls, pos)
        if b is not None:
            if controls:
                self._hold_control(pointer, b.name)
            return
        if self.cards.contains(pos):
            self.cards.dismiss()
        elif "strip" in view.L.panels and pygame.Rect(view.L.panels["strip"]).collidepoint(pos):
            self.show_details()  # the log's newest lines: a tap opens all of it

    def show_details(self) -> None:
        """Log, block table and every statistic, on a phone's sheet over the paused game."""
        if self.game.over or self.app.top is not self:
            return
        self.app.show_details(self)

    def _hold_control(self, pointer: object, name: str) -> None:
        self.pointer_up(pointer)
        self.held_controls[pointer] = name
        self.state.pressed.add(name)
        self.mapper.press(name)

    def pointer_up(self, pointer: object = "mouse") -> None:
        name = self.held_controls.pop(pointer, None)
        if name is not None:
            self.mapper.release(name)
            if name not in self.held_controls.values():
                self.state.pressed.discard(name)

    def _release_pointer(self) -> None:
        for pointer in list(self.held_controls):
            self.pointer_up(pointer)
        self.gestures.reset()

    def set_mode(self, mode: str) -> None:
        if self.chapter is not None:
            return  # a chapter sets the allocator
        # A zero-length step, so the switch is part of the run's replay like a key press.
        self.session.step(0.0, [next(i for i, m in MODE_OF_INPUT.items() if m == mode)])
        self.app.set_mode(self.game.mode)
        self.state.best = self.app.best(self.game.mode, self.game.goal)

    def set_budget(self, turn: int) -> None:
        """The step's token budget a notch up (turn > 0) or down, at once: a zero-length step, so
        the replay has it (a phone sets it on the paused DETAILS sheet)."""
        if not self.game.over:
            self.session.step(0.0, [Input.BUDGET_UP if turn > 0 else Input.BUDGET_DOWN])

    def set_spec(self, turn: int) -> None:
        """Speculative decoding: one draft token a step more (turn > 0) or fewer, at once (a
        zero-length step the replay has; a phone sets it on the DETAILS sheet)."""
        if not self.game.over:
            self.session.step(0.0, [Input.SPEC_UP if turn > 0 else Input.SPEC_DOWN])

    def toggle_preempt(self) -> None:
        """Swap <-> recompute: queued like a key press, so the replay has it."""
        if not self.game.over:
            self.queued.append(Input.PREEMPT_TOGGLE)

    def pick_next(self) -> None:
        """N: the waiting request after the one picked (wrapping over the first few) runs next,
        the first press marking the front one, which runs next anyway, so the outline walks down
        the rows from where the eye is; queued like a key press, so the replay has it. Nothing
        without features.pick."""
        game = self.game
        ids = [r.id for r in list(game.serving.waiting)[:R.NEXT_QUEUE]]
        if not game.features.pick or not ids or game.over:
            return
        place = (ids.index(game.picked) + 1) % len(ids) if game.picked in ids else 0
        self.queued.append((Input.PICK_1, Input.PICK_2, Input.PICK_3)[place])

    def pick(self, pos: tuple[int, int]) -> bool:
        """A mouse click on the board: the block table of the request holding that block (True),
        or, on a free block, back to the last admitted one (False: the click rotates as before).
        Only the session's choice changes; the engine is only read."""
        lay = self.app.layout
        if lay.portrait:  # a phone's tap rotates; its block table is in DETAILS
            return False
        at = lay.board_cell_at(pos)
        if at is None:
            return False
        return self.session.pick((at[0], at[1] + R.HIDDEN)) is not None

    def pause(self) -> None:
        if self.game.over or self.app.top is not self:
            return
        self.app.pause(self)

    def _best(self) -> int:
        """The score this run is measured against: its chapter's best, or its allocator's and goal's."""
        if self.chapter is not None:
            return self.app.settings.chapter_scores.get(str(self.chapter), 0)
        return self.app.best(self.game.mode, self.game.goal)

    def restart(self) -> None:
        if self.chapter is not None:
            self.app.start_chapter(self.chapter)
            return
        self.app.start_game(self.game.mode, daily=self.daily)

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        self.state.clock_ms += dt_ms
        if self.app.notices:  # audio or storage trouble found while this game runs
            self.app.flush_notices(self.session.log, self.game.time_ms)
        inputs = self.mapper.update(dt_ms)
        gestured = self.gestures.update(dt_ms)
        if gestured:
            self.queued.extend(gestured)
        if self.queued:
            inputs = [*inputs, *self.queued]
            self.queued.clear()
        if self.autopilot is not None:
            inputs = [*inputs, *self.autopilot.inputs(self.game)]
        if self.chapter is not None:  # a chapter sets the allocator: no switching it mid-run
            inputs = [i for i in inputs if i not in MODE_SWITCHES]
        # In a chapter no deadline runs out while a teaching card is read: the run waits for it.
        reading = self.chapter is not None and self.cards.current is not None
        self.session.step(0.0 if reading else dt_ms, inputs)
        if reading:  # the card itself goes on: it fades in, is read, and goes (or is tapped away)
            self.cards.update(dt_ms)
        if self.chapter is not None and not self.goal_told:
            ch = chapter_of(self.chapter)
            if ch.plays_on and ch.goal is not None and self.game.served >= ch.goal:
                self.goal_told = True
                self.session.toast(self.app.tr.t("chapter.goal_met"), theme.GREEN, 4000.0)
        if self.chapter is None and self.game.mode != self.app.settings.mode:
            self.app.set_mode(self.game.mode)
            self.state.best = self.app.best(self.game.mode, self.game.goal)
        if self.game.over and not self.ended:
            self.ended = True
            result = self.game.result
            self.finish_replay()
            if self.chapter is not None:
                self.new_best = self.app.record_chapter_run(self.chapter, self.game)
            elif result is not None:  # a mixed run counts as a game but as no mode's record
                self.new_best = self.app.record_run(result, daily=self.daily)
            self.state.best = self._best()
            self.end_timer = 0.0
            self.mapper.reset()
        if self.end_timer is not None:
            self.end_timer += dt_ms
            if self.end_timer >= END_DELAY_MS:
                self.end_timer = None
                self.show_result()

    def finish_replay(self) -> None:
        """The run's replay and share code (the report shows the code)."""
        self.replay = self.tape.finish()
        self.share_code = sharecode.encode(self.replay, self.tape.claim())

    def show_result(self) -> None:
        result = self.game.result
        if result is not None:
            self.session.effects.toasts.clear()  # the report says it; the board stays in view
            if self.chapter is not None:
                self.app.show_chapter_outro(self, result)
            else:
                self.app.show_result(self, result, self.new_best, since_end_ms=END_DELAY_MS)

    def draw(self, surface: pygame.Surface) -> None:
        self.app.view.draw(surface, self.session, self.state)
        if self.game.ready:  # a chapter waits for its first move: say so over the board
            lay, tr = self.app.layout, self.app.tr
            board = pygame.Rect(lay.board)
            lines = wrap(tr.t("chapter.ready"), lay.text.body, board.width - 24)
            h = len(lines) * (lay.text.body + 6) + 16
            box = pygame.Rect(board.x + 8, board.centery - h // 2, board.width - 16, h)
            pygame.draw.rect(surface, (9, 12, 26), box, border_radius=6)
            pygame.draw.rect(surface, theme.GREEN, box, 1, border_radius=6)
            for i, line in enumerate(lines):
                self.app.text.blit(surface, line, lay.text.body, theme.GREEN,
                                   (box.centerx, box.y + 8 + i * (lay.text.body + 6)), "midtop")
