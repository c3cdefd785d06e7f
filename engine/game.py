"""The game: one run of VRAM Tetris as a pure function of (seed, mode, timed inputs).

Time comes in as an argument (`update(dt_ms, inputs)`); nothing here reads a clock, prints or
draws. Every public action returns the events it caused.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from . import events as ev
from . import memory, paging
from .memory import Breakdown
from . import modes as M
from . import rules as R
from .bag import PieceBag
from .board import Board, Cell
from .pieces import COLUMNS, FOOTPRINTS, PIECES, Kind
from .reports import RunReport
from .reservation import reservation_cells
from .rotation import KICKS
from .telemetry import Telemetry, ThroughputWindow, fragmentation, utilisation

MODES = M.NAMES  # the allocator names, from the registry in engine.modes
_MODE_INPUTS = {"contiguous": "MODE_CONTIGUOUS", "paged": "MODE_PAGED"}


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


# The keys that pick an allocator directly, by registry name (Tab cycles through the registry).
MODE_OF_INPUT: dict[Input, str] = {Input[v]: k for k, v in _MODE_INPUTS.items()}


@dataclass(frozen=True, slots=True)
class Cleared:
    """What one garbage collection removed."""

    rows: list[int]
    owners: tuple[tuple[int, ...], ...]  # per row, the holder of every block (0: free)
    token_blocks: int  # blocks that held tokens (the rest were reserved)
    finished: frozenset[int]  # requests with tokens in those rows: they are done


@dataclass(frozen=True, slots=True)
class PieceRequest:
    """A request of the game: one falling tetromino and, once placed, the blocks it owns.
    (The LAB's serving requests are engine.lab.PieceRequest.)"""

    id: int
    kind: Kind

    @property
    def name(self) -> str:
        return PIECES[self.kind].name


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


class Game:
    """One run: the board (VRAM), the falling request, the queue, the score and the gauges.

    Drive it with update(dt_ms, inputs); read the public attributes and telemetry() to draw it.
    """

    def __init__(self, seed: int = 0, mode: str = M.DEFAULT, endless: bool = False) -> None:
        self._mode = M.get(mode)
        self.seed = seed
        self.mode = mode
        self.modes_used: list[str] = [mode]  # allocators in the order this run used them
        self.mixed = False  # the allocator changed after the first request was placed
        self.endless = endless
        self.board = Board()
        self._rng = random.Random(seed)
        self._bag = PieceBag(self._rng)
        self.score = 0
        self.lines = 0
        self.level = 1
        self.pieces = 0
        self.tokens = 0
        self.time_ms = 0.0
        self.charge = R.CHARGE_START
        self.served = 0  # requests finished: a row holding their tokens was garbage-collected
        self._finished: set[int] = set()
        self.peak_utilisation = 0.0
        self.hold_kind: Kind | None = None
        self._hold_request = 0
        self.can_hold = True
        self.requests: dict[int, PieceRequest] = {}
        self._live: dict[int, int] = {}  # request id -> blocks it holds on the board
        self._next_id = 1
        self.active: Active | None = None
        self.over = False
        self.result: RunReport | None = None
        self.block_table: ev.BlockTable | None = None
        self._gravity_acc = 0.0
        self._lock_timer = 0.0
        self._lock_resets = 0
        self._lowest_y = 0
        self._throughput = ThroughputWindow()
        self._vram_warned = False
        self._stats: tuple[int, int, list[int]] | None = None  # Board.stats(), per board change
        # (the _stats it was counted for, kind, pages on demand, reserved, usable): the two
        # breakdown figures _stats does not hold, per board change, kind and allocator
        self._memory: tuple[object, Kind, bool, int, int] | None = None
        self._ev: list[ev.Event] = []
        self._spawn(self._bag.pop(), None)

    def set_board(self, board: Board) -> None:
        """Start from a given memory layout (puzzles, lessons, tests).

        Owners already on `board` become resident requests; the falling piece goes back to its
        spawn position, or the run ends in OOM if that is no longer free.
        """
        self.board = board
        self._stats = None
        self._memory = None
        self._live = {}
        for row in board.grid:
            for owner in row:
                if owner:
                    self._live[owner] = self._live.get(owner, 0) + 1
        for owner in self._live:
            if owner not in self.requests:
                self.requests[owner] = PieceRequest(owner, Kind(owner % len(Kind)))
        self._next_id = max(self._next_id, max(self._live, default=0) + 1)
        self.peak_utilisation = max(self.peak_utilisation, utilisation(self._counts()[0]))
        a = self.active
        if a is not None:
            if a.request_id in self._live:
                a.request_id = self._next_id
                self.requests[a.request_id] = PieceRequest(a.request_id, a.kind)
                self._next_id += 1
            self.active = None
            self._spawn(a.kind, a.request_id)

    def set_active(self, kind: Kind, rotation: int = 0, x: int | None = None,
                   y: int | None = None) -> None:
        """Make the falling request a `kind` at a given pose (puzzles, lessons, tests).

        The request keeps its id. The pose defaults to the spawn pose, one row lower when that
        row is free, as a spawn places it; gravity, lock delay and its resets start afresh, as
        for a new piece. Raises ValueError when the run is over or the cells are not free.
        """
        a = self.active
        if a is None:
            raise ValueError("no falling request: the run is over")
        p = PIECES[kind]
        rotation %= 4
        x = p.spawn_x if x is None else x
        shape = FOOTPRINTS[kind][rotation]
        if y is None:
            y = p.spawn_y + (1 if self.board.fits(shape, x, p.spawn_y + 1) else 0)
        if not self.board.fits(shape, x, y):
            raise ValueError(f"{p.name} does not fit at ({x}, {y}) in rotation {rotation}")
        self.requests[a.request_id] = PieceRequest(a.request_id, kind)
        self.active = Active(kind, rotation, x, y, a.request_id)
        self._gravity_acc = 0.0
        self._lock_timer = 0.0
        self._lock_resets = 0
        self._lowest_y = y

    # ------------------------------------------------------------------ queries
    @property
    def next_queue(self) -> tuple[Kind, ...]:
        return self._bag.peek(R.NEXT_QUEUE)

    @property
    def allocator(self) -> M.Mode:
        """The current allocator mode's entry in the registry."""
        return self._mode

    @property
    def split_ready(self) -> bool:
        return self._mode.player_split and self.charge >= 1.0 and not self.over

    def ghost_cells(self) -> list[Cell]:
        a = self.active
        if a is None:
            return []
        d = self.board.drop_distance(COLUMNS[a.kind][a.rotation], a.x, a.y, self._counts()[2])
        return [(x, y + d) for x, y in a.cells()]

    def _counts(self) -> tuple[int, int, list[int]]:
        """Board.stats(), cached until the board changes (a lock updates it in place)."""
        if self._stats is None:
            self._stats = self.board.stats()
        return self._stats

    def board_stats(self) -> tuple[int, int]:
        """(occupied, sealed) visible cells; occupied counts reserved cells."""
        occupied, sealed, _ = self._counts()
        return occupied, sealed

    def memory(self, kind: Kind | None = None) -> Breakdown:
        """Free memory as the falling request (or `kind`) sees it; counted once per board change."""
        occupied, sealed, _ = self._counts()
        reserved, usable = self._free_counts(self._seen_by() if kind is None else kind)
        return Breakdown(R.VISIBLE_CELLS - occupied, sealed, reserved, usable)

    def _seen_by(self) -> Kind:
        """The request the gauges speak for: the falling one, else the next."""
        a = self.active
        return a.kind if a is not None else self.next_queue[0]

    def _free_counts(self, kind: Kind) -> tuple[int, int]:
        """(reserved, usable) blocks, cached until the board, the kind or the allocator changes
        (free and sealed come from _counts())."""
        stats = self._counts()
        pages_on_demand = self._mode.pages_on_demand
        cached = self._memory
        if (cached is not None and cached[0] is stats and cached[1] is kind
                and cached[2] == pages_on_demand):
            return cached[3], cached[4]
        reserved = memory.reserved_blocks(self.board)
        if pages_on_demand:
            usable = R.VISIBLE_CELLS - stats[0]  # every free block
        else:
            usable = memory.usable_blocks(stats[2], kind)
        self._memory = (stats, kind, pages_on_demand, reserved, usable)
        return reserved, usable

    def telemetry(self) -> Telemetry:
        occupied, sealed, _ = self._counts()
        free = R.VISIBLE_CELLS - occupied
        reserved, usable = self._free_counts(self._seen_by())
        return Telemetry(
            utilisation=utilisation(occupied),
            fragmentation=fragmentation(free, sealed),
            throughput=self._throughput.rate(self.time_ms),
            usable_free=usable,
            reserved=reserved,
            resident=len(self._live),
            peak_utilisation=self.peak_utilisation,
            free_cells=free,
            sealed_holes=sealed,
            pieces=self.pieces,
            lines=self.lines,
            score=self.score,
            level=self.level,
            charge=self.charge,
            tokens=self.tokens,
        )

    # ------------------------------------------------------------------ driving
    def update(self, dt_ms: float, inputs: Iterable[Input] = ()) -> list[ev.Event]:
        """Apply this step's inputs, then let `dt_ms` of game time pass."""
        if not self.over:
            for inp in inputs:
                self._DISPATCH[inp](self)
                if self.over:
                    break
            if not self.over and dt_ms > 0:
                self._advance(dt_ms)
        out, self._ev = self._ev, []
        return out

    # One-action conveniences; each goes through update(), the single path every input takes.
    def move(self, dx: int) -> list[ev.Event]:
        """Slide |dx| cells, one at a time (a wall stops the slide)."""
        step = Input.RIGHT if dx > 0 else Input.LEFT
        return self.update(0.0, (step,) * abs(dx))

    def rotate(self, direction: int) -> list[ev.Event]:
        return self.update(0.0, (Input.ROTATE_CW if direction > 0 else Input.ROTATE_CCW,))

    def soft_drop(self) -> list[ev.Event]:
        return self.update(0.0, (Input.SOFT_DROP,))

    def hard_drop(self) -> list[ev.Event]:
        return self.update(0.0, (Input.HARD_DROP,))

    def hold(self) -> list[ev.Event]:
        return self.update(0.0, (Input.HOLD,))

    def split(self) -> list[ev.Event]:
        return self.update(0.0, (Input.SPLIT,))

    def set_mode(self, mode: str) -> list[ev.Event]:
        M.get(mode)
        return self.update(0.0, (Input[_MODE_INPUTS[mode]],))

    # ------------------------------------------------------------------ actions
    def _left(self) -> None:
        self._shift(-1, 0)

    def _right(self) -> None:
        self._shift(1, 0)

    def _cw(self) -> None:
        self._rotate(1)

    def _ccw(self) -> None:
        self._rotate(-1)

    def _shift(self, dx: int, dy: int) -> bool:
        a = self.active
        if a is None or not self.board.fits(FOOTPRINTS[a.kind][a.rotation], a.x + dx, a.y + dy):
            return False
        a.x += dx
        a.y += dy
        self._ev.append(ev.Moved(dx, dy))
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
        to = (a.rotation + direction) % 4
        shape = FOOTPRINTS[a.kind][to]
        fits = self.board.fits
        for i, (kx, ky) in enumerate(KICKS[a.kind][(a.rotation, to)]):
            if fits(shape, a.x + kx, a.y + ky):
                a.x += kx
                a.y += ky
                a.rotation = to
                self._ev.append(ev.Rotated(direction, i))
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
            self.score += R.SOFT_DROP_POINTS
            self._gravity_acc = 0.0

    def _hard_drop(self) -> None:
        a = self.active
        if a is None:
            return
        d = self.board.drop_distance(COLUMNS[a.kind][a.rotation], a.x, a.y, self._counts()[2])
        a.y += d
        self.score += R.HARD_DROP_POINTS * d
        self._lock(d)

    def _hold(self) -> None:
        a = self.active
        if a is None:
            return
        if not self.can_hold:
            self._ev.append(ev.Alert("hold_used", "hold queue already used for this request"))
            return
        held_kind, held_id = self.hold_kind, self._hold_request
        self.hold_kind, self._hold_request = a.kind, a.request_id
        self.active = None
        self._ev.append(ev.Held(a.kind, held_kind))
        if held_kind is None:
            self._spawn(self._bag.pop(), None)
        else:
            self._spawn(held_kind, held_id)
        self.can_hold = False

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

    def _to_contiguous(self) -> None:
        self._set_mode(MODE_OF_INPUT[Input.MODE_CONTIGUOUS])

    def _to_paged(self) -> None:
        self._set_mode(MODE_OF_INPUT[Input.MODE_PAGED])

    def _toggle_mode(self) -> None:
        self._set_mode(M.following(self.mode))

    # ------------------------------------------------------------------ time
    def _advance(self, dt: float) -> None:
        self.time_ms += dt
        if self._mode.player_split and self.charge < 1.0:
            self.charge = min(1.0, self.charge + R.CHARGE_PER_SECOND * dt / 1000.0)
        a = self.active
        if a is None:
            return
        fits = self.board.fits
        shape = FOOTPRINTS[a.kind][a.rotation]
        if fits(shape, a.x, a.y + 1):
            self._gravity_acc += dt
            step = R.gravity_ms(self.level)
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

    # ------------------------------------------------------------------ allocation
    def _spawn(self, kind: Kind, request_id: int | None) -> None:
        """Admit `kind`: a new request when request_id is None, else a held one coming back."""
        if request_id is None:
            request_id = self._next_id
            self._next_id += 1
            self.requests[request_id] = PieceRequest(request_id, kind)
            self._ev.append(ev.Spawned(request_id, kind))
        p = PIECES[kind]
        a = Active(kind, 0, p.spawn_x, p.spawn_y, request_id)
        self._gravity_acc = 0.0
        self._lock_timer = 0.0
        self._lock_resets = 0
        shape = FOOTPRINTS[kind][0]
        if not self.board.fits(shape, a.x, a.y):
            self.active = None
            if self._mode.pages_on_demand:  # no room whole: blocks wherever they are free
                self._page_in(request_id, kind, a.cells(), auto=True)
            else:
                self._oom(request_id, kind)
            return
        if self.board.fits(shape, a.x, a.y + 1):
            a.y += 1  # guideline: a new piece drops one row at once if it can
        self._lowest_y = a.y
        self.active = a

    def _lock(self, drop_cells: int) -> None:
        a = self.active
        assert a is not None
        cells = a.cells()
        fp = FOOTPRINTS[a.kind][a.rotation]
        if self._mode.pages_on_demand and a.y + fp.min_dy < R.HIDDEN:
            # Part of it would lie above VRAM: the paged allocator finds it blocks instead.
            self.active = None
            self._page_in(a.request_id, a.kind, cells, auto=True)
            return
        self.active = None
        if a.y + fp.max_dy < R.HIDDEN:
            # Every block above the visible board: the request is not admitted, so it commits
            # no blocks and seals nothing (its shadow over open columns is not fragmentation).
            self._oom(a.request_id, a.kind, "ceiling")
            return
        sealed_cells = self._commit_cells(a, cells)
        sealed = len(sealed_cells)
        clear = self._collect(range(a.y + fp.min_dy, a.y + fp.max_dy + 1))
        lines, tokens, points = self._yield(clear)
        self._ev.append(ev.Locked(ev.LockResult(a.request_id, a.kind, tuple(cells), lines, tokens,
                                                points, sealed, drop_cells, sealed_cells)))
        self._after_commit(a.request_id, a.kind, cells, clear)

    def _commit_cells(self, a: Active, cells: list[Cell]) -> tuple[Cell, ...]:
        """Write a whole piece and bring the cached counts up to date without a rescan.

        Returns the visible free cells the piece newly seals. Per column, a tetromino's cells
        are contiguous, so its column profile says everything: cells above the old column top
        seal the free run between them and it; cells below it fill cells that were sealed.
        """
        occupied, sealed_total, tops = self._counts()
        tops = tops[:]
        hidden = R.HIDDEN
        masks = self.board.masks
        filled = visible = 0
        newly: list[Cell] = []
        for cx, top_dy, bottom_dy, count in COLUMNS[a.kind][a.rotation]:
            x = a.x + cx
            old = tops[x]
            top = a.y + top_dy
            bottom = a.y + bottom_dy
            visible += count if top >= hidden else max(0, bottom - hidden + 1)
            if top < old:
                tops[x] = top
                bit = 1 << x
                for y in range(max(bottom + 1, hidden), old):
                    if not masks[y] & bit:
                        newly.append((x, y))
            else:
                lo = max(top, old + 1, hidden)
                if bottom >= lo:
                    filled += bottom - lo + 1
        self.board.place(cells, a.request_id)
        self._live[a.request_id] = self._live.get(a.request_id, 0) + len(cells)
        self._stats = (occupied + visible, sealed_total + len(newly) - filled, tops)
        self._note_peak(occupied + visible)
        return tuple(newly)

    def _note_peak(self, occupied: int) -> None:
        """Peak VRAM is taken when blocks are written, before any row is garbage-collected."""
        util = utilisation(occupied)
        if util > self.peak_utilisation:
            self.peak_utilisation = util

    def _split(self) -> None:
        a = self.active
        if a is None:
            return
        if not self._mode.player_split:
            self._ev.append(ev.Alert(
                "split_refused",
                f"split refused: the {self.mode} allocator needs req#{a.request_id} in one range "
                "(switch to PAGED)"))
            return
        if self.charge < 1.0:
            self._ev.append(ev.Alert(
                "split_uncharged", f"split meter at {self.charge * 100:.0f} % (a game rule: "
                "paging on demand never waits for it)"))
            return
        self.active = None
        self.charge = 0.0
        self._page_in(a.request_id, a.kind, a.cells(), auto=False)

    def _page_in(self, request_id: int, kind: Kind, origin: list[Cell], auto: bool) -> None:
        """Give a request one block per page wherever blocks are free (engine.paging's rules:
        aimed for a split, lowest first on demand). OOM only when fewer visible blocks are free
        than the request has pages."""
        board = self.board
        if auto:
            near = sum(x for x, _ in origin) / len(origin)
            frames = paging.demand_frames(board.masks, len(origin), near)
        else:
            frames = paging.page_frames(board.masks, [x for x, _ in origin])
        if frames is None:
            self._oom(request_id, kind, "memory_full")
            return
        tops = self._counts()[2][:]
        holes = 0
        for x, y in frames:
            if y > tops[x]:
                holes += 1  # a block under held memory: a sealed hole put to use
            else:
                tops[x] = y
        board.place(frames, request_id)
        self._live[request_id] = self._live.get(request_id, 0) + len(frames)
        self._stats = None  # pages land anywhere: recount
        self._note_peak(self._counts()[0])
        clear = self._collect(sorted({y for _, y in frames}))
        rows = clear.rows
        entries = tuple(enumerate(frames))
        table = ev.BlockTable(request_id, kind, entries,
                              tuple((p, after_clear(c, rows)) for p, c in entries))
        self.block_table = table
        self._ev.append(ev.PageSplit(table, holes, tuple(origin), auto))
        self._after_commit(request_id, kind, frames, clear)

    def _collect(self, rows_touched: Iterable[int]) -> Cleared:
        """Garbage-collect the full rows among those touched. The last block table follows its
        pages through the clear."""
        board = self.board
        rows = board.full_rows(rows_touched)
        if not rows:
            return Cleared([], (), 0, frozenset())
        self._stats = None
        owners = tuple(tuple(board.grid[y]) for y in rows)
        freed = board.clear_rows(rows)
        live = self._live
        for rid in freed:
            left = live[rid] - 1
            if left:
                live[rid] = left
            else:
                del live[rid]
                del self.requests[rid]
        done = self._finished
        for rid in set(freed) - done:
            done.add(rid)
            self.served += 1
        bt = self.block_table
        if bt is not None:
            self.block_table = ev.BlockTable(
                bt.request_id, bt.kind, bt.entries,
                tuple((p, None if c is None else after_clear(c, rows)) for p, c in bt.resident))
        return Cleared(rows, owners, len(freed), frozenset(freed))

    def _yield(self, clear: Cleared) -> tuple[int, int, int]:
        """(lines, tokens, points) for garbage-collected rows: reserved blocks held no tokens."""
        n = len(clear.rows)
        return n, clear.token_blocks * R.TOKENS_PER_BLOCK, R.line_points(n, self.level)

    def _reserve_for(self, request_id: int, kind: Kind, cells: list[Cell]) -> None:
        """Contiguous: hold free blocks above a placed request for the rest of its maximum
        length (engine.reservation's rule)."""
        board = self.board
        lid = reservation_cells(board.masks, cells)
        if lid:
            occupied, sealed, tops = self._counts()
            tops = tops[:]
            for x, y in lid:  # each right on the request's own top block: no rescan needed
                if y < tops[x]:
                    tops[x] = y  # the new column top
                else:
                    sealed -= 1  # the request was tucked under an overhang: a sealed hole filled
            board.reserve(lid, request_id)
            self._stats = (occupied + len(lid), sealed, tops)
            self._note_peak(occupied + len(lid))
            self._ev.append(ev.Reserved(request_id, kind, tuple(lid)))

    def _release_finished(self, finished: frozenset[int]) -> None:
        """A request with tokens in a garbage-collected row has finished: the blocks it reserved
        and never filled go back to the pool."""
        cells = self.board.reserved_cells(finished)
        if not cells:
            return
        by_owner: dict[int, list[Cell]] = {}
        for x, y in cells:
            by_owner.setdefault(self.board.grid[y][x], []).append((x, y))
        self.board.release(cells)
        self._stats = None
        for rid in sorted(by_owner):
            self._ev.append(ev.Released(rid, tuple(by_owner[rid])))

    def _after_commit(self, request_id: int, kind: Kind, cells: list[Cell], clear: Cleared) -> None:
        self.pieces += 1
        self.can_hold = True
        rows = clear.rows
        if rows:
            n, tokens, points = self._yield(clear)
            self.lines += n
            self.tokens += tokens
            self.score += points
            self.charge = min(1.0, self.charge + R.CHARGE_PER_LINE * n)
            self._throughput.add(self.time_ms, tokens)
            self._ev.append(ev.LinesCleared(tuple(rows), n, tokens, points, clear.owners,
                                            self.block_table, tuple(sorted(clear.finished))))
            self._release_finished(clear.finished)
            level = R.level_for(self.lines)
            if level != self.level:
                self.level = level
                self._ev.append(ev.LevelUp(level))
        if self._mode.reserves_max_length and request_id not in clear.finished:
            self._reserve_for(request_id, kind,
                              [c for c in (after_clear(c, rows) for c in cells) if c is not None])
        util = utilisation(self._counts()[0])
        if util > R.VRAM_WARN and not self._vram_warned:
            self._vram_warned = True
            self._ev.append(ev.Alert("vram_high", f"VRAM utilisation {util * 100:.0f} %: close to OOM"))
        elif util < R.VRAM_REARM:
            self._vram_warned = False
        if not self.endless and self.lines >= R.VICTORY_LINES:
            self._win(request_id, kind)
            return
        self._spawn(self._bag.pop(), None)

    # ------------------------------------------------------------------ endings
    def _report(self, outcome: str, request_id: int, kind: Kind, cause: str, code: str,
                mem: Breakdown) -> RunReport:
        occupied, sealed = self.board_stats()
        free = R.VISIBLE_CELLS - occupied
        tops = self._counts()[2]
        return RunReport(
            outcome=outcome, cause=cause, request_id=request_id, request_name=PIECES[kind].name,
            kind=kind, free_cells=free, sealed_holes=sealed,
            fragmentation=fragmentation(free, sealed),
            peak_utilisation=max(self.peak_utilisation, utilisation(occupied)),
            requests_served=self.served, pieces=self.pieces, lines=self.lines,
            tokens=self.tokens, score=self.score, time_ms=self.time_ms, mode=self.mode,
            cause_code=code, utilisation=utilisation(occupied), reserved_blocks=mem.reserved,
            usable_blocks=mem.usable, open_unusable=mem.open_unusable, resident=len(self._live),
            mixed=self.mixed, modes_used=tuple(self.modes_used),
            sealed_cells=memory.sealed_cells(self.board, tops),
            reserved_cells=tuple(c for c in self.board.reserved_cells() if c[1] >= R.HIDDEN),
        )

    def _oom(self, request_id: int, kind: Kind, code: str | None = None) -> None:
        """The run ends: `kind` could not be admitted. Without `code` the cause is worked out
        from the memory the request saw (engine.memory)."""
        self.active = None
        mem = self.memory(kind)
        if code is None:
            code = memory.oom_cause(mem, R.BLOCKS_PER_REQUEST)
        cause = memory.cause_text(code, mem, R.BLOCKS_PER_REQUEST)
        self.result = self._report("oom", request_id, kind, cause, code, mem)
        self.over = True
        self._ev.append(ev.Oom(self.result))

    def _win(self, request_id: int, kind: Kind) -> None:
        cause = (f"{self.lines} lines dispatched: {self.served} requests finished, "
                 f"{self.tokens} tokens served without running out of memory")
        self.result = self._report("victory", request_id, kind, cause, "victory", self.memory(kind))
        self.over = True
        self._ev.append(ev.Victory(self.result))

    _DISPATCH = {
        Input.LEFT: _left,
        Input.RIGHT: _right,
        Input.SOFT_DROP: _soft_drop,
        Input.HARD_DROP: _hard_drop,
        Input.ROTATE_CW: _cw,
        Input.ROTATE_CCW: _ccw,
        Input.HOLD: _hold,
        Input.SPLIT: _split,
        Input.MODE_CONTIGUOUS: _to_contiguous,
        Input.MODE_PAGED: _to_paged,
        Input.MODE_TOGGLE: _toggle_mode,
    }


def after_clear(cell: Cell, rows: list[int]) -> Cell | None:
    """Where a cell lives after `rows` were removed (None if it was in one of them)."""
    x, y = cell
    if y in rows:
        return None
    return (x, y + sum(1 for r in rows if r > y))
