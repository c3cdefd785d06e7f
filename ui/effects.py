"""Short board animations driven by simulated time (so headless frames are reproducible)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar

Cell = tuple[int, int]
Colour = tuple[int, int, int]

CASCADE_MS = 420.0  # pages falling to their physical blocks after a split
FADE_MS = 520.0  # a finished (or preempted) request's blocks fading out where they were
HIGHLIGHT_MS = 2600.0  # block-table cells outlined on the board
LAND_MS = 160.0  # brief glow where a request was admitted, or a new page was given
TOAST_MS = 1300.0  # a word over the board: level up, a preemption, OOM


@dataclass
class Cascade:
    """Pages of a split request travelling from where the piece was to their blocks."""

    pages: list[tuple[int, Cell, Cell, Colour]]  # (page, from cell, to cell) in board coords
    age: float = 0.0
    duration: float = CASCADE_MS

    def progress(self, page_index: int) -> float:
        """Eased progress of one page; later pages start a little later."""
        delay = page_index * 55.0
        t = (self.age - delay) / (self.duration - 3 * 55.0)
        t = 0.0 if t < 0 else 1.0 if t > 1 else t
        return t * t  # accelerate like gravity

    def targets(self) -> set[Cell]:
        return {to for _, _, to, _ in self.pages}


@dataclass
class Fade:
    """The blocks a request gave back (it finished, or was preempted), fading out where they
    were: nothing else on the board moves."""

    cells: list[Cell]
    colour: Colour
    kind: str = "finished"  # "finished", "swap" or "recompute"
    age: float = 0.0
    duration: float = FADE_MS


@dataclass
class Highlight:
    """Physical blocks of the last block table, outlined with their page numbers."""

    cells: list[tuple[int, Cell]]
    age: float = 0.0
    duration: float = HIGHLIGHT_MS


@dataclass
class Landing:
    cells: list[Cell]
    age: float = 0.0
    duration: float = LAND_MS


@dataclass
class Toast:
    text: str
    colour: Colour
    age: float = 0.0
    duration: float = TOAST_MS


@dataclass
class Effects:
    """All running board animations; advanced by the fixed step."""

    cascades: list[Cascade] = field(default_factory=list)
    fades: list[Fade] = field(default_factory=list)
    highlight: Highlight | None = None
    landings: list[Landing] = field(default_factory=list)
    toasts: list[Toast] = field(default_factory=list)
    shake: float = 0.0  # ms of board shake left (crash)

    def advance(self, dt: float) -> None:
        _age(self.cascades, dt)
        _age(self.fades, dt)
        _age(self.landings, dt)
        _age(self.toasts, dt)
        if self.highlight is not None:
            self.highlight.age += dt
            if self.highlight.age >= self.highlight.duration:
                self.highlight = None
        if self.shake > 0:
            self.shake = max(0.0, self.shake - dt)

    @property
    def busy(self) -> bool:
        """Any board animation running (the view then draws the effects layer)."""
        return bool(self.landings or self.fades or self.cascades or self.highlight is not None)

    def hidden_cells(self) -> set[Cell]:
        """Board cells drawn by an animation instead of the grid this frame."""
        hidden: set[Cell] = set()
        for c in self.cascades:
            hidden |= c.targets()
        return hidden

    def clear(self) -> None:
        self.cascades.clear()
        self.fades.clear()
        self.landings.clear()
        self.toasts.clear()
        self.highlight = None
        self.shake = 0.0


class _Timed(Protocol):
    age: float
    duration: float


_T = TypeVar("_T", bound=_Timed)


def _age(group: list[_T], dt: float) -> None:
    """Let `dt` ms pass for every effect of a group; finished ones leave it."""
    for fx in group:
        fx.age += dt
    group[:] = [fx for fx in group if fx.age < fx.duration]
