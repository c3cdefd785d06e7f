"""PagedAttention: VRAM Tetris - entry point for the browser (pygbag), the desktop and headless tools.

    python main.py                     play in a window
    python main.py --frames 60         play in a window for 60 frames, then leave (smoke tests)
    python main.py --daily             today's daily challenge (the same requests for everyone)
    python main.py --chapter 3         chapter 3's intro (--scene play: straight into its run)
    python main.py --replay CODE_OR_FILE   watch a recorded run (in the browser: ?replay=CODE)
    python main.py --headless --frames 10800 --scene play --autoplay --record run.json
    python main.py --headless --frames 6000 --scene play --mode paged --endless --record run.json
    python main.py --headless --frames 600 --screenshot out.png --scene play --autoplay
    python main.py --bench-frame       cost of one drawn frame

The browser build runs this same file: one asyncio loop, `await asyncio.sleep(0)`
every frame, no threads and nothing that blocks. On the desktop SIGINT (Ctrl-C) and SIGTERM
stop every mode within a second, with exit status 130 or 143 and no traceback; the game saves
its settings first.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("SDL_NO_SIGNAL_HANDLERS", "1")  # SIGINT/SIGTERM are ours (see main)

BROWSER = sys.platform == "emscripten"
FRAME_MS = 1000.0 / 60.0


def load_replay(source: str | None):
    """(replay, None), or (None, a one-line reason) for a code or file that cannot be watched."""
    if not source:
        return None, None
    from engine.replay import ReplayError

    try:
        if BROWSER:  # a page only ever gets a code (?replay=CODE)
            from engine.sharecode import decode

            return decode(source), None
        from engine.replay_cli import load_any

        return load_any(source), None
    except (ReplayError, OSError) as exc:
        return None, str(exc)


async def run_window(opts, stop: list[int], replay=None, problem: str | None = None) -> None:
    """The game in a window (or the page) until it quits, or until a signal lands in `stop`."""
    import pygame

    from ui import theme, web
    from ui.app import GameApp
    from ui.layout import layout_for

    pygame.init()
    theme.font.cache_clear()
    flags = 0 if BROWSER else pygame.SCALED
    layout = web.page_layout() or opts.layout  # in the browser the page picks for the iframe

    def resize(size: tuple[int, int]) -> pygame.Surface:
        return pygame.display.set_mode(size, flags)

    screen = resize(layout_for(layout).size)
    app = GameApp(screen, seed=opts.seed, layout=layout, resize=resize, language=opts.lang)
    pygame.display.set_caption(f"{app.tr.t('game.title_prefix')} {app.tr.t('game.title_header')}")
    if opts.mode is not None:
        app.set_mode(opts.mode)
    app.first_screen(opts, replay, problem)
    last = time.perf_counter()
    frames_left = opts.frames  # None: until the player quits
    frame = 0
    pack_job = None  # the browser's download of a part of the game fetched later (ui.packs)
    pack_name = ""
    while app.running and not stop and frames_left != 0:
        if frames_left is not None:
            frames_left -= 1
        frame += 1
        if BROWSER and frame % web.POLL_FRAMES == 0:
            # The iframe turned or was resized: rearrange every screen, the run carries on.
            wanted = web.page_layout()
            if wanted is not None:
                app.want_layout(wanted)
        if app.wanted_packs and pack_job is None:  # the LAB or the Korean pack, asked for by the player
            from ui import packs
            pack_name = app.wanted_packs[0]
            pack_job = asyncio.ensure_future(packs.fetch(pack_name))
        elif pack_job is not None and pack_job.done():
            app.pack_arrived(pack_name, pack_job.result())
            pack_job = None
        for event in pygame.event.get():
            app.handle(event)
        now = time.perf_counter()
        app.frame((now - last) * 1000.0)
        last = now
        app.draw(app.surface)
        pygame.display.flip()
        app.pump_audio()  # sound effects are made one per frame once the first picture is up
        if not BROWSER:
            # Desktop pacing without blocking the loop; the browser paces frames itself.
            spare = FRAME_MS / 1000.0 - (time.perf_counter() - now)
            if spare > 0.001:
                await asyncio.sleep(spare)
        await asyncio.sleep(0)
    if stop:
        app.save_settings()  # a stopped game keeps what the player chose and achieved
    pygame.quit()


def run_tool(opts) -> int:
    """The headless screenshot or the frame benchmark (imports included: a signal may come early)."""
    if opts.headless:
        from ui import headless
        return headless.run(opts)
    from ui import bench
    return bench.run(opts.frames, opts.seed, opts.layout)


async def main() -> None:
    if BROWSER:  # no command line, no signals: the page runs the game (the CLI modules are not shipped)
        from ui.options import Options
        from ui.share import page_replay_code

        replay, problem = load_replay(page_replay_code())
        await run_window(Options(), [], replay, problem)
        return
    from engine.cli_args import exit_status, failure, run, stop_on_signals
    from ui.cli import parse_or_exit

    opts = parse_or_exit(sys.argv[1:])
    if opts.headless or opts.bench_frame:
        os.environ["SDL_VIDEODRIVER"] = "dummy"
        os.environ["SDL_AUDIODRIVER"] = "dummy"
        # Signals stop the run where it is (130/143); a closed pipe or full disk is one line.
        raise SystemExit(run(run_tool, opts, prog="main.py"))
    replay, problem = load_replay(opts.replay)
    if problem:
        raise SystemExit(failure("main.py", f"cannot watch {(opts.replay or '')[:80]}: {problem}"))
    stop: list[int] = []
    stop_on_signals(stop.append)  # the frame loop sees it, saves and ends
    await run_window(opts, stop, replay, problem)
    if stop:
        raise SystemExit(exit_status(stop[0]))


# pygbag runs this file as its program: no __main__ guard, nothing after this line.
asyncio.run(main())
