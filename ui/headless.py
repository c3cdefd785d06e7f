"""Headless rendering: build a scene, run N fixed steps of simulated time, save the canvas.

No wall clock is involved: frame k is exactly k steps of STEP_MS, so the same
arguments always give the same picture (the title's date is the clock's unless --day fixes it,
and the language the locale's unless --lang or the settings choose it).
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from datetime import date

import pygame

from engine import Input, modes
from engine.cli_args import Progress, failure
from ui import theme
from ui.app import GameApp
from ui import cli
from ui.cli import Options
from ui.storage import Storage

SETTLE_FRAMES = 40  # frames an overlay gets to fade in before the picture is taken
DEFAULT_SEED = 7


def init_display(size: tuple[int, int] = theme.CANVAS_SIZE) -> pygame.Surface:
    """A canvas-sized display on SDL's dummy driver."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    pygame.display.init()
    pygame.font.init()
    theme.font.cache_clear()
    return pygame.display.set_mode(size)


def make_app(surface: pygame.Surface, seed: int, data_dir: str, mode: str | None,
             layout: str = "landscape", lang: str | None = None, day: date | None = None) -> GameApp:
    app = GameApp(surface, storage=Storage(directory=data_dir), seed=seed, audio=False, layout=layout,
                  resize=pygame.display.set_mode, language=lang, day=day)
    if mode is not None:
        app.settings.mode = mode
    return app


def run_frames(app: GameApp, frames: int) -> None:
    progress = Progress("frames", frames)  # shown on a terminal only
    for n in range(frames):
        app.update(theme.STEP_MS)
        if n & 255 == 255:
            progress.update(n + 1)
    progress.close()


BEGINNER_SKILL = 0.3  # a hurried player: the crash a newcomer meets
THINK_MS = 150.0  # game time a bot takes over each request before its final key
WAIT_MS = 200.0  # how long a bot that chose to wait lets the request fall before looking again
IDLE_MS = 100.0  # how far time moves on while nothing is at the front
FORCE_CAP_MS = 40 * 60_000.0  # a forced run gives up after this much game time


def bot_play(play, skill: float, seed: int, cap_ms: float = FORCE_CAP_MS) -> None:
    """Let engine.bot play the scene's run (as engine.autoplay paces it) until it ends or
    `cap_ms` of game time has passed. Every step goes through the session: the log, cards and
    the replay see it all."""
    from engine.bot import Bot

    game, session = play.game, play.session
    bot = Bot(skill=skill, seed=seed)
    while not game.over and game.time_ms < cap_ms:
        if game.active is None and game.blocked is None:
            session.step(IDLE_MS)
            continue
        if game.ready:  # a chapter waits for the first move: the bot's first key starts it
            session.step(0.0, (Input.SOFT_DROP,))
        plan = bot.plan(game)
        if not plan or plan[-1] not in (Input.HARD_DROP, Input.SPLIT):
            session.step(WAIT_MS, plan)  # waiting: the request falls meanwhile
            continue
        request = game.active.request_id if game.active is not None else None
        session.step(0.0, plan[:-1])
        session.step(THINK_MS)
        still = (game.active is not None and game.active.request_id == request) or (
            request is None and game.blocked is not None)
        if still and not game.over:
            session.step(0.0, plan[-1:])


def force_oom(play, seed: int = 0) -> None:
    """Let a hurried bot play until the run ends: in CONTIGUOUS a CUDA OOM comes soon (its
    reservations fill VRAM); a paged run ends later, overloaded or out of memory."""
    bot_play(play, BEGINNER_SKILL, seed)


def force_victory(play, seed: int) -> bool:
    """Let a strong bot play until the workload is served; True if it was."""
    bot_play(play, 1.0, seed)
    return play.game.over and play.game.result is not None and play.game.result.outcome == "victory"


def build(app: GameApp, opts: Options, seed: int) -> str:
    """Put the requested scene on the app's stack after `opts.frames` steps; returns a note for
    the caller when the scene shown differs from the one asked for ("" otherwise)."""
    scene = opts.scene or ("play" if opts.autoplay or opts.daily else "title")
    frames = opts.frames or 1
    daily = app.today() if opts.daily else None
    if opts.replay is not None:
        from engine.replay_cli import load_any
        app.watch(load_any(opts.replay))
        run_frames(app, frames)
        return ""
    if scene == "title":
        app.show_title(seed=seed)
        run_frames(app, frames)
        return ""
    if scene == "chapters":
        app.show_chapters()
        run_frames(app, frames)
        return ""
    if opts.chapter is not None:
        return _chapter_scene(app, opts, scene, frames, seed)
    if scene == "victory":
        for attempt in range(8):
            play = app.start_game(opts.mode or "paged", seed=seed + attempt, autoplay=opts.autoplay,
                                  daily=daily, endless=False)
            if force_victory(play, seed + attempt):
                break
        settle(app, play)
        run_frames(app, frames)
        return ""
    # A crash report comes from CONTIGUOUS: a paged run lasts many minutes and ends overloaded.
    mode = modes.DEFAULT if scene == "oom" and opts.mode and modes.get(opts.mode).pages_on_demand else opts.mode
    play = app.start_game(mode, seed=seed, autoplay=opts.autoplay, daily=daily, endless=opts.endless)
    run_frames(app, frames)
    if scene == "help":
        play.pause()
        app.show_help()
        run_frames(app, SETTLE_FRAMES)
    elif scene == "pause":
        play.pause()
        run_frames(app, SETTLE_FRAMES)
    elif scene == "oom":
        force_oom(play, seed)
        settle(app, play)
    if mode != opts.mode:
        return (f"a {opts.mode} run lasts many minutes and rarely ends in a CUDA OOM: the crash "
                f"shown is from {mode} mode")
    return ""


def _chapter_scene(app: GameApp, opts: Options, scene: str, frames: int, seed: int) -> str:
    """A chapter's intro, its run, or its outro after the bot (skill 0.8) has played it; a chapter
    that replays another's arrivals (2) has that one played first, as a reader would."""
    from engine.chapters import chapter

    n = opts.chapter
    assert n is not None
    if scene == "intro":
        app.show_chapter_intro(n)
        run_frames(app, frames)
        return ""
    if scene == "outro":
        before = chapter(n).arrivals_of
        if before is not None:
            first = app.start_chapter(before, seed=seed)
            bot_play(first, 0.8, seed)
            settle(app, first)
        play = app.start_chapter(n, seed=seed)
        bot_play(play, 0.8, seed)
        settle(app, play)
        run_frames(app, frames)
        return ""
    app.start_chapter(n, seed=seed)
    run_frames(app, frames)
    return ""


def settle(app: GameApp, play) -> None:
    """Step until the run's report is on screen, then let it fade in."""
    for _ in range(600):
        if app.top is not play:
            break
        app.update(theme.STEP_MS)
    run_frames(app, SETTLE_FRAMES)


def write_record(app: GameApp, path: str) -> str:
    """Save the replay of the run on the app's stack; returns a line for the terminal."""
    from engine import replay_json
    from ui.play_scene import PlayScene

    play = app.find(PlayScene)
    if not isinstance(play, PlayScene):
        raise OSError("no game was played")
    replay = play.replay if play.replay is not None else play.tape.finish()
    replay_json.save(replay, path)
    g = play.game
    return (f"wrote {path} (seed {replay.seed}, {play.tape.mode}, {len(replay.steps)} steps, "
            f"score {g.score}, served {g.served}, tokens {g.tokens}, pieces {g.pieces}"
            f"{', ' + g.result.outcome if g.result is not None else ''})")


def _say(line: str) -> None:
    print(f"main.py: {line}", file=sys.stderr)


def render(opts: Options, data_dir: str, say: Callable[[str], None] = _say) -> tuple[GameApp, str]:
    """Put the scene `opts` asks for on a new app (settings in `data_dir`) and draw it: returns
    the app, whose surface holds the picture, and build()'s note. What the app has to tell (a
    settings file that could not be read, a save that failed) goes to `say`, a line each.

    Raises ReplayError or OSError when the replay asked for cannot be watched."""
    surface = init_display()
    seed = DEFAULT_SEED if opts.seed is None else opts.seed
    app = make_app(surface, seed, data_dir, opts.mode, opts.layout, opts.lang, opts.day)
    for _level, notice in app.notices:
        say(notice)
    app.notices.clear()
    note = build(app, opts, seed)
    app.draw(app.surface)
    for _level, notice in app.notices:  # what the run itself met (a save that failed)
        say(notice)
    app.notices.clear()
    return app, note


def run(opts: Options) -> int:
    """Render headlessly, write the screenshot and the replay asked for; returns the exit status."""
    from engine.replay import ReplayError

    with tempfile.TemporaryDirectory(prefix="vram-tetris-headless-") as scratch:
        try:
            app, note = render(opts, str(cli.data_dir(opts) or scratch))
        except (ReplayError, OSError) as exc:
            if opts.replay is None:
                return failure("main.py", f"cannot render: {exc}")
            return failure("main.py", f"cannot watch {opts.replay[:80]}: {exc}")
        surface = app.surface
        if opts.record is not None:
            try:
                print(write_record(app, opts.record))
            except OSError as exc:
                return failure("main.py", f"cannot write {opts.record}: {exc.strerror or exc}")
        if opts.screenshot is not None:
            try:
                pygame.image.save(surface, opts.screenshot)
            except (pygame.error, OSError) as exc:
                return failure("main.py", f"cannot write {opts.screenshot}: {exc}")
    top = type(app.top).__name__ if app.top is not None else "none"
    if opts.screenshot is not None:
        w, h = app.layout.size
        print(f"wrote {opts.screenshot} ({w}x{h}, {app.layout.name}, scene {top})")
    if note:
        print(f"note: {note}")
    return 0
