"""What the help screen says: the controls and the concept map, as data.

Keys are named from the one key table (ui.input.KEYS); everything else comes from the player's
catalogue: a control row's action is help.do.<name>, a concept row is help.concept.<name> (the
game's mechanic) and help.meaning.<name> (what it is in a serving engine), a touch row is
help.touch.<name> and help.touch_do.<name>.
"""
from __future__ import annotations

from engine import rules as R
from ui.i18n import Catalogue
from ui.input import Command
from ui.keys import key_hint

# (the keys, as the key table names them; None: the catalogue's help.keys.<name>), by action name
CONTROLS: tuple[tuple[str, str | None], ...] = (
    ("move", f"{key_hint('left')}, {key_hint('right')}"),
    ("rotate", f"{key_hint('rotate_cw')}  /  {key_hint('rotate_ccw')}"),
    ("soft", key_hint("soft_drop")),
    ("hard", key_hint("hard_drop")),
    ("hold", key_hint("hold")),
    ("split", key_hint("split")),
    ("modes", f"{key_hint('mode_contiguous')} / {key_hint('mode_paged')} / {key_hint('mode_toggle')}"),
    ("pause", key_hint(Command.PAUSE)),
    ("toggles", f"{key_hint(Command.MUTE)}  /  {key_hint(Command.TOGGLE_CARDS)}  /  "
                f"{key_hint(Command.TOGGLE_ENDLESS)}"),
    ("help", f"{key_hint(Command.HELP)}  /  {key_hint(Command.LAB)}  /  {key_hint(Command.LANGUAGE)}"),
    ("start", f"{key_hint(Command.START, 1)}  /  {key_hint(Command.QUIT)}"),
    ("touch", None),
)

CONCEPTS: tuple[str, ...] = ("piece", "board", "hatched", "hole", "row", "top", "paged", "table", "split",
                             "hold", "usable")

# The same controls for a finger: the buttons under the board, and gestures on the board itself.
TOUCH_CONTROLS: tuple[str, ...] = ("drag", "tap", "down", "flick", "swipe", "long", "allocator", "details")


def controls(tr: Catalogue) -> list[tuple[str, str]]:
    """(keys, what they do) rows in `tr`'s language."""
    return [(keys if keys is not None else tr.t(f"help.keys.{name}"), tr.t(f"help.do.{name}"))
            for name, keys in CONTROLS]


def concepts(tr: Catalogue) -> list[tuple[str, str]]:
    """(mechanic, meaning) rows in `tr`'s language."""
    facts = {"cells": R.VISIBLE_CELLS, "tokens": R.TOKENS_PER_BLOCK}
    return [(tr.t(f"help.concept.{name}", **facts), tr.t(f"help.meaning.{name}", **facts)) for name in CONCEPTS]


def touch_controls(tr: Catalogue) -> list[tuple[str, str]]:
    """(gesture or button, what it does) rows in `tr`'s language; buttons named as they are shown."""
    buttons = {name: tr.t(f"control.short.{name}") for name in ("rotate_ccw", "rotate_cw", "hard_drop", "hold", "split")}
    modes = {"contiguous": tr.t("mode.contiguous.label"), "paged": tr.t("mode.paged.label")}
    return [(tr.t(f"help.touch.{name}"), tr.t(f"help.touch_do.{name}", **buttons, **modes)) for name in TOUCH_CONTROLS]
