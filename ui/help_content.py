"""What the help screen says: the controls and the concept map, as data (catalogue keys).

A control row is help.keys.<name> (the keys) and help.do.<name> (what they do); a concept row is
help.concept.<name> (the game's mechanic) and help.meaning.<name> (what it is in a serving engine).
"""
from __future__ import annotations

from engine import rules as R
from ui.i18n import Catalogue

CONTROLS: tuple[str, ...] = ("move", "rotate", "soft", "hard", "hold", "split", "modes", "pause", "toggles",
                             "help", "start", "touch")

# (game mechanic, what it is in a real LLM serving engine)
CONCEPTS: tuple[str, ...] = ("piece", "board", "hatched", "hole", "row", "top", "paged", "table", "split",
                             "hold", "usable")


def controls(tr: Catalogue) -> list[tuple[str, str]]:
    """(keys, what they do) rows in `tr`'s language."""
    return [(tr.t(f"help.keys.{name}"), tr.t(f"help.do.{name}")) for name in CONTROLS]


def concepts(tr: Catalogue) -> list[tuple[str, str]]:
    """(mechanic, meaning) rows in `tr`'s language."""
    facts = {"cells": R.VISIBLE_CELLS, "tokens": R.TOKENS_PER_BLOCK}
    return [(tr.t(f"help.concept.{name}", **facts), tr.t(f"help.meaning.{name}", **facts)) for name in CONCEPTS]
