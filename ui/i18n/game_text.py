"""The engine's facts in the player's language: log lines for events, the run report, mode names.

The engine writes its own English (`event.text`, `RunReport.lines_of_text()`) for bots, tools and
tests; the screen builds its words here from the same fields, so both languages say the same
thing. An event this module does not know yet is shown with the engine's English text.
"""
from __future__ import annotations

import re

from engine import PIECES, modes
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
                      blocks=R.blocks_for(event.prompt), waiting=event.waiting, max=R.QUEUE_MAX)
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
        cells = ", ".join(f"{p}->{ev.cell_text(c)}" for p, c in bt.entries)
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
        return Msg.of("log.oom", name=crash.request_name, id=crash.request_id, cause=cause_message(crash))
    if isinstance(event, ev.Overloaded):
        over = event.report
        if over.cause_code == "deadline":
            return Msg.of("log.overload_deadline", id=over.request_id, name=over.request_name,
                          waited=round(over.waited_ms / 1000), deadline=round(R.DEADLINE_MS / 1000),
                          need=over.need, free=over.free_cells)
        return Msg.of("log.overload_queue", waiting=over.waiting, max=R.QUEUE_MAX, running=over.resident,
                      free=over.free_cells)
    if isinstance(event, ev.Victory):
        return Msg.of("log.victory", served=event.report.requests_served, tokens=event.report.tokens)
    if isinstance(event, ev.Alert):
        return _warning(event)
    return event.text


def _admitted(event: ev.Admitted) -> Msg:
    t = event.table
    kept = len(t.entries) - t.reserved
    how = event.how if event.how in ("whole", "split", "on_demand") else "whole"
    extra: Msg | str = ""
    if t.reserved:
        extra = Msg.of("log.admitted_reserved", reserved=t.reserved)
    elif event.resumed:
        extra = Msg.of(f"log.admitted_resumed.{event.resumed}")
    return Msg.of(f"log.admitted.{how}", req=_req(t.request_id, t.kind), blocks=kept, extra=extra,
                  stall=round(event.stall_ms))


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


def cause_message(report: RunReport) -> Msg:
    """Why the run ended, from the report's numbers (engine.memory.cause_text's sentence)."""
    code = report.cause_code
    if report.outcome != "oom" or code == "victory":
        return Msg.of("cause.victory", lines=report.lines, served=report.requests_served,
                      tokens=report.tokens)
    if code == "memory_full":
        return Msg.of("cause.memory_full", free=report.free_cells, need=R.BLOCKS_PER_REQUEST)
    if code == "no_free_range":
        return Msg.of("cause.no_free_range", free=report.free_cells)
    if code == "ceiling":
        return Msg.of("cause.ceiling", free=report.free_cells)
    return Msg.of("cause.spawn_blocked", free=report.free_cells, usable=report.usable_blocks)


def report_lines(report: RunReport, tr: Catalogue) -> list[str]:
    """The run report in `tr`'s language: heading, cause, then the breakdown lines."""
    r = report
    if r.mixed:
        allocator = tr.t("report.allocator_mixed",
                         modes=" -> ".join(mode_name(tr, m) for m in r.modes_used))
    else:
        allocator = mode_name(tr, r.mode)
    counts = tr.t("report.counts", pieces=tr.num(r.pieces), lines=tr.num(r.lines), tokens=tr.num(r.tokens))
    score = tr.t("report.score_uptime", score=tr.num(r.score), uptime=tr.seconds(r.time_ms))
    if r.outcome == "oom":
        return [
            tr.t("report.oom"),
            tr.msg(cause_message(r)),
            tr.t("report.failed", id=r.request_id, name=r.request_name),
            tr.t("report.vram_at_crash", percent=tr.pct(r.utilisation, 1), reserved=r.reserved_blocks),
            tr.t("report.free_breakdown", free=r.free_cells, usable=r.usable_blocks, sealed=r.sealed_holes,
                 open=r.open_unusable),
            tr.t("report.finished_holding", served=r.requests_served, resident=r.resident),
            counts,
            score,
            tr.t("report.allocator", allocator=allocator),
        ]
    return [
        tr.t("report.victory"),
        tr.msg(cause_message(r)),
        tr.t("report.finished_end", served=r.requests_served, resident=r.resident),
        tr.t("report.peak", peak=tr.pct(r.peak_utilisation, 1), frag=tr.pct(r.fragmentation, 1)),
        counts,
        score,
        tr.t("report.allocator", allocator=allocator),
    ]


def tip(report: RunReport, tr: Catalogue) -> str:
    """What to take away, matching the cause the engine found."""
    if report.outcome != "oom":
        return tr.t("tip.victory", lines=report.lines, peak=tr.pct(report.peak_utilisation))
    if report.cause_code in ("memory_full", "no_free_range", "spawn_blocked"):
        return tr.t(f"tip.{report.cause_code}")
    paged = tr.t("tip.paged_ceiling")
    if report.usable_blocks >= R.BLOCKS_PER_REQUEST:  # the player stacked one spot, memory was not short
        return tr.t("tip.ceiling_tall", usable=report.usable_blocks, paged=paged)
    return tr.t("tip.ceiling", paged=paged)
