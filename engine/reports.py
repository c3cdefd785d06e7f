"""End-of-run reports: the real numbers at the moment a run crashed or was won."""

from __future__ import annotations

from dataclasses import dataclass

from .modes import MIXED
from .pieces import Kind

Cell = tuple[int, int]


@dataclass(frozen=True, slots=True)
class RunReport:
    outcome: str  # "oom" or "victory"
    cause: str  # why the run ended, in words
    request_id: int  # the request that failed to allocate (oom) or the last one placed
    request_name: str
    kind: Kind
    free_cells: int
    sealed_holes: int
    fragmentation: float
    peak_utilisation: float
    requests_served: int
    pieces: int
    lines: int
    tokens: int
    score: int
    time_ms: float
    mode: str  # the allocator at the end of the run
    cause_code: str = ""  # engine.memory.OOM_CAUSES for an OOM, "victory" otherwise
    utilisation: float = 0.0  # held blocks (tokens + reservations) / all blocks, at the end
    reserved_blocks: int = 0  # held for maximum lengths, still empty
    usable_blocks: int = 0  # free blocks the failed request could have been given
    open_unusable: int = 0  # open free blocks in no range of the failed request's shape
    resident: int = 0  # requests still holding blocks at the end
    mixed: bool = False  # the allocator changed after the run started
    modes_used: tuple[str, ...] = ()  # allocators in the order the run used them
    sealed_cells: tuple[Cell, ...] = ()  # board cells, for the report's BOARD view
    reserved_cells: tuple[Cell, ...] = ()

    @property
    def record_mode(self) -> str:
        """The mode a record of this run counts for: "mixed" when it changed allocator."""
        return MIXED if self.mixed else self.mode

    def allocator_text(self) -> str:
        if self.mixed:
            return f"mixed ({' -> '.join(self.modes_used)}): not a record of either mode"
        return self.mode

    def lines_of_text(self) -> list[str]:
        if self.outcome == "oom":
            return [
                "CUDA OUT OF MEMORY",
                self.cause,
                f"failed request: req#{self.request_id} {self.request_name}",
                f"VRAM held at the crash: {self.utilisation * 100:.1f} % "
                f"({self.reserved_blocks} blocks reserved but empty)",
                f"free blocks {self.free_cells} = {self.usable_blocks} usable + "
                f"{self.sealed_holes} sealed + {self.open_unusable} in no range",
                f"requests finished: {self.requests_served}   holding blocks: {self.resident}",
                f"pieces: {self.pieces}   lines: {self.lines}   tokens: {self.tokens}",
                f"score: {self.score}   uptime: {self.time_ms / 1000:.1f} s",
                f"allocator: {self.allocator_text()}",
            ]
        return [
            "WORKLOAD COMPLETE",
            self.cause,
            f"requests finished: {self.requests_served}   holding blocks at the end: "
            f"{self.resident}",
            f"peak VRAM: {self.peak_utilisation * 100:.1f} %   external fragmentation: "
            f"{self.fragmentation * 100:.1f} %",
            f"pieces: {self.pieces}   lines: {self.lines}   tokens: {self.tokens}",
            f"score: {self.score}   uptime: {self.time_ms / 1000:.1f} s",
            f"allocator: {self.allocator_text()}",
        ]
