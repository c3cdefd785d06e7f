"""Typed events the engine emits; the UI turns them into log lines, sounds and animation.

Each event carries data; `text` renders the system-console line on demand so that bots and
benchmarks that never read it pay nothing for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from .frozen import quick_init
from .modes import get as get_mode
from .pieces import PIECES, Kind
from .rules import QUEUE_MAX, blocks_for, visible_row

if TYPE_CHECKING:
    from .reports import RunReport

Cell = tuple[int, int]


def _req(request_id: int, kind: Kind) -> str:
    return f"req#{request_id} {PIECES[kind].name}"


def cell_text(cell: Cell) -> str:
    """A block as the player reads it: (column, visible row)."""
    return f"({cell[0]},{visible_row(cell[1])})"


@dataclass(frozen=True, slots=True)
class BlockTable:
    """A request's block table: logical page -> physical block (x, y in board rows).

    Memory never moves, so an entry stays valid for as long as the request holds it. The last
    `reserved` entries are held for its maximum length but hold no tokens yet (contiguous);
    `tokens` is how many tokens its KV cache held when the table was read.
    """

    request_id: int
    kind: Kind
    entries: tuple[tuple[int, Cell], ...]
    reserved: int = 0
    tokens: int = 0

    @property
    def name(self) -> str:
        return PIECES[self.kind].name

    @property
    def resident(self) -> tuple[tuple[int, Cell | None], ...]:
        return tuple(self.entries)


class LockResult(NamedTuple):
    """What one whole placement did: the value the log, sound, cards and effects read."""

    request_id: int
    kind: Kind
    cells: tuple[Cell, ...]
    holes_sealed: int
    drop_cells: int = 0
    sealed_cells: tuple[Cell, ...] = ()  # the free cells this placement sealed off


class Event:
    """Base of every engine event."""

    __slots__ = ()
    level: ClassVar[str] = "INFO"

    @property
    def text(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Spawned(Event):
    request_id: int
    kind: Kind

    @property
    def text(self) -> str:
        return f"[SCHED] {_req(self.request_id, self.kind)} scheduled: it falls into VRAM"


@dataclass(frozen=True, slots=True)
class Moved(Event):
    dx: int
    dy: int

    @property
    def text(self) -> str:
        return f"[ALLOC] candidate range shifted ({self.dx:+d}, {self.dy:+d})"


@dataclass(frozen=True, slots=True)
class Rotated(Event):
    direction: int
    kick_index: int

    @property
    def text(self) -> str:
        turn = "cw" if self.direction > 0 else "ccw"
        kick = f", wall kick #{self.kick_index}" if self.kick_index else ""
        return f"[ALLOC] block layout rotated {turn}{kick}"


@dataclass(frozen=True, slots=True)
class Locked(Event):
    """A request came to rest whole (its admission follows as Admitted)."""

    result: LockResult

    @property
    def level(self) -> str:  # type: ignore[override]
        return "WARN" if self.result.holes_sealed else "INFO"

    @property
    def text(self) -> str:
        r = self.result
        msg = f"[ALLOC] {_req(r.request_id, r.kind)} placed whole"
        if r.holes_sealed:
            msg += f"; {r.holes_sealed} free block(s) sealed off (external fragmentation)"
        return msg


@dataclass(frozen=True, slots=True)
class Arrived(Event):
    request_id: int
    kind: Kind
    prompt: int  # tokens
    waiting: int  # requests in the queue, this one included
    queue_max: int = QUEUE_MAX  # the most that may wait

    @property
    def text(self) -> str:
        return (f"[SCHED] {_req(self.request_id, self.kind)} arrives: prompt {self.prompt} "
                f"tokens, {self.waiting} waiting")


@dataclass(frozen=True, slots=True)
class Admitted(Event):
    """A request got its blocks and decodes: placed whole, split by the player, or paged by
    the allocator because it could not be placed whole."""

    table: BlockTable
    how: str  # "whole", "split" or "on_demand"
    stall_ms: float  # GPU time its prefill (or swap-in) stalled every running request
    resumed: str = ""  # "swap" or "recompute" when it comes back from a preemption
    mode: str = ""  # the allocator it was admitted under
    cached: int = 0  # blocks of its context found in the prefix cache (not prefilled)
    chunked: bool = False  # its context is prefilled in chunks within the steps' budget

    @property
    def context_blocks(self) -> int:
        """Blocks of context it holds (chunked prefill: that its context will fill)."""
        t = self.table
        return blocks_for(t.tokens) if self.chunked else len(t.entries) - t.reserved

    @property
    def text(self) -> str:
        t = self.table
        kept = self.context_blocks
        msg = f"[ALLOC] {_req(t.request_id, t.kind)} admitted: {kept} block(s) of context"
        if t.reserved:
            msg += f" + {t.reserved} reserved for its max length"
        if self.cached:
            msg += f", {self.cached} found in the prefix cache"
        if self.resumed:
            msg += f" ({self.resumed} back in)"
        if self.chunked:
            return msg + "; prefilled in chunks beside decoding"
        return msg + f"; prefill stalls decoding {self.stall_ms:.0f} ms"


@dataclass(frozen=True, slots=True)
class Grew(Event):
    """A decoding request filled its last block and was given a new one."""

    request_id: int
    kind: Kind
    page: int
    cell: Cell

    @property
    def text(self) -> str:
        return (f"[PAGED] {_req(self.request_id, self.kind)} page {self.page} -> block "
                f"{cell_text(self.cell)}")


@dataclass(frozen=True, slots=True)
class Finished(Event):
    """A request generated its whole output: every block it held is free again."""

    request_id: int
    kind: Kind
    cells: tuple[Cell, ...]
    tokens: int  # output tokens served
    wasted: int  # blocks it reserved and never filled

    @property
    def text(self) -> str:
        msg = (f"[GC] {_req(self.request_id, self.kind)} finished: {self.tokens} tokens served, "
               f"{len(self.cells)} block(s) freed")
        if self.wasted:
            msg += f" ({self.wasted} reserved and never used)"
        return msg


@dataclass(frozen=True, slots=True)
class Preempted(Event):
    """No block was free for a decoding request: the newest running one lost all its blocks."""

    request_id: int
    kind: Kind
    cells: tuple[Cell, ...]
    how: str  # "swap" or "recompute" (what was done)
    generated: int  # tokens it had generated
    asked: str = ""  # the preemption mode set (swap falls back to recompute when CPU is full)

    level: ClassVar[str] = "WARN"

    @property
    def text(self) -> str:
        if self.how == "swap":
            what = f"{len(self.cells)} block(s) swapped to CPU"
        else:
            what = f"{self.generated} generated token(s) to recompute"
        return f"[PREEMPT] {_req(self.request_id, self.kind)} preempted: {what}; back to the front"


@dataclass(frozen=True, slots=True)
class PageSplit(Event):
    block_table: BlockTable
    holes_filled: int
    origin: tuple[Cell, ...] = ()  # where the request's blocks were before it was paged
    auto: bool = False  # paged on demand by the allocator, not split by the player

    @property
    def text(self) -> str:
        bt = self.block_table
        cells = ", ".join(f"{p}->{cell_text(c)}" for p, c in bt.entries)
        how = "paged on demand" if self.auto else "split"
        return (f"[PAGED] {_req(bt.request_id, bt.kind)} {how} into {len(bt.entries)} pages "
                f"({self.holes_filled} into sealed holes): {cells}")


@dataclass(frozen=True, slots=True)
class ModeSwitched(Event):
    mode: str

    @property
    def text(self) -> str:
        m = get_mode(self.mode)
        return f"[MODE] allocator -> {m.label}: {m.summary}"


@dataclass(frozen=True, slots=True)
class PreemptModeSwitched(Event):
    mode: str

    @property
    def text(self) -> str:
        return f"[SCHED] preemption -> {self.mode}"


@dataclass(frozen=True, slots=True)
class Held(Event):
    kind: Kind
    swapped_in: Kind | None

    @property
    def text(self) -> str:
        back = f", resuming {PIECES[self.swapped_in].name}" if self.swapped_in is not None else ""
        return f"[SCHED] {PIECES[self.kind].name} set aside in hold{back}"


@dataclass(frozen=True, slots=True)
class Alert(Event):
    """Something the player should know: a refused action or memory running short."""

    code: str
    message: str
    level: ClassVar[str] = "WARN"

    @property
    def text(self) -> str:
        return f"[WARN] {self.message}"


@dataclass(frozen=True, slots=True)
class LevelUp(Event):
    level_now: int

    @property
    def text(self) -> str:
        return f"[LOAD] request rate up: level {self.level_now}"


@dataclass(frozen=True, slots=True)
class Overloaded(Event):
    """The run ended because the engine could not keep up (queue full, or a deadline missed)."""

    report: RunReport
    level: ClassVar[str] = "ERROR"

    @property
    def text(self) -> str:
        return f"[FATAL] serving engine overloaded: {self.report.cause}"


@dataclass(frozen=True, slots=True)
class Oom(Event):
    report: RunReport
    level: ClassVar[str] = "ERROR"

    @property
    def text(self) -> str:
        r = self.report
        return (f"[FATAL] CUDA out of memory: {r.request_name} (req#{r.request_id}) not "
                f"admitted: {r.cause}")


@dataclass(frozen=True, slots=True)
class Victory(Event):
    report: RunReport

    @property
    def text(self) -> str:
        return (f"[DONE] {self.report.requests_served} requests served "
                f"({self.report.tokens} tokens): workload served without OOM")


__all__ = [
    "BlockTable", "LockResult", "Event", "Spawned", "Moved", "Rotated", "Locked", "Arrived",
    "Admitted", "Grew", "Finished", "Preempted", "PageSplit", "ModeSwitched",
    "PreemptModeSwitched", "Held", "Alert", "LevelUp", "Oom", "Overloaded", "Victory",
]

for _cls in (BlockTable, Spawned, Moved, Rotated, Locked, Arrived, Admitted, Grew, Finished,
             Preempted, PageSplit, ModeSwitched, PreemptModeSwitched, Held, Alert, LevelUp,
             Overloaded, Oom, Victory):
    quick_init(_cls)
del _cls


@dataclass(frozen=True, slots=True)
class Picked(Event):
    """The player picked a waiting request to run next (cache-aware scheduling)."""

    request_id: int
    kind: Kind
    place: int  # 0: the front of the queue

    @property
    def text(self) -> str:
        return f"[SCHED] {_req(self.request_id, self.kind)} picked to run next (#{self.place + 1} waiting)"


@dataclass(frozen=True, slots=True)
class BudgetSet(Event):
    """The step's token budget changed (chunked prefill)."""

    budget: int

    @property
    def text(self) -> str:
        return f"[SCHED] step budget {self.budget} tokens: decode first, prefill chunks share the rest"


@dataclass(frozen=True, slots=True)
class SpecSet(Event):
    """How many tokens every decoding request drafts a step changed (speculative decoding)."""

    k: int

    @property
    def text(self) -> str:
        return f"[SCHED] speculative decoding: {self.k} draft token(s) a step, verified by the target model"
