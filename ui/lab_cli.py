"""``python -m ui.lab_scene``: the LAB headless, for frame times and screenshots.

Runs the LAB screen without a window: prints frame times (update = engine steps
and map refresh, draw = the drawn frame), or with --bench a table per dataset,
speed and sharing scenario; optionally saves a screenshot. The engines advance a
fixed amount of simulated time per frame, so the same options give the same
picture on any machine.

The command is ``python -m ui.lab_scene`` (the screen's ``__main__`` block hands its arguments to
``run``); this module imports the screen, the screen imports nothing of it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from engine import cli_args
from engine.cli_args import whole
from ui.cli import quiet_pygame, screenshot_problem
from ui.i18n import LANGUAGES, catalogue, locale_tag, reader_language
from ui.lab_layout import LAYOUTS

DATASETS = ("sharegpt", "alpaca", "translation")
SCENARIOS = ("basic", "parallel", "beam", "prefix")
SPEEDS = (1, 4, 16)


def build_parser() -> argparse.ArgumentParser:
    parser = cli_args.parser(
        "python -m ui.lab_scene",
        "Run the LAB screen headless: frame times, a benchmark table or a screenshot.")
    parser.add_argument("--bench", action="store_true", help="time every dataset and speed, and each sharing scenario")
    parser.add_argument("--screenshot", metavar="PATH", help="save the last frame as a PNG file here")
    parser.add_argument("--frames", type=whole(1, 100_000), default=900, help="frames to run, 1 to 100000")
    parser.add_argument("--dataset", choices=DATASETS, default="sharegpt", help="request lengths")
    parser.add_argument("--scenario", choices=SCENARIOS, default="basic",
                        help="memory sharing: basic, parallel (4 samples), beam (width 4), prefix (one-shot)")
    parser.add_argument("--speed", type=whole(min(SPEEDS), max(SPEEDS)), choices=SPEEDS, default=4, help="simulated seconds per second")
    parser.add_argument("--select", action="store_true",
                        help="click the paged block most sequences point at (the busiest request's without sharing)")
    parser.add_argument("--layout", choices=tuple(LAYOUTS), default="landscape",
                        help="canvas: landscape 800x580 or portrait 420x700")
    parser.add_argument("--lang", choices=LANGUAGES, default=reader_language(locale_tag()),
                        help="language of the screen (default from the locale)")
    return parser


class _StandaloneApp:
    """Just enough of the App protocol to show the LAB on its own."""

    def __init__(self, size: tuple[int, int], language: str = "en") -> None:
        from ui.text import TextCache

        self.text = TextCache()
        self.tr = catalogue(language)
        self.canvas_size = size
        self.scenes: list = []
        self.popped = False

    def push(self, scene) -> None:
        self.scenes.append(scene)

    def pop(self) -> None:
        self.popped = True

    def replace(self, scene) -> None:
        self.scenes[-1:] = [scene]


def open_lab(dataset: str, speed: int, scenario: str = "basic", size: tuple[int, int] = LAYOUTS["landscape"],
             language: str = "en"):
    """A LAB on its own, set up (its first frames draw the trace) and ready to run."""
    from ui import theme
    from ui.lab_scene import LabScene

    scene = LabScene(_StandaloneApp(size, language), size=size)
    while scene.dataset != dataset:
        scene.command("dataset")
    while scene.scenario != scenario:
        scene.command("scenario")
    scene.speed = speed
    while not scene.ready:
        scene.update(theme.STEP_MS)
    return scene


def frames(scene, canvas, count: int, every: int = 0, actions: tuple[str, ...] = ()):
    """Run ``count`` frames; every ``every`` frames press the next of ``actions``.

    Returns wall-clock update and draw times and the frame's CPU time, in ms.
    """
    from ui import theme

    update_ms, draw_ms, cpu_ms = [], [], []
    for k in range(count):
        c0 = time.process_time()
        t0 = time.perf_counter()
        if every and k and k % every == 0:  # the press is part of its frame
            scene.command(actions[(k // every - 1) % len(actions)])
        scene.update(theme.STEP_MS)
        t1 = time.perf_counter()
        scene.draw(canvas)
        t2 = time.perf_counter()
        cpu_ms.append((time.process_time() - c0) * 1000)
        update_ms.append((t1 - t0) * 1000)
        draw_ms.append((t2 - t1) * 1000)
    return update_ms, draw_ms, cpu_ms


def select_busiest(scene) -> None:
    """Click the paged block most sequences point at (without sharing: the busiest request's first block)."""
    paged = scene.sides[1]
    paged.dirty = True
    paged.refresh_map(limit=None)
    view = paged.view
    if view is None or not view.owned:
        return
    pool = paged.sim.pool
    held = [b for b in range(len(view.cells)) if view.cells[b] >= 0 and b not in pool.pinned]
    if not held:
        return
    block = max(held, key=lambda b: (pool.refs[b], -b))
    if pool.refs[block] < 2:
        rid = max(view.owned, key=lambda r: len(view.owned[r]))
        block = view.owned[rid][0]
    scene.click(paged.map.grid.rect(block).center)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def bench(canvas, count: int, size: tuple[int, int]) -> None:
    """Frame times for each dataset and speed, each sharing scenario, and while switching."""
    print(f"LAB frame times in ms, {count} frames (60 fps steps) per row once the trace is drawn, a block "
          "selected after 60 frames.")
    print("frame = update (engine steps, map refresh) + draw; wall clock, and CPU time of the process.")
    print(f"{'':40} {'wall':>27}   {'CPU':>20}")
    print(f"{'scenario':40} {'draw med':>8} {'frame med':>9} {'p99':>6} {'max':>6}   "
          f"{'med':>6} {'p99':>6} {'max':>6}")
    rows: list[tuple[str, int, str, tuple[str, ...]]] = [(d, s, "basic", ()) for d in ("sharegpt", "alpaca") for s in SPEEDS]
    rows += [("sharegpt", 16, name, ()) for name in ("parallel", "beam")] + [("translation", 16, "prefix", ())]
    rows.append(("sharegpt", 4, "basic", ("scenario", "contiguous", "dataset", "restart")))
    names = {"sharegpt": "ShareGPT", "alpaca": "Alpaca", "translation": "WMT16"}
    for dataset, speed, scenario, actions in rows:
        scene = open_lab(dataset, speed, scenario, size)
        frames(scene, canvas, 60)
        select_busiest(scene)
        update_ms, draw_ms, cpu_ms = frames(scene, canvas, count, 120 if actions else 0, actions)
        frame_ms = [u + d for u, d in zip(update_ms, draw_ms)]
        name = f"{names[dataset]} x{speed}" + (f" {scenario}" if scenario != "basic" else "")
        name += ", a control pressed every 2 s" if actions else ""
        print(f"{name:40} {statistics.median(draw_ms):8.2f} {statistics.median(frame_ms):9.2f} "
              f"{_pct(frame_ms, 0.99):6.2f} {max(frame_ms):6.2f}   {statistics.median(cpu_ms):6.2f} "
              f"{_pct(cpu_ms, 0.99):6.2f} {max(cpu_ms):6.2f}")


def init_display(size: tuple[int, int]):
    """A display on SDL's dummy driver (fonts loaded afresh) and a canvas of `size` to draw on."""
    quiet_pygame()
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    import pygame

    from ui import theme

    pygame.display.init()
    pygame.font.init()
    theme.font.cache_clear()
    pygame.display.set_mode(size)
    return pygame.Surface(size)


def render(args: argparse.Namespace, canvas) -> tuple[list[float], list[float]]:
    """Run the LAB as `args` (build_parser's) ask and draw its last frame on `canvas`, a surface
    of the layout's size; returns each frame's update and draw times in ms (wall clock: they
    never reach the picture)."""
    scene = open_lab(args.dataset, args.speed, args.scenario, canvas.get_size(), args.lang)
    update_ms, draw_ms, _ = frames(scene, canvas, args.frames)
    if args.select:
        select_busiest(scene)
    scene.bring_up_to_date()
    scene.draw(canvas)
    return update_ms, draw_ms


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.screenshot is not None:
        problem = screenshot_problem(args.screenshot)
        if problem:
            parser.error(problem)
    size = LAYOUTS[args.layout]
    canvas = init_display(size)
    import pygame

    if args.bench:
        bench(canvas, args.frames, size)
        return 0
    update_ms, draw_ms = render(args, canvas)
    frame_ms = [u + d for u, d in zip(update_ms, draw_ms)]
    print(f"frames {args.frames}: draw median {statistics.median(draw_ms):.2f} ms, "
          f"update median {statistics.median(update_ms):.2f} ms, frame (update + draw) median "
          f"{statistics.median(frame_ms):.2f} ms, p99 {_pct(frame_ms, 0.99):.2f} ms")
    if args.screenshot:
        try:
            pygame.image.save(canvas, args.screenshot)
        except (OSError, pygame.error) as exc:
            return cli_args.failure("python -m ui.lab_scene", f"cannot write {args.screenshot}: {exc}")
        print(f"saved {args.screenshot}")
    return 0


def run(argv: list[str] | None = None) -> int:
    """``main`` under the shared command-line policy (SIGINT/SIGTERM -> 130/143, no traceback)."""
    return cli_args.run(main, argv, prog="python -m ui.lab_scene")


if __name__ == "__main__":
    raise SystemExit(run())
