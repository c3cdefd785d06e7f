"""What main.py runs: the game in a window (or the page), a headless screenshot, or the frame
benchmark. The browser builds the defaults; ui.cli (desktop only) fills them from the command line."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ui.layout import LANDSCAPE


@dataclass(frozen=True)
class Options:
    headless: bool = False
    bench_frame: bool = False
    frames: int | None = None
    screenshot: str | None = None
    scene: str | None = None
    mode: str | None = None
    autoplay: bool = False
    seed: int | None = None
    layout: str = LANDSCAPE
    record: str | None = None
    replay: str | None = None
    daily: bool = False
    data_dir: str | None = None
    lang: str | None = None  # None: the player's saved choice, else the reader's language
    endless: bool | None = None  # None: the player's saved choice (a goal run or an endless one)
    day: date | None = None  # headless: the date taken for today (None: the clock's UTC date)
    chapter: int | None = None  # a chapter's run, intro or outro (engine.chapters)
