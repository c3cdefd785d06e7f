"""End-of-run reports: the real numbers at the moment a run crashed or was won."""

from __future__ import annotations

from dataclasses import dataclass

from .pieces import Kind


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
    mode: str

    def lines_of_text(self) -> list[str]:
        head = ("CUDA OUT OF MEMORY" if self.outcome == "oom" else "WORKLOAD COMPLETE")
        who = "failed request" if self.outcome == "oom" else "last request"
        return [
            head,
            self.cause,
            f"{who}: req#{self.request_id} {self.request_name}",
            f"free blocks at that moment: {self.free_cells} ({self.sealed_holes} sealed in holes)",
            f"external fragmentation: {self.fragmentation * 100:.1f} %",
            f"peak VRAM: {self.peak_utilisation * 100:.1f} %",
            f"requests served: {self.requests_served}   pieces placed: {self.pieces}",
            f"lines: {self.lines}   tokens: {self.tokens}   score: {self.score}",
            f"allocator: {self.mode}   uptime: {self.time_ms / 1000:.1f} s",
        ]

