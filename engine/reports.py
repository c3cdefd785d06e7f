"""End-of-run reports: the real numbers at the moment a run crashed, was overloaded or was won."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .frozen import quick_init
from .modes import MIXED
from .pieces import Kind
from .rules import QUEUE_MAX

Cell = tuple[int, int]


OUTCOMES = ("oom", "overload", "victory")

# The fields a report of a contiguous run counts from its final board (engine.reach's flood of
# every reachable placement): a report made by RunReport.counted() counts them when one is
# first read, since most reports (bots, benchmarks, replay checks) never read them.
COUNTED: tuple[str, ...] = ("cause", "sealed_holes", "fragmentation", "usable_blocks",
                            "open_unusable", "sealed_cells")


class _Counted:
    """What lets a report count its COUNTED fields when one is first read: the counting
    function, kept until then."""

    __slots__ = ("_count",)

    if not TYPE_CHECKING:  # (for the type checker every field is an attribute as it is)
        def __getattr__(self, name: str) -> Any:
            # Only reached for a field not stored yet (an unset slot).
            if name in COUNTED:
                try:
                    count = object.__getattribute__(self, "_count")
                except AttributeError:
                    pass
                else:
                    for field, value in zip(COUNTED, count()):
                        object.__setattr__(self, field, value)
                    object.__delattr__(self, "_count")
                    return object.__getattribute__(self, name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


@quick_init
@dataclass(frozen=True, slots=True)
class RunReport(_Counted):
    """How a run ended, with the figures of that moment. Equal reports have equal fields,
    however they were made (RunReport(...) or RunReport.counted())."""

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
    peak_resident: int = 0  # the most requests running at once, over the run
    waiting: int = 0  # requests in the queue at the end
    queue_max: int = QUEUE_MAX  # the most that could wait (a chapter may allow more)
    waited_ms: float = 0.0  # how long the refused request had waited
    preempted_swap: int = 0
    preempted_recompute: int = 0
    reserved_wasted: int = 0  # reserved blocks never filled, over the run
    mixed: bool = False  # the allocator changed after the run started
    modes_used: tuple[str, ...] = ()  # allocators in the order the run used them
    goal: str = "serve"
    goal_requests: int = 300  # what a "serve" run had to serve (rules.GOAL_REQUESTS; a chapter's own)
    sealed_cells: tuple[Cell, ...] = ()  # board cells, for the report's BOARD view
    reserved_cells: tuple[Cell, ...] = ()
    # Prefix caching and chunked prefill (rules 4's switches; None or 0 without them):
    prefix_hit_rate: float | None = None  # shared-prefix blocks found cached, of those asked for
    prefill_skipped: int = 0  # context tokens found cached, not prefilled
    reused_tokens: int = 0  # of those, found by requests back from a preemption
    prefix_copies: int = 0  # contiguous: shared-prefix blocks copied while the prefix ran
    ttft_ms_mean: float | None = None  # time to first token, from arrival
    ttft_ms_max: float | None = None
    budget: int | None = None  # the step's token budget at the end
    prefilling_ms: float = 0.0  # how long the timed-out request had been prefilling (0: it had not begun)

    @classmethod
    def counted(cls, count: Callable[[], tuple[Any, ...]], **fields: Any) -> RunReport:
        """A report of `fields` (every field but the COUNTED ones) whose COUNTED fields are
        count()'s values, in that order, computed when one of them is first read."""
        if fields.keys() != _UNCOUNTED:
            raise TypeError("RunReport.counted() takes every field but the counted ones")
        report = object.__new__(cls)
        for name, value in fields.items():
            _SET[name](report, value)
        _SET["_count"](report, count)
        return report

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
            f"requests served: {self.requests_served}   running: {self.resident} (peak "
            f"{self.peak_resident})   waiting: {self.waiting}",
            f"preemptions: {self.preempted_swap} swap, {self.preempted_recompute} recompute",
            f"tokens served: {self.tokens}   score: {self.score}   uptime: "
            f"{self.time_ms / 1000:.1f} s",
            f"allocator: {self.allocator_text()}",
        ]
        return out


# What RunReport.counted() stores a field with (its slot, written directly: the report is
# frozen) and the fields it takes.
_SET: dict[str, Callable[[RunReport, Any], None]] = {
    name: getattr(RunReport, name).__set__ for name in (*RunReport.__dataclass_fields__, "_count")}
_UNCOUNTED = frozenset(RunReport.__dataclass_fields__.keys() - set(COUNTED))
