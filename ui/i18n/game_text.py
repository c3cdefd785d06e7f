"""The engine's facts in the player's language: log lines for events, the run report, mode names.

The engine writes its own English (`event.text`, `RunReport.lines_of_text()`) for bots, tools and
tests; the screen builds its words here from the same fields, so both languages say the same
thing. An event this module does not know yet is shown with the engine's English text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine import PIECES, modes, torch_oom
from engine import events as ev
from engine import rules as R
from engine.reports import RunReport
from ui.i18n import Catalogue, Msg


def mode_label(tr: Catalogue, name: str) -> str:
    key = f"mode.{name}.label"
    if tr.has(key):
        return tr.t(key)
    return modes.get(name).label if name in modes.NAMES else name


def mode_name(tr: Catalogue, name: str) -> str:
    """The mode as running text names it ("contiguous" in English, as saves and reports do)."""
    key = f"mode.{name}.name"
    return tr.t(key) if tr.has(key) else name


def goal_name(tr: Catalogue, goal: str) -> str:
    """A run's goal as running text: "serve 300" (rules.GOAL_REQUESTS) or "endless"."""
    key = f"title.goal.{goal}"
    return tr.t(key, requests=tr.num(R.GOAL_REQUESTS)) if tr.has(key) else goal


def mode_note(tr: Catalogue, name: str) -> str:
    key = f"mode.{name}.note"
    return tr.t(key) if tr.has(key) else modes.get(name).note


def mode_summary(tr: Catalogue, name: str) -> str:
    key = f"mode.{name}.summary"
    return tr.t(key) if tr.has(key) else modes.get(name).summary


def _req(request_id: int, kind) -> Msg:
    return Msg.of("log.req", id=request_id, name=PIECES[kind].name)


def _percent(text: str) -> str | None:
    m = re.search(r"(\d+(?:\.\d+)?) ?%", text)
    return m.group(1) if m else None



def event_message(event: ev.Event, fragments: bool = True) -> Msg | str:
    """The system-log line for an engine event, to be translated when it is drawn.

    `fragments`: the allocator the event happened under can leave free blocks out of reach
    (contiguous). Under one that cannot (paged) no line ever speaks of external fragmentation.
    """
    if isinstance(event, ev.Spawned):
        return Msg.of("log.spawned", req=_req(event.request_id, event.kind))
    if isinstance(event, ev.Arrived):
        return Msg.of("log.arrived", req=_req(event.request_id, event.kind), tokens=event.prompt,
                      blocks=R.blocks_for(event.prompt), waiting=event.waiting, max=event.queue_max)
    if isinstance(event, ev.Locked):
        r = event.result
        if r.holes_sealed and fragments:
            return Msg.of("log.locked_sealed", req=_req(r.request_id, r.kind), sealed=r.holes_sealed)
        return Msg.of("log.locked", req=_req(r.request_id, r.kind))
    if isinstance(event, ev.Admitted):
        return _admitted(event)
    if isinstance(event, ev.Grew):
        return Msg.of("log.grew", req=_req(event.request_id, event.kind), page=event.page,
                      cell=ev.cell_text(event.cell))
    if isinstance(event, ev.Finished):
        key = "log.finished_wasted" if event.wasted else "log.finished"
        return Msg.of(key, req=_req(event.request_id, event.kind), tokens=event.tokens,
                      blocks=len(event.cells), wasted=event.wasted)
    if isinstance(event, ev.Preempted):
        req = _req(event.request_id, event.kind)
        if event.how == "swap":
            return Msg.of("log.preempted_swap", req=req, blocks=len(event.cells))
        key = "log.preempted_cpu_full" if event.asked == "swap" else "log.preempted_recompute"
        return Msg.of(key, req=req, tokens=event.generated, blocks=len(event.cells))
    if isinstance(event, ev.PreemptModeSwitched):
        return Msg.of("log.preempt_mode", mode=Msg.of(f"log.preempt.{event.mode}"))
    if isinstance(event, ev.PageSplit):
        bt = event.block_table
        cells = " ".join(f"{p}->{ev.cell_text(c)}" for p, c in bt.entries)
        return Msg.of("log.paged" if event.auto else "log.split", req=_req(bt.request_id, bt.kind),
                      pages=len(bt.entries), holes=event.holes_filled, cells=cells)
    if isinstance(event, ev.ModeSwitched):
        return Msg.of("log.mode", label=Msg.of(f"mode.{event.mode}.label"),
                      summary=Msg.of(f"mode.{event.mode}.summary"))
    if isinstance(event, ev.Held):
        if event.swapped_in is not None:
            return Msg.of("log.held_back", name=PIECES[event.kind].name, back=PIECES[event.swapped_in].name)
        return Msg.of("log.held", name=PIECES[event.kind].name)
    if isinstance(event, ev.LevelUp):
        return Msg.of("log.level", level=event.level_now)
    if isinstance(event, ev.Oom):
        crash = event.report
        return Msg.of("log.oom", name=crash.request_name, id=crash.request_id, cause=log_cause(crash))
    if isinstance(event, ev.Overloaded):
        over = event.report
        if over.cause_code == "deadline":
            return Msg.of("log.overload_deadline", id=over.request_id, name=over.request_name,
                          waited=round(over.waited_ms / 1000), deadline=round(R.DEADLINE_MS / 1000),
                          need=over.need, free=over.free_cells)
        return Msg.of("log.overload_queue", waiting=over.waiting, max=over.queue_max, running=over.resident,
                      free=over.free_cells)
    if isinstance(event, ev.Victory):
        return Msg.of("log.victory", served=event.report.requests_served, tokens=event.report.tokens)
    if isinstance(event, ev.Alert):
        return _warning(event)
    if isinstance(event, ev.Picked):
        return Msg.of("log.picked", req=_req(event.request_id, event.kind), place=event.place + 1)
    if isinstance(event, ev.BudgetSet):  # at either end of the choices, the log says it is the end
        end = "_most" if event.budget == max(R.BUDGETS) else "_least" if event.budget == min(R.BUDGETS) else ""
        return Msg.of(f"log.budget{end}", budget=event.budget)
    if isinstance(event, ev.SpecSet):
        if not event.k:
            return Msg.of("log.spec_off")
        return Msg.of("log.spec_most" if event.k == max(R.SPEC_KS) else "log.spec", k=event.k)
    return event.text


def _admitted(event: ev.Admitted) -> Msg:
    t = event.table
    kept = event.context_blocks
    how = event.how if event.how in ("whole", "split", "on_demand") else "whole"
    extra: Msg | str = ""
    if t.reserved:
        extra = Msg.of("log.admitted_reserved", reserved=t.reserved)
    elif event.resumed:
        extra = Msg.of(f"log.admitted_resumed.{event.resumed}")
    elif event.cached:
        extra = Msg.of("log.admitted_cached", cached=event.cached)
    tail = (Msg.of("log.admitted_chunked") if event.chunked
            else Msg.of("log.admitted_stall", stall=round(event.stall_ms)))
    return Msg.of(f"log.admitted.{how}", req=_req(t.request_id, t.kind), blocks=kept, extra=extra,
                  tail=tail)


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def _warning(event: ev.Alert) -> Msg | str:
    percent = _percent(event.message)
    m = re.search(r"req#(\d+)", event.message)
    rid = int(m.group(1)) if m else 0
    if event.code == "hold_used":
        return Msg.of("log.warn.hold_used")
    if event.code == "vram_high" and percent is not None:
        return Msg.of("log.warn.vram_high", percent=Msg.of("fmt.percent", value=percent))
    if event.code == "split_refused":
        mode = re.search(r"the (\w+) allocator", event.message)
        if mode and mode.group(1) in modes.NAMES:
            return Msg.of("log.warn.split_refused", mode=Msg.of(f"mode.{mode.group(1)}.name"), id=rid)
    if event.code == "waiting_whole" and m:
        return Msg.of("log.warn.waiting_whole", id=rid)
    if event.code in ("waiting_memory", "split_no_room") and m:
        nums = _numbers(event.message[m.end():])
        if len(nums) >= 2:
            return Msg.of(f"log.warn.{event.code}", id=rid, need=nums[0], free=nums[1])
    return event.text


# ---------------------------------------------------------------- the run report
# Everything below reads one RunReport: the cause, the facts and the tip quote the same fields,
# so their numbers agree (free, need, sealed, waiting, ...).

# The PagedAttention paper's measurements the texts quote (Kwon et al., SOSP 2023): how many more
# requests paging runs at once, its waste, the share of KV memory contiguous systems waste, the
# tokens of a ShareGPT request's blocks and the paper's maximum sequence length.
PAPER: dict[str, tuple[int, ...]] = {"concurrency": (2, 4), "paged_waste": (4,), "contiguous_waste": (60, 80),
                                     "sharegpt_blocks": (30,), "max_length": (2048,)}

HEADINGS = {"oom": "report.oom", "overload": "report.overload", "victory": "report.victory"}
NEAR_FULL = R.VRAM_WARN  # utilisation at which a queue that overflowed is a memory problem


# The forms of PyTorch's message a report can show, longest first: after the exception's name or
# not, and which parts (engine.torch_oom.PARTS). The report shows the first that fits its screen.
# Every form keeps what was tried, what was free, what was held in pieces and the word
# fragmentation; none shows the documentation's address.
PYTORCH_FORMS: tuple[tuple[bool, tuple[str, ...]], ...] = (
    (True, ("head", "capacity", "free", "process", "allocated", "unallocated", "hint", "avoid")),
    (True, ("head", "capacity", "free", "allocated", "unallocated", "hint", "avoid")),
    (True, ("head", "capacity", "free", "unallocated", "hint", "avoid")),
    (False, ("head", "free", "unallocated", "hint", "avoid")),
    (True, ("head", "capacity", "free", "unallocated", "avoid")),
    (False, ("head", "free", "unallocated", "avoid")),
)


@dataclass(frozen=True)
class PytorchText:
    """A contiguous OOM as PyTorch would report it: what the scale is, the message, what engines do now."""

    captions: tuple[str, ...]  # the scale the figures are at, in words: the fuller first
    forms: tuple[str, ...]  # the message (PyTorch's English in every language), fullest first
    note: str  # serving engines pre-allocate their KV pool and queue requests instead


@dataclass(frozen=True)
class ReportText:
    """The run report in one language: what the report screen draws, line by line."""

    heading: str
    cause: str
    memory: str  # the refused request against free memory ("" for a victory)
    facts: tuple[tuple[str, str], ...]  # (label, value) pairs, in reading order
    tip: str
    pytorch: PytorchText | None = None  # a contiguous OOM's message in PyTorch


def _paged(report: RunReport) -> bool:
    return not modes.get(report.mode).allocator.external_fragmentation


def _req_text(report: RunReport) -> Msg:
    return Msg.of("log.req", id=report.request_id, name=report.request_name)


STALLED_SHARE = 0.5  # a timed-out request that spent this share of its wait prefilling was starved of budget


def prefill_stalled(r: RunReport) -> bool:
    """Whether the request that timed out spent most of its wait admitted, its prompt still
    prefilling while memory had room: the step's token budget, not the queue, kept it waiting."""
    return (r.cause_code == "deadline" and r.prefilling_ms >= STALLED_SHARE * R.DEADLINE_MS
            and r.free_cells >= r.need)


def cause_message(report: RunReport) -> Msg:
    """Why the run ended, from the report's numbers (the same ones its other lines show)."""
    r = report
    code = r.cause_code
    req = _req_text(r)
    if r.outcome == "victory":
        return Msg.of("cause.victory", served=r.requests_served, tokens=r.tokens)
    if code == "queue_full":
        return Msg.of("cause.queue_full", waiting=r.waiting, most=r.queue_max, free=r.free_cells,
                      running=r.resident)
    if code == "deadline" and prefill_stalled(r):
        return Msg.of("cause.deadline_prefill", req=req, seconds=round(r.waited_ms / 1000),
                      deadline=round(R.DEADLINE_MS / 1000), budget=r.budget or 0)
    if code == "deadline" and _paged(r) and r.free_cells >= r.need:  # memory had room: it was not placed in time
        return Msg.of("cause.deadline_unplaced", req=req, seconds=round(r.waited_ms / 1000),
                      deadline=round(R.DEADLINE_MS / 1000), need=r.need, free=r.free_cells)
    if code == "deadline":
        return Msg.of("cause.deadline", req=req, seconds=round(r.waited_ms / 1000),
                      deadline=round(R.DEADLINE_MS / 1000), need=r.need, free=r.free_cells)
    if code == "memory_full":
        if _paged(r):
            return Msg.of("cause.memory_full_paged", req=req, need=r.need, free=r.free_cells,
                          seconds=round(r.waited_ms / 1000))
        return Msg.of("cause.memory_full", req=req, need=r.need, free=r.free_cells)
    if code == "no_free_range":
        return Msg.of("cause.no_free_range", req=req, free=r.free_cells, sealed=r.sealed_holes,
                      open=r.open_unusable)
    if code == "ceiling":
        return Msg.of("cause.ceiling", req=req, free=r.free_cells, sealed=r.sealed_holes)
    return Msg.of("cause.spawn_blocked", req=req, free=r.free_cells, sealed=r.sealed_holes)


def log_cause(report: RunReport) -> Msg:
    """A CUDA OOM's cause as its log line words it: the line names the request, the cause does not."""
    said = cause_message(report)
    return Msg(f"log.{said.key}", tuple(p for p in said.params if p[0] != "req"))


def memory_line(report: RunReport, tr: Catalogue) -> str:
    """The refused (or timed-out) request's need against the free blocks, split by reach."""
    r = report
    if r.outcome == "victory":
        return tr.t("report.memory_victory", peak=tr.pct(r.peak_utilisation), free=r.free_cells)
    req = tr.msg(_req_text(r))
    if _paged(r):
        return tr.t("report.memory_paged", req=req, need=r.need, free=r.free_cells)
    return tr.t("report.memory_contiguous", req=req, need=r.need, free=r.free_cells, usable=r.usable_blocks,
                sealed=r.sealed_holes, open=r.open_unusable)


def allocator_text(report: RunReport, tr: Catalogue) -> str:
    if report.mixed:
        return tr.t("report.allocator_mixed", modes=" -> ".join(mode_name(tr, m) for m in report.modes_used))
    return mode_name(tr, report.mode)


def report_facts(report: RunReport, tr: Catalogue) -> list[tuple[str, str]]:
    """The run's numbers as (label, value) pairs: time, work done, the end state, waste, allocator."""
    r = report
    served = tr.num(r.requests_served)
    if r.goal == "serve":  # requests finishing in the goal's own step can take it past the goal
        key = "report.value.past_goal" if r.requests_served > r.goal_requests else "report.value.of_goal"
        served = tr.t(key, n=served, goal=tr.num(r.goal_requests))
    return [
        (tr.t("report.fact.minutes"), tr.t("report.value.minutes", value=f"{r.minutes:.1f}")),
        (tr.t("report.fact.served"), served),
        (tr.t("report.fact.tokens"), tr.num(r.tokens)),
        (tr.t("report.fact.end_state"), tr.t("report.value.running", now=r.resident, waiting=r.waiting,
                                             most=r.peak_resident)),
        (tr.t("report.fact.preemptions"), tr.t("report.value.pair", a=r.preempted_swap, b=r.preempted_recompute)),
        (tr.t("report.fact.waste"), tr.blocks(r.reserved_wasted)),
        (tr.t("report.fact.vram"), tr.t("report.value.vram", percent=tr.pct(r.utilisation),
                                        reserved=r.reserved_blocks)),
        (tr.t("report.fact.allocator"), allocator_text(r, tr)),
        *serving_facts(r, tr),
    ]


def serving_facts(report: RunReport, tr: Catalogue) -> list[tuple[str, str]]:
    """What prefix caching and chunked prefill did, for a run that had them."""
    r = report
    out: list[tuple[str, str]] = []
    if r.prefix_hit_rate is not None:
        out.append((tr.t("report.fact.prefix_cache"),
                    tr.t("report.value.prefix_cache", percent=tr.pct(r.prefix_hit_rate),
                         tokens=r.prefill_skipped)))
    elif r.prefix_copies:
        out.append((tr.t("report.fact.prefix_copies"), tr.blocks(r.prefix_copies)))
    if r.ttft_ms_mean is not None and r.ttft_ms_max is not None:
        out.append((tr.t("report.fact.ttft"), tr.t("report.value.ttft", mean=r.ttft_ms_mean / 1000,
                                                   worst=r.ttft_ms_max / 1000)))
    return out


def pytorch_text(report: RunReport, tr: Catalogue) -> PytorchText | None:
    """What PyTorch would print for this crash at the scale of engine.torch_oom; None unless it was
    a contiguous OOM."""
    oom = torch_oom.for_report(report)
    if oom is None:
        return None
    size = torch_oom.format_size(torch_oom.block_bytes(1))
    captions = (tr.t("report.pytorch.caption", model=torch_oom.MODEL_NAME, gpu=torch_oom.GPU_NAME, size=size),
                tr.t("report.pytorch.caption_short", size=size))
    return PytorchText(captions, tuple(oom.text(parts, exception) for exception, parts in PYTORCH_FORMS),
                       tr.t("report.pytorch.engines"))


def report_text(report: RunReport, tr: Catalogue, touch: bool = False) -> ReportText:
    """The whole run report in `tr`'s language (`touch`: the controls it names are buttons)."""
    return ReportText(tr.t(HEADINGS[report.outcome]), tr.msg(cause_message(report)), memory_line(report, tr),
                      tuple(report_facts(report, tr)), tip(report, tr, touch), pytorch_text(report, tr))


def report_lines(report: RunReport, tr: Catalogue) -> list[str]:
    """The run report as plain lines: heading, cause, memory, then "label: value" per fact."""
    text = report_text(report, tr)
    return [text.heading, text.cause, text.memory,
            *(tr.t("report.fact_line", label=label, value=value) for label, value in text.facts),
            tr.t("report.score", score=tr.num(report.score))]


BUTTON_LABELS = {"board": "report.board", "split": "control.split",  # what a phone's buttons say
                 "drop": "control.short.hard_drop"}


def control(name: str, key: str, tr: Catalogue, touch: bool) -> str:
    """A control as a tip names it: "BOARD (B)" at a keyboard, the button's own label on a touch screen."""
    return tr.t(BUTTON_LABELS[name]) if touch else tr.t(f"tip.name.{name}", key=key)


def tip(report: RunReport, tr: Catalogue, touch: bool = False) -> str:
    """What to take away: the honest lesson of the cause the engine found, with its numbers."""
    from ui.keys import BOARD_KEY, SPLIT_KEY, key_hint  # the key table imports pygame: only when a tip is worded

    r = report
    code = r.cause_code
    paged = _paged(r)
    if r.outcome == "victory":
        return tr.t("tip.victory", served=tr.num(r.requests_served), minutes=f"{r.minutes:.1f}",
                    peak=tr.pct(r.peak_utilisation), wasted=r.reserved_wasted)
    short = r.free_cells < r.need  # memory really was short of what the request needed
    if r.outcome == "oom":
        if paged:
            return tr.t("tip.paged_full", free=r.free_cells, need=r.need,
                        deadline=round(R.DEADLINE_MS / 1000))
        if r.sealed_holes >= R.BLOCKS_PER_REQUEST:  # external fragmentation cost the run
            return tr.t("tip.sealed", sealed=r.sealed_holes, board=control("board", BOARD_KEY, tr, touch))
        if code == "memory_full":
            return tr.t("tip.memory_full", free=r.free_cells, need=r.need, reserved=r.reserved_blocks)
        if r.usable_blocks >= r.need:  # the player's placement, not the memory, ended it
            return tr.t("tip.ceiling_reach" if code == "ceiling" else "tip.spawn_blocked",
                        usable=r.usable_blocks)
        return tr.t("tip.gaps", free=r.free_cells, open=r.open_unusable, sealed=r.sealed_holes)
    if code == "queue_full":
        if r.utilisation >= NEAR_FULL or short:
            return tr.t("tip.queue_full_memory", percent=tr.pct(r.utilisation), swap=r.preempted_swap,
                        recompute=r.preempted_recompute)
        if not paged and r.reserved_blocks >= r.free_cells // 2:
            low, high = PAPER["concurrency"]
            return tr.t("tip.queue_full_reserved", reserved=r.reserved_blocks, low=low, high=high)
        if paged:
            return tr.t("tip.queue_full_split", free=r.free_cells, waiting=r.waiting,
                        split=control("split", SPLIT_KEY, tr, touch))
        return tr.t("tip.queue_full_slow", free=r.free_cells, waiting=r.waiting)
    if code == "deadline" and prefill_stalled(r):
        how = (tr.t("control.raise_budget.touch") if touch
               else tr.t("control.raise_budget.keys", key=key_hint("budget_up", 1)))
        return tr.t("tip.deadline_prefill", budget=r.budget or 0, how=how)
    if short:
        if paged:
            return tr.t("tip.deadline_memory", free=r.free_cells, need=r.need)
        return tr.t("tip.memory_full", free=r.free_cells, need=r.need, reserved=r.reserved_blocks)
    if paged:
        return tr.t("tip.deadline_split", free=r.free_cells, split=control("split", SPLIT_KEY, tr, touch),
                    drop=control("drop", key_hint("hard_drop", 1), tr, touch))
    return tr.t("tip.deadline_slow", free=r.free_cells, req=tr.msg(_req_text(r)))
