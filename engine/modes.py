"""The allocator modes as data: one registry that the engine, the UI, storage and the CLIs iterate.

A mode names the KV-cache allocator (a policy object of engine.allocators) that requests
admitted under it use. Adding a mode means an allocator class there and a row here (and its
words in the UI's catalogues).

A mode also names the LAB's allocators (engine.lab.memory.REGISTRY) that follow its rules, the
first being the one the game's mode is, and its colour: the LAB screen draws and words its
engines with the game's labels and colours from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .allocators import Allocator, Contiguous, Paged


@dataclass(frozen=True, slots=True)
class Mode:
    name: str  # the id used in saves, replays and on the command line
    label: str  # what the player reads on buttons
    note: str  # a short line under the mode buttons
    summary: str  # one sentence for the log and the help
    allocator: Allocator
    lab: tuple[str, ...] = ()  # LAB allocators with this mode's rules; the first is this mode
    accent: str = "violet"  # its colour on every screen: a name in ui.theme's palette

    @property
    def reserves_max_length(self) -> bool:
        return self.allocator.reserves_max_length

    @property
    def pages_on_demand(self) -> bool:
        return self.allocator.pages_on_demand

    @property
    def player_split(self) -> bool:
        return self.allocator.player_split


MODES: tuple[Mode, ...] = (
    Mode("contiguous", "CONTIGUOUS", "Whole ranges, max length reserved.",
         "one unbroken range per request, reserved for its maximum length", Contiguous(),
         lab=("max", "pow2", "oracle"), accent="cyan"),
    Mode("paged", "PAGED", "Blocks on demand, anywhere free.",
         "PagedAttention: a block at a time as the request grows, wherever one is free", Paged(),
         lab=("paged",), accent="magenta"),
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


def of_lab(allocator: str) -> Mode | None:
    """The game mode whose rules the LAB allocator `allocator` follows; None for one the game lacks."""
    return next((m for m in MODES if allocator in m.lab), None)


def following(name: str) -> str:
    """The mode after `name` in the registry, wrapping round (the Tab key)."""
    i = NAMES.index(name)
    return NAMES[(i + 1) % len(NAMES)]
