"""Continuous-batching serving simulator: one trace, one KV-cache allocator.

The scheduler is vLLM's (the paper's system) and is shared by every allocator,
so only memory management differs:

* FCFS admission. A step either prefills newly admitted requests (up to
  ``max_batch`` running and ``max_batched_tokens`` prompt tokens) or, when the
  head of the queue cannot be admitted, decodes one token for every running
  request. A request that cannot be admitted blocks those behind it.
* Contiguous allocators reserve one range per request at admission (``max``:
  the maximum sequence length, ``pow2``: prompt + output rounded up to a power
  of two, ``oracle``: exactly prompt + output) and never run out mid-request.
* The paged allocator gives a request blocks for its prompt, then one block
  each time its last block is full. When no block is free, the newest running
  request is preempted, its blocks are freed, and it is later recomputed
  (prompt + tokens generated so far are prefilled again).

Decode steps between events (an arrival, a finish, running out of blocks, a
preemption that leaves room for the queue head) are identical, so ``run`` jumps
over them in bulk: every running request grows by one token per step, so a
request's length is ``u + D`` for the global decode counter ``D``; finish steps
sit in a heap; for the paged allocator, counts per residue of ``u`` modulo the
block size give how many blocks a run of steps needs. Time-weighted memory
statistics are integrated in closed form. ``advance(1)`` steps one iteration at
a time (the LAB screen) and gives the same results.
"""

from __future__ import annotations

import heapq
import math
from bisect import insort
from collections import deque
from dataclasses import dataclass, field

from .allocators import ALLOCATORS, RESERVATIONS, ContiguousAllocator, PagedAllocator
from .latency import OPT13B_A100, LatencyModel
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


BUCKETS = ("tokens", "reserved", "internal", "external", "free")


@dataclass
class Breakdown:
    """Where the KV slots are, in slots (or slot-seconds when integrated).

    tokens: hold a token's keys and values. reserved: reserved for tokens the
    request will still generate. internal: reserved but never used (past the
    request's final length; a paged request's unused tail of its last block).
    external: free but unusable because the queue head does not fit.
    free: free while nothing waits for it.
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

    def as_dict(self) -> dict[str, object]:
        return {
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


class Running:
    """A running request; its length is ``u + D`` for the decode counter ``D``."""

    __slots__ = ("req", "u", "start", "reserve", "version")

    def __init__(self, req: Request, u: int, start: int, reserve: int, version: int) -> None:
        self.req = req
        self.u = u
        self.start = start
        self.reserve = reserve
        self.version = version


@dataclass
class _Totals:
    time: float = 0.0
    running: float = 0.0
    waiting: float = 0.0
    generated: int = 0
    memory: Breakdown = field(default_factory=Breakdown)


def _ap_sums(first: int, step: int, count: int) -> tuple[int, int]:
    """Sum and sum of squares of ``count`` terms of an arithmetic progression."""
    if count <= 0:
        return 0, 0
    m = count
    s1 = m * first + step * m * (m - 1) // 2
    s2 = m * first * first + first * step * m * (m - 1) + step * step * (m - 1) * m * (2 * m - 1) // 6
    return s1, s2


class Simulator:
    """Serve one trace with one allocator."""

    def __init__(self, trace: list[Request], allocator: str, config: LabConfig | None = None) -> None:
        if allocator not in ALLOCATORS:
            raise ValueError(f"unknown allocator {allocator!r}; choose from {', '.join(ALLOCATORS)}")
        self.config = cfg = config or LabConfig()
        for req in trace:
            if req.prompt < 1 or req.output < 1 or req.total > cfg.max_seq_len:
                raise ValueError(f"request {req.rid} does not fit the maximum sequence length")
        self.allocator = allocator
        self.paged = allocator == "paged"
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
        self.sum_u = 0
        self.finished = 0
        self.completed: set[int] = set()
        self.preemptions = 0
        self.tokens_generated = 0  # every token, also after the measurement window
        self.totals = _Totals()
        self.window_closed = False
        self.block_size = bs = cfg.block_size
        self.reserve_of = RESERVATIONS.get(allocator)
        if self.paged:
            self.num_blocks = cfg.slots // bs
            self.pages = PagedAllocator(self.num_blocks, bs)
            self.blocks_used = 0
            self.residue = [0] * bs  # running requests per u mod block_size
            self.watermark_blocks = int(cfg.watermark * self.num_blocks)
        else:
            self.ranges = ContiguousAllocator(cfg.slots)
            self.total_reserve = 0
            self.total_need = 0

    # ----------------------------------------------------------------- state
    @property
    def done(self) -> bool:
        return self.next_arrival >= len(self.trace) and not self.waiting and not self.running

    def length(self, run: Running) -> int:
        return run.u + self.decode_steps

    def tokens_held(self) -> int:
        return self.sum_u + len(self.running) * self.decode_steps

    def memory(self) -> Breakdown:
        """Current memory breakdown in slots."""
        slots = self.config.slots
        tokens = self.tokens_held()
        if self.paged:
            held = self.blocks_used * self.block_size
            reserved, internal = 0, held - tokens
        else:
            held = self.total_reserve
            reserved, internal = self.total_need - tokens, held - self.total_need
        spare = slots - held
        blocked = self._head_blocked_by_memory()
        return Breakdown(tokens, reserved, internal, spare if blocked else 0, 0 if blocked else spare)

    def block_tables(self) -> dict[int, list[int]]:
        """Paged: every running request's block table, brought up to date."""
        bs = self.block_size
        return {rid: self.pages.grow(rid, -(-self.length(run) // bs)) for rid, run in self.running.items()}

    def ranges_held(self) -> dict[int, tuple[int, int, int, int]]:
        """Contiguous: rid -> (start, reserved slots, tokens held, final length)."""
        return {
            rid: (run.start, run.reserve, self.length(run), run.req.total) for rid, run in self.running.items()
        }

    # ------------------------------------------------------------- admission
    def _arrive(self) -> None:
        trace, i, clock = self.trace, self.next_arrival, self.clock
        while i < len(trace) and trace[i].arrival <= clock:
            self.waiting.append(trace[i])
            i += 1
        self.next_arrival = i

    def _fits(self, req: Request) -> bool:
        if self.paged:
            need = -(-(req.prompt + self.generated.get(req.rid, 0) + 1) // self.block_size)
            return self.num_blocks - self.blocks_used - need >= self.watermark_blocks or not self.running
        return self.ranges.largest_free() >= self.reserve_of(req.total, self.config.max_seq_len)

    def _head_blocked_by_memory(self) -> bool:
        return bool(self.waiting) and len(self.running) < self.config.max_batch and not self._fits(self.waiting[0])

    def _admit(self, req: Request) -> bool:
        """Give ``req`` memory for its prefill; False if it does not fit."""
        done = self.generated.get(req.rid, 0)
        length = req.prompt + done + 1
        start = reserve = 0
        if self.paged:
            blocks = -(-length // self.block_size)
            free = self.num_blocks - self.blocks_used
            if blocks > free or (free - blocks < self.watermark_blocks and self.running):
                return False
            self.blocks_used += blocks
        else:
            reserve = self.reserve_of(req.total, self.config.max_seq_len)
            got = self.ranges.allocate(req.rid, reserve)
            if got is None:
                return False
            start = got
            self.total_reserve += reserve
            self.total_need += req.total
        u = length - self.decode_steps
        self.version += 1
        run = Running(req, u, start, reserve, self.version)
        self.running[req.rid] = run
        insort(self.order, req.rid)
        self.sum_u += u
        if self.paged:
            self.residue[u % self.block_size] += 1
        heapq.heappush(self.finish_heap, (req.total - u, req.rid, self.version))
        self.generated[req.rid] = done + 1
        return True

    def _remove(self, rid: int) -> Running:
        run = self.running.pop(rid)
        self.order.remove(rid)
        self.sum_u -= run.u
        if self.paged:
            self.residue[run.u % self.block_size] -= 1
            self.blocks_used -= -(-self.length(run) // self.block_size)
            self.pages.release(rid)
        else:
            self.ranges.release(rid)
            self.total_reserve -= run.reserve
            self.total_need -= run.req.total
        return run

    def _finish(self, rid: int) -> None:
        self._remove(rid)
        del self.generated[rid]
        self.finished += 1
        self.completed.add(rid)

    def _preempt(self, rid: int) -> None:
        run = self._remove(rid)
        self.generated[rid] = self.length(run) - run.req.prompt
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
        spare: float, blocked: bool, generated: int,
    ) -> None:
        """Add a span (memory terms already integrated over it) and advance the clock."""
        self.tokens_generated += generated
        if not self.window_closed:
            t = self.totals
            t.time += duration
            t.running += n * duration
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
            if blocked:
                m.external += spare
            else:
                m.free += spare
        self.clock += duration
        if self.clock >= self.window_end:
            self.window_closed = True

    def _account_state(self, duration: float, generated: int) -> None:
        """Account a span of constant state."""
        mem = self.memory()
        self._account(
            duration, len(self.running), len(self.waiting), mem.tokens * duration, mem.reserved * duration,
            mem.internal * duration, (mem.external + mem.free) * duration, mem.external > 0, generated,
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
            # Idle until the next arrival.
            self._account_state(self.trace[self.next_arrival].arrival - self.clock, 0)
            self._arrive()
        if self.waiting and len(self.running) < self.config.max_batch and self._fits(self.waiting[0]):
            self._prefill()
            return "prefill"
        self._decode(max_decode)
        return "decode"

    def _prefill(self) -> None:
        cfg = self.config
        budget = max(cfg.max_batched_tokens, cfg.max_seq_len)
        admitted = 0
        computed = 0
        waiting = self.waiting
        while waiting and len(self.running) < cfg.max_batch:
            req = waiting[0]
            tokens = req.prompt + self.generated.get(req.rid, 0)
            if admitted and computed + tokens > budget:
                break
            if not self._admit(req):
                break
            waiting.popleft()
            admitted += 1
            computed += tokens
        self._account_state(cfg.latency.step_time(computed, computed), admitted)
        self.iterations += 1
        self._retire_finished()

    def _steps_until(self, alpha: float, beta: float, delta: float, cap: int) -> int:
        """Fewest decode steps (>= 1) whose total time reaches ``delta``, or ``cap`` if more.

        The cap keeps the integer corrections below short when ``delta`` is far away
        (a float that large no longer changes by one step).
        """
        if delta <= 0:
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
        while k * alpha + beta * k * (k - 1) / 2 < delta:
            k += 1
        return k

    def _paged_new_blocks(self, k: int) -> int:
        """Blocks the running requests need for the next ``k`` decode steps."""
        bs, n = self.block_size, len(self.running)
        q, s = divmod(k, bs)
        total = q * n
        if s:
            residue, d = self.residue, self.decode_steps
            for j in range(1, s + 1):
                total += residue[(1 - j - d) % bs]
        return total

    def _paged_max_steps(self, free: int) -> int:
        """Most decode steps possible before the free blocks run out."""
        bs, n = self.block_size, len(self.running)
        q = free // n
        rest = free - q * n
        residue, d = self.residue, self.decode_steps
        s = 0
        acc = 0
        while s < bs - 1:
            acc += residue[(-s - d) % bs]
            if acc > rest:
                break
            s += 1
        return q * bs + s

    def _decode(self, max_decode: int | None) -> None:
        cfg = self.config
        lat = cfg.latency
        running = self.running
        if self.paged:
            # Make room for the next step: preempt the newest requests while too few blocks are free.
            while running and self._paged_new_blocks(1) > self.num_blocks - self.blocks_used:
                self._preempt(self.order[-1])
            if not running:
                return
        n = len(running)
        d0 = self.decode_steps
        k = self._next_finish() - d0
        if max_decode is not None and max_decode < k:
            k = max_decode
        tokens0 = self.sum_u + n * d0
        alpha = lat.fixed + lat.per_token * n + lat.per_context * (tokens0 + n)
        beta = lat.per_context * n
        if not self.waiting and self.next_arrival < len(self.trace):
            k = self._steps_until(alpha, beta, self.trace[self.next_arrival].arrival - self.clock, k)
        if not self.window_closed:
            k = self._steps_until(alpha, beta, self.window_end - self.clock, k)
        if self.paged:
            k = min(k, self._paged_max_steps(self.num_blocks - self.blocks_used))
            if self.waiting and n < cfg.max_batch and self._fits(self.waiting[0]):
                # A preemption just freed enough blocks to readmit the queue head: the
                # next step prefills it unless this step's new blocks take them back,
                # so only this step is known to be a decode.
                k = 1
        if k < 1:
            k = 1
        blocked = self._head_blocked_by_memory()

        # Closed-form integrals over steps j = 1..k: step j lasts a0 + beta j and
        # holds tokens0 + j n tokens (its new token included).
        duration = k * alpha + beta * k * (k - 1) / 2
        a0 = alpha - beta
        sj = k * (k + 1) // 2
        sj2 = k * (k + 1) * (2 * k + 1) // 6
        tokens = tokens0 * duration + n * (a0 * sj + beta * sj2)
        if self.paged:
            held = self.block_size * (self.blocks_used * duration + self._paged_new_block_integral(k, a0, beta))
            reserved = 0.0
            self.blocks_used += self._paged_new_blocks(k)
        else:
            held = self.total_reserve * duration
            reserved = self.total_need * duration - tokens
        internal = held - tokens - reserved
        spare = cfg.slots * duration - held
        self._account(duration, n, len(self.waiting), tokens, reserved, internal, spare, blocked, n * k)
        self.decode_steps = d0 + k
        self.iterations += k
        self._retire_finished()

    def _paged_new_block_integral(self, k: int, a0: float, beta: float) -> float:
        """Sum over steps j = 1..k of (a0 + beta j) * (blocks newly needed by step j)."""
        bs, n = self.block_size, len(self.running)
        residue, d = self.residue, self.decode_steps
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
            # value(j) = (j - s) / bs * n + acc
            gamma = n / bs
            delta = acc - s * n / bs
            total += a0 * delta * count + (a0 * gamma + beta * delta) * sj + beta * gamma * sj2
        return total

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
        )
