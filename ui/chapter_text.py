"""The words of the chapters: an intro's lines, and an outro's rows of the player's own figures
beside the published ones.

The figures come from the engine (engine.outro reads a run; the run report says what sealed off
its memory); the published ones are below, with where each comes from, never typed into the
catalogue. Chapter 2 sets its run beside the same player's chapter-1 run (`Pair`, kept in the
settings), read at the moment that run ended.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine import rules as R
from engine.chapters import CHAPTERS, Chapter
from engine.outro import Figures, Moment
from engine.reports import RunReport
from ui.i18n import Catalogue
from ui.i18n.game_text import PAPER
from ui.keys import BUDGET_KEYS, PICK_KEY, SPEC_KEYS, SPLIT_KEY, key_hint

# Published figures an outro quotes (besides the paper's own in PAPER):
# - the share of KV memory holding tokens in contiguous systems: PagedAttention paper, Fig. 2
#   (20.4 % to 38.2 %);
# - throughput with a shared one-shot / five-shot prefix against Orca (Oracle): paper, sec. 6.4;
# - serving capacity with chunked prefills under latency limits, Mistral-7B on one A100:
#   Agrawal et al., Sarathi-Serve, OSDI 2024;
# - `vllm serve`'s step budget (max_num_batched_tokens) on most GPUs and on the largest;
# - speculative decoding's tokens a step (acceptance length, tree drafts) and speedup over plain
#   decoding: EAGLE (Li et al., ICML 2024), Table 1, 3.29 to 4.52 tokens and 2.29x to 3.76x on
#   HumanEval, GSM8K and Alpaca.
# A published figure measured in the player's own units stands under the player's figure as
# "published: ..."; one in other units (a throughput ratio against another system) is a sentence
# of its own, so that no ratio reads as a comparison with a count.
CONTIGUOUS_TOKENS = (20, 38)
PREFIX_THROUGHPUT = ("1.67", "3.58")
SARATHI_CAPACITY = "2.6"
VLLM_BUDGET = (2048, 8192)
EAGLE_STEP_TOKENS = ("3.29", "4.52")
EAGLE_SPEEDUP = ("2.29", "3.76")


@dataclass(frozen=True)
class Pair:
    """The chapter-1 run chapter 2 replays: its seed, when it ended, and then the requests
    running, the share of VRAM held and of memory wasted, and the tokens it served."""

    seed: int
    end_ms: float
    running: int
    held: float
    waste: float
    tokens: int
    served: int

    def to_saved(self) -> dict[str, int]:
        return {"seed": self.seed, "end_ms": round(self.end_ms), "running": self.running,
                "held": round(self.held * 1000), "waste": round(self.waste * 1000), "tokens": self.tokens,
                "served": self.served}

    @classmethod
    def from_saved(cls, saved: dict[str, int]) -> Pair | None:
        """The pair a save holds; None when it holds none (no chapter-1 run yet)."""
        if not saved.get("end_ms"):
            return None
        return cls(saved.get("seed", 0), float(saved["end_ms"]), saved.get("running", 0),
                   saved.get("held", 0) / 1000, saved.get("waste", 0) / 1000, saved.get("tokens", 0),
                   saved.get("served", 0))


@dataclass(frozen=True)
class Row:
    """One line of an outro: what, the player's figure, and under it the published one (or, in
    chapter 2, both runs side by side)."""

    label: str
    value: str
    notes: tuple[str, ...] = ()


def control(tr: Catalogue, ch: Chapter, touch: bool) -> str:
    """The one new control a chapter brings, as keys or as what a finger does."""
    if touch:
        return tr.t(f"chapter.{ch.key}.control_touch")
    return tr.t(f"chapter.{ch.key}.control", move=f"{key_hint('left', 1)}/{key_hint('right', 1)}",
                turn=key_hint("rotate_cw", 1), drop=key_hint("hard_drop", 1), split=SPLIT_KEY,
                pick_key=PICK_KEY, budget_keys=BUDGET_KEYS, spec_keys=SPEC_KEYS,
                budget_down=key_hint("budget_down", 1), budget_up=key_hint("budget_up", 1),
                spec_down=key_hint("spec_down", 1), spec_up=key_hint("spec_up", 1))


def goal_text(tr: Catalogue, ch: Chapter) -> str:
    if ch.goal is None:
        return tr.t("chapter.goal.endless")
    return tr.t("chapter.goal.bar" if ch.plays_on else "chapter.goal.serve", goal=tr.num(ch.goal))


def intro_lines(tr: Catalogue, ch: Chapter, touch: bool) -> list[tuple[str, str]]:
    """An intro's parts in order, each (role, text): the count, the name, what happens, the new
    control, the goal, and for chapter 2 that its requests are chapter 1's."""
    parts = [("of", tr.t("chapter.intro.of", n=ch.number, total=len(CHAPTERS))),
             ("name", tr.t(f"chapter.{ch.key}.name")),
             ("intro", tr.t(f"chapter.{ch.key}.intro")),
             ("new", tr.t("chapter.intro.new", control=control(tr, ch, touch))),
             ("goal", tr.t("chapter.intro.goal", goal=goal_text(tr, ch)))]
    if ch.arrivals_of is not None:
        parts.append(("note", tr.t("chapter.same_arrivals")))
    if ch.number == 1:  # the first run: every way it can end
        parts.append(("note", tr.t("chapter.lose_note", max=ch.queue_max, deadline=round(R.DEADLINE_MS / 1000))))
    return parts


def _published(tr: Catalogue, value: str, source: str) -> str:
    return tr.t("chapter.outro.published", figure=value, source=tr.t(source))


def _under(tr: Catalogue) -> str:
    """The paper's waste under paging: "under 4 %"."""
    return tr.t("chapter.under", percent=tr.t("fmt.percent", value=PAPER["paged_waste"][0]))


def _range(tr: Catalogue, low: object, high: object) -> str:
    return tr.t("fmt.range", low=low, high=high)


def _seconds(tr: Catalogue, value: float | None) -> str:
    return "-" if value is None else tr.t("fmt.seconds", value=f"{value:.1f}")


def clock(ms: float) -> str:
    """Game time as m:ss."""
    s = int(ms // 1000)
    return f"{s // 60}:{s % 60:02d}"


LITTLE_LOST = 0.3  # reservations and sealed-off blocks under this share of VRAM did not end a run
ROOM_LEFT = 0.25  # a paged run overloaded with this share of VRAM free fell behind, not out of memory


def ended(tr: Catalogue, report: RunReport | None) -> str:
    """Why a chapter's run ended, as its run report says it ("" for one that met its goal and stopped)."""
    if report is None or report.outcome == "victory":
        return ""
    from ui.i18n.game_text import cause_message
    return tr.t("chapter.outro.ended", cause=tr.msg(cause_message(report)))


def meaning(tr: Catalogue, ch: Chapter, report: RunReport | None, fig: Figures,
            pair: Pair | None = None, moment: Moment | None = None) -> str:
    """What the run means, in one line: for chapter 1, by what ended it (reservations and holes,
    the place a request landed while memory was mostly free, or requests that waited too long);
    for chapter 2 beside chapter 1's run, how many times the requests it ran at that moment; for
    a paged run whose queue filled while memory stood free, that SPLIT would have admitted them."""
    if ch.arrivals_of is not None and pair is not None and moment is not None and moment.running \
            and pair.running and moment.running > pair.running:
        return tr.t("chapter.pages.meaning_pair", ratio=f"{moment.running / pair.running:.1f}")
    if ch.mode == "paged" and report is not None and report.outcome == "overload" \
            and report.free_cells >= ROOM_LEFT * R.VISIBLE_CELLS:
        from ui.i18n.game_text import prefill_stalled
        if report.cause_code == "queue_full":
            return tr.t("chapter.paged.meaning_queue", free=tr.num(report.free_cells))
        if not prefill_stalled(report):  # (a prefill starved of budget: the report's tip says so)
            return tr.t("chapter.paged.meaning_wait", free=tr.num(report.free_cells),
                        deadline=round(R.DEADLINE_MS / 1000))
    if ch.adds == "contiguous" and report is not None:
        if report.outcome == "overload":
            return tr.t("chapter.reserve.meaning_waited")
        lost = (fig.sealed + fig.reserved) / R.VISIBLE_CELLS
        if report.outcome == "oom" and report.usable_blocks >= report.need and lost < LITTLE_LOST:
            return tr.t("chapter.reserve.meaning_placed")
    return tr.t(f"chapter.{ch.key}.meaning")


def heading(tr: Catalogue, ch: Chapter, served: int, won: bool) -> str:
    if ch.goal is None:
        return tr.t("chapter.outro.over", n=ch.number)
    return tr.t("chapter.outro.met" if ch.met(served, won) else "chapter.outro.missed", n=ch.number)


def summary(tr: Catalogue, ch: Chapter, fig: Figures, score: int) -> str:
    minutes = f"{fig.minutes:.1f}"
    if ch.goal is None:
        return tr.t("chapter.outro.endless", served=tr.num(fig.served), minutes=minutes, score=tr.num(score))
    return tr.t("chapter.outro.served_bar", served=tr.num(fig.served), goal=tr.num(ch.goal), minutes=minutes)


def outro_rows(tr: Catalogue, ch: Chapter, fig: Figures, report: RunReport | None,
               pair: Pair | None = None, moment: Moment | None = None) -> list[Row]:
    """The rows of a chapter's outro: the player's figures, each with the published one (or, in
    chapter 2, the chapter-1 run's beside it, read at the moment that run ended)."""
    pct = tr.pct
    if ch.adds == "contiguous":
        low, high = PAPER["contiguous_waste"]
        return [
            Row(tr.t("chapter.row.tokens_share"), pct(1.0 - fig.waste),
                (_published(tr, tr.t("fmt.percent", value=_range(tr, *CONTIGUOUS_TOKENS)), "chapter.src.fig2"),)),
            Row(tr.t("chapter.row.waste"), pct(fig.waste),
                (_published(tr, tr.t("fmt.percent", value=_range(tr, low, high)), "chapter.src.paper"),)),
            Row(tr.t("chapter.row.running_end"), tr.num(fig.running)),
            Row(tr.t("chapter.row.out_of_reach"), tr.num(fig.sealed)),
        ]
    if ch.adds == "paged":
        low, high = PAPER["concurrency"]
        waste_note = tr.t("chapter.outro.waste_note", blocks=R.BLOCKS_PER_REQUEST, paper=PAPER["sharegpt_blocks"][0])
        paper = _published(tr, _under(tr), "chapter.src.paper")
        if pair is None or moment is None or moment.running is None:
            return [Row(tr.t("chapter.row.waste"), pct(fig.waste), (paper, waste_note)),
                    Row(tr.t("chapter.row.tokens"), tr.num(fig.tokens),
                        (tr.t("chapter.context.throughput", low=low, high=high),))]

        def side(contiguous: str, paged: str) -> str:
            return tr.t("chapter.outro.then", contiguous=contiguous, paged=paged)

        def each(held: float, running: int) -> str:  # blocks a running request held, on average
            return f"{held * R.VISIBLE_CELLS / running:.1f}" if running else "-"

        return [
            Row(tr.t("chapter.row.running_then"), tr.num(moment.running),
                (side(tr.num(pair.running), tr.num(moment.running)),
                 _published(tr, f"{_range(tr, low, high)}x", "chapter.src.concurrency"))),
            Row(tr.t("chapter.row.held_then"), pct(moment.held),
                (side(pct(pair.held), pct(moment.held)),
                 tr.t("chapter.outro.blocks_each", contiguous=each(pair.held, pair.running),
                      paged=each(moment.held, moment.running)))),
            Row(tr.t("chapter.row.waste_then"), pct(moment.waste),
                (side(pct(pair.waste), pct(moment.waste)), paper, waste_note)),
            Row(tr.t("chapter.row.lasted"), clock(fig.minutes * 60_000.0),
                (side(clock(pair.end_ms), clock(fig.minutes * 60_000.0)),
                 tr.t("chapter.outro.tokens_pair", contiguous=tr.num(pair.tokens), paged=tr.num(fig.tokens)))),
        ]
    if ch.adds == "prefix_cache":
        per_minute = fig.tokens / fig.minutes if fig.minutes else 0.0
        return [
            Row(tr.t("chapter.row.hit_rate"), "-" if fig.hit_rate is None else pct(fig.hit_rate)),
            Row(tr.t("chapter.row.skipped"), tr.num(fig.skipped),
                (tr.t("chapter.context.prefix", one=PREFIX_THROUGHPUT[0], five=PREFIX_THROUGHPUT[1]),)),
            Row(tr.t("chapter.row.tokens_per_minute"), tr.num(round(per_minute))),
        ]
    if ch.adds == "chunked_prefill":
        return [
            Row(tr.t("chapter.row.ttft"), _seconds(tr, fig.ttft_s)),
            Row(tr.t("chapter.row.step"), _seconds(tr, fig.step_s),
                (tr.t("chapter.context.sarathi", times=SARATHI_CAPACITY),)),
            Row(tr.t("chapter.row.budget"), tr.t("fmt.tokens", n=fig.budget) if fig.budget else "-",
                (_published(tr, _range(tr, tr.num(VLLM_BUDGET[0]), tr.num(VLLM_BUDGET[1])),
                            "chapter.src.vllm_budget"),)),
        ]
    per_minute = fig.tokens / fig.minutes if fig.minutes else 0.0
    if ch.adds == "speculative":
        return [
            Row(tr.t("chapter.row.step_tokens"), "-" if fig.step_tokens is None else f"{fig.step_tokens:.2f}",
                (_published(tr, _range(tr, *EAGLE_STEP_TOKENS), "chapter.src.eagle"),
                 tr.t("chapter.context.eagle", low=EAGLE_SPEEDUP[0], high=EAGLE_SPEEDUP[1]))),
            Row(tr.t("chapter.row.tokens_per_minute"), tr.num(round(per_minute))),
            Row(tr.t("chapter.row.drafts"), "-" if fig.spec_k is None else tr.num(fig.spec_k)),
            Row(tr.t("chapter.row.preempted"), tr.num(fig.preempted)),
        ]
    low, high = PAPER["concurrency"]
    return [
        Row(tr.t("chapter.row.tokens_per_minute"), tr.num(round(per_minute)),
            (tr.t("chapter.context.throughput", low=low, high=high),)),
        Row(tr.t("chapter.row.peak_running"), tr.num(fig.peak_running)),
        Row(tr.t("chapter.row.waste"), pct(fig.waste), (_published(tr, _under(tr), "chapter.src.paper"),)),
        Row(tr.t("chapter.row.hit_rate"), "-" if fig.hit_rate is None else pct(fig.hit_rate)),
    ]
