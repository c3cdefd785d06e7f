"""The seven tetrominoes as inference requests: shapes, names and colours in one table.

Coordinates: x grows to the right, y grows downwards. Rotation states follow SRS:
0 = spawn, 1 = R (clockwise once), 2 = 180°, 3 = L.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from .rules import WIDTH


class Kind(IntEnum):
    I = 0
    O = 1
    T = 2
    S = 3
    Z = 4
    J = 5
    L = 6


Cells = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class PieceDef:
    """One request type: the model workload it stands for and its four rotations."""

    kind: Kind
    name: str
    colour: tuple[int, int, int]
    box: int  # side of the SRS bounding box
    rotations: tuple[Cells, Cells, Cells, Cells]
    spawn_x: int
    spawn_y: int


def _rotate_cw(cells: Cells, box: int) -> Cells:
    return tuple(sorted(((box - 1 - y, x) for x, y in cells), key=lambda c: (c[1], c[0])))


def _define(kind: Kind, name: str, colour: tuple[int, int, int], box: int,
            spawn: Cells, spawn_x: int, spawn_y: int) -> PieceDef:
    states = [tuple(sorted(spawn, key=lambda c: (c[1], c[0])))]
    for _ in range(3):
        states.append(_rotate_cw(states[-1], box))
    return PieceDef(kind, name, colour, box, tuple(states), spawn_x, spawn_y)  # type: ignore[arg-type]


# Spawn states sit in the two hidden rows above the visible board, lowest cells on the row
# just above it, so that the guideline's one-row drop after spawning shows every piece at once.
PIECES: dict[Kind, PieceDef] = {
    Kind.I: _define(Kind.I, "llama_7b_prompt", (0, 240, 255), 4,
                    ((0, 1), (1, 1), (2, 1), (3, 1)), 3, 0),
    Kind.O: _define(Kind.O, "mixtral_moe_gate", (255, 214, 10), 2,
                    ((0, 0), (1, 0), (0, 1), (1, 1)), 4, 0),
    Kind.T: _define(Kind.T, "gpt4_search_ref", (190, 90, 255), 3,
                    ((1, 0), (0, 1), (1, 1), (2, 1)), 3, 0),
    Kind.S: _define(Kind.S, "claude_3_agent", (60, 255, 120), 3,
                    ((1, 0), (2, 0), (0, 1), (1, 1)), 3, 0),
    Kind.Z: _define(Kind.Z, "stable_diff_unet", (255, 60, 110), 3,
                    ((0, 0), (1, 0), (1, 1), (2, 1)), 3, 0),
    Kind.J: _define(Kind.J, "gemini_flash_ctx", (60, 120, 255), 3,
                    ((0, 0), (0, 1), (1, 1), (2, 1)), 3, 0),
    Kind.L: _define(Kind.L, "deepseek_coder_qa", (255, 150, 30), 3,
                    ((2, 0), (0, 1), (1, 1), (2, 1)), 3, 0),
}

KINDS: tuple[Kind, ...] = tuple(Kind)


def _columns(cells: Cells) -> tuple[tuple[int, int, int, int], ...]:
    """Per column of a shape: (dx, top dy, bottom dy, cell count) — cells of a tetromino in one
    column are always contiguous, so this is all that drop and hole counting need."""
    out = []
    for cx in sorted({x for x, _ in cells}):
        ys = [y for x, y in cells if x == cx]
        out.append((cx, min(ys), max(ys), len(ys)))
    return tuple(out)


# COLUMNS[kind][rotation]: the column profile of every shape, derived once from PIECES.
COLUMNS: dict[Kind, tuple[tuple[tuple[int, int, int, int], ...], ...]] = {
    k: tuple(_columns(cells) for cells in p.rotations) for k, p in PIECES.items()
}


@dataclass(frozen=True, slots=True)
class Footprint:
    """A shape as row bitmasks, for collision tests against the board's row masks."""

    rows: tuple[tuple[int, int], ...]  # (dy, bits of the occupied dx in that row)
    min_dx: int
    max_dx: int
    min_dy: int
    max_dy: int
    # Per x at which the shape lies inside the board's width, its rows shifted there: (dy, bits
    # of the occupied board columns).
    at: Mapping[int, tuple[tuple[int, int], ...]] = field(default_factory=dict, compare=False,
                                                          repr=False)


def footprint(cells: Cells) -> Footprint:
    rows: dict[int, int] = {}
    for x, y in cells:
        rows[y] = rows.get(y, 0) | (1 << x)
    xs = [x for x, _ in cells]
    lo, hi = min(xs), max(xs)
    by_row = tuple(sorted(rows.items()))
    at = {x: tuple((dy, bits << x if x >= 0 else bits >> -x) for dy, bits in by_row)
          for x in range(-lo, WIDTH - hi)}
    return Footprint(by_row, lo, hi, min(rows), max(rows), at)


# FOOTPRINTS[kind][rotation], derived once from PIECES.
FOOTPRINTS: dict[Kind, tuple[Footprint, ...]] = {
    k: tuple(footprint(cells) for cells in p.rotations) for k, p in PIECES.items()
}
