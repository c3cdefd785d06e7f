"""Headless rendering: build a scene, run N fixed steps of simulated time, save the canvas.

No wall clock is involved: frame k is exactly k steps of STEP_MS, so the same
arguments always give the same picture.
"""
from __future__ import annotations

import os
import sys
import tempfile

import pygame

from engine import Input, modes
from engine.cli_args import Progress, failure
from ui import theme
from ui.app import GameApp
from ui.autopilot import AutoPilot
from ui import cli
from ui.cli import Options
from ui.storage import Storage

SETTLE_FRAMES = 40  # frames an overlay gets to fade in before the picture is taken
MAX_FORCE_PIECES = 400
DEFAULT_SEED = 7
IDLE_STEPS_PER_PIECE = 24


def init_display(size: tuple[int, int] = theme.CANVAS_SIZE) -> pygame.Surface:
    """A canvas-sized display on SDL's dummy driver."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    pygame.display.init()
    pygame.font.init()
    theme.font.cache_clear()
    return pygame.display.set_mode(size)


def make_app(surface: pygame.Surface, seed: int, data_dir: str, mode: str | None,
             layout: str = "landscape", lang: str | None = None) -> GameApp:
    app = GameApp(surface, storage=Storage(directory=data_dir), seed=seed, audio=False, layout=layout,
                  resize=pygame.display.set_mode, language=lang)
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


def force_oom(play, seed: int = 0) -> None:
    """Let a hurried bot play at a human pace until memory runs out (a real engine crash).
    Paged runs end only when memory is really full, so the bot then stacks in the centre."""
    pilot = AutoPilot(skill=BEGINNER_SKILL, seed=seed, steps_per_input=1)
    for _ in range(MAX_FORCE_PIECES * 4):
        if play.game.over:
            return
        plan = pilot.bot.plan(play.game) if play.game.pieces < MAX_FORCE_PIECES else []
        play.session.step(theme.STEP_MS, plan or [Input.HARD_DROP])
        for _ in range(IDLE_STEPS_PER_PIECE):
            if play.game.over:
                return
            play.session.step(theme.STEP_MS)


def force_victory(play, seed: int) -> bool:
    """Let a strong bot place requests instantly until the workload is served."""
    pilot = AutoPilot(skill=1.0, seed=seed, steps_per_input=1)
    for _ in range(MAX_FORCE_PIECES * 2):
        if play.game.over:
            break
        plan = pilot.bot.plan(play.game)
        play.session.step(theme.STEP_MS, plan or [Input.HARD_DROP])
        for _ in range(IDLE_STEPS_PER_PIECE):  # a human-like pace, so uptime and throughput read true
            if play.game.over:
                break
            play.session.step(theme.STEP_MS)
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
    if scene == "victory":
        for attempt in range(8):
            play = app.start_game(opts.mode or "paged", seed=seed + attempt, autoplay=opts.autoplay,
                                  daily=daily)
            if force_victory(play, seed + attempt):
                break
        settle(app, play)
        run_frames(app, frames)
        return ""
    # A crash report comes from CONTIGUOUS: a paged run ends only when memory is really full,
    # which rows clearing as they fill never let happen.
    mode = modes.DEFAULT if scene == "oom" and opts.mode and modes.get(opts.mode).pages_on_demand else opts.mode
    play = app.start_game(mode, seed=seed, autoplay=opts.autoplay, daily=daily)
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
        return (f"a {opts.mode} run ends only when memory is really full, which a steady "
                f"player never reaches: the crash shown is from {mode} mode")
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
    from ui.play_scene import PlayScene

    play = app.find(PlayScene)
    if not isinstance(play, PlayScene):
        raise OSError("no game was played")
    replay = play.replay if play.replay is not None else play.tape.finish()
    replay.save(path)
    g = play.game
    return (f"wrote {path} (seed {replay.seed}, {play.tape.mode}, {len(replay.steps)} steps, "
            f"score {g.score}, lines {g.lines}, pieces {g.pieces})")


def run(opts: Options) -> int:
    """Render headlessly, write the screenshot and the replay asked for; returns the exit status."""
    from engine.replay import ReplayError

    surface = init_display()
    seed = DEFAULT_SEED if opts.seed is None else opts.seed
    with tempfile.TemporaryDirectory(prefix="vram-tetris-headless-") as scratch:
        app = make_app(surface, seed, str(cli.data_dir(opts) or scratch), opts.mode, opts.layout, opts.lang)
        for _level, notice in app.notices:
            print(f"main.py: {notice}", file=sys.stderr)
        try:
            note = build(app, opts, seed)
        except (ReplayError, OSError) as exc:
            return failure("main.py", f"cannot watch {(opts.replay or '')[:80]}: {exc}")
        surface = app.surface
        app.draw(surface)
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
