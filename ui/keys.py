"""What every key and on-screen control is called, derived from the one key table (ui.input.KEYS).

Buttons, menus and hints show these labels, so a key that changes in KEYS changes everywhere.
"""
from __future__ import annotations

from types import MappingProxyType

from ui.input import KEYS, Command

ARROWS = frozenset({"Left", "Right", "Up", "Down"})

# The on-screen name of each game action's button, long (landscape) and short (a phone's narrow one).
ACTION_NAMES: MappingProxyType[str, tuple[str, str]] = MappingProxyType({
    "left": ("LEFT", "LEFT"),
    "right": ("RIGHT", "RIGHT"),
    "rotate_ccw": ("ROTATE L", "ROT L"),
    "rotate_cw": ("ROTATE R", "ROT R"),
    "soft_drop": ("SOFT DROP", "DOWN"),
    "hard_drop": ("HARD DROP", "DROP"),
    "hold": ("HOLD", "HOLD"),
    "split": ("SPLIT", "SPLIT"),
})


def key_hint(target: str | Command, limit: int = 3) -> str:
    """The keys bound to `target`, letters before arrow keys: "A / Left", "Shift / P", "Esc"."""
    labels: list[str] = []
    for b in KEYS:
        if b.target == target and b.label not in labels:
            labels.append(b.label)
    labels.sort(key=lambda label: label in ARROWS)  # stable: table order otherwise
    return " / ".join(labels[:limit])


CONTROL_LABELS: MappingProxyType[str, tuple[str, str]] = MappingProxyType(
    {name: (long, key_hint(name)) for name, (long, _) in ACTION_NAMES.items()})
SHORT_CONTROL_LABELS: MappingProxyType[str, str] = MappingProxyType(
    {name: short for name, (_, short) in ACTION_NAMES.items()})

# Screen switches and menu entries: (what the key does, its hint).
PAUSE_KEY = key_hint(Command.PAUSE)
START_KEY = key_hint(Command.START, 1)
HELP_KEY = key_hint(Command.HELP, 1)
MUTE_KEY = key_hint(Command.MUTE)
CARDS_KEY = key_hint(Command.TOGGLE_CARDS)
LAB_KEY = key_hint(Command.LAB)
ENDLESS_KEY = key_hint(Command.TOGGLE_ENDLESS)
QUIT_KEY = key_hint(Command.QUIT)
LANGUAGE_KEY = key_hint(Command.LANGUAGE)
CHAPTERS_KEY = key_hint(Command.CHAPTERS)
SPLIT_KEY = key_hint("split")
HOLD_KEY = key_hint("hold")
PREEMPT_KEY = key_hint("preempt")  # the preemption mode: swap / recompute
PICK_KEY = key_hint(Command.PICK_NEXT)  # the next waiting request picked to run next
BUDGET_KEYS = f"{key_hint('budget_down')} {key_hint('budget_up')}"  # the step's token budget
SPEC_KEYS = f"{key_hint('spec_down')} {key_hint('spec_up')}"  # the drafts a step (speculative decoding)
BOARD_KEY = "B"  # the run report's BOARD view (the report handles this key itself)
RETRY_KEY = "T"  # a chapter's outro: try the chapter again (the outro handles this key itself)
# Sharing: the title's daily run, the report's COPY and WATCH (each screen handles its own key).
DAILY_KEY = "D"
COPY_KEY = "C"
WATCH_KEY = "W"
