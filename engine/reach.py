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


# The whole board as one integer, for the flood fills below. Row y is bits y*_S .. y*_S + 12:
# two wall bits, the ten cells, one wall bit; cell (x, y) is bit y*_S + x + _BPAD, and so is pose
# (x, y) in a shape's fit (no pose left of x = -2 ever fits: every shape has a cell within two
# columns of its origin). A shape reaching past the right wall lands on the next row's left
# walls, and under the last row lie solid floor rows, so every off-board cell is solid. The top
# bit of each row is never a pose, so a slide cannot carry into the next row.
_S = WIDTH + 3
_BPAD = 2
_ROW_WALLS = ((1 << _BPAD) - 1) | (1 << (_S - 1))
_FLOOR = ((1 << (4 * _S)) - 1) << (HEIGHT * _S)  # solid rows under the board (shapes reach 3 down)
_ROW_POSES = (1 << (_S - 1)) - 1  # x = -2 .. 9
_ALL_POSES = sum(_ROW_POSES << (y * _S) for y in range(HEIGHT))
_FULL = (1 << WIDTH) - 1
_VISIBLE = sum(_FULL << (y * _S + _BPAD) for y in range(HIDDEN, HEIGHT))


def _translation(kind: Kind, rot: int) -> tuple[int, int, int]:
    """(base, dx, dy): the first rotation whose cells, moved by (dx, dy), are this one's (so a
    pose (x, y) of it covers what pose (x + dx, y + dy) of the base covers)."""
    cells = sorted(PIECES[kind].rotations[rot])
    for base in range(rot + 1):
        other = sorted(PIECES[kind].rotations[base])
        dx, dy = cells[0][0] - other[0][0], cells[0][1] - other[0][1]
        if sorted((x + dx, y + dy) for x, y in other) == cells:
            return base, dx, dy
    raise AssertionError("a rotation is its own base")


_TRANSLATION: dict[Kind, tuple[tuple[int, int, int], ...]] = {
    k: tuple(_translation(k, r) for r in range(4)) for k in KINDS
}
# Per kind, per rotation, its cells as shifts of a pose's bit.
_CELL_SHIFTS: dict[Kind, tuple[tuple[int, ...], ...]] = {
    k: tuple(tuple(cy * _S + cx for cx, cy in PIECES[k].rotations[r]) for r in range(4))
    for k in KINDS
}
_TURNS = ((1,), (1, 1), (-1,))  # as _starts_from() turns: cw, cw twice, ccw


def solid(masks: list[int]) -> int:
    """The board's held cells, walls and floor as one integer (layout above)."""
    big = _FLOOR
    for y, m in enumerate(masks):
        big |= ((m << _BPAD) | _ROW_WALLS) << (y * _S)
    return big


def _flood(fit: int, seed: int) -> int:
    """Every pose reachable from `seed` (inside `fit`) by moves left, right and down: a
    row's slides by carries and shift-and fills, drops by shift-and fills of doubling stride
    (of every slot of covers() at once: at most 8 rows per pass, see _SLOT_BYTES)."""
    # Propagators for sliding left (1, 2, 4, 8 cells) and dropping (1, 2, 4, 8 rows).
    l1 = fit & (fit >> 1)
    l2 = l1 & (l1 >> 2)
    l4 = l2 & (l2 >> 4)
    d1 = fit & (fit << _S)
    d2 = d1 & (d1 << 2 * _S)
    d4 = d2 & (d2 << 4 * _S)
    r = seed
    while True:
        # Slide: right by carrying through each run of fitting poses, left by shift-and fill.
        r |= ((fit + r) ^ fit) & fit
        r |= fit & (r >> 1)
        r |= l1 & (r >> 2)
        r |= l2 & (r >> 4)
        r |= l4 & (r >> 8)
        # Drop.
        d = r | (fit & (r << _S))
        d |= d1 & (d << 2 * _S)
        d |= d2 & (d << 4 * _S)
        d |= d4 & (d << 8 * _S)
        if d == r:
            return r
        r = d


def _fitting_starts(board: Board, kind: Kind, solid: int) -> list[tuple[int, int, int]]:
    """(base rotation, its fit, seeds) of the floods `kind` needs: _starts()'s poses, tested
    against the fits (board.fits() above the top row), each as a pose of the rotation its cells
    are a move of (_TRANSLATION) so that one flood serves both."""
    moved = _TRANSLATION[kind]
    shifts = _CELL_SHIFTS[kind]
    fits: list[int] = []
    for rot in range(4):
        base, dx, dy = moved[rot]
        if base == rot:
            bad = 0
            for sh in shifts[rot]:
                bad |= solid >> sh
            fits.append(~bad & _ALL_POSES)
        else:
            off = dy * _S + dx
            fit = fits[base]
            fits.append((fit >> off if off >= 0 else fit << -off) & _ALL_POSES)

    def ok(rot: int, x: int, y: int) -> bool:
        if y < 0:
            return board.fits(FOOTPRINTS[kind][rot], x, y)
        bit = x + _BPAD
        return 0 <= bit < _S and bool(fits[rot] >> (y * _S + bit) & 1)

    p = PIECES[kind]
    x0, y0 = p.spawn_x, p.spawn_y
    if ok(0, x0, y0 + 1):
        y0 += 1
    if not ok(0, x0, y0):
        return []
    starts = [(0, x0, y0)]
    if kind is not Kind.O:
        kicks = KICKS[kind]
        for turns in _TURNS:
            r, cx, cy = 0, x0, y0
            for t in turns:
                to = (r + t) % 4
                for kx, ky in kicks[(r, to)]:
                    if ok(to, cx + kx, cy + ky):
                        r, cx, cy = to, cx + kx, cy + ky
                        break
                else:
                    break
            else:
                starts.append((r, cx, cy))
    seeds: dict[int, int] = {}
    for rot, x, y in starts:
        if y < 0:
            continue  # a turn kicked it above the top row: _lifted_cover() floods it
        base, dx, dy = moved[rot]
        seeds[base] = seeds.get(base, 0) | 1 << ((y + dy) * _S + x + dx + _BPAD)
    return [(base, fits[base], seed) for base, seed in seeds.items()]


def _lifted_cover(board: Board, kind: Kind) -> int:
    """The cells covered from the starts a turn kicked above the top row (rare: only when the
    stack reaches the spawn rows), flooded row by row, as a board integer."""
    masks = board.masks
    padded_rows: list[int] | None = None
    cover = [0] * HEIGHT
    for rot, _, x, y in _starts(board, kind):
        if y >= 0:
            continue
        if padded_rows is None:
            padded_rows = padded(masks)
        _flood_rows(fit_masks(masks, kind, rot, padded_rows), PIECES[kind].rotations[rot], x, y,
                    cover)
    big = 0
    for y, row in enumerate(cover):
        big |= (row & _FULL) << (y * _S + _BPAD)
    return big


def _flood_rows(fit: list[int], cells: tuple[tuple[int, int], ...], x: int, y: int,
                cover: list[int]) -> None:
    """OR into `cover` (row bitmasks) every cell some pose reachable from (x, y) covers, with
    `fit` as fit_masks() gives it."""
    reach = _spread(1 << (x + PAD), fit[y + TOP])
    for row in range(y, HEIGHT):
        for cx, cy in cells:
            cover[row + cy] |= (reach << cx) >> PAD
        if row + 1 >= HEIGHT:
            break
        below = fit[row + 1 + TOP]
        reach = _spread(reach & below, below)
        if not reach:
            break


def kind_cover(board: Board, kind: Kind, solid: int) -> int:
    """The cells some reachable pose of `kind` covers, as a board integer (`solid`: the
    board's solid(), layout above)."""
    cover = _lifted_cover(board, kind)
    shifts = _CELL_SHIFTS[kind]
    for rot, fit, seed in _fitting_starts(board, kind, solid):
        poses = _flood(fit, seed)
        for sh in shifts[rot]:
            cover |= poses << sh
    return cover


# covers() floods every start at once: each flood's fit gets a slot of _SLOT_BYTES in one
# integer, 32 rows, so that a drop shifted by up to 8 rows stays inside its slot.
_SLOT_BYTES = 4 * _S
_SLOT = 8 * _SLOT_BYTES


def covers(board: Board, kinds: tuple[Kind, ...] = KINDS,
           solid_board: int | None = None) -> dict[Kind, int]:
    """kind_cover() of each of `kinds`, every flood at once (`solid_board`: the board's
    solid(), when the caller has it already)."""
    big = solid(board.masks) if solid_board is None else solid_board
    slots: list[tuple[Kind, int]] = []
    fits: list[bytes] = []
    seed = 0
    for kind in kinds:
        for rot, fit, start in _fitting_starts(board, kind, big):
            seed |= start << (len(slots) * _SLOT)
            slots.append((kind, rot))
            fits.append(fit.to_bytes(_SLOT_BYTES, "little"))
    out = {kind: _lifted_cover(board, kind) for kind in kinds}
    if not slots:
        return out
    poses = _flood(int.from_bytes(b"".join(fits), "little"), seed)
    raw = poses.to_bytes(len(slots) * _SLOT_BYTES, "little")
    for i, (kind, rot) in enumerate(slots):
        p = int.from_bytes(raw[i * _SLOT_BYTES:(i + 1) * _SLOT_BYTES], "little")
        cover = out[kind]
        for sh in _CELL_SHIFTS[kind][rot]:
            cover |= p << sh
        out[kind] = cover
    return out


def rows(big: int) -> list[int]:
    """A board integer's cells as row bitmasks (as `Board.masks`)."""
    return [(big >> (y * _S + _BPAD)) & _FULL for y in range(HEIGHT)]


def free_visible(cells: int, solid: int) -> int:
    """How many of the cells of a board integer are free visible blocks."""
    return (cells & _VISIBLE & ~solid).bit_count()


def reachable_cells(board: Board, kinds: tuple[Kind, ...] = KINDS) -> list[int]:
    """Per row, the cells some reachable pose of some kind covers (row bitmasks): the cells a
    request can be moved through or placed over. A free cell no pose covers is sealed off."""
    cover = 0
    for c in covers(board, kinds).values():
        cover |= c
    return rows(cover)


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
