"""The key presses the engine understands (the UI maps keys, buttons and gestures to these)."""

from __future__ import annotations

from enum import Enum


class Input(str, Enum):
    """A key press, as the engine sees it."""

    LEFT = "LEFT"
    RIGHT = "RIGHT"
    SOFT_DROP = "SOFT_DROP"
    HARD_DROP = "HARD_DROP"
    ROTATE_CW = "ROTATE_CW"
    ROTATE_CCW = "ROTATE_CCW"
    HOLD = "HOLD"
    SPLIT = "SPLIT"
    MODE_CONTIGUOUS = "MODE_CONTIGUOUS"
    MODE_PAGED = "MODE_PAGED"
    MODE_TOGGLE = "MODE_TOGGLE"
    PREEMPT_TOGGLE = "PREEMPT_TOGGLE"
