"""PagedAttention: VRAM Tetris - entry point for the browser (pygbag), the desktop and headless tools.

    python main.py                     play in a window
    python main.py --frames 60         play in a window for 60 frames, then leave (smoke tests)
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


async def run_window(opts) -> None:
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
    if (opts.scene or ("play" if opts.autoplay else "title")) == "play":
        app.start_game(opts.mode, autoplay=opts.autoplay)
    else:
        app.show_title()
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
    await run_window(opts)


# pygbag runs this file as its program: no __main__ guard, nothing after this line.
asyncio.run(main())
