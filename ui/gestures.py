"""Touch (and mouse-drag) gestures on the board: drag to move, tap to rotate, flick down to drop."""
from __future__ import annotations

from engine import Input
from ui.layout import CELL

TAP_SLOP = 10  # px a tap may wander
TAP_MS = 280.0
FLICK_PX_PER_MS = 0.9  # downward speed that makes a release a hard drop
FLICK_MIN_PX = 2 * CELL


class BoardGesture:
    """One pointer drag on the board, turned into engine inputs as it goes."""

    def __init__(self, pos: tuple[int, int], time_ms: float) -> None:
        self.start = pos
        self.start_ms = time_ms
        self._anchor_x = pos[0]
        self._anchor_y = pos[1]
        self.moved = False

    def move(self, pos: tuple[int, int]) -> list[Input]:
        out: list[Input] = []
        dx = pos[0] - self._anchor_x
        while abs(dx) >= CELL:
            step = 1 if dx > 0 else -1
            out.append(Input.RIGHT if step > 0 else Input.LEFT)
            self._anchor_x += step * CELL
            dx -= step * CELL
            self.moved = True
        dy = pos[1] - self._anchor_y
        while dy >= CELL:
            out.append(Input.SOFT_DROP)
            self._anchor_y += CELL
            dy -= CELL
            self.moved = True
        if abs(pos[0] - self.start[0]) > TAP_SLOP or abs(pos[1] - self.start[1]) > TAP_SLOP:
            self.moved = True
        return out

    def end(self, pos: tuple[int, int], time_ms: float) -> list[Input]:
        out = self.move(pos)
        duration = max(1.0, time_ms - self.start_ms)
        down = pos[1] - self.start[1]
        if not self.moved and duration <= TAP_MS:
            return [Input.ROTATE_CW]
        if down >= FLICK_MIN_PX and down / duration >= FLICK_PX_PER_MS:
            # A flick: forget the soft drops it produced on the way, drop at once.
            return [i for i in out if i is not Input.SOFT_DROP] + [Input.HARD_DROP]
        return out
