"""The application object: scene stack, shared services and the fixed-step clock.

Engine time advances in fixed STEP_MS steps, independent of how often frames
are drawn; after a stall (a hidden browser tab, a slow frame) at most
MAX_STEPS_PER_FRAME steps are run and the rest of the backlog is dropped, so
pieces never jump several rows at once.
"""
from __future__ import annotations

import random
import sys
import time
from typing import Callable, Generator

import pygame

from ui import theme
from ui.console_view import ConsoleView
from ui.log_console import LogConsole
from ui.scene import Scene
from ui.sound import Sound
from ui.storage import Settings, Storage, record_best
from ui.text import TextCache


class FixedStep:
    """Turns wall-clock frame times into a whole number of fixed engine steps."""

    def __init__(self, step_ms: float = theme.STEP_MS, max_steps: int = theme.MAX_STEPS_PER_FRAME) -> None:
        self.step_ms = step_ms
        self.max_steps = max_steps
        self.acc = 0.0
        self.dropped_ms = 0.0

    def advance(self, elapsed_ms: float) -> int:
        self.acc += max(0.0, elapsed_ms)
        steps = int(self.acc // self.step_ms)
        if steps > self.max_steps:
            self.dropped_ms += self.acc - self.max_steps * self.step_ms
            steps = self.max_steps
            self.acc = 0.0
        else:
            self.acc -= steps * self.step_ms
        return steps


class GameApp:
    """Hosts the scenes; implements the ui.scene.App protocol."""

    def __init__(self, surface: pygame.Surface, *, storage: Storage | None = None,
                 seed: int | None = None, audio: bool = True) -> None:
        self.surface = surface
        self.storage = storage if storage is not None else Storage()
        self.settings: Settings = self.storage.load()
        self.notices: list[tuple[str, str]] = []
        if self.storage.last_error:
            self.notices.append(("WARN", f"[STORE] {self.storage.last_error}"))
        self.sound = Sound(muted=self.settings.muted)
        self.audio_wanted = audio
        self.audio_started = False
        self._audio_job: Generator[None, None, str | None] | None = None
        self.text = TextCache()
        self.view = ConsoleView(self.text)
        self.scenes: list[Scene] = []
        self.running = True
        self.seeds = random.Random(seed if seed is not None else time.time_ns())
        self.clock = FixedStep()

    # ------------------------------------------------------------------ scene stack
    @property
    def top(self) -> Scene | None:
        return self.scenes[-1] if self.scenes else None

    def push(self, scene: Scene) -> None:
        if self.scenes:
            self.scenes[-1].leave()
        self.scenes.append(scene)
        scene.enter()

    def pop(self) -> None:
        if len(self.scenes) <= 1:
            return
        self.scenes.pop().leave()
        self.scenes[-1].enter()

    def replace(self, scene: Scene) -> None:
        if self.scenes:
            self.scenes.pop().leave()
        self.scenes.append(scene)
        scene.enter()

    def reset(self, scene: Scene) -> None:
        """Drop every scene and start over with `scene` (restart, back to title)."""
        while self.scenes:
            self.scenes.pop().leave()
        self.scenes.append(scene)
        scene.enter()

    def find(self, kind: type) -> Scene | None:
        """The topmost scene of a given class (overlays use it to reach the game below)."""
        for scene in reversed(self.scenes):
            if isinstance(scene, kind):
                return scene
        return None

    # ------------------------------------------------------------------ loop pieces
    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.quit()
            return
        if self.scenes:
            self.scenes[-1].handle(event)

    def update(self, dt_ms: float) -> None:
        if self.scenes:
            self.scenes[-1].update(dt_ms)

    def frame(self, elapsed_ms: float) -> int:
        """Run the fixed steps owed for `elapsed_ms` of wall time; returns how many ran."""
        steps = self.clock.advance(elapsed_ms)
        for _ in range(steps):
            self.update(self.clock.step_ms)
        return steps

    def draw(self, surface: pygame.Surface | None = None) -> None:
        target = surface if surface is not None else self.surface
        start = 0
        for i in range(len(self.scenes) - 1, -1, -1):
            if self.scenes[i].opaque:
                start = i
                break
        for scene in self.scenes[start:]:
            scene.draw(target)

    def draw_below(self, scene: Scene, surface: pygame.Surface) -> None:
        """Draw the scenes under `scene`, from the topmost opaque one up (overlay snapshots)."""
        below = self.scenes[:self.scenes.index(scene)] if scene in self.scenes else []
        start = 0
        for i in range(len(below) - 1, -1, -1):
            if below[i].opaque:
                start = i
                break
        for s in below[start:]:
            s.draw(surface)

    def quit(self) -> None:
        if sys.platform != "emscripten":
            self.running = False

    # ------------------------------------------------------------------ services
    def start_audio(self) -> None:
        """Open the mixer and synthesize every effect now (tests, tools)."""
        while self.pump_audio():
            pass

    def pump_audio(self) -> bool:
        """One step of audio start-up; True while there is more to do.

        The game loop calls this once per frame after the first picture is shown: synthesis
        takes a moment (longer in the browser), and one effect per frame keeps the title
        screen moving meanwhile. A failure is logged once; the game then runs silent.
        """
        if not self.audio_wanted or (self.audio_started and self._audio_job is None):
            return False
        if not self.audio_started:
            self.audio_started = True
            self._audio_job = self.sound.start_steps()
        try:
            next(self._audio_job)
        except StopIteration as done:
            self._audio_job = None
            if done.value:
                self.notices.append(("WARN", f"[AUDIO] {done.value}"))
            return False
        return True

    def next_seed(self) -> int:
        return self.seeds.randrange(1, 2**31)

    def save_settings(self) -> None:
        self.storage.save(self.settings)
        if self.storage.last_error:
            self.notices.append(("WARN", f"[STORE] {self.storage.last_error}"))

    def toggle_mute(self) -> bool:
        self.settings.muted = self.sound.toggle_mute()
        self.save_settings()
        return self.settings.muted

    def toggle_cards(self) -> bool:
        self.settings.cards_enabled = not self.settings.cards_enabled
        self.save_settings()
        return self.settings.cards_enabled

    def toggle_endless(self) -> bool:
        self.settings.endless = not self.settings.endless
        self.save_settings()
        return self.settings.endless

    def set_mode(self, mode: str) -> None:
        if mode != self.settings.mode:
            self.settings.mode = mode
            self.save_settings()

    def mark_card_seen(self, card_id: str) -> None:
        if card_id not in self.settings.seen_cards:
            self.settings.seen_cards.add(card_id)
            self.save_settings()

    def record_result(self, mode: str, score: int) -> bool:
        """Count a finished run; True if it set a new best for its mode."""
        self.settings.games_played += 1
        best = record_best(self.settings, mode, score)
        self.save_settings()
        return best

    def best(self, mode: str) -> int:
        return self.settings.best_scores.get(mode, 0)

    def flush_notices(self, log: LogConsole, time_ms: float = 0.0) -> None:
        """Audio and storage problems are logged once, in the console on screen or the next one."""
        for level, text in self.notices:
            log.add(time_ms, level, text)
        self.notices.clear()

    def open_lab(self, on_missing: Callable[[str], None] | None = None) -> bool:
        """Push the LAB screen if that module is part of this build.

        Only a build without the LAB module plays on without it (False, and `on_missing` hears
        why); a LAB that is present but cannot open is a bug, and its error propagates.
        """
        try:
            from ui.lab_scene import LabScene
        except ModuleNotFoundError as exc:
            if on_missing is not None:
                on_missing("LAB is not part of this build" if exc.name == "ui.lab_scene"
                           else f"LAB unavailable: {exc}")
            return False
        self.push(LabScene(self))
        return True
