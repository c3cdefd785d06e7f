"""Where everything sits, for each canvas the game ships: one description, two arrangements.

`layout_for("landscape")` is the 800 x 580 console of the desktop and wide embeds: telemetry,
allocator, the decode step and system log on the left, the board in the middle, score, hold, the waiting queue,
the preemption panel (mode switch and CPU swap space) and the block table on the right, eight
controls along the bottom.

`layout_for("portrait")` is the 420 x 700 phone screen for a 600 px tall embed 320-480 px wide:
the board as large as it fits on the left, a narrow column with the score, the two gauges that
carry the lesson (VRAM held, usable free memory), the waiting queue, the preemption switch, the
allocator switch and a DETAILS button (system log, block table and every statistic, behind one
tap); the current teaching card across the full width under the board, and seven finger-sized
controls.

Every rectangle is computed here from the canvas size and a few named measures (margin, cell,
touch size); screens read them from the `Layout` their app holds, never from their own numbers.
Rectangles are immutable (x, y, w, h) tuples; wrap one in pygame.Rect to use it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import pygame

from engine import modes, rules

RectT = tuple[int, int, int, int]

BOARD_COLS = rules.WIDTH
BOARD_ROWS = rules.VISIBLE  # visible rows; the engine keeps rules.HIDDEN spawn rows above

LANDSCAPE = "landscape"
PORTRAIT = "portrait"
NAMES: tuple[str, ...] = (LANDSCAPE, PORTRAIT)
SIZES: Mapping[str, tuple[int, int]] = MappingProxyType({LANDSCAPE: (800, 580), PORTRAIT: (420, 700)})

# The embeds each canvas is designed for: a wide one (680 x 600), and a phone at 360 px wide.
TARGET_EMBED: Mapping[str, tuple[int, int]] = MappingProxyType({LANDSCAPE: (680, 600), PORTRAIT: (360, 600)})
TOUCH_CSS_PX = 44  # smallest finger target, in CSS pixels, at the target embed

CONTROL_NAMES: tuple[str, ...] = (
    "left", "right", "rotate_ccw", "rotate_cw", "soft_drop", "hard_drop", "hold", "split",
)
# A phone drags down on the board to soft-drop: seven buttons of a finger's width fit across.
PORTRAIT_CONTROLS: tuple[str, ...] = (
    "left", "right", "rotate_ccw", "rotate_cw", "hard_drop", "hold", "split",
)


@dataclass(frozen=True)
class TextSizes:
    """Font sizes in canvas pixels; `small` is the floor of every text on the canvas."""

    small: int
    body: int
    large: int
    title: int
    huge: int


class CanvasSized:
    """A layout's canvas width and height, read from its ``size``."""

    size: tuple[int, int]

    @property
    def width(self) -> int:
        return self.size[0]

    @property
    def height(self) -> int:
        return self.size[1]


@dataclass(frozen=True)
class Layout(CanvasSized):
    """Every rectangle of every non-LAB screen, for one canvas size."""

    name: str
    size: tuple[int, int]
    text: TextSizes
    touch: int  # smallest tap target, canvas px
    margin: int
    header: RectT
    header_buttons: Mapping[str, RectT]
    board: RectT
    cell: int
    controls: Mapping[str, RectT]
    panels: Mapping[str, RectT]  # the console's panels around the board, by name
    stats: tuple[RectT, ...]  # telemetry cards (landscape: four; portrait: in DETAILS)
    card: RectT  # where a teaching card appears
    log: RectT  # the system log (portrait: inside DETAILS)
    mode_buttons: Mapping[str, RectT]
    preempt_button: RectT  # the preemption-mode switch (swap / recompute)
    dialog: RectT  # pause, crash report and victory
    oom_report: RectT  # a contiguous crash's report, grown for PyTorch's message
    outro: RectT  # a chapter's outro: the tallest dialog (its rows, bar and meaning)
    menu_button: tuple[int, int, int]  # width, height, gap of a dialog's column of buttons
    report_buttons_h: int
    help_close: RectT
    title: Mapping[str, RectT] = field(default_factory=dict)  # the title screen's panels
    title_buttons: Mapping[str, RectT] = field(default_factory=dict)
    details: Mapping[str, RectT] = field(default_factory=dict)  # portrait DETAILS sheet

    @property
    def portrait(self) -> bool:
        return self.name == PORTRAIT

    @property
    def embed_scale(self) -> float:
        """Canvas scale in the target embed (CSS px per canvas px)."""
        ew, eh = TARGET_EMBED[self.name]
        return min(ew / self.width, eh / self.height)

    @property
    def canvas(self) -> pygame.Rect:
        return pygame.Rect(0, 0, *self.size)

    def cell_rect(self, x: int, visible_y: int) -> pygame.Rect:
        """Screen rect of board cell (x, visible row)."""
        return pygame.Rect(self.board[0] + x * self.cell, self.board[1] + visible_y * self.cell,
                           self.cell, self.cell)

    def board_cell_at(self, pos: tuple[int, int]) -> tuple[int, int] | None:
        """Board cell (x, visible row) under a canvas point, or None."""
        bx, by, bw, bh = self.board
        px, py = pos
        if not (bx <= px < bx + bw and by <= py < by + bh):
            return None
        return (px - bx) // self.cell, (py - by) // self.cell


def _row(x: int, y: int, width: int, height: int, names: tuple[str, ...], gap: int) -> dict[str, RectT]:
    """`names` side by side across `width`, equal widths, the spare pixels left at the right."""
    n = len(names)
    w = (width - gap * (n - 1)) // n
    return {name: (x + i * (w + gap), y, w, height) for i, name in enumerate(names)}


def _column(x: int, y: int, width: int, bottom: int, heights: tuple[tuple[str, int | None], ...],
            gap: int) -> dict[str, RectT]:
    """Named boxes stacked downwards from y; the one of height None takes what is left to `bottom`."""
    fixed = sum(h for _, h in heights if h is not None) + gap * (len(heights) - 1)
    rest = bottom - y - fixed
    out: dict[str, RectT] = {}
    for name, h in heights:
        h = rest if h is None else h
        out[name] = (x, y, width, h)
        y += h + gap
    return out


def _touch(css_px: int, name: str) -> int:
    """Canvas px that make at least `css_px` CSS px at the layout's target embed."""
    w, h = SIZES[name]
    ew, eh = TARGET_EMBED[name]
    return math.ceil(css_px / min(1.0, ew / w, eh / h) - 1e-9)


TITLE_SWITCHES = ("help", "lab", "cards", "mute", "endless", "language")  # the title's switch buttons


def _landscape() -> Layout:
    w, h = SIZES[LANDSCAPE]
    m, top, cell = 10, 42, 22
    board = (290, top, cell * BOARD_COLS, cell * BOARD_ROWS)  # 290..510 x 42..482
    col_w = board[0] - 2 * m  # 270
    right_x = board[0] + board[2] + m  # 520
    card_w, card_h, gap = 132, 58, 6
    stats = tuple((m + (i % 2) * (card_w + gap), top + (i // 2) * (card_h + gap), card_w, card_h)
                  for i in range(4))
    panels = {
        "resident": (m, 168, col_w, 20),
        "mode": (m, 192, col_w, 70),
        "mode_note": (m + 6, 244, col_w - 12, 16),
        "step": (m, 268, col_w, 42),  # the decode step: its length, its token budget and use
        "score": (right_x, top, col_w, 70),
        "hold": (right_x, 118, 72, 148),
        "queue": (right_x + 78, 118, col_w - 78, 148),
        "preempt": (right_x, 272, col_w, 54),
        "blocks": (right_x, 332, col_w, 158),
    }
    preempt_button = (right_x + 8, 272 + 24, 112, 24)
    controls_y, controls_h = 498, 74
    dialog = (150, 52, 500, 448)
    oom_report = (80, 38, 640, 536)  # under the header, over the controls (nothing under it answers)
    outro = (80, 4, 640, h - 8)  # over the header too: a run's end, nothing under it answers
    title_panel_h = h - top - 6
    return Layout(
        name=LANDSCAPE, size=(w, h), text=TextSizes(13, 15, 19, 28, 40), touch=44, margin=m,
        header=(0, 0, w, 34),
        header_buttons=MappingProxyType({"help": (522, 5, 84, 24), "mute": (612, 5, 84, 24),
                                         "pause": (702, 5, 88, 24)}),
        board=board, cell=cell,
        controls=MappingProxyType(_row(m, controls_y, w - 2 * m, controls_h, CONTROL_NAMES, 6)),
        panels=MappingProxyType(panels), stats=stats,
        card=(m, 316, col_w, 150), log=(m, 316, col_w, 174),
        mode_buttons=MappingProxyType({"contiguous": (m + 6, 214, 126, 26),
                                       "paged": (m + 138, 214, 126, 26)}),
        preempt_button=preempt_button,
        dialog=dialog, oom_report=oom_report, outro=outro, menu_button=(300, 38, 6), report_buttons_h=38,
        help_close=(w - 130, 10, 116, 30),
        title=MappingProxyType({
            "left": (m, top, col_w, title_panel_h),
            "right": (right_x, top, col_w, title_panel_h),
            "demo_slot": (board[0] - 4, controls_y, board[2] + 8, controls_h),
            "modes": (m + 10, 262, col_w - 20, 32),  # the allocator buttons' row
        }),
        title_buttons=MappingProxyType({
            "start": (m + 10, 356, 250, 56),
            "chapters": (m + 10, 418, 128, 34),  # the guided run, under START...
            "daily": (m + 144, 418, 116, 34),  # ...beside the daily challenge
            **{name: (right_x + 10, 306 + i * 44, 250, 38)
               for i, name in enumerate(TITLE_SWITCHES)},
        }),
    )


def _portrait() -> Layout:
    w, h = SIZES[PORTRAIT]
    m, gap = 8, 6
    touch = _touch(TOUCH_CSS_PX, PORTRAIT)  # 52 canvas px: 44 CSS px at 360 px wide
    header_h = 48
    cell = 23
    board = (m, header_h + 8, cell * BOARD_COLS, cell * BOARD_ROWS)  # 8..238 x 56..516
    side_x = board[0] + board[2] + 10
    side_w = w - m - side_x
    controls_h = 58
    controls_y = h - m - controls_h + 2  # 636..694
    strip_y = board[1] + board[3] + 8
    strip = (m, strip_y, w - 2 * m, controls_y - gap - strip_y)  # full width under the board
    side = _column(side_x, board[1], side_w, board[1] + board[3], (
        ("score", 60), ("vram", 58), ("free", 58), ("queue", 98), ("preempt", touch), ("mode", touch),
        ("details", None),
    ), gap)
    panels = {**side, "strip": strip}
    hb_w, hb_h = 62, 40
    header_buttons = {name: (w - m - (3 - i) * hb_w - (2 - i) * gap, (header_h - hb_h) // 2, hb_w, hb_h)
                      for i, name in enumerate(("help", "mute", "pause"))}
    dialog = (m + 6, header_h + 8, w - 2 * m - 12, h - header_h - 8 - 20)
    oom_report = (4, 4, w - 8, h - 8)  # the whole screen: nothing under the report answers a tap
    title_top = board[1]
    demo_slot = strip
    sx, sw = side_x, side_w
    title_buttons = {
        "start": (sx, board[1] + board[3] - 96, sw, 96),  # under the thumb
        "chapters": (sx, board[1] + board[3] - 96 - gap - touch, sw, touch),  # the guided run, over START
        **_row(m, controls_y, w - 2 * m, controls_h, (*TITLE_SWITCHES[:-1], "daily"), gap),
        "language": (w - m - hb_w, (header_h - hb_h) // 2, hb_w, hb_h),  # in the header, by the title
    }
    details_top = header_h + 8
    return Layout(
        name=PORTRAIT, size=(w, h), text=TextSizes(14, 16, 20, 28, 40), touch=touch, margin=m,
        header=(0, 0, w, header_h), header_buttons=MappingProxyType(header_buttons),
        board=board, cell=cell,
        controls=MappingProxyType(_row(m, controls_y, w - 2 * m, controls_h, PORTRAIT_CONTROLS, 5)),
        panels=MappingProxyType(panels), stats=(),
        card=strip, log=(m, details_top + 308, w - 2 * m, h - m - touch - gap - (details_top + 308)),
        mode_buttons=MappingProxyType({"toggle": side["mode"]}),
        preempt_button=side["preempt"],
        dialog=dialog, oom_report=oom_report, outro=oom_report, menu_button=(300, touch, 10),
        report_buttons_h=touch,
        help_close=(w - m - 110, (header_h - hb_h) // 2, 110, hb_h),
        title=MappingProxyType({"side": (sx, title_top, sw, board[3]), "demo_slot": demo_slot,
                                "modes": (sx, title_top + 26, sw, len(modes.MODES) * (touch + gap) - gap)}),
        title_buttons=MappingProxyType(title_buttons),
        details=MappingProxyType({
            "stats": (m, details_top, w - 2 * m, 100),
            "blocks": (m, details_top + 106, w - 2 * m, 196),
            "close": (m, h - m - touch, w - 2 * m, touch),
        }),
    )


_LAYOUTS: Mapping[str, Layout] = MappingProxyType({LANDSCAPE: _landscape(), PORTRAIT: _portrait()})


def layout_for(name: str) -> Layout:
    """The layout called `name` ("landscape" or "portrait")."""
    try:
        return _LAYOUTS[name]
    except KeyError:
        raise ValueError(f"unknown layout {name!r}; choose from {', '.join(NAMES)}") from None


def rect(r: RectT) -> pygame.Rect:
    """A fresh pygame.Rect for a layout tuple."""
    return pygame.Rect(r)


# The landscape console's rectangles under their old names, for code that predates layouts
# (the LAB screen draws its own 800 x 580 canvas).
_L = _LAYOUTS[LANDSCAPE]
CELL = _L.cell
MARGIN = _L.margin
HEADER = _L.header
TOP = _L.board[1]
BOARD = _L.board
STATS = _L.stats
RESIDENT = _L.panels["resident"]
MODE_PANEL = _L.panels["mode"]
MODE_CONTIGUOUS_BTN = _L.mode_buttons["contiguous"]
MODE_PAGED_BTN = _L.mode_buttons["paged"]
MODE_NOTE = _L.panels["mode_note"]
LOG = _L.log
CARD = _L.card
SCORE = _L.panels["score"]
HOLD = _L.panels["hold"]
QUEUE = _L.panels["queue"]
PREEMPT = _L.panels["preempt"]
BLOCK_TABLE = _L.panels["blocks"]
CONTROLS_Y = _L.controls["left"][1]
CONTROLS_H = _L.controls["left"][3]
HEADER_BUTTONS = _L.header_buttons
DIALOG = _L.dialog


def control_rects() -> dict[str, RectT]:
    """The landscape console's eight control buttons."""
    return dict(_L.controls)


def cell_rect(x: int, visible_y: int) -> pygame.Rect:
    return _L.cell_rect(x, visible_y)


def board_cell_at(pos: tuple[int, int]) -> tuple[int, int] | None:
    return _L.board_cell_at(pos)
