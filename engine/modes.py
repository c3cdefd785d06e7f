"""The allocator modes as data: one registry that the engine, the UI, storage and the CLIs iterate.

A mode says how the KV-cache allocator hands out blocks. Adding a mode means adding a row here
(and, if it behaves in a new way, teaching `engine.game` that behaviour through these flags).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mode:
    name: str  # the id used in saves, replays and on the command line
    label: str  # what the player reads on buttons
    note: str  # a short line under the mode buttons
    summary: str  # one sentence for the log and the help
    reserves_max_length: bool  # a placed request also holds room for its maximum length
    pages_on_demand: bool  # a request that cannot be placed whole is paged into free blocks
    player_split: bool  # Shift/P may split the falling request into pages


MODES: tuple[Mode, ...] = (
    Mode("contiguous", "CONTIGUOUS", "Whole ranges, max length reserved.",
         "one unbroken range per request, plus room reserved for its maximum length",
         reserves_max_length=True, pages_on_demand=False, player_split=False),
    Mode("paged", "PAGED", "Blocks on demand, anywhere free.",
         "PagedAttention: blocks on demand, wherever free; Shift/P packs pages on purpose",
         reserves_max_length=False, pages_on_demand=True, player_split=True),
)

NAMES: tuple[str, ...] = tuple(m.name for m in MODES)
DEFAULT = "contiguous"  # new players meet the problem before the fix
MIXED = "mixed"  # a run whose allocator changed after it started: a record of neither mode

_BY_NAME = {m.name: m for m in MODES}


def get(name: str) -> Mode:
    """The mode called `name`; ValueError for an unknown one."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"mode must be one of {NAMES}, not {name!r}") from None


def following(name: str) -> str:
    """The mode after `name` in the registry, wrapping round (the Tab key)."""
    i = NAMES.index(name)
    return NAMES[(i + 1) % len(NAMES)]
