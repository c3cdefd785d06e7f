"""A heuristic player (El-Tetris features) that plays through the same inputs a person uses.

It scores every placement reachable by turning at the current height, sliding, and dropping,
with Pierre Dellacherie's features as weighted by El-Tetris (landing height, rows removed,
row and column transitions, holes, wells). In paged mode, with the split meter full, it also
scores splitting the piece at each position and splits when that is clearly better.

`skill` is the chance of taking the best placement. Otherwise the bot is hurried: it takes a
random placement from the better half, which is what fills a real stack with holes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .board import Board
from .game import Game, Input
from .pieces import COLUMNS, FOOTPRINTS, PIECES, Kind
from .rotation import KICKS
from .rules import HEIGHT, WIDTH

FULL = (1 << WIDTH) - 1
DEFAULT_SKILL = 0.8
SPLIT_MARGIN = 4.0  # a split spends the whole meter: only worth it when clearly better


@dataclass(frozen=True, slots=True)
class Weights:
    landing_height: float = -4.500158825082766
    rows_removed: float = 3.4181268101392694
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


def evaluate(masks: list[int], landing: float, removed: int, w: Weights = EL_TETRIS) -> float:
    """Dellacherie's features on a board given as one bitmask per row (top row first)."""
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
    return (w.landing_height * landing + w.rows_removed * removed + w.row_transitions * row_t
            + w.column_transitions * col_t + w.holes * holes + w.wells * wells)


def _clear(masks: list[int]) -> tuple[list[int], int]:
    kept = [m for m in masks if m != FULL]
    n = len(masks) - len(kept)
    return ([0] * n + kept if n else masks), n


def _reachable(board: Board, kind: Kind, rot: int, x: int, y: int):
    """Yield (rotation, turns, x_at_turn, y) for each rotation reachable from the current pose."""
    shapes = FOOTPRINTS[kind]
    targets = [0] if kind is Kind.O else [0, 1, 2, 3]
    for target in targets:
        diff = (target - rot) % 4
        if kind is Kind.O:
            yield rot, (), x, y
            return
        turns = {0: (), 1: (Input.ROTATE_CW,), 2: (Input.ROTATE_CW, Input.ROTATE_CW),
                 3: (Input.ROTATE_CCW,)}[diff]
        r, cx, cy, ok = rot, x, y, True
        for t in turns:
            to = (r + (1 if t is Input.ROTATE_CW else -1)) % 4
            for kx, ky in KICKS[kind][(r, to)]:
                if board.fits(shapes[to], cx + kx, cy + ky):
                    r, cx, cy = to, cx + kx, cy + ky
                    break
            else:
                ok = False
                break
        if ok:
            yield r, turns, cx, cy


class Bot:
    def __init__(self, skill: float = DEFAULT_SKILL, seed: int = 0, weights: Weights = EL_TETRIS) -> None:
        if not 0.0 <= skill <= 1.0:
            raise ValueError("skill must be between 0 and 1")
        self.skill = skill
        self.weights = weights
        self._rng = random.Random(seed)

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
        best = options[0]
        if game.split_ready:
            split = max((p for p in options if p.split), key=lambda p: p.score, default=None)
            if split is not None and split.score > max(
                    (p.score for p in options if not p.split), default=-1e9) + SPLIT_MARGIN:
                return split
            options = [p for p in options if not p.split]
            best = options[0]
        if self._rng.random() < self.skill:
            return best
        return self._rng.choice(options[: max(1, len(options) // 2)])

    def options(self, game: Game) -> list[Plan]:
        a = game.active
        assert a is not None
        board = game.board
        masks = list(board.masks)
        tops = board.stats()[2]
        shapes = PIECES[a.kind].rotations
        profiles = COLUMNS[a.kind]
        can_split = game.split_ready
        plans: list[Plan] = []
        footprints = FOOTPRINTS[a.kind]
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
                d = board.drop_distance(profiles[rot], x, ry, tops)
                y = ry + d
                new = masks[:]
                top = HEIGHT
                for cx, cy in shape:
                    new[y + cy] |= 1 << (x + cx)
                    if y + cy < top:
                        top = y + cy
                cleared, n = _clear(new)
                landing = HEIGHT - top - 1.5
                plans.append(Plan(rot, turns, x - a.x, False,
                                  evaluate(cleared, landing, n, self.weights)))
                if can_split:
                    plans.append(self._split_plan(masks, shape, x, rot, turns, x - a.x))
        return plans

    def _split_plan(self, masks: list[int], shape, x: int, rot: int, turns, dx: int) -> Plan:
        new = masks[:]
        low = HEIGHT
        for cx, _ in shape:
            col = x + cx
            bit = 1 << col
            for yy in range(HEIGHT - 1, -1, -1):
                if not new[yy] & bit:
                    new[yy] |= bit
                    low = min(low, yy)
                    break
        cleared, n = _clear(new)
        return Plan(rot, turns, dx, True, evaluate(cleared, HEIGHT - low - 0.5, n, self.weights))
