"""Typed events the engine emits; the UI turns them into log lines, sounds and animation.

Each event carries data; `text` renders the system-console line on demand so that bots and
benchmarks that never read it pay nothing for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from .pieces import PIECES, Kind
from .rules import WIDTH

if TYPE_CHECKING:
    from .reports import RunReport

Cell = tuple[int, int]


def _req(request_id: int, kind: Kind) -> str:
    return f"req#{request_id} {PIECES[kind].name}"


@dataclass(frozen=True, slots=True)
class BlockTable:
    """A split request's page table: logical page -> physical cell (x, y in board rows).

    `entries` are the cells written at split time; `resident` maps each page to where it lives
    after the rows cleared by that split were garbage-collected (None: freed).
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
        return f"[SCHED] {_req(self.request_id, self.kind)} admitted: allocating 4 KV blocks"


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
class LinesCleared(Event):
    rows: tuple[int, ...]
    count: int
    tokens: int
    points: int

    @property
    def text(self) -> str:
        return (f"[GC] batch finished: {self.count} row(s) freed, "
                f"{self.count * WIDTH} KV blocks reclaimed, {self.tokens} tokens dispatched")


@dataclass(frozen=True, slots=True)
class PageSplit(Event):
    block_table: BlockTable
    holes_filled: int

    @property
    def text(self) -> str:
        bt = self.block_table
        cells = ", ".join(f"{p}->({x},{y})" for p, (x, y) in bt.entries)
        return (f"[PAGED] {_req(bt.request_id, bt.kind)} split into {len(bt.entries)} pages "
                f"({self.holes_filled} into sealed holes): {cells}")


@dataclass(frozen=True, slots=True)
class ModeSwitched(Event):
    mode: str

    @property
    def text(self) -> str:
        if self.mode == "paged":
            return "[MODE] allocator -> PAGED: requests may be split into non-contiguous pages"
        return "[MODE] allocator -> CONTIGUOUS: each request needs one unbroken range"


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
        return (f"[FATAL] CUDA out of memory: {r.request_name} (req#{r.request_id}) could not "
                f"allocate with {r.free_cells} blocks free ({r.sealed_holes} sealed)")


@dataclass(frozen=True, slots=True)
class Victory(Event):
    report: RunReport

    @property
    def text(self) -> str:
        return (f"[DONE] {self.report.lines} batches dispatched "
                f"({self.report.tokens} tokens): workload served without OOM")


__all__ = [
    "BlockTable", "LockResult", "Event", "Spawned", "Moved", "Rotated", "Locked",
    "LinesCleared", "PageSplit", "ModeSwitched", "Held", "Alert", "LevelUp", "Oom",
    "Victory",
]
