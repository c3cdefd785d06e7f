"""A heuristic player (El-Tetris features) that plays through the same inputs a person uses.

It scores every placement reachable by turning at the current height, sliding, and dropping,
with Pierre Dellacherie's features as weighted by El-Tetris (landing height of the piece's
centre, eroded piece cells, row and column transitions, holes, wells). In contiguous mode it counts
the blocks a placed request reserves for its maximum length; in paged mode, with the split meter
full, it also scores splitting the piece at each position (where engine.paging puts the pages)
and splits when that is clearly better.

`skill` is the chance of taking the best placement. Otherwise the bot is hurried: it takes a
random placement from the better half, which is what fills a real stack with holes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from . import paging
from .board import Board
from .game import Game, Input
from .pieces import COLUMNS, FOOTPRINTS, PIECES, Kind
from .rotation import KICKS
from .reservation import reservation_cells
from .rules import HEIGHT, WIDTH

FULL = (1 << WIDTH) - 1
DEFAULT_SKILL = 0.8
SPLIT_MARGIN = 4.0  # a split spends the whole meter: only worth it when clearly better


@dataclass(frozen=True, slots=True)
class Weights:
    landing_height: float = -4.500158825082766
    eroded_cells: float = 3.4181268101392694
    row_transitions: float = -3.2178882868487753
    column_transitions: float = -9.348695305445199
    holes: float = -7.899265427351652
    wells: float = -3.3855972247263626


EL_TETRIS = Weights()


@dataclass(frozen=True, slots=True)
class Plan:
    rotation: int
    turns: tuple[Input, ...]
    dx: int
    split: bool
    score: float

    @property
    def final(self) -> Input:
        return Input.SPLIT if self.split else Input.HARD_DROP

    def moves(self) -> list[Input]:
        """Turns, then slides: everything before the final drop or split."""
        step = Input.RIGHT if self.dx > 0 else Input.LEFT
        return [*self.turns, *([step] * abs(self.dx))]

    def inputs(self) -> list[Input]:
        return [*self.moves(), self.final]


def evaluate(masks: list[int], landing: float, eroded: int, w: Weights = EL_TETRIS) -> float:
    """Dellacherie's features on a board given as one bitmask per row (top row first), after
    full rows were removed; `landing` and `eroded` (rows cleared x piece cells in them) come from
    the placement itself."""
    row_t = col_t = holes = wells = 0
    covered = 0
    above = 0
    depth: dict[int, int] = {}
    for m in masks:
        e = (m << 1) | 1 | (1 << (WIDTH + 1))
        row_t += ((e ^ (e >> 1)) & ((1 << (WIDTH + 1)) - 1)).bit_count()
        col_t += (m ^ above).bit_count()
        holes += (covered & ~m).bit_count()
        covered |= m
        above = m
        well = ~m & FULL & ((m << 1) | 1) & ((m >> 1) | (1 << (WIDTH - 1)))
        if well or depth:
            nxt: dict[int, int] = {}
            while well:
                low = well & -well
                d = depth.get(low, 0) + 1
                nxt[low] = d
                wells += d
                well ^= low
            depth = nxt
    col_t += (~above & FULL).bit_count()
    return (w.landing_height * landing + w.eroded_cells * eroded + w.row_transitions * row_t
            + w.column_transitions * col_t + w.holes * holes + w.wells * wells)


def _clear(masks: list[int]) -> tuple[list[int], int]:
    kept = [m for m in masks if m != FULL]
    n = len(masks) - len(kept)
    return ([0] * n + kept if n else masks), n


def _with_lid(masks: list[int], cells: Iterable[tuple[int, int]]) -> None:
    """Add to `masks` (in place) the blocks a contiguous request reserves over `cells`
    (engine.reservation's rule, as Game applies it)."""
    for x, y in reservation_cells(masks, cells):
        masks[y] |= 1 << x


TURNS: dict[int, tuple[Input, ...]] = {
    0: (), 1: (Input.ROTATE_CW,), 2: (Input.ROTATE_CW, Input.ROTATE_CW), 3: (Input.ROTATE_CCW,),
}


def _reachable(board: Board, kind: Kind, rot: int, x: int,
               y: int) -> Iterator[tuple[int, tuple[Input, ...], int, int]]:
    """Yield (rotation, turns, x, y) after turning from the current pose into each state,
    kicks included, as the engine will turn it."""
    if kind is Kind.O:
        yield rot, (), x, y
        return
    shapes = FOOTPRINTS[kind]
    for turns in TURNS.values():
        r, cx, cy = rot, x, y
        for t in turns:
            to = (r + (1 if t is Input.ROTATE_CW else -1)) % 4
            for kx, ky in KICKS[kind][(r, to)]:
                if board.fits(shapes[to], cx + kx, cy + ky):
                    r, cx, cy = to, cx + kx, cy + ky
                    break
            else:
                break
        else:
            yield r, turns, cx, cy


class Bot:
    def __init__(self, skill: float = DEFAULT_SKILL, seed: int = 0, weights: Weights = EL_TETRIS) -> None:
        if not 0.0 <= skill <= 1.0:
            raise ValueError("skill must be between 0 and 1")
        self.skill = skill
        self.weights = weights
        self._rng = random.Random(f"bot:{seed}")  # its own stream, not the game's bag

    def plan(self, game: Game) -> list[Input]:
        """The key presses for the current piece, ending in HARD_DROP or SPLIT."""
        choice = self.choose(game)
        return choice.inputs() if choice is not None else []

    def choose(self, game: Game) -> Plan | None:
        a = game.active
        if a is None or game.over:
            return None
        options = self.options(game)
        if not options:
            return Plan(a.rotation, (), 0, False, 0.0)
        options.sort(key=lambda p: p.score, reverse=True)
        if game.split_ready:
            split = next((p for p in options if p.split), None)
            options = [p for p in options if not p.split]
            if split is not None and (not options or split.score > options[0].score + SPLIT_MARGIN):
                return split
        if self._rng.random() < self.skill:
            return options[0]
        return self._rng.choice(options[: max(1, len(options) // 2)])

    def options(self, game: Game) -> list[Plan]:
        a = game.active
        assert a is not None
        board = game.board
        masks = board.masks
        reserved = board.reserved
        reserves = game.allocator.reserves_max_length
        tops = board.stats()[2]
        shapes = PIECES[a.kind].rotations
        profiles = COLUMNS[a.kind]
        footprints = FOOTPRINTS[a.kind]
        can_split = game.split_ready
        plans: list[Plan] = []
        for rot, turns, rx, ry in _reachable(board, a.kind, a.rotation, a.x, a.y):
            shape = shapes[rot]
            fp = footprints[rot]
            xs = [rx]
            x = rx - 1
            while board.fits(fp, x, ry):
                xs.append(x)
                x -= 1
            x = rx + 1
            while board.fits(fp, x, ry):
                xs.append(x)
                x += 1
            for x in xs:
                y = ry + board.drop_distance(profiles[rot], x, ry, tops)
                new = masks[:]
                for cx, cy in shape:
                    new[y + cy] |= 1 << (x + cx)
                rows = {y + cy for _, cy in shape}
                full = [r for r in rows if new[r] == FULL]
                eroded = len(full) * sum(1 for _, cy in shape if y + cy in full)
                top, bottom = min(rows), max(rows)
                landing = HEIGHT - 1 - bottom + (bottom - top + 1) / 2
                if reserves and not full:
                    _with_lid(new, [(x + cx, y + cy) for cx, cy in shape])
                cleared, _ = _clear(new)
                plans.append(Plan(rot, turns, x - rx, False,
                                  evaluate(cleared, landing, eroded, self.weights)))
                if can_split:
                    plans.append(self._split_plan(masks, reserved, shape, x, rot, turns, x - rx))
        return plans

    @staticmethod
    def split_cells(masks: list[int], shape: Sequence[tuple[int, int]],
                    x: int) -> list[tuple[int, int]] | None:
        """Where splitting a shape at column offset x puts its pages: engine.paging's rule,
        the one the game applies."""
        return paging.page_frames(masks, [x + cx for cx, _ in shape])

    def _split_plan(self, masks: list[int], reserved: list[int], shape: Sequence[tuple[int, int]],
                    x: int, rot: int, turns: tuple[Input, ...],
                    dx: int) -> Plan:
        """Score splitting at column offset x."""
        cells = self.split_cells(masks, shape, x)
        if cells is None:
            return Plan(rot, turns, dx, True, float("-inf"))
        new = masks[:]
        rows = [y for _, y in cells]
        for c, y in cells:
            new[y] |= 1 << c
        full = [r for r in set(rows) if new[r] == FULL]
        eroded = len(full) * sum(1 for r in rows if r in full)
        cleared, _ = _clear(new)
        landing = HEIGHT - 1 - max(rows) + (max(rows) - min(rows) + 1) / 2
        return Plan(rot, turns, dx, True, evaluate(cleared, landing, eroded, self.weights))
