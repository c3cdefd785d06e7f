"""KV-cache memory managers behind one interface: contiguous reservations (Orca) and paged blocks (vLLM).

The scheduler (``simulator.Simulator``) decides who runs; a memory manager says
whether a request fits, gives it memory, grows it over a run of decode steps and
takes it back. Both managers count in token slots and keep running totals, so a
run of ``k`` identical decode steps costs O(1) (contiguous) or O(block size)
(paged) however many requests run.

A request's sequences all have the same length ``u + D`` (``D`` is the engine's
decode counter), so they are admitted, grown, preempted and finished together.

* ``ContiguousMemory``: every sequence reserves one range at admission (``max``,
  ``pow2`` or ``oracle`` size) and holds a full copy of the prompt: no sharing.
* ``PagedMemory``: blocks of ``block_size`` tokens with reference counts. Counts
  per residue of ``u`` modulo the block size give how many blocks a run of steps
  needs. A beam search changes its beams only at the steps its ``BeamSchedule``
  draws; those steps are events, and in between its beams grow like any other
  sequences. With ``tracked`` every sequence gets an explicit block table
  (``engine.kvpool.BlockPool``: the LAB screen and the property tests) and the engine
  steps one iteration at a time; the figures are the same either way.

Each manager is a policy object: everything that differs between allocators (admission,
growth, preemption room, how memory splits into reserved and wasted slots, how it is drawn)
is a method here, and the simulator and the LAB screen only call them. ``REGISTRY`` at the
end names the LAB's allocators, one row each: a new allocator is a class and a row in this
file, and its words (``lab.engine.<name>``, ``lab.baseline.<name>``, ``lab.kind.<kind>``) in
the UI's catalogues.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .allocators import RESERVATIONS, ContiguousAllocator
from .beams import BeamSchedule, BeamTree
from ..kvpool import BlockPool
from .projection import FREE, PREFIX_OWNER, MapView, SeqId, cell_state
from .sharing import Sharing
from .workload import Request

if TYPE_CHECKING:
    from .simulator import LabConfig


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _ap_sums(first: int, step: int, count: int) -> tuple[int, int]:
    """Sum and sum of squares of ``count`` terms of an arithmetic progression."""
    if count <= 0:
        return 0, 0
    m = count
    s1 = m * first + step * m * (m - 1) // 2
    s2 = m * first * first + first * step * m * (m - 1) + step * step * (m - 1) * m * (2 * m - 1) // 6
    return s1, s2


class Running:
    """A running request: ``seqs`` sequences of length ``u + D`` each."""

    __slots__ = ("req", "u", "version", "prompt", "final", "seqs", "starts", "reserve", "blocks", "saved",
                 "base", "seq_ids", "schedule", "tree", "next_seq", "next_fork")

    def __init__(self, req: Request, u: int, version: int, prompt: int, final: int, seqs: int) -> None:
        self.req = req
        self.u = u
        self.version = version
        self.prompt = prompt  # prompt tokens including a shared prefix
        self.final = final  # final length of each sequence
        self.seqs = seqs
        self.starts: list[int] = []  # contiguous: start of each sequence's range
        self.reserve = 0  # contiguous: slots reserved per sequence
        self.blocks = 0  # paged: physical blocks at length ``base`` (a shared prefix's not included)
        self.saved = 0  # paged: blocks its sequences point at beyond the physical ones
        self.base = 0  # paged: the length ``blocks`` was counted at
        self.seq_ids: list[tuple[int, int]] = []  # sequences with an explicit block table
        self.schedule: BeamSchedule | None = None
        self.tree: BeamTree | None = None
        self.next_seq = 0
        self.next_fork = 0  # beam search: decode counter of the next step that drops beams

    @property
    def start(self) -> int:
        return self.starts[0] if self.starts else 0


class MemoryManager(Protocol):
    """What the scheduler asks of KV-cache memory (``ContiguousMemory`` and ``PagedMemory``)."""

    kind: str  # how its memory is laid out: words ``lab.kind.<kind>`` in the UI's catalogues
    preempts: bool  # memory can run out mid-request: the newest running request is preempted
    shares: bool  # sequences can point at the same memory (sharing can save some)
    saved: int  # blocks sharing saves right now
    shared_prefix: int  # blocks of a shared prefix computed and kept once for every request

    @property
    def cow_copies(self) -> int:
        """Blocks copied on write so far."""

    def fits(self, req_total: int, prompt: int, length: int, seqs: int, busy: bool) -> bool:
        """Would a request of ``seqs`` sequences of ``length`` tokens be admitted now?"""

    def unusable(self, req_total: int, seqs: int) -> int:
        """Free slots a queued request of ``seqs`` sequences cannot use wherever it waits: external
        fragmentation (paged memory has none: any request can use any free block)."""

    def admit(self, run: Running, length: int, busy: bool, d: int) -> bool:
        """Give ``run`` memory for ``length`` tokens a sequence; False (and nothing taken) if it does not fit."""

    def release(self, run: Running, length: int) -> None:
        """Take back everything ``run`` holds at ``length`` tokens a sequence."""

    def free_blocks(self) -> int:
        """Blocks free now (contiguous memory never runs out mid-request: unbounded)."""

    def next_step_need(self, d: int) -> int:
        """Blocks the decode step starting at decode counter ``d`` may take."""

    def max_steps(self, d: int) -> int:
        """Decode steps from ``d`` that are known to be alike (no memory event)."""

    def span(self, k: int, duration: float, a0: float, beta: float, d: int) -> tuple[float, float]:
        """Grow every sequence by ``k`` tokens over ``duration``; (slot-seconds held, slot-seconds promised)."""

    def held(self) -> int:
        """Slots held now."""

    def promised(self) -> int:
        """Slots the running sequences will hold at their final lengths (contiguous; 0 for paged)."""

    def reserved(self, tokens: float, promised: float) -> float:
        """Of the memory held, what is reserved for tokens still to come, given the token slots
        and ``promised`` (both in slots or both in slot-seconds); the rest of what is held and
        holds no token is waste (internal fragmentation)."""

    def cells(self, running: Mapping[int, Running], length: Callable[[Running], int]) -> MapView:
        """The memory as one cell per block, read without changing anything (the LAB's maps)."""

    @classmethod
    def for_lab(cls, cfg: LabConfig, tracked: bool, option: str) -> MemoryManager:
        """The memory of a LAB configuration (``option``: the registry row's, e.g. a reservation rule)."""


class ContiguousMemory:
    """Orca's baselines: one range per sequence, reserved for the sequence's whole life."""

    kind = "contiguous"
    preempts = False  # a reservation covers a sequence's whole life
    shares = False
    shared_prefix = 0  # every request computes and stores the prefix again

    def __init__(self, slots: int, reserve_of: Callable[[int, int], int], max_seq_len: int,
                 sharing: Sharing, block_size: int) -> None:
        self.slots = slots
        self.reserve_of = reserve_of
        self.max_seq_len = max_seq_len
        self.sharing = sharing
        self.block_size = block_size
        self.ranges = ContiguousAllocator(slots)
        self.total_reserve = 0
        self.total_need = 0
        self.saved = 0  # contiguous memory shares nothing
        self.cow_copies = 0

    # ---------------------------------------------------------- admission
    def _fit_count(self, size: int) -> int:
        """How many ranges of ``size`` slots first-fit would still place."""
        return sum(length // size for length in self.ranges.lengths)

    def fits(self, req_total: int, prompt: int, length: int, seqs: int, busy: bool) -> bool:
        return self._fit_count(self.reserve_of(req_total, self.max_seq_len)) >= seqs

    def unusable(self, req_total: int, seqs: int) -> int:
        """Free ranges too short for one of the request's reservations: free memory it could use
        if it were contiguous. Ranges long enough for one are usable, even if too few for all."""
        size = self.reserve_of(req_total, self.max_seq_len)
        return sum(length for length in self.ranges.lengths if length < size)

    def admit(self, run: Running, length: int, busy: bool, d: int) -> bool:
        size = self.reserve_of(run.final, self.max_seq_len)
        if self._fit_count(size) < run.seqs:
            return False
        rid = run.req.rid
        run.starts = [self.ranges.allocate((rid, i), size) for i in range(run.seqs)]  # type: ignore[misc]
        run.reserve = size
        self.total_reserve += size * run.seqs
        self.total_need += run.final * run.seqs
        return True

    def release(self, run: Running, length: int) -> None:
        rid = run.req.rid
        for i in range(run.seqs):
            self.ranges.release((rid, i))
        self.total_reserve -= run.reserve * run.seqs
        self.total_need -= run.final * run.seqs

    # ---------------------------------------------------------- decode
    def next_step_need(self, d: int) -> int:
        return 0

    def free_blocks(self) -> int:
        return 1 << 62

    def max_steps(self, d: int) -> int:
        return 1 << 62

    def next_event(self, d: int) -> int:
        return 1 << 62

    def span(self, k: int, duration: float, a0: float, beta: float, d: int) -> tuple[float, float]:
        """Grow every sequence by ``k`` tokens: (slot-seconds held, slot-seconds of the sequences' final lengths)."""
        return self.total_reserve * duration, self.total_need * duration

    def held(self) -> int:
        return self.total_reserve

    def promised(self) -> int:
        return self.total_need

    @classmethod
    def for_lab(cls, cfg: LabConfig, tracked: bool, option: str) -> ContiguousMemory:
        """``option`` names the reservation rule (allocators.RESERVATIONS)."""
        return cls(cfg.slots, RESERVATIONS[option], cfg.max_seq_len, cfg.sharing, cfg.block_size)

    def reserved(self, tokens: float, promised: float) -> float:
        """Everything up to the sequences' final lengths is reserved; beyond it, never used."""
        return promised - tokens

    def cells(self, running: Mapping[int, Running], length: Callable[[Running], int]) -> MapView:
        """Ranges cut into block-sized cells; a cell shows the range that covers most of it."""
        bs = self.block_size
        count = self.slots // bs
        cells = [FREE] * count
        half = bs // 2
        owned: dict[int, Sequence[int]] = {}
        sequences: dict[SeqId, Sequence[int]] = {}
        for rid, run in running.items():
            now = length(run)
            mine: list[int] = []
            for i, start in enumerate(run.starts):
                reserve = run.reserve
                first = max(0, -(-(start - half) // bs))
                last = min(count, -(-(start + reserve - half) // bs))
                if last <= first:
                    continue
                filled = start + now
                for c in range(first, last):
                    held = min(bs, max(0, filled - c * bs))
                    cells[c] = cell_state(rid, held)
                span = range(first, last)
                sequences[(rid, i)] = span
                mine.extend(span)
            owned[rid] = mine
        return MapView(cells, owned, sequences, bs)


class PagedMemory:
    """vLLM: blocks taken one at a time as sequences grow, shared with reference counts."""

    kind = "paged"
    preempts = True  # a sequence takes a block when its last is full, and none may be free
    shares = True

    def __init__(self, slots: int, block_size: int, watermark: float, sharing: Sharing, tracked: bool,
                 seed: int = 0) -> None:
        self.block_size = bs = block_size
        self.num_blocks = slots // bs
        self.sharing = sharing
        self.tracked = tracked
        self.seed = seed
        self.pool = BlockPool(self.num_blocks, bs)
        self.prefix_blocks = self.pool.pin(sharing.prefix // bs)
        self.shared_prefix = len(self.prefix_blocks)
        self.blocks_used = self.shared_prefix
        self.saved = -self.shared_prefix  # logical blocks (what unshared sequences would hold) - physical
        self.residue = [0] * bs  # running sequences per u mod block size
        self.bulk_seqs = 0
        self.watermark_blocks = int(watermark * self.num_blocks)
        self.counted_copies = 0
        self.beam_groups: dict[int, Running] = {}
        # Beam changes by decode counter, and those counters in a heap (each once).
        self.fork_calendar: dict[int, list[Running]] = {}
        self.fork_steps: list[int] = []
        self.tracked_runs: dict[int, Running] = {}  # requests with explicit block tables

    @property
    def cow_copies(self) -> int:
        """Blocks copied on write so far."""
        trees = sum(run.tree.copies for run in self.beam_groups.values() if run.tree is not None)
        return self.pool.cow_copies + self.counted_copies + trees

    def group_blocks(self, prompt: int, length: int, seqs: int) -> tuple[int, int]:
        """(physical blocks a request of ``seqs`` sequences of ``length`` tokens holds, blocks it saves).

        Right after admission, and for any request but a beam search at any time.
        """
        logical = seqs * _ceil(length, self.block_size)
        if self.sharing.prefix:
            return logical - self.shared_prefix, self.shared_prefix
        shared = (seqs - 1) * (prompt // self.block_size)
        return logical - shared, shared

    # ---------------------------------------------------------- admission
    def _headroom(self, seqs: int) -> int:
        """Free blocks an admission must leave: vLLM's watermark, and with beams the next step's worst case.

        A beam may need a new block (or a copy) every step, so admitting a beam group into the
        last free blocks would only preempt it again at once.
        """
        if not self.sharing.beam:
            return self.watermark_blocks
        return self.watermark_blocks + seqs * (len(self.beam_groups) + 1)

    def fits(self, req_total: int, prompt: int, length: int, seqs: int, busy: bool) -> bool:
        need, _ = self.group_blocks(prompt, length, seqs)
        return self.num_blocks - self.blocks_used - need >= self._headroom(seqs) or not busy

    def unusable(self, req_total: int, seqs: int) -> int:
        """Never any: a block anywhere serves any sequence, so free blocks too few for the queue
        head are load, not fragmentation."""
        return 0

    def admit(self, run: Running, length: int, busy: bool, d: int) -> bool:
        need, saved = self.group_blocks(run.prompt, length, run.seqs)
        free = self.num_blocks - self.blocks_used
        if need > free or (free - need < self._headroom(run.seqs) and busy):
            return False
        rid = run.req.rid
        if self.tracked:
            used = self.pool.used
            self._build_tables(run, length)
            if self.pool.used - used != need:
                raise AssertionError("block tables disagree with the block count")
            self.tracked_runs[rid] = run
        if self.sharing.beam:
            if not self.tracked:
                tree = run.tree = BeamTree(run.seqs, run.prompt, self.block_size)
                tree.write()
                tree.grow(length)
                if tree.blocks != need:
                    raise AssertionError("beam tree disagrees with the block count")
                self.counted_copies += tree.copies
                tree.copies = 0
            run.schedule = BeamSchedule(self.seed * 1_000_003 + rid, run.seqs)
            run.next_fork = d + run.schedule.gap()
            self._schedule(run)
            self.beam_groups[rid] = run
        elif not self.tracked and run.seqs > 1 and run.prompt % self.block_size:
            self.counted_copies += run.seqs - 1  # the last prompt block, copied by all samples but one
        self.residue[run.u % self.block_size] += run.seqs
        self.bulk_seqs += run.seqs
        run.blocks = need
        run.saved = saved
        run.base = length
        self.blocks_used += need
        self.saved += saved
        return True

    def _build_tables(self, run: Running, length: int) -> None:
        pool, rid, bs = self.pool, run.req.rid, self.block_size
        first = (rid, 0)
        if self.sharing.prefix:
            pool.create(first, self.prefix_blocks, self.shared_prefix * bs)
            pool.append(first, length - self.shared_prefix * bs)
            run.seq_ids = [first]
            run.next_seq = 1
            return
        pool.create(first)
        pool.append(first, run.prompt)
        seqs = [first] + [(rid, i) for i in range(1, run.seqs)]
        for seq in seqs[1:]:
            pool.fork(first, seq)
        for seq in seqs:
            pool.append(seq, length - run.prompt)
        run.seq_ids = seqs
        run.next_seq = run.seqs

    def _blocks_now(self, run: Running, length: int) -> int:
        """Physical blocks a running request holds at ``length``: its sequences grew alone since ``base``."""
        bs = self.block_size
        return run.blocks + run.seqs * (_ceil(length, bs) - _ceil(run.base, bs))

    def release(self, run: Running, length: int) -> None:
        rid = run.req.rid
        self.residue[run.u % self.block_size] -= run.seqs
        self.bulk_seqs -= run.seqs
        blocks = self._blocks_now(run, length)
        if rid in self.beam_groups:
            del self.beam_groups[rid]
            if run.tree is not None:
                self.counted_copies += run.tree.copies
                run.tree = None
        if rid in self.tracked_runs:
            for seq in run.seq_ids:
                self.pool.release(seq)
            run.seq_ids = []
            del self.tracked_runs[rid]
        self.blocks_used -= blocks
        self.saved -= run.saved

    # ---------------------------------------------------------- decode
    def free_blocks(self) -> int:
        return self.num_blocks - self.blocks_used

    def _schedule(self, run: Running) -> None:
        step = run.next_fork
        due = self.fork_calendar.get(step)
        if due is None:
            self.fork_calendar[step] = [run]
            heapq.heappush(self.fork_steps, step)
        else:
            due.append(run)

    def _valid(self, run: Running, step: int) -> bool:
        return self.beam_groups.get(run.req.rid) is run and run.next_fork == step

    def _due(self, d: int) -> list[Running]:
        """Beam searches that drop and fork beams at the step starting at decode counter ``d``, by rid."""
        due = self.fork_calendar.get(d)
        if not due:
            return []
        return sorted((run for run in due if self._valid(run, d)), key=lambda run: run.req.rid)

    def next_event(self, d: int) -> int:
        """Decode counter of the next step at which a beam search changes its beams."""
        steps, calendar = self.fork_steps, self.fork_calendar
        while steps:
            step = steps[0]
            if step >= d and any(self._valid(run, step) for run in calendar[step]):
                return step
            heapq.heappop(steps)
            del calendar[step]
        return 1 << 62

    def _bulk_new_blocks(self, k: int, d: int) -> int:
        """Blocks the running sequences need for the next ``k`` decode steps (beams not forking)."""
        bs, n = self.block_size, self.bulk_seqs
        q, s = divmod(k, bs)
        total = q * n
        if s:
            residue = self.residue
            for j in range(1, s + 1):
                total += residue[(1 - j - d) % bs]
        return total

    def next_step_need(self, d: int) -> int:
        """Blocks the next decode step may take: exact while no beam forks, one a beam at most when some do."""
        need = self._bulk_new_blocks(1, d)
        if self.next_event(d) <= d:
            need += sum(run.seqs for run in self._due(d))
        return need

    def max_steps(self, d: int) -> int:
        """Most decode steps possible before the free blocks run out or a beam search changes its beams."""
        if self.tracked:
            return 1
        event = self.next_event(d)
        if event <= d:
            return 1
        free = self.num_blocks - self.blocks_used
        bs, n = self.block_size, self.bulk_seqs
        if n == 0:
            return event - d
        q = free // n
        rest = free - q * n
        residue = self.residue
        s = 0
        acc = 0
        while s < bs - 1:
            acc += residue[(-s - d) % bs]
            if acc > rest:
                break
            s += 1
        return min(q * bs + s, event - d)

    def _new_block_integral(self, k: int, a0: float, beta: float, d: int) -> float:
        """Sum over steps j = 1..k of (a0 + beta j) * (blocks newly needed by step j)."""
        bs, n = self.block_size, self.bulk_seqs
        residue = self.residue
        total = 0.0
        if k < 2 * bs:
            acc = 0
            for j in range(1, k + 1):
                acc += residue[(1 - j - d) % bs]
                total += (a0 + beta * j) * acc
            return total
        # new(j) = floor(j / bs) * n + A[j mod bs], A[s] = blocks due in the first s steps of a cycle.
        acc = 0
        for s in range(bs):
            if s:
                acc += residue[(1 - s - d) % bs]
            first = s if s else bs
            count = (k - first) // bs + 1 if k >= first else 0
            sj, sj2 = _ap_sums(first, bs, count)
            gamma = n / bs
            delta = acc - s * n / bs
            total += a0 * delta * count + (a0 * gamma + beta * delta) * sj + beta * gamma * sj2
        return total

    def _fork_step(self, run: Running, d: int) -> int:
        """A beam search's changing step: drop beams, fork survivors, write a token (copy on write).

        Returns the blocks it took beyond what plain growth would have (copies minus freed blocks).
        """
        bs = self.block_size
        length = run.u + d  # before this step's token
        schedule = run.schedule
        assert schedule is not None
        forks, gap = schedule.step()
        tree = run.tree
        if tree is not None:
            before, after = 0, tree.change(length, forks)
        else:
            pool, seqs = self.pool, run.seq_ids
            before = pool.used
            dropped = []
            for dead, parent in forks:
                child = (run.req.rid, run.next_seq)
                run.next_seq += 1
                pool.fork(seqs[parent], child)
                dropped.append(seqs[dead])
                seqs[dead] = child
            for seq in dropped:
                pool.release(seq)
            for seq in seqs:
                pool.append(seq, 1)
            after = pool.used
        beams = run.seqs
        grown = beams if length % bs == 0 else 0
        # Blocks at ``length``: the beams grew alone since ``base``.
        blocks_before = run.blocks + beams * (-(-length // bs) - -(-run.base // bs))
        run.blocks = blocks_before + after - before
        run.base = length + 1
        saved = beams * -(-(length + 1) // bs) - run.blocks
        self.saved += saved - run.saved
        run.saved = saved
        run.next_fork = d + 1 + gap
        self._schedule(run)
        return after - before - grown

    def _step_tracked(self, d: int, skip: set[int]) -> None:
        """One decode step of every explicit block table (the figures come from the counts)."""
        pool = self.pool
        for rid, run in self.tracked_runs.items():
            if rid not in skip:
                for seq in run.seq_ids:
                    pool.append(seq, 1)

    def span(self, k: int, duration: float, a0: float, beta: float, d: int) -> tuple[float, float]:
        """Grow every sequence by ``k`` tokens; slot-seconds held, and 0 reserved (paging reserves nothing)."""
        bs = self.block_size
        extra = 0
        due = self._due(d) if k == 1 else []
        for run in due:
            extra += self._fork_step(run, d)
        if self.tracked:
            self._step_tracked(d, {run.req.rid for run in due})
        self.blocks_used += extra
        held = bs * (self.blocks_used * duration + self._new_block_integral(k, a0, beta, d))
        self.blocks_used += self._bulk_new_blocks(k, d)
        if self.tracked and self.pool.used != self.blocks_used:
            raise AssertionError("block tables disagree with the block count")
        return held, 0.0

    def held(self) -> int:
        return self.blocks_used * self.block_size

    def promised(self) -> int:
        return 0

    @classmethod
    def for_lab(cls, cfg: LabConfig, tracked: bool, option: str) -> PagedMemory:
        return cls(cfg.slots, cfg.block_size, cfg.watermark, cfg.sharing, tracked)

    def reserved(self, tokens: float, promised: float) -> float:
        """Paging reserves nothing: what is held beyond the tokens is the last blocks' tails."""
        return 0

    def cells(self, running: Mapping[int, Running], length: Callable[[Running], int]) -> MapView:
        """One cell per physical block, from the explicit block tables (``tracked``)."""
        pool = self.pool
        bs = self.block_size
        if running and not pool.tables:
            raise ValueError("a paged map needs the simulator's block tables (Simulator(..., track_blocks=True))")
        refs = pool.refs
        cells = [FREE] * pool.num_blocks
        for block in pool.pinned:
            cells[block] = cell_state(PREFIX_OWNER, bs, refs[block])
        owned: dict[int, list[int]] = {}
        sequences: dict[SeqId, Sequence[int]] = {}
        # Lowest request first, so a block shared by several requests shows the oldest one.
        for seq in sorted(pool.tables):
            table = pool.tables[seq]
            rid = seq[0]
            sequences[seq] = table
            mine = owned.setdefault(rid, [])
            now = pool.lengths[seq]
            last = len(table) - 1
            for i, block in enumerate(table):
                if cells[block] == FREE:
                    fill = bs if i < last or now % bs == 0 else now % bs
                    cells[block] = cell_state(rid, fill, refs[block])
                mine.append(block)
        return MapView(cells, {rid: list(dict.fromkeys(blocks)) for rid, blocks in owned.items()}, sequences, bs)


# ------------------------------------------------------------------ the registry
@dataclass(frozen=True)
class LabAllocator:
    """One of the LAB's allocators: its id, the paper's name for it, its memory manager."""

    name: str  # on the command line, in JSON, and in the catalogue keys lab.engine.<name>, lab.baseline.<name>
    label: str  # the paper's name, in the command line's tables
    memory: type[MemoryManager]  # the policy: a class with ``for_lab`` and ``kind``
    option: str = ""  # what the class needs to know besides the config (a reservation rule)

    @property
    def kind(self) -> str:
        """How its memory is laid out (words ``lab.kind.<kind>``), known before any memory is built."""
        return self.memory.kind

    def build(self, cfg: LabConfig, tracked: bool = False) -> MemoryManager:
        """Its memory for ``cfg``; ``tracked``: explicit block tables where it has blocks."""
        return self.memory.for_lab(cfg, tracked, self.option)


REGISTRY: tuple[LabAllocator, ...] = (
    LabAllocator("max", "Orca (Max)", ContiguousMemory, "max"),
    LabAllocator("pow2", "Orca (Pow2)", ContiguousMemory, "pow2"),
    LabAllocator("oracle", "Orca (Oracle)", ContiguousMemory, "oracle"),
    LabAllocator("paged", "vLLM (paged)", PagedMemory),
)
ALLOCATORS: tuple[str, ...] = tuple(a.name for a in REGISTRY)
REFERENCE = "paged"  # the paper's system: every other allocator is a baseline it is measured against
BASELINES: tuple[str, ...] = tuple(name for name in ALLOCATORS if name != REFERENCE)
CONTIGUOUS = BASELINES  # the name older callers use

_BY_NAME = {a.name: a for a in REGISTRY}


def get(name: str) -> LabAllocator:
    """The LAB allocator called ``name``; ValueError for an unknown one."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown allocator {name!r}; choose from {', '.join(ALLOCATORS)}") from None
