"""Where a falling request can come to rest: the placements a player can actually make.

A player turns the request at the top (wall kicks included, as engine.rotation has them), then
slides it left and right and lets it down, soft drops and tucks under overhangs included; turns
further down (spins) are not counted. This module finds every resting pose reachable that way,
with row bitmasks (one int per row, as `Board.masks`), so the engine can count how much free
memory no request can reach (external fragmentation, contiguous mode) and the bot can plan a
path of key presses to a pose.

Poses are (rotation, x, y) of the piece's SRS origin, as engine.game.Active.
"""

from __future__ import annotations

from collections import deque

from .board import Board
from .inputs import Input
from .pieces import FOOTPRINTS, KINDS, PIECES, Kind
from .rotation import KICKS
from .rules import HEIGHT, HIDDEN, WIDTH

PAD = 3  # a pose's x is stored as bit x + PAD: shapes reach up to 3 cells left of their origin
TOP = 2  # fit masks start at y = -TOP: a kick can lift a shape whose top row is 1 or 2 below
# its origin above row 0
_WALLS = ((1 << PAD) - 1) | (((1 << PAD) - 1) << (WIDTH + PAD))
_POSES = (1 << (WIDTH + PAD)) - 1  # every bit a pose's x can take (off-board poses never fit)

Pose = tuple[int, int, int]


def padded(masks: list[int]) -> list[int]:
    """Board rows with the walls set: bit x + PAD for cell x."""
    return [(m << PAD) | _WALLS for m in masks]


def fit_masks(masks: list[int], kind: Kind, rotation: int, rows: list[int] | None = None) -> list[int]:
    """Per y from -TOP, at index y + TOP, the bits (x + PAD) of every x at which the shape fits
    on free cells (`rows`: padded(masks), when the caller has it already)."""
    if rows is None:
        rows = padded(masks)
    cells = PIECES[kind].rotations[rotation]
    out = [0] * (HEIGHT + TOP)
    for y in range(-TOP, HEIGHT):
        bad = 0
        for cx, cy in cells:
            r = y + cy
            if r >= HEIGHT or r < 0:
                bad = -1
                break
            bad |= rows[r] >> cx
        out[y + TOP] = ~bad & _POSES if bad != -1 else 0
    return out


def _starts(board: Board, kind: Kind) -> list[tuple[int, tuple[Input, ...], int, int]]:
    """(rotation, turns, x, y) after turning from the spawn pose into each rotation."""
    p = PIECES[kind]
    x0 = p.spawn_x
    y0 = p.spawn_y + (1 if board.fits(FOOTPRINTS[kind][0], x0, p.spawn_y + 1) else 0)
    if not board.fits(FOOTPRINTS[kind][0], x0, y0):
        return []
    return _starts_from(board, kind, 0, x0, y0)


def _spread(row: int, fit: int) -> int:
    """Every pose of a row reachable by sliding from the poses in `row`."""
    while True:
        wider = (row | (row << 1) | (row >> 1)) & fit
        if wider == row:
            return row
        row = wider


def reachable_cells(board: Board, kinds: tuple[Kind, ...] = KINDS) -> list[int]:
    """Per row, the cells some reachable pose of some kind covers (row bitmasks): the cells a
    request can be moved through or placed over. A free cell no pose covers is sealed off."""
    masks = board.masks
    rows = padded(masks)
    cover = [0] * HEIGHT
    for kind in kinds:
        for rot, _, x, y in _starts(board, kind):
            fit = fit_masks(masks, kind, rot, rows)
            reach = _spread(1 << (x + PAD), fit[y + TOP])
            cells = PIECES[kind].rotations[rot]
            for row in range(y, HEIGHT):
                for cx, cy in cells:
                    cover[row + cy] |= (reach << cx) >> PAD
                if row + 1 >= HEIGHT:
                    break
                below = fit[row + 1 + TOP]
                reach = _spread(reach & below, below)
                if not reach:
                    break
    full = (1 << WIDTH) - 1
    return [c & full for c in cover]


def reachable_free(board: Board, cover: list[int] | None = None) -> int:
    """Free visible blocks some request of any shape can be moved to (`cover`: the board's
    reachable_cells(), when the caller has it already)."""
    if cover is None:
        cover = reachable_cells(board)
    masks = board.masks
    return sum((cover[y] & ~masks[y]).bit_count() for y in range(HIDDEN, HEIGHT))


def paths(board: Board, kind: Kind, rotation: int, x: int, y: int) -> dict[Pose, tuple[Input, ...]]:
    """Every resting pose reachable from the falling piece's pose (rotation, x, y), each with
    the key presses that take it there (turns first, then slides and soft drops)."""
    masks = board.masks
    out: dict[Pose, tuple[Input, ...]] = {}
    for rot, turns, sx, sy in _starts_from(board, kind, rotation, x, y):
        fit = fit_masks(masks, kind, rot)
        start = (sx, sy)
        prev: dict[tuple[int, int], tuple[tuple[int, int], Input] | None] = {start: None}
        todo = deque([start])
        while todo:
            cx, cy = todo.popleft()
            below = cy + 1 < HEIGHT and fit[cy + 1 + TOP] >> (cx + PAD) & 1
            if not below:
                keys: list[Input] = []
                at: tuple[int, int] | None = (cx, cy)
                while at is not None and prev[at] is not None:
                    back = prev[at]
                    assert back is not None
                    at, key = back
                    keys.append(key)
                pose = (rot, cx, cy)
                if pose not in out:
                    out[pose] = (*turns, *reversed(keys))
            for nx, ny, key in ((cx - 1, cy, Input.LEFT), (cx + 1, cy, Input.RIGHT),
                                (cx, cy + 1, Input.SOFT_DROP)):
                if ny < HEIGHT and -PAD <= nx < WIDTH and fit[ny + TOP] >> (nx + PAD) & 1 \
                        and (nx, ny) not in prev:
                    prev[(nx, ny)] = ((cx, cy), key)
                    todo.append((nx, ny))
    return out


def _starts_from(board: Board, kind: Kind, rotation: int, x: int,
                 y: int) -> list[tuple[int, tuple[Input, ...], int, int]]:
    out: list[tuple[int, tuple[Input, ...], int, int]] = [(rotation, (), x, y)]
    if kind is Kind.O:
        return out
    for turns in ((Input.ROTATE_CW,), (Input.ROTATE_CW, Input.ROTATE_CW), (Input.ROTATE_CCW,)):
        r, cx, cy = rotation, x, y
        for t in turns:
            to = (r + (1 if t is Input.ROTATE_CW else -1)) % 4
            for kx, ky in KICKS[kind][(r, to)]:
                if board.fits(FOOTPRINTS[kind][to], cx + kx, cy + ky):
                    r, cx, cy = to, cx + kx, cy + ky
                    break
            else:
                break
        else:
            out.append((r, turns, cx, cy))
    return out
