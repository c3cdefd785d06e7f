"""The application object: scene stack, shared services and the fixed-step clock.

Engine time advances in fixed STEP_MS steps, independent of how often frames
are drawn; after a stall (a hidden browser tab, a slow frame) at most
MAX_STEPS_PER_FRAME steps are run and the rest of the backlog is dropped, so
pieces never jump several rows at once.
"""
from __future__ import annotations

import importlib
import random
import sys
import time
from datetime import date
from typing import TYPE_CHECKING, Callable, Generator

import pygame

from engine.reports import RunReport
from engine.rules import GOALS
from ui import i18n, packs, theme
from ui.console_view import ConsoleView
from ui.layout import LANDSCAPE, Layout, layout_for
from ui.log_console import LogConsole
from ui.scene import Scene
from ui.sound import Sound
from ui.storage import Settings, Storage, record_best, record_chapter, record_daily
from ui.text import TextCache

if TYPE_CHECKING:  # screens are imported where they are opened
    from ui.play_scene import PlayScene


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
                 seed: int | None = None, audio: bool = True, layout: str = LANDSCAPE,
                 resize: Callable[[tuple[int, int]], pygame.Surface] | None = None,
                 language: str | None = None, reader_language: str | None = None,
                 day: date | None = None) -> None:
        self.layout: Layout = layout_for(layout)
        self._resize = resize  # makes a new display surface of a size (the window or canvas)
        if surface.get_size() != self.layout.size:  # a window of the layout's size, or a canvas
            surface = resize(self.layout.size) if resize is not None else pygame.Surface(self.layout.size)
        self.surface = surface
        self.storage = storage if storage is not None else Storage()
        self.settings: Settings = self.storage.load()
        self.notices: list[tuple[str, str]] = []
        if self.storage.last_error:
            self.notices.append(("WARN", f"[STORE] {self.storage.last_error}"))
        # The language: --lang for this run, else the player's choice, else the reader's own.
        self.reader_language = reader_language or i18n.reader_default()
        wanted = language or self.settings.language or self.reader_language
        self.tr: i18n.Catalogue = i18n.catalogue(i18n.DEFAULT)
        self.wanted_language: str | None = None  # waiting for its font (the browser's download)
        self.font_problem = ""
        self.wanted_packs: list[str] = []  # parts of the game the browser is to fetch (ui.packs)
        self._lab_waiting: Callable[[i18n.Msg], None] | None = None  # who asked for the LAB meanwhile
        self._pack_then: dict[str, Callable[[], None]] = {}  # what the player asked of a pack on its way
        self.sound = Sound(muted=self.settings.muted)
        self.audio_wanted = audio
        self.audio_started = False
        self._audio_job: Generator[None, None, str | None] | None = None
        self.text = TextCache()
        self._use_language(wanted)
        self.view = ConsoleView(self.text, self.layout, self.tr)
        self.scenes: list[Scene] = []
        self.wanted_layout: str | None = None  # asked for while a screen could not follow
        self.running = True
        self.seeds = random.Random(seed if seed is not None else time.time_ns())
        self.day = day  # the date taken for today (a headless picture's); None: the clock's
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
        self._follow_wanted_layout()

    def replace(self, scene: Scene) -> None:
        if self.scenes:
            self.scenes.pop().leave()
        self.scenes.append(scene)
        scene.enter()
        self._follow_wanted_layout()

    def reset(self, scene: Scene) -> None:
        """Drop every scene and start over with `scene` (restart, back to title)."""
        while self.scenes:
            self.scenes.pop().leave()
        self.scenes.append(scene)
        scene.enter()
        self._follow_wanted_layout()

    def find(self, kind: type) -> Scene | None:
        """The topmost scene of a given class (overlays use it to reach the game below)."""
        for scene in reversed(self.scenes):
            if isinstance(scene, kind):
                return scene
        return None

    # ------------------------------------------------------------------ layout
    @property
    def canvas_size(self) -> tuple[int, int]:
        """The canvas every screen draws on (the LAB lays itself out for it)."""
        return self.layout.size

    def set_layout(self, name: str) -> bool:
        """Rearrange every screen for the layout called `name`; True if anything changed.

        The display surface is remade at the new size (the window, or the page's canvas), the
        console is rebuilt, and every scene on the stack recomputes its rectangles: a run in
        progress carries on where it was.
        """
        layout = layout_for(name)
        if layout == self.layout:
            return False
        self.layout = layout
        if self._resize is not None:
            self.surface = self._resize(layout.size)
        elif self.surface.get_size() != layout.size:
            self.surface = pygame.Surface(layout.size)
        self.view = ConsoleView(self.text, layout, self.tr)
        for scene in list(self.scenes):  # a screen with no place in the new layout may close
            scene.relayout()
        return True

    def want_layout(self, name: str) -> bool:
        """Switch to `name` now if every screen on the stack can follow, else when one closes.

        The browser asks this whenever the frame turns or is resized; True if it switched.
        """
        self.wanted_layout = None if name == self.layout.name else name
        return self._follow_wanted_layout()

    def _follow_wanted_layout(self) -> bool:
        name = self.wanted_layout
        if name is None or not all(s.can_relayout for s in self.scenes):
            return False
        self.wanted_layout = None
        return self.set_layout(name)

    # ------------------------------------------------------------------ screens
    # Screens ask the app to move on; the app alone knows every screen.
    def show_title(self, seed: int | None = None, notice: "i18n.Msg | str" = "") -> None:
        """Drop whatever runs and show the title screen (with a one-line `notice`, if any)."""
        from ui.title_scene import TitleScene
        title = TitleScene(self, seed=seed)
        title.notice = notice
        self.reset(title)

    def start_game(self, mode: str | None = None, *, seed: int | None = None, autoplay: bool = False,
                   endless: bool | None = None, daily: "date | None" = None) -> PlayScene:
        """A new run in `mode` (default: the saved one) in place of everything on screen;
        `daily`: that UTC date's daily challenge."""
        from ui.play_scene import PlayScene
        play = PlayScene(self, mode=mode or self.settings.mode, seed=seed, autoplay=autoplay,
                         endless=endless, daily=daily)
        self.reset(play)
        return play

    def _later(self, pack: str, module: str, then: Callable[[], None], loading: str | None):
        """A module that comes with a later pack (ui.packs); in the browser it is fetched the first
        time a player asks for it (None meanwhile: the title says `loading`, if given, and `then`
        runs when it has arrived)."""
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError:
            if sys.platform != "emscripten" or not packs.missing(pack):
                raise
            self._pack_then[pack] = then
            self.want_pack(pack)
            if loading is not None:
                self.show_title(notice=i18n.Msg.of(loading))
            return None

    def _chapter_screens(self, then: Callable[[], None]):
        """The chapters' screens module (fetched with its pack in the browser)."""
        return self._later("chapters", "ui.chapter_scenes", then, "title.chapters_loading")

    def show_chapters(self) -> None:
        """The chapter list, over the title."""
        screens = self._chapter_screens(self.show_chapters)
        if screens is not None:
            self.show_title()
            self.push(screens.ChapterListScene(self))

    def first_screen(self, opts, replay, problem: str | None) -> None:
        """The window's first screen: a replay, today's daily run, a chapter (its intro, or its run with
        --scene play), a run (--scene play, --autoplay, --endless), or the title."""
        if replay is not None:
            self.watch(replay)
        elif opts.daily:
            self.start_game(opts.mode, autoplay=opts.autoplay, daily=self.today())
        elif opts.chapter is not None and opts.scene in (None, "intro"):  # the chapter's intro, over the title
            self.show_chapter_intro(opts.chapter, fresh=True)
        elif opts.chapter is not None:
            self.start_chapter(opts.chapter, seed=opts.seed)
        elif (opts.scene or ("play" if opts.autoplay or opts.endless else "title")) == "play":
            self.start_game(opts.mode, autoplay=opts.autoplay, endless=opts.endless)
        else:
            from ui.i18n import Msg
            self.show_title(notice=Msg.of("title.replay_problem", reason=problem) if problem else "")

    def show_chapter_intro(self, number: int, fresh: bool = False) -> None:
        """Chapter `number`'s intro: over the current screen (BACK returns to it), or with `fresh`
        over the title (after a chapter's run)."""
        screens = self._chapter_screens(lambda: self.show_chapter_intro(number, fresh=True))
        if screens is None:
            return
        if fresh:
            self.show_title()
        self.push(screens.ChapterIntroScene(self, number))

    def start_chapter(self, number: int, seed: int | None = None) -> PlayScene:
        """A run of chapter `number` in place of everything on screen (chapter 2: on the seed of
        the last chapter-1 run, unless `seed` is given)."""
        from ui.play_scene import PlayScene
        play = PlayScene(self, chapter=number, seed=seed)
        self.reset(play)
        return play

    def show_chapter_outro(self, play: Scene, report) -> None:
        """A chapter's outro over the board of the run it closes."""
        from ui.chapter_scenes import ChapterOutroScene
        self.push(ChapterOutroScene(self, play, report))

    def chapter_pair(self):
        """The last chapter-1 run, which chapter 2 replays (None before the first)."""
        from ui.chapter_text import Pair
        return Pair.from_saved(self.settings.chapter_pair)

    def record_chapter_run(self, number: int, game) -> bool:
        """Keep a finished chapter run: its served requests and score, and a chapter-1 run as the
        pair chapter 2 replays. True when the score is the chapter's best."""
        from engine.chapters import chapter
        from engine.outro import figures
        from ui.chapter_text import Pair
        self.settings.games_played += 1
        best = record_chapter(self.settings, number, game.serving.served, game.score)
        if chapter(number).adds == "contiguous":
            fig = figures(game)
            pair = Pair(game.seed, game.time_ms, fig.running, fig.held, fig.waste, fig.tokens, fig.served)
            self.settings.chapter_pair = pair.to_saved()
        self.save_settings()
        return best

    def start_daily(self) -> None:
        """Play today's daily challenge (same requests for every player today)."""
        self.start_game(daily=self.today())

    def watch(self, replay, over_current: bool = False) -> None:
        """Show a recorded run: over the current screen (EXIT comes back to it) or alone
        (EXIT goes to the title). In the browser its screen comes with a later pack."""
        screens = self._later("replay", "ui.replay_scene", lambda: self.watch(replay, over_current),
                              None if over_current else "title.replay_loading")
        if screens is None:
            return
        scene = screens.ReplayScene(self, replay)
        if over_current:
            self.push(scene)
        else:
            self.reset(scene)

    def pause(self, play: Scene) -> None:
        """Freeze `play` under the pause menu."""
        from ui.overlays import PauseScene
        self.push(PauseScene(self, play))

    def show_help(self) -> None:
        from ui.overlays import HelpScene
        self.push(HelpScene(self))

    def show_details(self, play: Scene) -> None:
        """A phone's DETAILS sheet over `play`: system log, block table, every statistic."""
        from ui.overlays import DetailsScene
        self.push(DetailsScene(self, play))

    def show_result(self, play: Scene, report, new_best: bool = False, since_end_ms: float | None = None) -> None:
        """The run report (crash or victory) over the board it describes.

        `since_end_ms`: how long ago the run ended (keys pressed right after a crash do not act
        on the report).
        """
        from ui.overlays import ResultScene
        if since_end_ms is None:
            self.push(ResultScene(self, play, report, new_best))
        else:
            self.push(ResultScene(self, play, report, new_best, since_end_ms=since_end_ms))

    def back(self) -> None:
        """Close the top screen and return to the one below."""
        self.pop()

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
        job = self._audio_job
        assert job is not None  # made above, cleared only when finished
        try:
            next(job)
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

    def next_goal(self) -> str:
        """The title's goal choice: the next of rules.GOALS (serve GOAL_REQUESTS, or endless)."""
        goals = GOALS
        self.settings.goal = goals[(goals.index(self.settings.goal) + 1) % len(goals)]
        self.save_settings()
        return self.settings.goal

    def toggle_endless(self) -> bool:
        """The goal switch (Command.TOGGLE_ENDLESS); True when the goal is now endless."""
        return self.next_goal() == "endless"

    # ------------------------------------------------------------------ language
    @property
    def language(self) -> str:
        return self.tr.code

    def _use_language(self, code: str) -> bool:
        """Switch to `code` now if its font and catalogue are here, else ask for them; True if switched."""
        if code == "ko" and (packs.missing("ko") or not i18n.available("ko")):
            self.wanted_language = code
            self.want_pack("ko")
            return False
        self.wanted_language = None
        self.tr = i18n.catalogue(code)
        return True

    def set_language(self, code: str) -> None:
        """The player chose a language (LANGUAGE button, K): use it and remember it."""
        self.font_problem = ""
        self.settings.language = code
        self.save_settings()
        if code == self.language and self.wanted_language is None:
            return
        if self._use_language(code):
            self.relocalise()

    def next_language(self) -> None:
        self.set_language(i18n.following(self.wanted_language or self.language))

    def want_pack(self, name: str) -> None:
        """Ask the main loop to fetch pack `name` (ui.packs) in the background."""
        if name not in self.wanted_packs:
            self.wanted_packs.append(name)

    def pack_arrived(self, name: str, problem: str | None) -> None:
        """The browser's download of pack `name` finished (`problem` says why not)."""
        if name in self.wanted_packs:
            self.wanted_packs.remove(name)
        if name == "ko":
            self.font_arrived(problem)
        elif name in ("chapters", "replay"):
            then = self._pack_then.pop(name, None)
            if problem:
                self.show_title(notice=i18n.Msg.of(f"title.{name}_unavailable", reason=problem))
            elif then is not None:
                then()
        elif name == "lab":
            waiting, self._lab_waiting = self._lab_waiting, None
            if problem:
                if waiting is not None:
                    waiting(i18n.Msg.of("title.lab_unavailable", reason=problem))
            elif waiting is not None and self.top is not None and self.top.can_open_lab:
                self.open_lab(waiting)  # the player asked for it and is still where they asked

    def font_arrived(self, problem: str | None) -> None:
        """The browser's download of the Korean pack finished (`problem` says why not)."""
        code = self.wanted_language
        if problem:
            self.wanted_language = None
            self.font_problem = problem
            self.notices.append(("WARN", f"[UI] Korean font unavailable: {problem}"))
            return
        theme.font.cache_clear()  # a Hangul font asked for before it arrived fell back to the game font
        self.text.clear()
        if code is not None and self._use_language(code):
            self.relocalise()

    def relocalise(self) -> None:
        """Redraw everything in the new language: the console's baked text and every open screen."""
        self.view = ConsoleView(self.text, self.layout, self.tr)
        for scene in self.scenes:
            scene.language_changed()

    def set_mode(self, mode: str) -> None:
        if mode != self.settings.mode:
            self.settings.mode = mode
            self.save_settings()

    def mark_card_seen(self, card_id: str) -> None:
        if card_id not in self.settings.seen_cards:
            self.settings.seen_cards.add(card_id)
            self.save_settings()

    def record_run(self, report: RunReport, daily: "date | str | None" = None) -> bool:
        """Count a finished run and keep its score where it belongs; True if it set a new best.

        A daily run counts for that day's daily best of its allocator only; any other run for the
        best of its (allocator, goal). A mixed run (allocator switched mid-run) sets no best.
        """
        self.settings.games_played += 1
        if daily is not None:
            day = daily if isinstance(daily, str) else daily.isoformat()
            best = record_daily(self.settings, day, report.record_mode, report.score)
        else:
            best = record_best(self.settings, report.record_mode, report.goal, report.score)
        self.save_settings()
        return best

    def record_result(self, mode: str, score: int, goal: str | None = None) -> bool:
        """Count a finished run of no daily challenge; True if it set a new best for (mode, goal)
        (goal: the chosen one by default). Prefer record_run, which reads both from the report."""
        self.settings.games_played += 1
        best = record_best(self.settings, mode, goal or self.settings.goal, score)
        self.save_settings()
        return best

    def best(self, mode: str, goal: str | None = None) -> int:
        """The best score of (mode, goal); goal: the chosen one by default."""
        return self.settings.best.get(mode, {}).get(goal or self.settings.goal, 0)

    def record_daily(self, day: str, score: int, mode: str | None = None) -> bool:
        """Count a daily-challenge score of `mode` (the chosen allocator by default); True if it
        is that allocator's best of the day."""
        best = record_daily(self.settings, day, mode or self.settings.mode, score)
        if best:
            self.save_settings()
        return best

    def daily_best(self, day: str, mode: str | None = None) -> int | None:
        """The daily best of `mode` (the chosen allocator by default) on `day`; None: not played."""
        score = self.settings.daily.get(day, {}).get(mode or self.settings.mode, 0)
        return score or None

    def today(self) -> "date":
        """Today's UTC date: the daily challenge's day (the app's fixed day, if it was given one)."""
        from engine.daily import utc_day

        return self.day if self.day is not None else utc_day(time.time())

    def flush_notices(self, log: LogConsole, time_ms: float = 0.0) -> None:
        """Audio and storage problems are logged once, in the console on screen or the next one."""
        for level, text in self.notices:
            log.add(time_ms, level, text)
        self.notices.clear()

    def open_lab(self, on_missing: Callable[[i18n.Msg], None] | None = None) -> bool:
        """Push the LAB screen if that module is part of this build; in the browser the LAB is
        fetched the first time it is asked for, and opens when it has arrived.

        Only a build without the LAB module plays on without it (False, and `on_missing` hears
        why); a LAB that is present but cannot open is a bug, and its error propagates.
        """
        try:
            from ui.lab_scene import LabScene
        except ModuleNotFoundError as exc:
            if sys.platform == "emscripten" and packs.missing("lab"):
                self._lab_waiting = on_missing or (lambda msg: None)
                self.want_pack("lab")
                if on_missing is not None:
                    on_missing(i18n.Msg.of("title.lab_loading"))
                return False
            if on_missing is not None:
                on_missing(i18n.Msg.of("title.lab_missing") if exc.name == "ui.lab_scene"
                           else i18n.Msg.of("title.lab_unavailable", reason=str(exc)))
            return False
        self.push(LabScene(self))
        return True
