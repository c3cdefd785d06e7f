"""A player that plays through the same inputs a person uses and sees what a person sees.

As the allocator (contiguous mode) it scores every placement reachable by turning at the
current height, sliding and dropping, with Pierre Dellacherie's features as weighted by
El-Tetris (landing height, row and column transitions, holes, wells; no rows ever clear, so
no eroded cells). As the scheduler (both modes, and all there is to do in paged mode) it
decides when to admit the request at the front (and, with speculative decoding, how many tokens
to draft a step: more while memory is free): it keeps a few blocks free for the running
requests that are about to need one (vLLM's watermark) unless the queue or a deadline is about
to overflow; it splits a paged request rather than place it whole (pages admit at once and go
wherever blocks are free), and it sets the preemption mode by what the next victim holds
(swap keeps a long context, recompute is cheaper for a short one). It never reads a request's
hidden output length.

`skill` is the chance that a request gets a careful hand, drawn once a request and kept for every
decision about it (a blocked request is a second look). Otherwise the request is hurried: a
random placement from the better half (what fills a real stack with holes), a whole drop at once,
no pick, no mode change.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from . import reach
from . import rules as R
from .board import Board
from .game import Game, Input
from .pieces import COLUMNS, FOOTPRINTS, PIECES, Kind
from .rotation import KICKS
from .rules import HEIGHT, WIDTH

FULL = (1 << WIDTH) - 1
DEFAULT_SKILL = 0.8
SOON_TOKENS = 3  # a running request this close to filling its last block needs one soon
WATERMARK = 2  # blocks kept free beyond those, as vLLM keeps a small share free
SPEC_BY_FREE = ((0.4, 4), (0.2, 2))  # drafts a step by the share of VRAM free (less: none)
# Contiguous headroom: rows kept free above the stack while the queue and the deadlines allow. A
# reservation that lands this close to the top leaves the next request no range: a careful
# contiguous scheduler holds the request back (lets it hang) rather than stack into the OOM.
CEILING_MARGIN = 8


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
    rest_y: int = HEIGHT  # where the piece's origin comes to rest (best_path's plans)
    top: int = HEIGHT  # the top row of its cells there

    @property
    def final(self) -> Input:
        return Input.SPLIT if self.split else Input.HARD_DROP

    @property
    def wait(self) -> bool:
        """Not yet: let the request wait (the scheduler holds it back)."""
        return not self.turns and self.dx == 0 and self.score == float("-inf")

    def moves(self) -> list[Input]:
        """Turns, then slides: everything before the final drop or split."""
        step = Input.RIGHT if self.dx > 0 else Input.LEFT
        return [*self.turns, *([step] * abs(self.dx))]

    def inputs(self) -> list[Input]:
        return [*self.moves(), self.final]


def evaluate(masks: list[int], landing: float, eroded: int, w: Weights = EL_TETRIS) -> float:
    """Dellacherie's features on a board given as one bitmask per row (top row first), after
    full rows were removed (none are, in this game: `eroded` stays 0); `landing` comes from the
    placement itself."""
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


WAIT = Plan(0, (), 0, False, float("-inf"))


class Bot:
    def __init__(self, skill: float = DEFAULT_SKILL, seed: int = 0, weights: Weights = EL_TETRIS,
                 speculate: bool = True) -> None:
        if not 0.0 <= skill <= 1.0:
            raise ValueError("skill must be between 0 and 1")
        self.skill = skill
        self.speculate = speculate  # it sets the drafts a step (False: it leaves them as they are)
        self.weights = weights
        self._rng = random.Random(f"bot:{seed}")  # its own stream, not the game's workload
        self._mood: tuple[object, bool] = (None, False)  # (request in hand, whether it gets a careful hand)

    def plan(self, game: Game) -> list[Input]:
        """The key presses for the current request, ending in HARD_DROP or SPLIT (empty: wait)."""
        pre = self.preempt_inputs(game) + self.pick_inputs(game) + self.spec_inputs(game)
        choice = self.choose(game)
        if choice is None or choice.wait:
            return pre
        return [*pre, *choice.inputs()]

    # ------------------------------------------------------------------ the scheduler
    def _careful(self, game: Game) -> bool:
        """Whether the request in hand gets a careful hand: one draw a request, kept for every
        decision about it (a hurried player stays hurried until the next one)."""
        req = game.falling if game.active is not None else game.blocked
        if req is None:  # nothing in hand: a decision of its own
            return self._rng.random() < self.skill
        # A request that comes back blocked is a second look at it; one that comes back after a
        # preemption, a new request to the player; another game's (another arrival), another.
        key = (req.id, req.arrived_ms, req.preemptions, game.active is None)
        if self._mood[0] != key:
            self._mood = (key, self._rng.random() < self.skill)
        return self._mood[1]

    def headroom(self, game: Game) -> int:
        """Blocks to keep free after admitting: one per running request about to fill its last
        block (what the player sees filling), plus the watermark."""
        s = game.serving
        soon = 0
        for req in s.running.values():
            if req.reserved or req.static:
                continue
            room = len(req.blocks) * R.TOKENS_PER_BLOCK - s.tokens_of(req)
            if room <= SOON_TOKENS:
                soon += 1
        return soon + WATERMARK

    def pressed(self, game: Game) -> bool:
        """The queue or a deadline leaves no time to wait."""
        waiting = len(game.serving.waiting)
        oldest = min((game.wait_ms(r) for r in (game.falling, *game.serving.waiting) if r is not None),
                     default=0.0)
        return waiting >= game.queue_max - 1 or oldest > R.DEADLINE_MS * 0.6

    def should_admit(self, game: Game) -> bool:
        req = game.falling if game.active is not None else game.blocked
        if req is None:
            return False
        if not game.allocator.allocator.preemptible:
            return True  # a reservation never runs short: nothing to wait for
        free = R.VISIBLE_CELLS - game.serving.held
        need = game.serving.need(req)
        return free - need >= self.headroom(game) or self.pressed(game)

    def pick_inputs(self, game: Game) -> list[Input]:
        """Cache-aware scheduling (SGLang's longest-prefix-match): of the first waiting
        requests, pick the one that finds the most of its context cached to run next, unless
        the front one's deadline is near (first come, first served then)."""
        if not game.features.pick or not game.serving.waiting or not self._careful(game):
            return []
        s = game.serving
        alloc = game.allocator.allocator
        first = list(s.waiting)[:R.NEXT_QUEUE]
        if game.wait_ms(first[0]) > R.DEADLINE_MS * 0.5:
            return []
        found = [len(s.hits(r, alloc)) for r in first]
        best = max(range(len(first)), key=lambda i: (found[i], -i))
        if best == 0 or found[best] <= found[0]:
            return []
        return [(Input.PICK_1, Input.PICK_2, Input.PICK_3)[best]]

    def spec_inputs(self, game: Game) -> list[Input]:
        """Speculative decoding: draft SPEC_ROOMY tokens a step while much memory is free, fewer as
        it fills, none when it is tight (drafts hold blocks ahead and preempt sooner)."""
        s = game.serving
        if s.spec_k is None or not self._careful(game):
            return []
        out = []
        if self.speculate:
            free = 1.0 - s.held / R.VISIBLE_CELLS
            want = next((k for least, k in SPEC_BY_FREE if free >= least), 0)
            if want != s.spec_k:
                out.append(Input.SPEC_UP if want > s.spec_k else Input.SPEC_DOWN)
        # Drafts take the step's budget too: raise it while they leave prompts too little.
        p = s.prefill
        if p is not None and s.spec_k and s.decoding() * (1 + s.spec_k) > 0.75 * p.budget \
                and p.budget < max(R.BUDGETS):
            out.append(Input.BUDGET_UP)
        return out

    def preempt_inputs(self, game: Game) -> list[Input]:
        """Set the preemption mode for the request that would be preempted next: swap when it
        has generated enough that recomputing costs more than copying and the CPU has room."""
        if not game.allocator.allocator.preemptible or not self._careful(game):
            return []
        s = game.serving
        victim = max((r for r in s.running.values() if not r.static and not r.reserved),
                     key=lambda r: r.order, default=None)
        if victim is None:
            return []
        blocks = len(victim.blocks)
        recompute_ms = R.PREFILL_MS_PER_TOKEN * s.tokens_of(victim)
        swap_ms = 2 * R.SWAP_MS_PER_BLOCK * blocks
        want = "swap" if swap_ms < recompute_ms and s.cpu_used + blocks <= R.CPU_BLOCKS else "recompute"
        return [Input.PREEMPT_TOGGLE] if want != s.preempt_mode else []

    # ------------------------------------------------------------------ the allocator
    def choose(self, game: Game) -> Plan | None:
        if game.over:
            return None
        a = game.active
        paged = game.allocator.player_split
        careful = self._careful(game)
        if a is None:
            # A request that cannot be placed whole waits for the scheduler's next step; a
            # careful player splits it at once.
            if game.blocked is not None and paged and careful and self.should_admit(game):
                return Plan(0, (), 0, True, 0.0)
            return None
        if careful and not self.should_admit(game):
            return WAIT
        if paged:
            # Pages go wherever blocks are free: a placement puzzle no longer exists. A careful
            # scheduler splits (admitted at once, holes used); a hurried one drops it whole.
            if careful:
                return Plan(a.rotation, (), 0, True, 0.0)
            return Plan(a.rotation, (), 0, False, 0.0)
        if careful:
            best = self.best_path(game)
            if best is not None:
                if self.too_high(game, best) and not self.pressed(game):
                    return WAIT
                return best
        options = self.options(game)
        if not options:
            return Plan(a.rotation, (), 0, False, 0.0)
        options.sort(key=lambda p: p.score, reverse=True)
        return self._rng.choice(options[: max(1, len(options) // 2)])

    def too_high(self, game: Game, plan: Plan) -> bool:
        """Whether `plan` rests within CEILING_MARGIN rows of the top while the falling
        request still hangs well above where it would rest (time to wait for a range to free)."""
        return plan.top < R.HIDDEN + CEILING_MARGIN and game.active is not None and \
            game.active.y < plan.rest_y - 2

    def best_path(self, game: Game) -> Plan | None:
        """The best resting pose any path reaches (tucks under overhangs included), scored as
        the placement it makes; its keys are the path's."""
        a = game.active
        assert a is not None
        masks = game.board.masks
        shapes = PIECES[a.kind].rotations
        best: Plan | None = None
        for (rot, x, y), keys in reach.paths(game.board, a.kind, a.rotation, a.x, a.y).items():
            placed = self.placement_score(masks, shapes[rot], x, y)
            if placed is None:
                continue
            score = placed - 0.01 * len(keys)
            if best is None or score > best.score:
                best = Plan(rot, tuple(keys), 0, False, score, y,
                            y + min(cy for _, cy in shapes[rot]))
        return best

    def placement_score(self, masks: list[int], shape: Sequence[tuple[int, int]], x: int,
                        y: int) -> float | None:
        """The features' score of the board with `shape` placed at (x, y); None when it would
        rest above VRAM."""
        if any(y + cy < R.HIDDEN for _, cy in shape):
            return None
        new = masks[:]
        for cx, cy in shape:
            new[y + cy] |= 1 << (x + cx)
        rows = [y + cy for _, cy in shape]
        top, bottom = min(rows), max(rows)
        landing = HEIGHT - 1 - bottom + (bottom - top + 1) / 2
        return evaluate(new, landing, 0, self.weights)

    def options(self, game: Game) -> list[Plan]:
        a = game.active
        assert a is not None
        board = game.board
        masks = board.masks
        tops = board.stats()[2]
        shapes = PIECES[a.kind].rotations
        profiles = COLUMNS[a.kind]
        footprints = FOOTPRINTS[a.kind]
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
                score = self.placement_score(masks, shape, x, y)
                if score is not None:
                    plans.append(Plan(rot, turns, x - rx, False, score))
        return plans
