"""Frame benchmark: the cost of drawing one frame of a busy game, in microseconds.

Busy means a board at least 85 % held, shared prompt blocks among them, a full queue panel, the
decode step's budget bar, a full system log, a teaching card, a fresh block table with its
highlighted cells, and finished requests' blocks fading out.

    python -m ui.bench [--frames N] [--seed S] [--layout landscape|portrait]

(the same as `python main.py --bench-frame`).
"""
from __future__ import annotations

import statistics
import tempfile
import time

from engine import events as ev
from engine import rules as R
from engine import cli_args
from engine.cli_args import Progress
from ui import theme
from ui.effects import Fade
from ui.headless import init_display, make_app
from ui.play_scene import PlayScene

DEFAULT_FRAMES = 600


BUSY_SHARE = 0.85  # VRAM held by running requests when the board counts as busy
BUSY_SKILL = 0.8  # a careful bot fills memory before the queue overflows
BUSY_STEPS = 120_000  # fixed steps a try may take (about 33 game minutes)


def busy(play: PlayScene) -> bool:
    """The board is busy: memory nearly full with shared blocks on it, the queue panel full, a
    block table to show and a full log."""
    game = play.game
    s = game.serving
    return (game.telemetry().utilisation >= BUSY_SHARE and s.pool.shared > 0
            and len(s.waiting) >= R.NEXT_QUEUE and game.block_table is not None
            and len(play.session.log.entries) >= 12)


def busy_play(app, seed: int) -> PlayScene:
    """A paged game played by the bot until memory is nearly full and requests queue."""
    for attempt in range(20):
        play = PlayScene(app, mode="paged", seed=seed + attempt, autoplay=True, endless=True)
        assert play.autopilot is not None  # autoplay=True
        play.autopilot.steps_per_input = 1
        play.autopilot.bot.skill = BUSY_SKILL
        app.reset(play)
        for i in range(BUSY_STEPS):
            play.update(theme.STEP_MS)
            if play.game.over:
                break
            if i % 8 == 0 and busy(play):
                return play
    raise RuntimeError("could not build a busy board")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def run(frames: int | None = None, seed: int | None = None, layout: str = "landscape") -> int:
    surface = init_display()
    n = frames or DEFAULT_FRAMES
    with tempfile.TemporaryDirectory(prefix="vram-tetris-bench-") as data_dir:
        app = make_app(surface, 1 if seed is None else seed, data_dir, "paged", layout)
        surface = app.surface
        play = busy_play(app, 1 if seed is None else seed)
        play.autopilot = None
        game = play.game
        draw_us: list[float] = []
        draw_cpu_us: list[float] = []  # CPU time only: steady on a machine busy with other work
        step_us: list[float] = []
        progress = Progress("frames", n)  # shown on a terminal only
        for i in range(n):
            if i & 255 == 255:
                progress.update(i + 1)
            if i % 120 == 0:
                # Keep every costly layer on screen: card, block-table highlight, fading blocks.
                bt = game.block_table
                play.cards.show("split", tuple(c for _, c in bt.entries) if bt else ())
                if bt is not None:
                    origin = tuple((x, 0) for _, (x, _) in bt.entries)
                    play.session.consume([ev.PageSplit(bt, 0, origin)])
                low = [(x, y) for y in range(game.board.height - 2, game.board.height)
                       for x in range(game.board.width)]
                play.session.effects.fades.append(Fade(low, (255, 200, 60)))
            if i % 20 == 0:
                play.session.log.add(game.time_ms, "WARN" if i % 40 else "INFO",
                                     f"[BENCH] frame {i}: synthetic log line to re-render the console")
            t0 = time.perf_counter()
            play.update(theme.STEP_MS)
            t1 = time.perf_counter()
            c1 = time.thread_time()
            app.draw(surface)
            c2 = time.thread_time()
            t2 = time.perf_counter()
            step_us.append((t1 - t0) * 1e6)
            draw_us.append((t2 - t1) * 1e6)
            draw_cpu_us.append((c2 - c1) * 1e6)
        progress.close()
        tele = game.telemetry()
    s = game.serving
    print(f"frame benchmark ({app.layout.name} {app.layout.width}x{app.layout.height}): {n} frames, "
          f"board {tele.utilisation * 100:.0f} % used, {s.pool.shared} shared blocks, "
          f"{len(s.waiting)} waiting, budget {s.prefill.budget if s.prefill else '-'} tokens, "
          f"{len(play.session.log.entries)} log entries, card and block table showing")
    print(f"draw   median {statistics.median(draw_us):8.0f} us   p99 {percentile(draw_us, 0.99):8.0f} us")
    print(f"  cpu  median {statistics.median(draw_cpu_us):8.0f} us   p99 {percentile(draw_cpu_us, 0.99):8.0f} us"
          "   (draw, this thread's CPU time)")
    print(f"step   median {statistics.median(step_us):8.0f} us   p99 {percentile(step_us, 0.99):8.0f} us")
    total = [a + b for a, b in zip(draw_us, step_us)]
    print(f"total  median {statistics.median(total):8.0f} us   p99 {percentile(total, 0.99):8.0f} us"
          f"   (budget at 60 fps: 16667 us)")
    for name, us in other_screens(surface, max(60, n // 2), 1 if seed is None else seed, layout).items():
        print(f"{name:<7}median {statistics.median(us):8.0f} us   p99 {percentile(us, 0.99):8.0f} us"
              "   (step + draw)")
    return 0


def other_screens(surface, frames: int, seed: int, layout: str = "landscape") -> dict[str, list[float]]:
    """Step + draw cost of the title (bot playing), the pause menu and the crash report."""
    from ui.headless import force_oom
    from ui.title_scene import TitleScene

    out: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="vram-tetris-bench-") as data_dir:
        app = make_app(surface, seed, data_dir, "paged", layout)
        surface = app.surface

        def time_frames(name: str) -> None:
            us = out[name] = []
            for _ in range(frames):
                t0 = time.perf_counter()
                app.update(theme.STEP_MS)
                app.draw(surface)
                us.append((time.perf_counter() - t0) * 1e6)

        app.reset(TitleScene(app, seed=seed))
        time_frames("title")
        play = PlayScene(app, mode="contiguous", seed=seed)
        app.reset(play)
        app.update(theme.STEP_MS)
        play.pause()
        time_frames("pause")
        app.reset(play)
        force_oom(play)
        while app.top is play:
            app.update(theme.STEP_MS)
        time_frames("report")
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m ui.bench`: parse the command line, then time the frames."""
    from ui.cli import MAX_FRAMES, MAX_SEED, quiet_pygame
    from ui.layout import NAMES as LAYOUTS

    p = cli_args.parser("python -m ui.bench", __doc__.splitlines()[0])
    p.add_argument("--frames", type=cli_args.whole(1, MAX_FRAMES), default=DEFAULT_FRAMES,
                   help=f"frames to time, at most {MAX_FRAMES:,}")
    p.add_argument("--seed", type=cli_args.whole(0, MAX_SEED), default=1, help="seed of the busy game")
    p.add_argument("--layout", choices=LAYOUTS, default="landscape", help="screen arrangement")
    args = p.parse_args(argv)
    quiet_pygame()
    return run(args.frames, args.seed, args.layout)


if __name__ == "__main__":
    raise SystemExit(cli_args.run(main, prog="python -m ui.bench"))
