"""The game: one run of VRAM Tetris as a pure function of (seed, mode, goal, timed inputs).

Requests arrive on their own clock (engine.workload) into a waiting queue; the one at its front
falls as a tetromino and is admitted where it comes to rest (or where the player splits it);
engine.serving then runs its life: it decodes, grows, may be preempted, and finishes by itself.
This module is the Tetris around that: moving, turning, holding and dropping the falling
request, and how a run ends.

Time comes in as an argument (`update(dt_ms, inputs)`); nothing here reads a clock, prints or
draws. Every public action returns the events it caused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from operator import itemgetter

from . import events as ev
from . import ending, layouts, reach, speculative
from . import modes as M
from . import rules as R
from .board import Board, Cell
from .features import DEFAULT as DEFAULT_FEATURES, Features
from .inputs import Input as Input
from .memory import Breakdown
from .pieces import COLUMNS, FOOTPRINTS, KINDS, PIECES, Footprint, Kind
from .reports import RunReport
from .rotation import KICKS
from .request import Request
from .serving import Serving
from .telemetry import Telemetry, ThroughputWindow
from .workload import Workload

MODES = M.NAMES  # the allocator names, from the registry in engine.modes
_MODE_INPUTS = {"contiguous": "MODE_CONTIGUOUS", "paged": "MODE_PAGED"}
OVERLOAD_CAUSES: tuple[str, ...] = ("queue_full", "deadline")
CHUNK_MS = 250.0  # the longest slice of time simulated at once: a long step plays as short ones


# The keys that pick an allocator directly, by registry name (Tab cycles through the registry).
MODE_OF_INPUT: dict[Input, str] = {Input[v]: k for k, v in _MODE_INPUTS.items()}

# Events that carry nothing but a move: equal values, so one immutable instance of each serves.
_MOVED = {(dx, dy): ev.Moved(dx, dy) for dx, dy in ((-1, 0), (1, 0), (0, 1))}
_ROTATED = {(d, i): ev.Rotated(d, i) for d in (1, -1) for i in range(5)}
_MOVED_LEFT, _MOVED_RIGHT = _MOVED[(-1, 0)], _MOVED[(1, 0)]


def _logical_getter(cells: tuple[Cell, ...]) -> Callable[[list[Cell]], tuple[Cell, ...]]:
    """What takes a placement of these cells (listed in this order) into logical order."""
    first, *rest = sorted(range(len(cells)), key=lambda i: (-cells[i][1], cells[i][0]))
    return itemgetter(first, *rest)


# Per shape, what takes its cells (in PIECES order) into logical order: bottom row first, left
# to right (logical_order(), for the four cells of a whole placement).
_IN_LOGICAL_ORDER: dict[Kind, tuple[Callable[[list[Cell]], tuple[Cell, ...]], ...]] = {
    k: tuple(_logical_getter(cells) for cells in PIECES[k].rotations) for k in KINDS
}
# _TURNS[kind][rotation][direction]: (the rotation a turn leads to, its footprint, and the wall
# kicks to try in order, each with the event a turn by it makes).
_TURNS: dict[Kind, tuple[dict[int, tuple[int, Footprint, tuple[tuple[int, int, ev.Rotated], ...]]],
                         ...]] = {
    k: tuple({d: ((r + d) % 4, FOOTPRINTS[k][(r + d) % 4],
                  tuple((kx, ky, _ROTATED[(d, i)])
                        for i, (kx, ky) in enumerate(KICKS[k][(r, (r + d) % 4)])))
              for d in (1, -1)} for r in range(4))
    for k in KINDS
}
_NEVER = float("inf")
_NO_LEVEL_MS = 10**9 * R.LEVEL_MS  # "the next level" at the top level: never


@dataclass(slots=True)
class Active:
    """The falling piece: a request looking for room."""

    kind: Kind
    rotation: int
    x: int
    y: int
    request_id: int

    def cells(self) -> list[Cell]:
        x, y = self.x, self.y
        return [(x + cx, y + cy) for cx, cy in PIECES[self.kind].rotations[self.rotation]]


def logical_order(cells: Iterable[Cell]) -> list[Cell]:
    """A placement's blocks as logical pages: bottom row first, left to right (the context
    fills the lowest blocks, decoding fills upwards)."""
    return sorted(cells, key=lambda c: (-c[1], c[0]))


class Game:
    """One run: the board (VRAM), the queue, the falling request, the score and the gauges.

    Drive it with update(dt_ms, inputs); read the public attributes and telemetry() to draw it.
    """

    __slots__ = ('_blocked_origin', '_blocked_step', '_ev', '_gravity_acc', '_gravity_ms', '_kind_reach', '_level_check_ms', '_lock_resets', '_lock_timer', '_lowest_y', '_mode', '_reach', '_reach_v', '_solid', '_stats', '_throughput', '_vram_warned', '_workload', 'active', 'blocked', 'board', 'can_hold', 'endless', 'features', 'focus', 'goal', 'hold', 'level', 'mixed', 'mode', 'modes_used', 'over', 'peak_resident', 'peak_utilisation', 'picked', 'pieces', 'ready', 'goal_requests', 'result', 'score', 'seed', 'serving', 'time_ms')

    def __init__(self, seed: int = 0, mode: str = M.DEFAULT, endless: bool = False,
                 features: Features = DEFAULT_FEATURES, load: R.Load = R.LOAD,
                 goal_requests: int | None = None, ready: bool = False,
                 queue_max: int = R.QUEUE_MAX) -> None:
        # load: arrivals; goal_requests: a serve run's goal; ready: time waits for the first input;
        # queue_max: the most requests that may wait before the run is overloaded.
        self._mode = M.get(mode)
        self.features = features
        self.seed = seed
        self.mode = mode
        self.modes_used: list[str] = [mode]  # allocators in the order this run used them
        self.mixed = False  # the allocator changed after the first request was admitted
        self.endless = endless
        self.goal = "endless" if endless else "serve"
        self.goal_requests = R.GOAL_REQUESTS if goal_requests is None else goal_requests
        self.ready = ready
        self.board = Board()
        self.serving = Serving(self.board, features, queue_max)
        self._workload = Workload(seed, features.prefixes, load)
        self.score = 0
        self.level = 1
        self.pieces = 0  # admissions
        self.time_ms = 0.0
        self.peak_utilisation = 0.0
        self.peak_resident = 0
        self.hold: Request | None = None
        self.picked: int | None = None  # the waiting request picked to run next (features.pick)
        self.can_hold = True
        self.active: Active | None = None
        self.blocked: Request | None = None  # the front request, waiting to be paged
        self._blocked_step = 0  # the decode step it started waiting at (-1: short of memory)
        self._blocked_origin: tuple[Cell, ...] = ()  # where it would have entered
        self.over = False
        self.result: RunReport | None = None
        self.focus: int | None = None  # the request whose block table the panel shows
        self._gravity_acc = 0.0
        self._lock_timer = 0.0
        self._lock_resets = 0
        self._lowest_y = 0
        self._throughput = ThroughputWindow()
        self._vram_warned = False
        self._stats: tuple[int, tuple[int, int, list[int]]] | None = None  # (version, stats)
        # engine.reach's counts for one board version: the board as one integer, the cells each
        # kind reaches (counted when first asked), and (cover rows, reachable free) of them all.
        self._reach_v = -1
        self._solid = 0
        self._kind_reach: dict[Kind, int] = {}
        self._reach: tuple[list[int], int] | None = None
        self._level_check_ms = R.LEVEL_MS - 1.0  # no level change is possible before this
        self._gravity_ms = R.gravity_ms(self.level)
        self._ev: list[ev.Event] = []
        self._tick(0.0)

    # ------------------------------------------------------------------ puzzles and tests
    def set_board(self, board: Board) -> None:
        """Start from a given memory layout (puzzles, lessons, tests).

        Owners already on `board` become running requests that hold those blocks full of
        tokens and never finish; the falling request goes back to its spawn position.
        Raises ValueError for a board that is not one (see check_board); nothing changes then.
        """
        layouts.check_board(board)
        s = self.serving
        layouts.clear_running(s)
        owned: dict[int, list[Cell]] = {}
        for y, row in enumerate(board.grid):
            for x, owner in enumerate(row):
                if owner:
                    owned.setdefault(owner, []).append((x, y))
        base = 10**9 + max((r.id for r in s.requests.values()), default=0)
        layout = board.copy()  # owners that are ids of requests still to come are renamed
        for i, (owner, cells) in enumerate(sorted(owned.items())):
            rid = base + i if owner in s.requests else owner
            order = logical_order(cells)
            empty = [(x, y) for x, y in order if board.reserved[y] >> x & 1]
            full = [c for c in order if c not in empty]
            req = Request(rid, Kind(owner % len(Kind)), R.TOKENS_PER_BLOCK * len(full), 10**9,
                          0.0, 0.0, mode=self.mode, blocks=[*full, *empty], reserved=len(empty))
            if rid != owner:
                layout.free(cells)
                layout.place(full, rid, empty)
            layouts.hold_static(s, req)
        self.board.load(layout)
        self._stats = None
        self._reach_v = -1
        a = self.active
        if a is not None:
            self.active = None
            self._spawn(s.requests[a.request_id])

    def set_workload(self, workload: Workload) -> None:
        """Take the requests still to arrive from `workload` (puzzles, lessons, tests: e.g. a
        workload.Scripted list of arrivals); those already arrived stay where they are."""
        self._workload = workload

    def set_active(self, kind: Kind, rotation: int = 0, x: int | None = None,
                   y: int | None = None) -> None:
        """Make the falling request a `kind` at a given pose (puzzles, lessons, tests).

        The request keeps its id and lengths. The pose defaults to the spawn pose, one row lower
        when that row is free, as a spawn places it; gravity and lock delay start afresh.
        Raises ValueError when nothing is falling or the cells are not free.
        """
        a = self.active
        if a is None:
            raise ValueError("no falling request")
        p = PIECES[kind]
        rotation %= 4
        x = p.spawn_x if x is None else x
        shape = FOOTPRINTS[kind][rotation]
        if y is None:
            y = p.spawn_y + (1 if self.board.fits(shape, x, p.spawn_y + 1) else 0)
        if not self.board.fits(shape, x, y):
            raise ValueError(f"{p.name} does not fit at ({x}, {y}) in rotation {rotation}")
        self.serving.requests[a.request_id].kind = kind
        self.active = Active(kind, rotation, x, y, a.request_id)
        self._gravity_acc = 0.0
        self._lock_timer = 0.0
        self._lock_resets = 0
        self._lowest_y = y

    # ------------------------------------------------------------------ queries
    @property
    def queue(self) -> tuple[Request, ...]:
        """The requests waiting behind the falling one, front first."""
        return tuple(self.serving.waiting)

    @property
    def next_queue(self) -> tuple[Kind, ...]:
        """The shapes of the waiting requests the next-requests panel shows."""
        return tuple(r.kind for r in list(self.serving.waiting)[:R.NEXT_QUEUE])

    @property
    def requests(self) -> dict[int, Request]:
        return self.serving.requests

    @property
    def hold_kind(self) -> Kind | None:
        return self.hold.kind if self.hold is not None else None

    @property
    def served(self) -> int:
        return self.serving.served

    @property
    def tokens(self) -> int:
        return self.serving.tokens_served

    @property
    def preempt_mode(self) -> str:
        return self.serving.preempt_mode

    @property
    def allocator(self) -> M.Mode:
        """The current allocator mode's entry in the registry."""
        return self._mode

    @property
    def split_ready(self) -> bool:
        return self._mode.player_split and self.active is not None and not self.over

    @property
    def queue_max(self) -> int:
        """The most requests that may wait: one more overloads the run."""
        return self.serving.queue_max

    @property
    def falling(self) -> Request | None:
        a = self.active
        return self.serving.requests.get(a.request_id) if a is not None else None

    @property
    def block_table(self) -> ev.BlockTable | None:
        """The block table of the request in focus (the last admitted, while it runs)."""
        req = self.serving.running.get(self.focus) if self.focus is not None else None
        return self.serving.table(req) if req is not None else None

    def table_of(self, request_id: int) -> ev.BlockTable | None:
        req = self.serving.requests.get(request_id)
        return self.serving.table(req) if req is not None else None

    def paged_in_ms(self) -> float | None:
        """How long until the allocator pages the request waiting to be paged (at the next
        decode step); None when none waits, or when it waits for memory instead."""
        if self.blocked is None or self._blocked_step < 0 or self.over:
            return None
        return self.serving.next_step_ms() - self.time_ms

    def idle_ms(self) -> float:
        """With nothing falling, how long until a request can fall: the next arrival, or the
        decode step at which a running request next grows while such a step could preempt one
        (it rejoins the queue and falls); or a level or a deadline in hold, if sooner. The decode
        steps before it only decode and finish requests: update() plays them on the way. 0
        while a request falls or waits to be paged."""
        if self.active is not None or self.blocked is not None or self.over:
            return 0.0
        s = self.serving
        at = self._workload.next_at
        if s.may_preempt():
            step = s.next_change_ms()
            if step < at:
                at = step
        d = self._level_or_hold_before(at) - self.time_ms
        return d if d > 0.0 else 0.0

    def wait_ms(self, req: Request) -> float:
        return self.time_ms - req.queued_ms

    def ghost_cells(self) -> list[Cell]:
        a = self.active
        if a is None:
            return []
        d = self.board.drop_distance(COLUMNS[a.kind][a.rotation], a.x, a.y,
                                     self.board.column_tops())
        return [(x, y + d) for x, y in a.cells()]

    def _counts(self) -> tuple[int, int, list[int]]:
        """Board.stats(), cached until the board changes."""
        v = self.board.version
        if self._stats is None or self._stats[0] != v:
            self._stats = (v, self.board.stats())
        return self._stats[1]

    def board_stats(self) -> tuple[int, int]:
        """(occupied, sealed) visible cells; occupied counts reserved cells."""
        occupied, sealed, _ = self._counts()
        return occupied, sealed

    def unreachable_free(self) -> int:
        """Free blocks the current allocator can never give a request: external fragmentation
        (free blocks no placement of any shape reaches; paged: none, by construction)."""
        if not self._mode.allocator.external_fragmentation:
            return 0
        return R.VISIBLE_CELLS - self._counts()[0] - self._cover()[1]

    def _reach_of(self, kind: Kind) -> int:
        """The cells `kind` reaches (engine.reach's board integer), cached until the board
        changes."""
        board = self.board
        if self._reach_v != board.version:
            self._reach_v = board.version
            self._solid = reach.solid(board.masks)
            self._kind_reach = {}
            self._reach = None
        cover = self._kind_reach.get(kind)
        if cover is None:  # every kind at once: the reports and gauges read them all
            self._kind_reach = reach.covers(board, KINDS, self._solid)
            cover = self._kind_reach[kind]
        return cover

    def _cover(self) -> tuple[list[int], int]:
        """(engine.reach.reachable_cells, reachable free blocks), cached until the board changes."""
        if self._reach is None or self._reach_v != self.board.version:
            big = 0
            for k in KINDS:
                big |= self._reach_of(k)
            self._reach = (reach.rows(big), reach.free_visible(big, self._solid))
        return self._reach

    def memory(self, kind: Kind | None = None) -> Breakdown:
        """Free memory as the falling request (or `kind`) sees it: sealed = out of reach of
        every shape, usable = within reach of this one (paged: every free block is usable)."""
        free = R.VISIBLE_CELLS - self._counts()[0]
        if not self._mode.allocator.external_fragmentation:
            return Breakdown(free, 0, self.serving.reserved, free)
        k = self._seen_by() if kind is None else kind
        usable = reach.free_visible(self._reach_of(k), self._solid)
        return Breakdown(free, self.unreachable_free(), self.serving.reserved, usable)

    def _seen_by(self) -> Kind:
        a = self.active
        if a is not None:
            return a.kind
        return self.serving.waiting[0].kind if self.serving.waiting else Kind.T

    def waste(self) -> tuple[int, int, int]:
        """(tokens stored, token slots held, free blocks out of reach): the figures the waste
        share is made of (reserved-but-empty + unfilled tails = slots - tokens)."""
        s = self.serving
        return s.tokens_stored(), s.held * R.TOKENS_PER_BLOCK, self.unreachable_free()

    def waste_share(self) -> float:
        tokens, slots, lost = self.waste()
        total = slots + lost * R.TOKENS_PER_BLOCK
        return (total - tokens) / total if total else 0.0

    def telemetry(self) -> Telemetry:
        s = self.serving
        occupied = s.held
        running = len(s.running)
        return Telemetry._of(
            occupied / R.VISIBLE_CELLS,  # utilisation()
            self._throughput.rate(self.time_ms),
            s.reserved,
            running,
            self.peak_utilisation,
            R.VISIBLE_CELLS - occupied,
            self.pieces,
            s.served,
            self.score,
            self.level,
            s.tokens_served,
            len(s.waiting),
            s.preempted_swap,
            s.preempted_recompute,
            s.cpu_used,
            s.tokens_stored(),
            occupied * R.TOKENS_PER_BLOCK,
            s.reserved_wasted,
            self.time_ms / 60_000.0,
            self.unreachable_free if self._mode.allocator.external_fragmentation else None,
        )

    # ------------------------------------------------------------------ driving
    def update(self, dt_ms: float, inputs: Iterable[Input] = ()) -> list[ev.Event]:
        """Apply this step's inputs, then let `dt_ms` of game time pass."""
        if self.ready:
            inputs = tuple(inputs)
            self.ready = not inputs
            dt_ms = 0.0 if self.ready else dt_ms
        if not self.over:
            dispatch = self._DISPATCH
            for inp in inputs:
                dispatch[inp](self)
                if self.over:
                    break
            while dt_ms > 0 and not self.over:
                if self.active is None and self.blocked is None:
                    # Nothing falls: time runs on to the next thing that can happen (the
                    # earliest of an arrival, a decode step, a level, a deadline in hold).
                    at = self._workload.next_at
                    decode = self.serving.next_step_ms()
                    until = self._level_or_hold_before(decode if decode < at else at) - self.time_ms
                    step = dt_ms if until >= dt_ms else (until if until > 1e-6 else 1e-6)
                else:
                    step = CHUNK_MS if dt_ms > CHUNK_MS else dt_ms
                dt_ms -= step
                self._tick(step)
        out = self._ev
        self._ev = []
        return out

    # One-action conveniences; each goes through update(), the single path every input takes.
    def move(self, dx: int) -> list[ev.Event]:
        """Slide |dx| cells, one at a time (a wall stops the slide)."""
        step = Input.RIGHT if dx > 0 else Input.LEFT
        return self.update(0.0, (step,) * abs(dx))

    def rotate(self, direction: int) -> list[ev.Event]:
        return self.update(0.0, (Input.ROTATE_CW if direction > 0 else Input.ROTATE_CCW,))

    def hard_drop(self) -> list[ev.Event]:
        return self.update(0.0, (Input.HARD_DROP,))

    def split(self) -> list[ev.Event]:
        return self.update(0.0, (Input.SPLIT,))

    def set_mode(self, mode: str) -> list[ev.Event]:
        M.get(mode)
        return self.update(0.0, (Input[_MODE_INPUTS[mode]],))

    def toggle_preempt(self) -> list[ev.Event]:
        return self.update(0.0, (Input.PREEMPT_TOGGLE,))

    # ------------------------------------------------------------------ actions
    # _shift(-1, 0) and _shift(1, 0), written out for the keys pressed most.
    def _left(self) -> None:
        a = self.active
        if a is not None and self.board.fits(FOOTPRINTS[a.kind][a.rotation], a.x - 1, a.y):
            a.x -= 1
            self._ev.append(_MOVED_LEFT)
            if self._lock_resets < R.MAX_LOCK_RESETS:  # _after_manipulation()
                self._lock_resets += 1
                self._lock_timer = 0.0

    def _right(self) -> None:
        a = self.active
        if a is not None and self.board.fits(FOOTPRINTS[a.kind][a.rotation], a.x + 1, a.y):
            a.x += 1
            self._ev.append(_MOVED_RIGHT)
            if self._lock_resets < R.MAX_LOCK_RESETS:  # _after_manipulation()
                self._lock_resets += 1
                self._lock_timer = 0.0

    def _shift(self, dx: int, dy: int) -> bool:
        a = self.active
        if a is None or not self.board.fits(FOOTPRINTS[a.kind][a.rotation], a.x + dx, a.y + dy):
            return False
        a.x += dx
        a.y += dy
        self._ev.append(_MOVED[(dx, dy)])
        if dy and a.y > self._lowest_y:
            self._lowest_y = a.y
            self._lock_resets = 0
            self._lock_timer = 0.0
        elif dx:
            self._after_manipulation()
        return True

    def _rotate(self, direction: int) -> None:
        a = self.active
        if a is None:
            return
        to, shape, tries = _TURNS[a.kind][a.rotation][direction]
        fits = self.board.fits
        x, y = a.x, a.y
        for kx, ky, turned in tries:
            if fits(shape, x + kx, y + ky):
                a.x = x + kx
                a.y = y + ky
                a.rotation = to
                self._ev.append(turned)
                if a.y > self._lowest_y:
                    self._lowest_y = a.y
                    self._lock_resets = 0
                    self._lock_timer = 0.0
                else:
                    self._after_manipulation()
                return

    def _after_manipulation(self) -> None:
        """Move reset: a successful move or turn restarts lock delay, at most 15 times."""
        if self._lock_resets < R.MAX_LOCK_RESETS:
            self._lock_resets += 1
            self._lock_timer = 0.0

    def _soft_drop(self) -> None:
        if self._shift(0, 1):
            self._gravity_acc = 0.0

    def _hard_drop(self) -> None:
        a = self.active
        if a is None:
            return
        d = self.board.drop_distance(COLUMNS[a.kind][a.rotation], a.x, a.y,
                                     self.board.column_tops())
        a.y += d
        self._lock(d)

    def _hold(self) -> None:
        a = self.active
        if a is None:
            return
        if not self.can_hold:
            self._ev.append(ev.Alert("hold_used", "hold already used for this request"))
            return
        req = self.serving.requests[a.request_id]
        back = self.hold
        self.hold = req
        self.active = None
        self._ev.append(ev.Held(a.kind, back.kind if back is not None else None))
        self.can_hold = False
        if back is not None:
            self._spawn(back)
        else:
            self._maybe_spawn()

    def _set_mode(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            self._mode = M.get(mode)
            if self.pieces:  # the run has started: its record belongs to neither mode
                self.mixed = True
                self.modes_used.append(mode)
            else:
                self.modes_used = [mode]
            self._ev.append(ev.ModeSwitched(mode))

    def _toggle_mode(self) -> None:
        self._set_mode(M.following(self.mode))

    def _toggle_preempt(self) -> None:
        modes = R.PREEMPT_MODES
        s = self.serving
        s.preempt_mode = modes[(modes.index(s.preempt_mode) + 1) % len(modes)]
        self._ev.append(ev.PreemptModeSwitched(s.preempt_mode))

    def _split(self) -> None:
        a = self.active
        req = self.falling if a is not None else self.blocked
        if req is None:
            return
        alloc = self._mode.allocator
        if not alloc.player_split:
            self._ev.append(ev.Alert(
                "split_refused",
                f"split refused: the {self.mode} allocator needs req#{req.id} in one range "
                "(switch to PAGED)"))
            return
        s = self.serving
        hits = s.hits(req, alloc)
        need = s.need(req, alloc, hits)
        origin = tuple(logical_order(a.cells())) if a is not None else self._blocked_origin
        masks = s.cache.frame_masks(need, hits) if s.cache is not None else self.board.masks
        frames = alloc.split(masks, [x for x, _ in origin[:need]])
        if frames is None:
            self._ev.append(ev.Alert(
                "split_no_room", f"split refused: req#{req.id} needs {need} free block(s), "
                f"{R.VISIBLE_CELLS - self.serving.held} free"))
            return
        self.active = None
        self.blocked = None
        self._page(req, frames, origin, "split", hits)

    # ------------------------------------------------------------------ time
    def _tick(self, dt: float) -> None:
        s = self.serving
        if dt > 0:
            now = self.time_ms = self.time_ms + dt
            if now >= self._level_check_ms:
                level = R.level_for(now)
                if level != self.level:
                    self.level = level
                    self._gravity_ms = R.gravity_ms(level)
                    self._ev.append(ev.LevelUp(level))
                # level_for() cannot change before the next level's first minute (less a
                # millisecond, whatever the rounding of its division).
                self._level_check_ms = (self.level * R.LEVEL_MS - 1.0
                                        if self.level < R.MAX_LEVEL else _NEVER)
        else:
            now = self.time_ms
        wl = self._workload
        if wl.next_at <= now:
            for a in wl.arrivals_until(now):
                s.arrive(a)
        if dt > 0:
            decoded = s.generated
            falling = self.active
            s.flying = tuple(falling.cells()) if falling is not None else ()
            s.advance(dt)
            if s.generated != decoded:
                self._throughput.add(now, s.generated - decoded)
        if s.events:
            self._take_serving_events()
        if self.blocked is not None:
            self._retry_blocked()
        if self.active is None:
            if self.blocked is None and s.waiting and not self.over:
                self._spawn(self._next_up())
            if self.active is None:
                # Nothing falls, waits or is held: no deadline can pass (_check_overload()).
                if not self.over and (s.waiting or self.blocked is not None or self.hold is not None
                                      or (s.prefill is not None and s.prefill.queue)):
                    self._check_overload()
                return
            dt = 0.0  # it entered at the end of this slice of time: it falls from now on
        if dt > 0:
            self._fall(dt)
        if not self.over:
            self._check_overload()

    def _level_or_hold_before(self, at: float) -> float:
        """`at`, or the next level or the deadline of the request in hold if one comes sooner."""
        level = self.level * R.LEVEL_MS if self.level < R.MAX_LEVEL else _NO_LEVEL_MS
        if level < at:
            at = level
        hold = self.hold
        if hold is not None:
            deadline = hold.queued_ms + R.DEADLINE_MS
            if deadline < at:
                at = deadline
        prefill = self.serving.prefill
        if prefill is not None:  # a request waits until its first token, prefilling included
            for req in prefill.queue:
                deadline = req.queued_ms + R.DEADLINE_MS
                if deadline < at:
                    at = deadline
        return at

    def _take_serving_events(self) -> None:
        s = self.serving
        if s.unscored:  # the requests that finished score at the level they finished in
            self.score += s.take_unscored() * self.level
        events = s.events
        self._ev.extend(events)
        events.clear()
        if not self.endless and s.served >= self.goal_requests and not self.over:
            self._end("victory", "victory", None)

    def _fall(self, dt: float) -> None:
        a = self.active
        assert a is not None
        fits = self.board.fits
        shape = FOOTPRINTS[a.kind][a.rotation]
        if fits(shape, a.x, a.y + 1):
            self._gravity_acc += dt
            step = self._gravity_ms
            while self._gravity_acc >= step:
                self._gravity_acc -= step
                self._shift(0, 1)
                if not fits(shape, a.x, a.y + 1):
                    dt = self._gravity_acc  # time left in this step counts towards lock delay
                    break
            else:
                return
        self._gravity_acc = 0.0
        self._lock_timer += dt
        # Guideline: once the 15 move resets are spent, a grounded piece locks at once.
        if self._lock_timer >= R.LOCK_DELAY_MS or self._lock_resets >= R.MAX_LOCK_RESETS:
            self._lock(0)

    # ------------------------------------------------------------------ admission
    def _maybe_spawn(self) -> None:
        if self.active is None and self.serving.waiting and not self.over:
            self._spawn(self._next_up())

    def _next_up(self) -> Request:
        """The request to fall next: the one picked, while it is still among the first
        NEXT_QUEUE waiting, else the front of the queue."""
        waiting = self.serving.waiting
        picked, self.picked = self.picked, None
        if picked is not None:
            for i, req in enumerate(list(waiting)[:R.NEXT_QUEUE]):
                if req.id == picked:
                    del waiting[i]
                    return req
        return waiting.popleft()

    def _pick(self, n: int) -> None:
        """Pick the n-th waiting request (0: the front) to run next (features.pick)."""
        waiting = self.serving.waiting
        if not self.features.pick or n >= min(len(waiting), R.NEXT_QUEUE):
            return
        self.picked = waiting[n].id
        self._ev.append(ev.Picked(waiting[n].id, waiting[n].kind, n))

    def _budget(self, step: int) -> None:
        """The step's token budget: the next of rules.BUDGETS up or down (chunked prefill)."""
        p = self.serving.prefill
        if p is None:
            return
        choices = R.BUDGETS
        at = min(range(len(choices)), key=lambda i: abs(choices[i] - p.budget))
        p.budget = choices[max(0, min(len(choices) - 1, at + step))]
        self._ev.append(ev.BudgetSet(p.budget))

    def _spec(self, step: int) -> None:
        """Speculative decoding: the next of rules.SPEC_KS drafts a step, up or down."""
        s, ks = self.serving, R.SPEC_KS
        if s.spec_k is not None:
            speculative.set_k(s, ks[max(0, min(len(ks) - 1, ks.index(s.spec_k) + step))])
            self._ev.append(ev.SpecSet(s.spec_k))

    def _spawn(self, req: Request) -> None:
        """Let `req` fall from the top: a tetromino of its shape at the spawn pose."""
        kind = req.kind
        p = PIECES[kind]
        x, y = p.spawn_x, p.spawn_y
        self._gravity_acc = 0.0
        self._lock_timer = 0.0
        self._lock_resets = 0
        shape = FOOTPRINTS[kind][0]
        fits = self.board.fits
        if not fits(shape, x, y):
            self.active = None
            self._unplaceable(req, Active(kind, 0, x, y, req.id).cells(), "spawn_blocked")
            return
        if fits(shape, x, y + 1):
            y += 1  # guideline: a new piece drops one row at once if it can
        self._lowest_y = y
        self.active = Active(kind, 0, x, y, req.id)
        self._ev.append(ev.Spawned(req.id, kind))

    def _unplaceable(self, req: Request, origin: list[Cell], code: str) -> None:
        """`req` cannot be placed whole: paged on demand, or a CUDA OOM (contiguous)."""
        alloc = self._mode.allocator
        if not alloc.pages_on_demand:
            self._end("oom", code, req)
            return
        # It waits at the front for the scheduler's next decode step, which pages it wherever
        # blocks are free (or, with fewer free than it needs, goes on waiting).
        self.blocked = req
        self._blocked_step = self.serving.step
        self._blocked_origin = tuple(logical_order(origin))
        self._ev.append(ev.Alert(
            "waiting_whole", f"req#{req.id} cannot be placed whole: it waits for the scheduler "
            "(split pages it now)"))

    def _retry_blocked(self) -> None:
        req = self.blocked
        assert req is not None
        if not self._mode.allocator.pages_on_demand:
            # The allocator changed while it waited (it is not admitted yet): it enters again,
            # as a request of the new allocator, instead of waiting for pages that never come.
            self.blocked = None
            self._spawn(req)
            return
        s = self.serving
        if s.step <= self._blocked_step:
            return
        alloc = self._mode.allocator
        hits = s.hits(req, alloc)
        need = s.need(req, alloc, hits)
        origin = self._blocked_origin
        near = sum(x for x, _ in origin) / len(origin)
        masks = s.cache.frame_masks(need, hits) if s.cache is not None else self.board.masks
        frames = alloc.unplaced(masks, need, near)
        if frames is None:
            if self._blocked_step >= 0:
                self._ev.append(ev.Alert(
                    "waiting_memory", f"req#{req.id} waits: needs {need} free block(s), "
                    f"{R.VISIBLE_CELLS - s.held} free"))
            self._blocked_step = -1  # said once; tried again every step from now on
            return
        self.blocked = None
        self._page(req, frames, origin, "on_demand", hits)

    def _lock(self, drop_cells: int) -> None:
        a = self.active
        assert a is not None
        self.active = None
        req = self.serving.requests[a.request_id]
        x, y = a.x, a.y
        cells = [(x + cx, y + cy) for cx, cy in PIECES[a.kind].rotations[a.rotation]]
        if y + FOOTPRINTS[a.kind][a.rotation].min_dy < R.HIDDEN:
            self._unplaceable(req, cells, "ceiling")
            return
        sealed_cells = self._newly_sealed(a)
        self._ev.append(ev.Locked(ev.LockResult(a.request_id, a.kind, tuple(cells),
                                                len(sealed_cells), drop_cells, sealed_cells)))
        alloc = self._mode.allocator
        order = _IN_LOGICAL_ORDER[a.kind][a.rotation](cells)
        hits: list[Cell] = []
        if req.swapped:  # need(), written out
            need = req.swapped
        else:
            need = -(-(req.prompt + req.done) // R.TOKENS_PER_BLOCK)  # rules.blocks_for()
            if need < 1:
                need = 1
            s = self.serving
            if s.cache is not None:  # where it came to rest is its own: nothing cached stays there
                s.cache.claim(cells)
                hits = s.hits(req, alloc)
                need -= len(hits)
        tokens, reserved = alloc.whole(order, need)
        n = len(tokens)
        if not reserved and tokens == list(order[:n]):  # the rest of its placement, in order
            preferred = list(order[n:])
        elif tokens + reserved == list(order):
            preferred = []
        else:
            preferred = [c for c in order if c not in tokens and c not in reserved]
        self._admit(req, tokens, reserved, "whole", preferred, hits)

    def _newly_sealed(self, a: Active) -> tuple[Cell, ...]:
        """The free visible cells a piece about to be written over seals off: in each of its
        columns, the free cells between its lowest block there and the old column top."""
        tops = self.board.column_tops()
        ax, ay = a.x, a.y
        newly: list[Cell] = []
        for cx, top_dy, bottom_dy, _ in COLUMNS[a.kind][a.rotation]:
            x = ax + cx
            top = tops[x]
            if ay + top_dy < top:
                y0 = ay + bottom_dy + 1
                for y in range(y0 if y0 >= R.HIDDEN else R.HIDDEN, top):
                    newly.append((x, y))
        return tuple(newly)

    def _page(self, req: Request, frames: list[Cell], origin: tuple[Cell, ...], how: str,
              hits: list[Cell]) -> None:
        tops = self.board.column_tops()
        holes = sum(1 for x, y in frames if y > tops[x])
        table = ev.BlockTable(req.id, req.kind, tuple(enumerate(frames, start=len(hits))))
        self._ev.append(ev.PageSplit(table, holes, origin, how == "on_demand"))
        self._admit(req, frames, [], how, [], hits)

    def _admit(self, req: Request, tokens: list[Cell], reserved: list[Cell], how: str,
               preferred: list[Cell], hits: list[Cell]) -> None:
        s = self.serving
        s.admit(req, self._mode.allocator, tokens, reserved, how, preferred, hits)
        self.pieces += 1
        self.can_hold = True
        self.focus = req.id
        if s.events:
            self._take_serving_events()
        util = s.held / R.VISIBLE_CELLS  # utilisation()
        if util > self.peak_utilisation:
            self.peak_utilisation = util
        if len(s.running) > self.peak_resident:
            self.peak_resident = len(s.running)
        if util > R.VRAM_WARN and not self._vram_warned:
            self._vram_warned = True
            self._ev.append(ev.Alert("vram_high", f"VRAM utilisation {util * 100:.0f} %: close to OOM"))
        elif util < R.VRAM_REARM:
            self._vram_warned = False
        if not self.over:
            self._maybe_spawn()

    # ------------------------------------------------------------------ endings
    def _check_overload(self) -> None:
        s = self.serving
        waiting = s.waiting
        if len(waiting) > s.queue_max:
            self._end("overload", "queue_full", waiting[-1])
            return
        now = self.time_ms
        # The request waiting longest: the first of (blocked, falling, hold, queue) on a tie.
        oldest = self.blocked
        a = self.active
        if a is not None:
            req = s.requests.get(a.request_id)
            if req is not None and (oldest is None or req.queued_ms < oldest.queued_ms):
                oldest = req
        req = self.hold
        if req is not None and (oldest is None or req.queued_ms < oldest.queued_ms):
            oldest = req
        for req in waiting:
            if oldest is None or req.queued_ms < oldest.queued_ms:
                oldest = req
        if s.prefill is not None:  # a request waits until its first token, prefilling included
            for req in s.prefill.queue:
                if oldest is None or req.queued_ms < oldest.queued_ms:
                    oldest = req
        if oldest is not None and now - oldest.queued_ms >= R.DEADLINE_MS:
            if oldest is self.blocked and self._blocked_step < 0:
                self._end("oom", "memory_full", oldest)  # memory truly exhausted
            else:
                self._end("overload", "deadline", oldest)

    def _end(self, outcome: str, code: str, req: Request | None) -> None:
        kind = req.kind if req is not None else self._seen_by()
        self.result = ending.run_report(self, outcome, code, req, kind)
        self.over = True
        self.active = None
        event = {"oom": ev.Oom, "overload": ev.Overloaded, "victory": ev.Victory}[outcome]
        self._ev.append(event(self.result))

    _DISPATCH: dict[Input, Callable[[Game], None]] = {
        Input.LEFT: _left,
        Input.RIGHT: _right,
        Input.SOFT_DROP: _soft_drop,
        Input.HARD_DROP: _hard_drop,
        Input.ROTATE_CW: partial(_rotate, direction=1),
        Input.ROTATE_CCW: partial(_rotate, direction=-1),
        Input.HOLD: _hold,
        Input.SPLIT: _split,
        Input.MODE_CONTIGUOUS: partial(_set_mode, mode=MODE_OF_INPUT[Input.MODE_CONTIGUOUS]),
        Input.MODE_PAGED: partial(_set_mode, mode=MODE_OF_INPUT[Input.MODE_PAGED]),
        Input.MODE_TOGGLE: _toggle_mode,
        Input.PREEMPT_TOGGLE: _toggle_preempt,
        Input.PICK_1: partial(_pick, n=0), Input.PICK_2: partial(_pick, n=1), Input.PICK_3: partial(_pick, n=2),
        Input.BUDGET_UP: partial(_budget, step=1), Input.BUDGET_DOWN: partial(_budget, step=-1),
        Input.SPEC_UP: partial(_spec, step=1), Input.SPEC_DOWN: partial(_spec, step=-1),
    }
