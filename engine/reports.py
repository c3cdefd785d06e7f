"""End-of-run reports: the real numbers at the moment a run crashed, was overloaded or was won."""

from __future__ import annotations

from dataclasses import dataclass

from .frozen import quick_init
from .modes import MIXED
from .pieces import Kind

Cell = tuple[int, int]


OUTCOMES = ("oom", "overload", "victory")


@quick_init
@dataclass(frozen=True, slots=True)
class RunReport:
    outcome: str  # one of OUTCOMES
    cause: str  # why the run ended, in words (English; the UI words it from cause_code)
    request_id: int  # the request that was refused, timed out or was served last
    request_name: str
    kind: Kind
    free_cells: int  # free visible blocks at the end
    sealed_holes: int  # free blocks no placement can reach (contiguous; paged: 0)
    fragmentation: float  # sealed_holes / free_cells
    peak_utilisation: float
    requests_served: int
    pieces: int  # requests admitted (each admission counts once, re-admissions too)
    tokens: int  # output tokens served
    score: int
    time_ms: float
    mode: str  # the allocator at the end of the run
    cause_code: str = ""  # engine.memory.OOM_CAUSES, engine.game.OVERLOAD_CAUSES or "victory"
    utilisation: float = 0.0  # held blocks (tokens + reservations) / all blocks, at the end
    reserved_blocks: int = 0  # held for maximum lengths, still empty, at the end
    usable_blocks: int = 0  # free blocks the refused request could have been given
    open_unusable: int = 0  # open free blocks in no range of the refused request's shape
    need: int = 0  # blocks the refused (or timed-out) request needed
    resident: int = 0  # requests holding blocks at the end
    waiting: int = 0  # requests in the queue at the end
    waited_ms: float = 0.0  # how long the refused request had waited
    preempted_swap: int = 0
    preempted_recompute: int = 0
    reserved_wasted: int = 0  # reserved blocks never filled, over the run
    mixed: bool = False  # the allocator changed after the run started
    modes_used: tuple[str, ...] = ()  # allocators in the order the run used them
    goal: str = "serve"
    sealed_cells: tuple[Cell, ...] = ()  # board cells, for the report's BOARD view
    reserved_cells: tuple[Cell, ...] = ()

    @property
    def record_mode(self) -> str:
        """The mode a record of this run counts for: "mixed" when it changed allocator."""
        return MIXED if self.mixed else self.mode

    @property
    def minutes(self) -> float:
        return self.time_ms / 60_000.0

    def allocator_text(self) -> str:
        if self.mixed:
            return f"mixed ({' -> '.join(self.modes_used)}): not a record of either mode"
        return self.mode

    def lines_of_text(self) -> list[str]:
        head = {"oom": "CUDA OUT OF MEMORY", "overload": "SERVING ENGINE OVERLOADED",
                "victory": "WORKLOAD COMPLETE"}[self.outcome]
        out = [head, self.cause]
        if self.outcome != "victory":
            out.append(f"request: req#{self.request_id} {self.request_name} "
                       f"(needs {self.need} block(s); {self.free_cells} free)")
        out += [
            f"VRAM held: {self.utilisation * 100:.1f} % ({self.reserved_blocks} blocks reserved "
            f"but empty); unreachable free blocks: {self.sealed_holes}",
            f"requests served: {self.requests_served}   running: {self.resident}   waiting: "
            f"{self.waiting}",
            f"preemptions: {self.preempted_swap} swap, {self.preempted_recompute} recompute",
            f"tokens served: {self.tokens}   score: {self.score}   uptime: "
            f"{self.time_ms / 1000:.1f} s",
            f"allocator: {self.allocator_text()}",
        ]
        return out
