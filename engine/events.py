"""Typed events the engine emits; the UI turns them into log lines, sounds and animation.

Each event carries data; `text` renders the system-console line on demand so that bots and
benchmarks that never read it pay nothing for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from .modes import get as get_mode
from .pieces import PIECES, Kind
from .rules import TOKENS_PER_BLOCK, WIDTH, visible_row

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
    """A paged request's block table: logical page -> physical cell (x, y in board rows).

    `entries` are the cells written when the request was paged; `resident` maps each page to
    where it lives now, after every row garbage-collected since (None: freed).
    """

    request_id: int
    kind: Kind
    entries: tuple[tuple[int, Cell], ...]
    resident: tuple[tuple[int, Cell | None], ...]

    @property
    def name(self) -> str:
        return PIECES[self.kind].name


class LockResult(NamedTuple):
    """What one placement did: the value the log, sound, cards and score all read."""

    request_id: int
    kind: Kind
    cells: tuple[Cell, ...]
    lines: int
    tokens: int
    points: int
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
        return f"[SCHED] {_req(self.request_id, self.kind)} arrives: needs 4 KV blocks"


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
    result: LockResult

    @property
    def level(self) -> str:  # type: ignore[override]
        return "WARN" if self.result.holes_sealed else "INFO"

    @property
    def text(self) -> str:
        r = self.result
        msg = f"[ALLOC] {_req(r.request_id, r.kind)} committed {len(r.cells)} contiguous blocks"
        if r.holes_sealed:
            msg += f"; {r.holes_sealed} free block(s) sealed off (external fragmentation)"
        return msg


@dataclass(frozen=True, slots=True)
class Reserved(Event):
    """A contiguous request holds free blocks for its maximum length (tokens it may yet write)."""

    request_id: int
    kind: Kind
    cells: tuple[Cell, ...]

    @property
    def text(self) -> str:
        return (f"[ALLOC] req#{self.request_id} holds {len(self.cells)} empty block(s) for its "
                f"max length ({len(self.cells) * TOKENS_PER_BLOCK} tokens reserved)")


@dataclass(frozen=True, slots=True)
class Released(Event):
    """A finished request's reservation went back to the free pool."""

    request_id: int
    cells: tuple[Cell, ...]

    @property
    def text(self) -> str:
        return (f"[FREE] req#{self.request_id} finished: {len(self.cells)} reserved block(s) "
                "returned unused")


@dataclass(frozen=True, slots=True)
class LinesCleared(Event):
    rows: tuple[int, ...]
    count: int
    tokens: int
    points: int
    owners: tuple[tuple[int, ...], ...] = ()  # per cleared row, the request id of every block
    table: BlockTable | None = None  # the last block table, as it is after this clear
    finished: tuple[int, ...] = ()  # requests that had tokens in these rows: they are done

    @property
    def text(self) -> str:
        return (f"[GC] batch finished: {self.count} row(s) of finished requests freed, "
                f"{self.count * WIDTH} KV blocks back in the pool, {self.tokens} tokens "
                "dispatched; live blocks stay where they are")


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
class Held(Event):
    kind: Kind
    swapped_in: Kind | None

    @property
    def text(self) -> str:
        back = f", resuming {PIECES[self.swapped_in].name}" if self.swapped_in is not None else ""
        return f"[SCHED] {PIECES[self.kind].name} preempted to the hold queue{back}"


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
        return (f"[DONE] {self.report.lines} batches dispatched "
                f"({self.report.tokens} tokens): workload served without OOM")


__all__ = [
    "BlockTable", "LockResult", "Event", "Spawned", "Moved", "Rotated", "Locked",
    "LinesCleared", "PageSplit", "Reserved", "Released", "ModeSwitched", "Held", "Alert", "LevelUp", "Oom",
    "Victory",
]
