"""What the help screen says: the controls and the concept map, as data.

Keys are named from the one key table (ui.input.KEYS); everything else comes from the player's
catalogue: a control row's action is help.do.<name>, a concept row is help.concept.<name> (the
game's mechanic) and help.meaning.<name> (what it is in a serving engine), a touch row is
help.touch.<name> and help.touch_do.<name>. The page "vLLM or game?" is RULES: a heading
help.rules.<section> and its lines help.rules.<section>.<n>.

Every number a help text quotes is a placeholder filled from the engine's constants (FACTS) or
the paper's measurements (ui.i18n.game_text.PAPER), never typed into the catalogue.
"""
from __future__ import annotations

from engine import rules as R
from engine.chapters import PAIR_QUEUE
from ui.i18n import Catalogue
from ui.i18n.game_text import PAPER
from ui.input import Command
from ui.keys import key_hint

# (the keys, as the key table names them; None: the catalogue's help.keys.<name>), by action name
CONTROLS: tuple[tuple[str, str | None], ...] = (
    ("move", f"{key_hint('left')}, {key_hint('right')}"),
    ("rotate", f"{key_hint('rotate_cw')}  /  {key_hint('rotate_ccw')}"),
    ("drops", f"{key_hint('soft_drop')}  /  {key_hint('hard_drop')}"),
    ("hold", key_hint("hold")),
    ("split", key_hint("split")),
    ("preempt", key_hint("preempt")),
    ("schedule", f"{key_hint(Command.PICK_NEXT)}  /  {key_hint('budget_down')} {key_hint('budget_up')}  /  "
                 f"{key_hint('spec_down')} {key_hint('spec_up')}"),
    ("modes", f"{key_hint('mode_contiguous')} / {key_hint('mode_paged')} / {key_hint('mode_toggle')}"),
    ("toggles", f"{key_hint(Command.MUTE)} / {key_hint(Command.TOGGLE_CARDS)} / {key_hint(Command.TOGGLE_ENDLESS)} / "
                f"{key_hint(Command.HELP, 1)} / {key_hint(Command.LAB)} / {key_hint(Command.LANGUAGE)}"),
    ("start", f"{key_hint(Command.PAUSE)}  /  {key_hint(Command.START, 1)}  /  {key_hint(Command.QUIT)}"),
    ("touch", None),
)

# (A request's finish is the board's row; split and hold are the game's own rules, on "vLLM or game?".)
CONCEPTS: tuple[str, ...] = ("piece", "board", "queue", "hatched", "hole", "paged", "shared", "cached", "step",
                             "preempt")

# The page "vLLM or game?": every decision the player makes, sorted by whose it is (vLLM V1's, the
# engine a reader runs today; V0's and the paper's; SGLang's; the game's own), and what the paper
# measured. (section, how many lines it has)
RULES: tuple[tuple[str, int], ...] = (("v1", 5), ("v0", 2), ("sglang", 1), ("game", 3), ("paper", 2))

# The same controls for a finger: the buttons under the board, and gestures on the board itself.
TOUCH_CONTROLS: tuple[str, ...] = ("drag", "tap", "down", "flick", "swipe", "long", "queue", "allocator",
                                   "details")


def facts(tr: Catalogue) -> dict[str, object]:
    """The numbers help texts quote, from the engine's rules and the paper, in `tr`'s digits."""
    paper = {f"paper_{k}": tr.num(v[0]) if len(v) == 1 else tr.t("fmt.range", low=tr.num(v[0]), high=tr.num(v[-1]))
             for k, v in PAPER.items()}
    return {"cells": R.VISIBLE_CELLS, "tokens": R.TOKENS_PER_BLOCK, "blocks": R.BLOCKS_PER_REQUEST,
            "max_tokens": R.MAX_SEQ_TOKENS, "queue": R.QUEUE_MAX, "pair_queue": PAIR_QUEUE, "deadline": round(R.DEADLINE_MS / 1000),
            "cpu": R.CPU_BLOCKS, "requests": tr.num(R.GOAL_REQUESTS), "step": f"{R.DECODE_STEP_MS / 1000:g}",
            "preempt_key": key_hint("preempt") or "-", "split_key": key_hint("split"),
            "pick_key": key_hint(Command.PICK_NEXT) or "-", "budget": R.DEFAULT_BUDGET,
            "budget_keys": f"{key_hint('budget_down')} {key_hint('budget_up')}",
            "spec_keys": f"{key_hint('spec_down')} {key_hint('spec_up')}",
            "step_base": R.STEP_BASE_MS / 1000, "step_token": R.STEP_MS_PER_TOKEN, **paper}


def controls(tr: Catalogue) -> list[tuple[str, str]]:
    """(keys, what they do) rows in `tr`'s language (a row whose keys are not bound is left out)."""
    return [(keys if keys is not None else tr.t(f"help.keys.{name}"), tr.t(f"help.do.{name}", **facts(tr)))
            for name, keys in CONTROLS if keys != ""]


def concepts(tr: Catalogue) -> list[tuple[str, str]]:
    """(mechanic, meaning) rows in `tr`'s language."""
    f = facts(tr)
    return [(tr.t(f"help.concept.{name}", **f), tr.t(f"help.meaning.{name}", **f)) for name in CONCEPTS]


def rules(tr: Catalogue) -> list[tuple[str, list[str]]]:
    """(heading, lines) of the page "vLLM or game?" in `tr`'s language."""
    f = facts(tr)
    return [(tr.t(f"help.rules.{name}"), [tr.t(f"help.rules.{name}.{i}", **f) for i in range(1, n + 1)])
            for name, n in RULES]


def goal(tr: Catalogue) -> str:
    """The goal and the mixed-run rule, in one paragraph."""
    return tr.t("help.goal", **facts(tr))


def touch_controls(tr: Catalogue) -> list[tuple[str, str]]:
    """(gesture or button, what it does) rows in `tr`'s language; buttons named as they are shown."""
    buttons = {name: tr.t(f"control.short.{name}") for name in ("rotate_ccw", "rotate_cw", "hard_drop", "hold", "split")}
    modes = {"contiguous": tr.t("mode.contiguous.label"), "paged": tr.t("mode.paged.label")}
    return [(tr.t(f"help.touch.{name}"), tr.t(f"help.touch_do.{name}", **buttons, **modes)) for name in TOUCH_CONTROLS]
