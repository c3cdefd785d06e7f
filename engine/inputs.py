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
    # Scheduling (rules 4: engine.features.pick and chunked_prefill; no-ops without them):
    PICK_1 = "PICK_1"  # the first, second or third waiting request runs next
    PICK_2 = "PICK_2"
    PICK_3 = "PICK_3"
    BUDGET_UP = "BUDGET_UP"  # the step's token budget: the next of rules.BUDGETS up or down
    BUDGET_DOWN = "BUDGET_DOWN"
    SPEC_UP = "SPEC_UP"  # speculative decoding: one draft token more or fewer a step (rules.SPEC_KS)
    SPEC_DOWN = "SPEC_DOWN"
