"""Game rules as data: board size, timing, scoring, gravity, charge and token accounting."""

from __future__ import annotations

# Bumped whenever a rule change makes the same seed and inputs play out differently: a replay
# records the version it was played under, so an old run reports why it no longer verifies.
# tests/test_sharecode.py keeps runs recorded under each version and fails until it is bumped.
RULES_VERSION = 1

WIDTH = 10
VISIBLE = 20
HIDDEN = 2  # spawn rows above the visible board
HEIGHT = VISIBLE + HIDDEN
VISIBLE_CELLS = WIDTH * VISIBLE

NEXT_QUEUE = 3
LOCK_DELAY_MS = 500.0
MAX_LOCK_RESETS = 15

SOFT_DROP_POINTS = 1  # per cell
HARD_DROP_POINTS = 2  # per cell
LINE_POINTS = {1: 100, 2: 300, 3: 500, 4: 800}  # x level
LINES_PER_LEVEL = 10
VICTORY_LINES = 40
# No run scores more: one piece per 60 Hz frame for 46 hours (the longest replay, 10 million
# frames) clears under 4 million lines, worth under 2 x 10^14 at the levels those lines reach.
# A saved best score above this did not come from a run.
MAX_SCORE = 10**15

# Each cell is one KV-cache block of 16 tokens (vLLM's default block size, as in the LAB), so
# a cleared row of ten blocks dispatches 160 tokens (the original article counted 200 a line).
TOKENS_PER_BLOCK = 16
TOKENS_PER_LINE = TOKENS_PER_BLOCK * WIDTH
BLOCKS_PER_REQUEST = 4  # a tetromino: the blocks a request needs before it can be admitted

# Contiguous allocators reserve each request's maximum length up front. In the game a placed
# request also holds up to RESERVE_BLOCKS free blocks right on top of it (the room its output
# may still need; engine.reservation says which): drawn hatched, counted as reserved-but-empty,
# and returned when the request finishes (a row holding its tokens is garbage-collected).
RESERVE_BLOCKS = 1

# The player's split (Shift/P) meter, as a fraction of full charge. A game rule that paces a
# power move, not a cost of vLLM: paging on demand never waits for it.
CHARGE_START = 1.0
CHARGE_PER_LINE = 0.25
CHARGE_PER_SECOND = 0.015  # only while in paged mode

THROUGHPUT_WINDOW_MS = 5000.0
VRAM_WARN = 0.80  # utilisation that raises the warning
VRAM_REARM = 0.75  # the warning rearms once utilisation falls below this
VRAM_CAUTION = 0.60  # utilisation the gauge turns amber at (red above VRAM_WARN)


def visible_row(y: int) -> int:
    """A board row as the player counts it: 0 is the top visible row."""
    return y - HIDDEN


def gravity_ms(level: int) -> float:
    """Milliseconds per row at `level` (the guideline curve, capped at level 20)."""
    lv = max(1, min(level, 20))
    return (0.8 - (lv - 1) * 0.007) ** (lv - 1) * 1000.0


def level_for(lines: int) -> int:
    return 1 + lines // LINES_PER_LEVEL


def line_points(count: int, level: int) -> int:
    return LINE_POINTS.get(count, 0) * level
