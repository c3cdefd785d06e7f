"""Watching a recorded run: the normal console, driven by the replay instead of the keyboard.

A banner across the top says it is a replay (not a live game) and which score the run claims;
the control bar becomes the player's: pause, 1x / 4x / 16x, restart, exit. At the end the
banner says whether the re-simulated run reached the result its code claims.
"""
from __future__ import annotations

from collections.abc import Iterator

import pygame

from engine import Game, Input
from engine.replay import Outcome, Replay
from ui import theme
from ui.console_view import ViewState
from ui.scene import Scene
from ui.session import GameSession
from ui.text import fit
from ui.widgets import Button, hit

SPEEDS = (1, 4, 16)
BAR_BUTTONS = (("pause", "PAUSE", "Space"), ("x1", "1x", "1"), ("x4", "4x", "2"),
               ("x16", "16x", "3"), ("restart", "RESTART", "R"), ("exit", "EXIT", "Esc"))
SPEED_KEYS = {pygame.K_1: 1, pygame.K_2: 4, pygame.K_3: 16}


def bar_rect(lay) -> pygame.Rect:
    """Where the play screen's control buttons are: the replay's controls take their place."""
    rects = [pygame.Rect(r) for r in lay.controls.values()]
    return rects[0].unionall(rects[1:])


def bar_buttons(lay) -> list[Button]:
    """The replay controls, laid out across the play screen's control bar."""
    bar = bar_rect(lay)
    n, gap = len(BAR_BUTTONS), 6
    w = (bar.width - gap * (n - 1)) // n
    keys = not lay.portrait
    return [Button(name, (bar.x + i * (w + gap), bar.y, w, bar.height), label, hint if keys else "",
                   touch=lay.touch)
            for i, (name, label, hint) in enumerate(BAR_BUTTONS)]


def _clock(ms: float) -> str:
    seconds = int(ms // 1000)
    return f"{seconds // 60}:{seconds % 60:02d}"


class ReplayScene(Scene):
    """Plays `replay` back step by step, at 1x, 4x or 16x, pausable."""

    def __init__(self, app, replay: Replay) -> None:
        self.app = app
        self.replay = replay
        self.buttons = bar_buttons(app.layout)
        self.speed = 1
        self.paused = False
        self.hover: tuple[int, int] | None = None
        self.claimed = replay.claimed_score()
        self.label = replay.claimed_mode()
        self.total_ms = sum(dt * n for dt, _, n in replay.steps.runs())
        self._start()

    def _start(self) -> None:
        self.game = Game(seed=self.replay.seed, mode=self.replay.mode, endless=self.replay.endless)
        self.session = GameSession(self.game, sound=self.app.sound)
        self.state = ViewState(muted=self.app.settings.muted, header_buttons=False)
        self.steps: Iterator[tuple[float, tuple[Input, ...]]] = iter(self.replay.steps)
        self.done = False
        self.verdict: str | None = None  # at the end: None when the run is what it claims

    def relayout(self) -> None:
        self.buttons = bar_buttons(self.app.layout)

    # ------------------------------------------------------------------ input
    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.KEYDOWN:
            key = event.key
            if key in (pygame.K_SPACE, pygame.K_p, pygame.K_k):
                self.click("pause")
            elif key in SPEED_KEYS:
                self.set_speed(SPEED_KEYS[key])
            elif key in (pygame.K_RIGHT, pygame.K_f):
                self.set_speed(SPEEDS[min(len(SPEEDS) - 1, SPEEDS.index(self.speed) + 1)])
            elif key == pygame.K_LEFT:
                self.set_speed(SPEEDS[max(0, SPEEDS.index(self.speed) - 1)])
            elif key == pygame.K_r or (key in (pygame.K_RETURN, pygame.K_KP_ENTER) and self.done):
                self.click("restart")
            elif key in (pygame.K_ESCAPE, pygame.K_q, pygame.K_BACKSPACE):
                self.click("exit")
            elif key == pygame.K_m:
                self.state.muted = self.app.toggle_mute()
        elif event.type == pygame.MOUSEMOTION:
            self.hover = event.pos
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            b = hit(self.buttons, event.pos)
            if b is not None:
                self.click(b.name)

    def click(self, name: str) -> None:
        if name == "pause":
            if self.done:
                self.click("restart")
            else:
                self.paused = not self.paused
        elif name.startswith("x"):
            self.set_speed(int(name[1:]))
        elif name == "restart":
            self._start()
            self.paused = False
        elif name == "exit":
            self.exit()

    def set_speed(self, speed: int) -> None:
        self.speed = speed
        self.paused = False

    def exit(self) -> None:
        app = self.app
        if app.scenes and app.scenes[0] is not self:
            app.pop()  # back to the report it was opened from
        else:
            from ui.title_scene import TitleScene
            app.reset(TitleScene(app))

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> None:
        self.state.clock_ms += dt_ms
        if self.paused or self.done:
            self.session.effects.advance(dt_ms)
            return
        # Sound effects at 1x only: sped up they would be a wall of noise.
        self.session.sound = self.app.sound if self.speed == 1 else None
        for _ in range(self.speed):
            step = next(self.steps, None)
            if step is None or self.game.over:
                self._finish()
                return
            self.session.step(step[0], step[1])

    def _finish(self) -> None:
        self.done = True
        self.verdict = self.replay.mismatch(Outcome(self.game))

    # ------------------------------------------------------------------ drawing
    def draw(self, surface: pygame.Surface) -> None:
        self.app.view.draw(surface, self.session, self.state)
        self._draw_banner(surface)
        self._draw_bar(surface)

    def banner_text(self) -> tuple[str, str]:
        """The two parts of the banner: what this is, and where the run is."""
        r = self.replay
        tr = self.app.tr
        score = tr.num(self.claimed) if self.claimed is not None else tr.t("replay.unknown")
        mode = tr.t(f"mode.{self.label}.name") if tr.has(f"mode.{self.label}.name") else self.label
        what = tr.t("replay.what", mode=mode.upper())
        if r.daily:
            what = tr.t("replay.what_daily", what=what, day=r.daily)
        if not self.done:
            state = tr.t("replay.paused") if self.paused else f"{self.speed}x"
            clock = f"{_clock(self.game.time_ms)} / {_clock(self.total_ms)}"
            return what, tr.t("replay.running", score=score, clock=clock, state=state)
        result = self.game.result
        outcome = tr.t(f"replay.outcome.{result.outcome if result is not None else 'none'}")
        if self.verdict is None:
            return what, tr.t("replay.verified", outcome=outcome, score=tr.num(self.game.score))
        return what, tr.t("replay.mismatch", outcome=outcome, score=tr.num(self.game.score))

    def _draw_banner(self, surface: pygame.Surface) -> None:
        """Across the header: what this is (left) and where the run is (right, or under it)."""
        lay = self.app.layout
        T = lay.text
        r = pygame.Rect(lay.header)
        edge = theme.AMBER if self.verdict is None else theme.RED
        pygame.draw.rect(surface, (40, 28, 4), r)
        pygame.draw.line(surface, edge, (r.x, r.bottom - 2), (r.right, r.bottom - 2), 2)
        what, where = self.banner_text()
        t = self.app.text
        if lay.portrait:  # two lines in the taller phone header
            t.blit(surface, what, T.small, edge, (r.x + lay.margin, r.y + 4))
            t.blit(surface, fit(where, T.small, r.width - 2 * lay.margin), T.small, theme.TEXT,
                   (r.x + lay.margin, r.bottom - 5), "bottomleft")
            return
        left = t.blit(surface, what, T.body, edge, (r.x + 12, r.centery), "midleft")
        x = max(left.right + 16, r.centerx - 60)
        t.blit(surface, fit(where, T.small, r.right - 8 - x), T.small, theme.TEXT, (x, r.centery), "midleft")

    def _draw_bar(self, surface: pygame.Surface) -> None:
        lay = self.app.layout
        pygame.draw.rect(surface, theme.BG, bar_rect(lay).inflate(8, 8))
        t = self.app.text
        for b in self.buttons:
            active = (b.name == "pause" and self.paused) or b.name == f"x{self.speed}"
            hover = self.hover is not None and b.contains(self.hover)
            label = None
            tr = self.app.tr
            if b.name == "pause":
                label = tr.t("replay.again" if self.done else "replay.play" if self.paused else "replay.pause")
            elif b.name in ("restart", "exit"):
                label = tr.t(f"replay.{b.name}")
            b.draw(surface, t, active=active, hover=hover, label=label, accent=theme.AMBER, size=lay.text.small)
