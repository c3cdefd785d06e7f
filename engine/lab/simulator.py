"""Continuous-batching serving simulator: one trace, one KV-cache memory manager.

The scheduler is vLLM's (the paper's system) and is shared by every allocator,
so only memory management differs: the allocator named is a row of
``memory.REGISTRY``, whose memory manager (``memory.ContiguousMemory``,
``memory.PagedMemory``, one interface) answers every question that depends on it:

* FCFS admission. A step either prefills newly admitted requests (up to
  ``max_batch`` running sequences and ``max_batched_tokens`` prompt tokens) or,
  when the head of the queue cannot be admitted, decodes one token for every
  running sequence. A request that cannot be admitted blocks those behind it.
* A request runs one sequence, or several (``LabConfig.sharing``: parallel
  samples, beams) that are admitted, preempted and finished together, as a
  vLLM sequence group; a shared prefix comes on top of every prompt.
* Contiguous allocators reserve one range per sequence at admission (``max``:
  the maximum sequence length, ``pow2``: prompt + output rounded up to a power
  of two, ``oracle``: exactly prompt + output) and never run out mid-request.
* Paged memory gives a request blocks for its prompt (shared ones counted
  once), then a block each time a sequence's last block is full. When no block
  is free, the newest running request is preempted, its blocks are freed, and it
  is later recomputed (prompt + tokens generated so far are prefilled again).

Decode steps between events (an arrival, a finish, running out of blocks, a
preemption that leaves room for the queue head, a beam search changing its
beams) are identical, so ``run`` jumps over them in bulk: every running sequence
grows by one token per step, so its length is ``u + D`` for the global decode
counter ``D``; finish steps sit in a heap; for paged memory, counts per residue
of ``u`` modulo the block size give how many blocks a run of steps needs.
Time-weighted memory statistics are integrated in closed form. ``advance(1)``
steps one iteration at a time (the LAB screen) and gives the same results, and
so does ``track_blocks`` (explicit block tables with reference counts).

Arrivals are ordered exactly: an idle engine's clock lands on the next arrival,
and an arrival within ``ARRIVAL_SLACK_S`` of the clock counts as arrived, so a
sum of step times a float ulp short of an arrival cannot skip it.
"""

from __future__ import annotations

import heapq
import math
from bisect import insort
from collections import deque
from dataclasses import dataclass, field

from . import memory as _memory
from .allocators import ContiguousAllocator
from ..kvpool import BlockPool
from .latency import OPT13B_A100, LatencyModel
from .memory import ContiguousMemory, MemoryManager, PagedMemory, Running
from .sharing import BASIC, Sharing
from .workload import Request

# Table 1 of the paper: 12 GB of KV cache for OPT-13B at 800 KB a token.
DEFAULT_SLOTS = 12 * 1024**3 // (800 * 1024)


@dataclass(frozen=True)
class LabConfig:
    """Engine and memory parameters; defaults are the paper's OPT-13B setup and vLLM's."""

    slots: int = DEFAULT_SLOTS
    block_size: int = 16
    max_seq_len: int = 2048
    max_batch: int = 256  # vLLM's max_num_seqs
    max_batched_tokens: int = 2560  # vLLM's prefill token budget per step
    watermark: float = 0.01  # vLLM keeps 1 % of blocks free when admitting
    latency: LatencyModel = OPT13B_A100
    sharing: Sharing = BASIC

    def __post_init__(self) -> None:
        if self.block_size < 1:
            raise ValueError("block size must be >= 1")
        if self.max_seq_len < 2:
            raise ValueError("maximum sequence length must be >= 2")
        if self.slots < self.max_seq_len:
            raise ValueError("KV slots must hold at least one maximum-length sequence")
        if self.slots // self.block_size * self.block_size < self.max_seq_len:
            raise ValueError("paged memory must hold at least one maximum-length sequence")
        if self.max_batch < 1:
            raise ValueError("maximum batch must be >= 1")
        if self.max_batch < self.sharing.seqs:
            raise ValueError("maximum batch must hold every sequence of one request")
        if self.sharing.prefix + 2 > self.max_seq_len:
            raise ValueError("the shared prefix leaves no room for a prompt and an output")
        if self.sharing.prefix // self.block_size + self.sharing.seqs * -(-self.max_seq_len // self.block_size) \
                > self.slots // self.block_size or self.sharing.seqs * self.max_seq_len > self.slots:
            raise ValueError(
                f"{self.sharing.seqs} sequences of up to {self.max_seq_len} tokens each (a request's share of memory "
                f"without sharing) do not fit {self.slots} slots: raise the slots or lower the maximum sequence length"
            )


BUCKETS = ("tokens", "reserved", "internal", "external", "free")


@dataclass
class Breakdown:
    """Where the KV slots are, in slots (or slot-seconds when integrated).

    tokens: hold a token's keys and values. reserved: reserved for tokens the
    request will still generate. internal: reserved but never used (past the
    request's final length; a paged request's unused tail of its last block).
    external: external fragmentation: free contiguous ranges too short for the waiting queue
    head's reservation while it waits for memory (always 0 for paged memory: any request can use
    any free block, so blocks too few for the head are load, not waste).
    free: every other free slot.
    """

    tokens: float = 0.0
    reserved: float = 0.0
    internal: float = 0.0
    external: float = 0.0
    free: float = 0.0

    def total(self) -> float:
        return self.tokens + self.reserved + self.internal + self.external + self.free

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in BUCKETS}


@dataclass
class StepReport:
    """One ``advance`` call: a prefill step or a run of decode steps."""

    kind: str  # "prefill", "decode" or "idle"
    iterations: int
    duration: float
    running: int
    waiting: int
    generated: int
    preemptions: int
    memory: Breakdown


@dataclass
class Result:
    """Time-weighted figures over the measurement window (first to last arrival)."""

    allocator: str
    token_share: float
    memory_shares: dict[str, float]
    mean_running: float
    mean_waiting: float
    throughput: float
    preemptions: int
    iterations: int
    finished: int
    window: float
    sim_time: float
    memory_saving: float = 0.0
    cow_copies: int = 0
    mean_running_sequences: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "memory_saving": self.memory_saving,
            "cow_copies": self.cow_copies,
            "mean_running_sequences": self.mean_running_sequences,
            "token_share": self.token_share,
            "memory_shares": self.memory_shares,
            "mean_running": self.mean_running,
            "mean_waiting": self.mean_waiting,
            "throughput": self.throughput,
            "preemptions": self.preemptions,
            "iterations": self.iterations,
            "finished": self.finished,
            "window_s": self.window,
            "sim_time_s": self.sim_time,
        }


@dataclass
class _Totals:
    time: float = 0.0
    running: float = 0.0
    sequences: float = 0.0
    saved: float = 0.0  # block-seconds saved by sharing
    logical: float = 0.0  # block-seconds the sequences would hold without sharing
    waiting: float = 0.0
    generated: int = 0
    memory: Breakdown = field(default_factory=Breakdown)


# Arrivals within this many seconds of the clock count as arrived: a sum of step times can land
# a float ulp short of the arrival it was computed to reach.
ARRIVAL_SLACK_S = 1e-9


class Simulator:
    """Serve one trace with one allocator.

    ``track_blocks`` keeps an explicit block table for every paged sequence (the LAB screen draws
    them, the property tests check them) and steps one iteration at a time; the figures are the
    same as without.
    """

    def __init__(self, trace: list[Request], allocator: str, config: LabConfig | None = None,
                 track_blocks: bool = False) -> None:
        self.spec = _memory.get(allocator)  # ValueError for an unknown allocator
        self.config = cfg = config or LabConfig()
        self.sharing = sharing = cfg.sharing
        self.prefix = sharing.prefix
        self.seqs = sharing.seqs
        for req in trace:
            if req.prompt < 1 or req.output < 1 or req.total + self.prefix > cfg.max_seq_len:
                raise ValueError(f"request {req.rid} does not fit the maximum sequence length")
        self.allocator = allocator
        self.trace = sorted(trace, key=lambda r: (r.arrival, r.rid))
        self.window_end = self.trace[-1].arrival if self.trace else 0.0
        self.next_arrival = 0
        self.clock = 0.0
        self.decode_steps = 0  # D
        self.iterations = 0
        self.waiting: deque[Request] = deque()
        self.generated: dict[int, int] = {}  # tokens generated so far, kept across preemption
        self.running: dict[int, Running] = {}
        self.order: list[int] = []  # running rids, oldest first (rid = arrival order)
        self.finish_heap: list[tuple[int, int, int]] = []
        self.version = 0
        self.sum_u = 0  # over sequences
        self.running_seqs = 0
        self.finished = 0
        self.completed: set[int] = set()
        self.preemptions = 0
        self.tokens_generated = 0  # every token, also after the measurement window
        self.totals = _Totals()
        self.window_closed = False
        self.block_size = cfg.block_size
        self.memory_manager: MemoryManager = self.spec.build(cfg, track_blocks)

    # ----------------------------------------------------------------- state
    @property
    def done(self) -> bool:
        return self.next_arrival >= len(self.trace) and not self.waiting and not self.running

    @property
    def has_blocks(self) -> bool:
        """Memory of fixed-size blocks with block tables (``pool``, ``blocks_used``, ``block_tables``)."""
        return isinstance(self.memory_manager, PagedMemory)

    def _paged_only(self) -> PagedMemory:
        mem = self.memory_manager
        if not isinstance(mem, PagedMemory):
            raise AttributeError(f"{self.allocator} memory has no blocks")
        return mem

    @property
    def num_blocks(self) -> int:
        """Paged: physical blocks in all."""
        return self._paged_only().num_blocks

    @property
    def blocks_used(self) -> int:
        """Paged: physical blocks held (a cached shared prefix's included)."""
        return self._paged_only().blocks_used

    @property
    def pool(self) -> BlockPool:
        """Paged: the physical blocks, their reference counts and the explicit block tables."""
        return self._paged_only().pool

    @property
    def ranges(self) -> ContiguousAllocator:
        """Contiguous: the free and reserved ranges."""
        mem = self.memory_manager
        if not isinstance(mem, ContiguousMemory):
            raise AttributeError(f"{self.allocator} memory has no ranges")
        return mem.ranges

    @property
    def cow_copies(self) -> int:
        return self.memory_manager.cow_copies

    def length(self, run: Running) -> int:
        """Tokens each of the request's sequences holds (a shared prefix included)."""
        return run.u + self.decode_steps

    def tokens_held(self) -> int:
        """Tokens of every running sequence, each sequence counted in full."""
        return self.sum_u + self.running_seqs * self.decode_steps

    def saved_blocks(self) -> int:
        """Blocks that sharing saves right now (0 for contiguous memory)."""
        return self.memory_manager.saved

    def memory(self) -> Breakdown:
        """Current memory breakdown in slots (a shared block's tokens counted once)."""
        slots = self.config.slots
        mem = self.memory_manager
        tokens = self.tokens_held() - mem.saved * self.block_size
        held = mem.held()
        reserved = mem.reserved(tokens, mem.promised())
        internal = held - tokens - reserved
        external = self._external()
        return Breakdown(tokens, reserved, internal, external, slots - held - external)

    def block_tables(self) -> dict[tuple[int, int], list[int]]:
        """Paged with ``track_blocks``: every running sequence's block table (read only)."""
        return {seq: list(table) for seq, table in self.pool.tables.items()}

    def ranges_held(self) -> dict[int, tuple[int, int, int, int]]:
        """Contiguous: rid -> (start, reserved slots, tokens held, final length) of its first sequence."""
        return {
            rid: (run.start, run.reserve, self.length(run), run.final) for rid, run in self.running.items()
        }

    # ------------------------------------------------------------- admission
    def _arrive(self) -> None:
        trace, i, clock = self.trace, self.next_arrival, self.clock + ARRIVAL_SLACK_S
        while i < len(trace) and trace[i].arrival <= clock:
            self.waiting.append(trace[i])
            i += 1
        self.next_arrival = i

    def _length0(self, req: Request) -> int:
        return self.prefix + req.prompt + self.generated.get(req.rid, 0) + 1

    def _fits(self, req: Request) -> bool:
        return self.memory_manager.fits(req.total + self.prefix, self.prefix + req.prompt, self._length0(req),
                                        self.seqs, bool(self.running))

    def _batch_room(self) -> bool:
        return self.running_seqs + self.seqs <= self.config.max_batch

    def _head_blocked_by_memory(self) -> bool:
        return bool(self.waiting) and self._batch_room() and not self._fits(self.waiting[0])

    def _external(self) -> int:
        """Free slots that are external fragmentation now (the one definition ``memory()`` and the
        time-averaged shares use): those the queue head cannot use while memory blocks it."""
        if not self._head_blocked_by_memory():
            return 0
        return self.memory_manager.unusable(self.waiting[0].total + self.prefix, self.seqs)

    def _admit(self, req: Request) -> bool:
        """Give ``req`` memory for its prefill; False if it does not fit."""
        done = self.generated.get(req.rid, 0)
        length = self._length0(req)
        u = length - self.decode_steps
        self.version += 1
        run = Running(req, u, self.version, self.prefix + req.prompt, self.prefix + req.total, self.seqs)
        if not self.memory_manager.admit(run, length, bool(self.running), self.decode_steps):
            self.version -= 1
            return False
        self.running[req.rid] = run
        insort(self.order, req.rid)
        self.sum_u += u * self.seqs
        self.running_seqs += self.seqs
        heapq.heappush(self.finish_heap, (run.final - u, req.rid, self.version))
        self.generated[req.rid] = done + 1
        return True

    def _remove(self, rid: int) -> Running:
        run = self.running.pop(rid)
        self.order.remove(rid)
        self.sum_u -= run.u * run.seqs
        self.running_seqs -= run.seqs
        self.memory_manager.release(run, self.length(run))
        return run

    def _finish(self, rid: int) -> None:
        self._remove(rid)
        del self.generated[rid]
        self.finished += 1
        self.completed.add(rid)

    def _preempt(self, rid: int) -> None:
        run = self._remove(rid)
        self.generated[rid] = self.length(run) - run.prompt
        self.waiting.appendleft(run.req)
        self.preemptions += 1

    def _retire_finished(self) -> None:
        heap, running, d = self.finish_heap, self.running, self.decode_steps
        while heap and heap[0][0] <= d:
            _, rid, version = heapq.heappop(heap)
            run = running.get(rid)
            if run is not None and run.version == version:
                self._finish(rid)

    def _next_finish(self) -> int | None:
        heap, running = self.finish_heap, self.running
        while heap:
            step, rid, version = heap[0]
            run = running.get(rid)
            if run is not None and run.version == version:
                return step
            heapq.heappop(heap)
        return None

    # ------------------------------------------------------------- accounting
    def _account(
        self, duration: float, n: int, waiting: int, tokens: float, reserved: float, internal: float,
        external: float, free: float, generated: int, saved: float = 0.0, until: float | None = None,
    ) -> None:
        """Add a span (memory terms already integrated over it) and advance the clock (to ``until`` if given)."""
        self.tokens_generated += generated
        if not self.window_closed:
            t = self.totals
            t.time += duration
            t.running += n * duration
            t.sequences += n * self.seqs * duration
            t.waiting += waiting * duration
            # Requests arriving during the span wait from their arrival on.
            trace, i, start = self.trace, self.next_arrival, self.clock
            end = start + duration
            while i < len(trace) and trace[i].arrival < end:
                t.waiting += end - max(trace[i].arrival, start)
                i += 1
            t.generated += generated
            m = t.memory
            m.tokens += tokens
            m.reserved += reserved
            m.internal += internal
            m.external += external
            m.free += free
            held = tokens + reserved + internal
            t.saved += saved
            t.logical += held / self.block_size + saved
        self.clock = self.clock + duration if until is None else until
        if self.clock >= self.window_end:
            self.window_closed = True

    def _account_state(self, duration: float, generated: int, until: float | None = None) -> None:
        """Account a span of constant state."""
        mem = self.memory()
        self._account(
            duration, len(self.running), len(self.waiting), mem.tokens * duration, mem.reserved * duration,
            mem.internal * duration, mem.external * duration, mem.free * duration, generated,
            self.memory_manager.saved * duration, until,
        )

    # ----------------------------------------------------------------- steps
    def advance(self, max_decode: int | None = None) -> StepReport:
        """One scheduling step: a prefill, or up to ``max_decode`` decode steps (None: to the next event)."""
        before = (self.clock, self.iterations, self.preemptions, self.totals.generated)
        kind = self._step(max_decode)
        duration = self.clock - before[0]
        return StepReport(
            kind, self.iterations - before[1], duration, len(self.running), len(self.waiting),
            self.totals.generated - before[3], self.preemptions - before[2], self.memory(),
        )

    def step(self, max_decode: int | None = None) -> str:
        """``advance`` without building a report: "prefill", "decode" or "idle"."""
        return self._step(max_decode)

    def _step(self, max_decode: int | None) -> str:
        self._arrive()
        if self.done:
            return "idle"
        if not self.running and not self.waiting:
            # Idle until the next arrival: the clock lands on it exactly.
            arrival = self.trace[self.next_arrival].arrival
            self._account_state(max(0.0, arrival - self.clock), 0, until=max(arrival, self.clock))
            self._arrive()
        if self.waiting and self._batch_room() and self._fits(self.waiting[0]):
            self._prefill()
            return "prefill"
        if not self.running:  # cannot happen: an empty engine admits any request that fits the config
            raise AssertionError("queue head does not fit an empty engine")
        self._decode(max_decode)
        return "decode"

    def _prefill(self) -> None:
        cfg = self.config
        budget = max(cfg.max_batched_tokens, cfg.max_seq_len)
        admitted = 0
        computed = 0
        read = 0
        waiting = self.waiting
        # The paged engine computes a cached shared prefix's full blocks once, not per request.
        cached = self.memory_manager.shared_prefix * self.block_size
        while waiting and self._batch_room():
            req = waiting[0]
            done = self.generated.get(req.rid, 0)
            tokens = self.prefix + req.prompt - cached + self.seqs * done
            if admitted and computed + tokens > budget:
                break
            if not self._admit(req):
                break
            waiting.popleft()
            admitted += 1
            computed += tokens
            read += self.seqs * (self.prefix + req.prompt + done)
        self._account_state(cfg.latency.step_time(computed, read), admitted * self.seqs)
        self.iterations += 1
        self._retire_finished()

    def _steps_until(self, alpha: float, beta: float, delta: float, cap: int) -> int:
        """Fewest decode steps (>= 1) whose total time reaches ``delta``, or ``cap`` if more.

        The cap keeps the integer corrections below short when ``delta`` is far away
        (a float that large no longer changes by one step).
        """
        if delta <= ARRIVAL_SLACK_S:
            return 1
        if cap * alpha + beta * cap * (cap - 1) / 2 < delta:
            return cap
        if beta > 0:
            b = alpha - beta / 2
            k = math.ceil((-b + math.sqrt(b * b + 2 * beta * delta)) / beta)
        else:
            k = math.ceil(delta / alpha)
        k = min(max(k, 1), cap)
        while k > 1 and (k - 1) * alpha + beta * (k - 1) * (k - 2) / 2 >= delta:
            k -= 1
        while k < cap and k * alpha + beta * k * (k - 1) / 2 < delta:
            k += 1
        return k

    def _decode(self, max_decode: int | None) -> None:
        cfg = self.config
        lat = cfg.latency
        running = self.running
        mem = self.memory_manager
        d0 = self.decode_steps
        # Make room for the next step: preempt the newest requests while too few blocks are free
        # (memory that cannot run out mid-request never needs more than it has).
        preempted = False
        while running and mem.next_step_need(d0) > mem.free_blocks():
            self._preempt(self.order[-1])
            preempted = True
        if not running:
            return
        n = len(running)
        seqs = self.running_seqs
        finish = self._next_finish()
        k = 1 if finish is None else max(1, finish - d0)
        if max_decode is not None and max_decode < k:
            k = max(1, max_decode)
        tokens0 = self.sum_u + seqs * d0
        alpha = lat.fixed + lat.per_token * seqs + lat.per_context * (tokens0 + seqs)
        beta = lat.per_context * seqs
        if not self.waiting and self.next_arrival < len(self.trace):
            k = self._steps_until(alpha, beta, self.trace[self.next_arrival].arrival - self.clock, k)
        if not self.window_closed:
            k = self._steps_until(alpha, beta, self.window_end - self.clock, k)
        k = min(k, mem.max_steps(d0))
        if preempted and self.waiting and self._batch_room() and self._fits(self.waiting[0]):
            # A preemption just freed enough blocks to readmit the queue head: the next
            # step prefills it unless this step's new blocks take them back, so only this
            # step is known to be a decode. (Without a preemption the head did not fit a
            # moment ago, in ``_step``, and nothing has changed since.)
            k = 1
        if k < 1:
            k = 1
        external_slots = self._external()  # ranges and queue head stay as they are until the span ends

        # Closed-form integrals over steps j = 1..k: step j lasts a0 + beta j and
        # holds tokens0 + j seqs tokens (its new token included).
        duration = k * alpha + beta * k * (k - 1) / 2
        a0 = alpha - beta
        sj = k * (k + 1) // 2
        sj2 = k * (k + 1) * (2 * k + 1) // 6
        tokens = tokens0 * duration + seqs * (a0 * sj + beta * sj2)
        held, promised = mem.span(k, duration, a0, beta, d0)
        saved = mem.saved * duration
        tokens -= self.block_size * saved
        reserved = mem.reserved(tokens, promised)
        internal = held - tokens - reserved
        external = external_slots * duration
        self._account(duration, n, len(self.waiting), tokens, reserved, internal, external,
                      cfg.slots * duration - held - external, seqs * k, saved)
        self.decode_steps = d0 + k
        self.iterations += k
        self._retire_finished()

    def run(self, drain: bool = True) -> Result:
        """Serve the trace; with ``drain`` until every request has finished."""
        while not self.done and (drain or not self.window_closed):
            self._step(None)
        return self.result()

    def result(self) -> Result:
        t = self.totals
        span = t.time or 1.0
        mem = t.memory
        used = mem.total() - mem.free
        total = mem.total() or 1.0
        return Result(
            allocator=self.allocator,
            token_share=mem.tokens / used if used else 0.0,
            memory_shares={name: value / total for name, value in mem.as_dict().items()},
            mean_running=t.running / span,
            mean_waiting=t.waiting / span,
            throughput=t.generated / span,
            preemptions=self.preemptions,
            iterations=self.iterations,
            finished=self.finished,
            window=t.time,
            sim_time=self.clock,
            memory_saving=t.saved / t.logical if t.logical > 0 else 0.0,
            cow_copies=self.cow_copies,
            mean_running_sequences=t.sequences / span,
        )
