"""Where everything sits on the 800 x 580 logical canvas.

Rectangles are immutable (x, y, w, h) tuples; wrap one in pygame.Rect to use it.
Left column: telemetry, mode selector, system log. Centre: the board.
Right column: score, hold/next, split meter, block table. Bottom: controls
that work with mouse and touch alike.
"""
from __future__ import annotations

import pygame

from engine import rules
from ui.theme import CANVAS_W

RectT = tuple[int, int, int, int]

CELL = 22
BOARD_COLS = rules.WIDTH
BOARD_ROWS = rules.VISIBLE  # visible rows; the engine keeps rules.HIDDEN spawn rows above

MARGIN = 10
HEADER: RectT = (0, 0, CANVAS_W, 34)
TOP = 42  # first row under the header

BOARD: RectT = (290, TOP, CELL * BOARD_COLS, CELL * BOARD_ROWS)  # 290..510 x 42..482
LEFT: RectT = (MARGIN, TOP, 270, 448)  # 10..280
RIGHT: RectT = (520, TOP, 270, 448)  # 520..790

# Left column.
STAT_CARD_W = 132
STAT_CARD_H = 58
STAT_GAP = 6
STATS: tuple[RectT, RectT, RectT, RectT] = (
    (MARGIN, TOP, STAT_CARD_W, STAT_CARD_H),
    (MARGIN + STAT_CARD_W + STAT_GAP, TOP, STAT_CARD_W, STAT_CARD_H),
    (MARGIN, TOP + STAT_CARD_H + STAT_GAP, STAT_CARD_W, STAT_CARD_H),
    (MARGIN + STAT_CARD_W + STAT_GAP, TOP + STAT_CARD_H + STAT_GAP, STAT_CARD_W, STAT_CARD_H),
)
RESIDENT: RectT = (MARGIN, 168, 270, 20)
MODE_PANEL: RectT = (MARGIN, 192, 270, 70)
MODE_CONTIGUOUS_BTN: RectT = (MARGIN + 6, 214, 126, 26)
MODE_PAGED_BTN: RectT = (MARGIN + 138, 214, 126, 26)
MODE_NOTE: RectT = (MARGIN + 6, 244, 258, 16)
LOG: RectT = (MARGIN, 268, 270, 222)
CARD: RectT = (MARGIN, 268, 270, 132)  # teaching cards sit over the top of the log

# Right column.
SCORE: RectT = (520, TOP, 270, 70)
HOLD: RectT = (520, 118, 72, 124)
NEXT: RectT = (598, 118, 192, 124)
SPLIT_METER: RectT = (520, 248, 270, 50)
BLOCK_TABLE: RectT = (520, 304, 270, 186)

# Bottom control bar: one button per game action, usable by mouse and touch.
CONTROLS_Y = 498
CONTROLS_H = 74
CONTROL_NAMES: tuple[str, ...] = (
    "left", "right", "rotate_ccw", "rotate_cw", "soft_drop", "hard_drop", "hold", "split",
)


def control_rects() -> dict[str, RectT]:
    """The eight touch/mouse control buttons spread across the bottom bar."""
    n = len(CONTROL_NAMES)
    gap = 6
    w = (CANVAS_W - 2 * MARGIN - gap * (n - 1)) // n
    return {
        name: (MARGIN + i * (w + gap), CONTROLS_Y, w, CONTROLS_H)
        for i, name in enumerate(CONTROL_NAMES)
    }


# Header buttons (top right).
HEADER_BUTTONS: dict[str, RectT] = {
    "help": (560, 5, 72, 24),
    "mute": (638, 5, 72, 24),
    "pause": (716, 5, 74, 24),
}

# Centred dialog used by pause, crash report and victory overlays.
DIALOG: RectT = (160, 70, 480, 410)


def rect(r: RectT) -> pygame.Rect:
    """A fresh pygame.Rect for a layout tuple."""
    return pygame.Rect(r)


def cell_rect(x: int, visible_y: int) -> pygame.Rect:
    """Screen rect of board cell (x, visible row)."""
    return pygame.Rect(BOARD[0] + x * CELL, BOARD[1] + visible_y * CELL, CELL, CELL)


def board_cell_at(pos: tuple[int, int]) -> tuple[int, int] | None:
    """Board cell (x, visible row) under a canvas point, or None."""
    bx, by, bw, bh = BOARD
    px, py = pos
    if not (bx <= px < bx + bw and by <= py < by + bh):
        return None
    return (px - bx) // CELL, (py - by) // CELL
