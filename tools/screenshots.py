"""Render the screenshots the README and the docs show, from the current build, into docs/.

Every shot is a command line of the game's own headless tools, `main.py --headless` or the LAB's
`python -m ui.lab_scene`, written down once in SHOTS below (file, arguments, what it shows) and
rendered here in one process by the functions those tools call (ui.headless.render,
ui.lab_cli.render), so each picture is exactly what its command line saves. Nothing drawn depends
on the machine or the day: every shot fixes its seed, frame count and language, and the game's
shots the date the title shows (--day).

A picture whose pixels did not change is left alone (a PNG encoder may write the same pixels in
other bytes); a changed one replaces the old file in one step, so a stopped run never leaves half
a PNG. tests/test_screenshots.py renders every shot again and fails when a committed picture
differs from the render.

Usage:
    python tools/screenshots.py [--out docs] [--only NAME,...] [--check] [--list]
Exit status: 0 rendered (or, with --check, every picture matches), 1 a picture differs (--check)
or cannot be written, 2 bad usage, 130/143 stopped by SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _headless import ROOT

from engine import cli_args  # noqa: E402

PROG = "screenshots.py"
DOCS = ROOT / "docs"
GAME = "main.py"  # python main.py --headless --screenshot FILE ARGS
LAB = "ui.lab_scene"  # python -m ui.lab_scene --screenshot FILE ARGS
DAY = "2025-06-01"  # the date the title offers its daily run on, the same in every render


@dataclass(frozen=True)
class Shot:
    name: str  # the file in docs/
    tool: str  # GAME or LAB
    args: str  # the tool's arguments besides --headless and --screenshot
    shows: str  # what the picture is for

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.args)

    def command(self, folder: str = "docs") -> str:
        """The command line that saves this picture on its own."""
        start = "python main.py --headless" if self.tool == GAME else "python -m ui.lab_scene"
        return f"{start} --screenshot {folder}/{self.name} {self.args}"


# One list: the README's and the docs' pictures. Game shots name their seed, frames, language
# and day; the LAB's its frames and language (its engines are seeded by the screen itself).
SHOTS: tuple[Shot, ...] = (
    Shot("screenshot-play.png", GAME,
         f"--scene play --autoplay --mode paged --seed 2 --frames 38400 --lang en --day {DAY}",
         "the landscape console late in a paged run: most of VRAM held by dozens of decoding "
         "requests, and the block table of a request just split into pages in scattered holes"),
    Shot("screenshot-portrait.png", GAME,
         f"--scene play --autoplay --mode paged --seed 2 --frames 38400 --layout portrait --lang en --day {DAY}",
         "the same moment on the phone's portrait screen"),
    Shot("screenshot-ko-play.png", GAME,
         f"--scene play --autoplay --mode contiguous --seed 1 --frames 3000 --lang ko --day {DAY}",
         "the console in Korean, in contiguous mode: hatched reservations, waste and "
         "fragmentation, a block table of reserved blocks, a request falling and one waiting"),
    Shot("screenshot-title.png", GAME,
         f"--scene title --seed 7 --frames 3600 --lang en --day {DAY}",
         "the title screen, the bot's contiguous demo behind the menu"),
    Shot("screenshot-help.png", GAME,
         f"--scene help --seed 7 --frames 10 --lang en --day {DAY}",
         "the help page: controls and the concept map"),
    Shot("screenshot-oom.png", GAME,
         f"--scene oom --mode contiguous --seed 3 --frames 10 --lang en --day {DAY}",
         "a contiguous run's crash report: a CUDA OOM with most free blocks sealed off "
         "(external fragmentation) met by a hurried player"),
    Shot("screenshot-victory.png", GAME,
         f"--scene victory --mode paged --seed 2 --frames 300 --lang en --day {DAY}",
         "a strong bot's paged run served to its goal: the report, peak VRAM and the share code"),
    Shot("screenshot-lab.png", LAB,
         "--frames 900 --speed 16 --scenario parallel --select --lang en",
         "the LAB: one trace served by a contiguous engine and by the paged one, four parallel "
         "samples sharing blocks, the block most sequences point at selected"),
)


def find(names: list[str]) -> list[Shot]:
    """The shots named (a file name, or it without `screenshot-` and `.png`), in SHOTS' order."""
    short = {s.name.removeprefix("screenshot-").removesuffix(".png"): s for s in SHOTS}
    wanted = set()
    for name in names:
        shot = short.get(name) or next((s for s in SHOTS if s.name == name), None)
        if shot is None:
            raise argparse.ArgumentTypeError(f"no shot {name[:40]!r} (choose from {', '.join(short)})")
        wanted.add(shot.name)
    return [s for s in SHOTS if s.name in wanted]


# --------------------------------------------------------------------------- rendering


def render(shot: Shot, path: Path, say=print) -> None:
    """Render `shot` with its tool's own functions and save it as the PNG `path`."""
    import pygame

    if shot.tool == GAME:
        from ui import cli, headless

        opts = cli.parse(["--headless", "--screenshot", str(path), *shot.argv])
        with tempfile.TemporaryDirectory(prefix="vram-tetris-shot-") as data:
            app, note = headless.render(opts, data, say=lambda line: say(f"{shot.name}: {line}"))
            if note:
                say(f"{shot.name}: {note}")
            pygame.image.save(app.surface, str(path))
    else:
        from ui import lab_cli
        from ui.lab_layout import LAYOUTS

        args = lab_cli.build_parser().parse_args(shot.argv)
        canvas = lab_cli.init_display(LAYOUTS[args.layout])
        lab_cli.render(args, canvas)
        pygame.image.save(canvas, str(path))


def pixels(path: Path) -> tuple[tuple[int, int], bytes]:
    """A PNG's size and its decoded pixels (RGBA bytes): what it shows, whatever encoded it."""
    import pygame

    image = pygame.image.load(str(path))
    return image.get_size(), pygame.image.tobytes(image, "RGBA")


def difference(a: Path, b: Path) -> str:
    """How two PNGs differ as pictures: "" when their pixels are the same."""
    (size_a, data_a), (size_b, data_b) = pixels(a), pixels(b)
    if size_a != size_b:
        return f"{size_a[0]}x{size_a[1]} against {size_b[0]}x{size_b[1]} pixels"
    if data_a == data_b:
        return ""
    differ = sum(x != y for x, y in zip(memoryview(data_a).cast("I"), memoryview(data_b).cast("I")))
    return f"{differ:,} of {size_a[0] * size_a[1]:,} pixels differ"


def shown(path: Path) -> str:
    """`path` as a reader finds it: relative to the current folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def replace(source: Path, target: Path) -> None:
    """Put a copy of `source` at `target` in one step (never half a file there)."""
    part = target.with_name(f".{target.name}.part")
    try:
        shutil.copyfile(source, part)
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


# --------------------------------------------------------------------------- command line


def build_parser() -> cli_args.OneLineParser:
    parser = cli_args.parser(PROG, __doc__.splitlines()[0])
    parser.add_argument("--out", type=cli_args.output_dir(), default=None, metavar="DIR",
                        help="folder to render into, or with --check to compare with (default: docs/ "
                             "of this checkout)")
    parser.add_argument("--only", type=cli_args.listing(str, len(SHOTS)), metavar="NAME,...",
                        help="render these shots only (play, ko-play, ... or their file names; default: all)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: fail unless every picture in --out is what the build renders")
    parser.add_argument("--list", action="store_true", help="print every shot, its command line and what it shows")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        shots = find(args.only) if args.only else list(SHOTS)
    except argparse.ArgumentTypeError as exc:
        parser.error(f"--only: {exc}")
    out: Path = DOCS if args.out is None else args.out
    if args.list:
        for shot in shots:
            print(f"{shot.name}: {shot.shows}\n    {shot.command()}")
        return 0
    if args.check and not out.is_dir():
        parser.error(f"--out: no folder {str(out)[:80]!r} to check")
    out.mkdir(parents=True, exist_ok=True)
    differ: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="vram-tetris-shots-") as scratch:
        for shot in shots:
            begin = time.perf_counter()
            made, kept = Path(scratch) / shot.name, out / shot.name
            render(shot, made, say=lambda line: print(f"{PROG}: {line}", file=sys.stderr))
            how = difference(made, kept) if kept.is_file() else "missing" if args.check else "new"
            took = f"{time.perf_counter() - begin:.1f} s"
            if not how:
                print(f"{shown(kept)}: the same ({took})")
                continue
            if args.check:
                differ.append(f"{shot.name} ({how})")
                print(f"{shown(kept)}: DIFFERS, {how} ({took})")
                continue
            try:
                replace(made, kept)
            except OSError as exc:
                return cli_args.failure(PROG, f"cannot write {shown(kept)}: {exc.strerror or exc}")
            print(f"{shown(kept)}: {'written' if how == 'new' else 'updated, ' + how} ({took})")
    print(f"{len(shots)} screenshots in {time.perf_counter() - started:.1f} s")
    if differ:
        return cli_args.failure(PROG, f"{len(differ)} of {len(shots)} screenshots are not what the "
                                      f"build renders: {', '.join(differ)} (./build.sh screenshots remakes them)")
    return 0


if __name__ == "__main__":
    sys.exit(cli_args.run(main, prog=PROG))
