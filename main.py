"""PagedAttention: VRAM Tetris - entry point for the browser (pygbag), the desktop and headless tools.

    python main.py                     play in a window
    python main.py --frames 60         play in a window for 60 frames, then leave (smoke tests)
    python main.py --daily             today's daily challenge (the same requests for everyone)
    python main.py --replay CODE_OR_FILE   watch a recorded run (in the browser: ?replay=CODE)
    python main.py --headless --frames 10800 --scene play --autoplay --record run.json
    python main.py --headless --frames 600 --screenshot out.png --scene play --autoplay
    python main.py --bench-frame       cost of one drawn frame

The browser build runs this same file: one asyncio loop, `await asyncio.sleep(0)`
every frame, no threads and nothing that blocks.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

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


async def run_window(opts, replay=None, problem: str | None = None) -> None:
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
    pygame.display.set_caption("PagedAttention: VRAM Tetris")
    app = GameApp(screen, seed=opts.seed, layout=layout, resize=resize)
    if opts.mode is not None:
        app.set_mode(opts.mode)
    if replay is not None:
        app.watch(replay)
    elif opts.daily:
        app.start_game(opts.mode, autoplay=opts.autoplay, daily=app.today())
    elif (opts.scene or ("play" if opts.autoplay else "title")) == "play":
        app.start_game(opts.mode, autoplay=opts.autoplay)
    else:
        app.show_title(notice=f"replay link: {problem}" if problem else "")
    last = time.perf_counter()
    frames_left = opts.frames  # None: until the player quits
    frame = 0
    while app.running and frames_left != 0:
        if frames_left is not None:
            frames_left -= 1
        frame += 1
        if BROWSER and frame % web.POLL_FRAMES == 0:
            # The iframe turned or was resized: rearrange every screen, the run carries on.
            wanted = web.page_layout()
            if wanted is not None:
                app.want_layout(wanted)
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
    pygame.quit()


async def main() -> None:
    from ui.cli import Options, parse_or_exit

    opts = Options() if BROWSER else parse_or_exit(sys.argv[1:])
    if opts.headless or opts.bench_frame:
        os.environ["SDL_VIDEODRIVER"] = "dummy"
        os.environ["SDL_AUDIODRIVER"] = "dummy"
        if opts.headless:
            from ui import headless
            code = headless.run(opts)
        else:
            from ui import bench
            code = bench.run(opts.frames, opts.seed, opts.layout)
        raise SystemExit(code)
    if BROWSER:
        from ui.share import page_replay_code

        replay, problem = load_replay(page_replay_code())
    else:
        replay, problem = load_replay(opts.replay)
        if problem:
            print(f"main.py: error: cannot watch {opts.replay}: {problem}", file=sys.stderr)
            raise SystemExit(2)
    await run_window(opts, replay, problem)


# pygbag runs this file as its program: no __main__ guard, nothing after this line.
asyncio.run(main())
