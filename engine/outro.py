"""What a chapter's outro shows of a run: the player's own figures, read from the game.

`figures()` reads a run (finished or not); `Moment` reads one at a given game time, as chapter 2
reads itself at the moment the same player's chapter-1 run ended, on the same arrivals. (The
published figures an outro sets beside them are the UI's texts: ui/chapter_text.py.)
"""

from __future__ import annotations

from dataclasses import dataclass

from . import rules as R
from .ending import serving_figures
from .game import Game


@dataclass(frozen=True, slots=True)
class Figures:
    """A run's figures as an outro shows them. `held`: the share of VRAM held (tokens and
    reservations); `waste`: the share of the memory held or sealed off that holds no token."""

    minutes: float
    served: int
    tokens: int
    running: int
    peak_running: int
    held: float
    waste: float
    free: int
    reserved: int
    preempted: int
    hit_rate: float | None  # prefix caching: the share of shared-prefix blocks found cached
    ttft_s: float | None  # chunked prefill: mean time to first token
    step_s: float | None  # chunked prefill: mean length of a step
    budget: int | None  # chunked prefill: the step's token budget at the end
    spec_k: int | None  # speculative decoding: the drafts a step at the end
    skipped: int = 0  # prefix caching: prompt tokens found cached, not prefilled
    step_tokens: float | None = None  # speculative decoding: tokens a decode step gave a request, mean
    # Where VRAM went, in token slots: tokens, reserved and still empty, the empty tails of
    # requests' last blocks, free blocks no request could be given, free blocks in reach.
    memory: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    @property
    def sealed(self) -> int:
        """Free blocks no request could be given (contiguous memory's external fragmentation)."""
        return self.memory[3] // R.TOKENS_PER_BLOCK


def figures(game: Game) -> Figures:
    """The figures of `game` now (at its end, for a run that ended)."""
    s = game.serving
    served = serving_figures(game)
    tokens, slots, lost = game.waste()
    reserved = s.reserved * R.TOKENS_PER_BLOCK
    prefill = s.prefill
    ttft = served["ttft_ms_mean"]
    return Figures(
        minutes=game.time_ms / 60_000.0, served=s.served, tokens=s.tokens_served,
        running=len(s.running), peak_running=game.peak_resident,
        held=s.held / R.VISIBLE_CELLS, waste=game.waste_share(),
        free=R.VISIBLE_CELLS - s.held, reserved=s.reserved,
        preempted=s.preempted_swap + s.preempted_recompute,
        hit_rate=served["prefix_hit_rate"], ttft_s=ttft / 1000.0 if ttft is not None else None,
        step_s=prefill.step_mean() / 1000.0 if prefill is not None and prefill.steps else None,
        budget=prefill.budget if prefill is not None else None, spec_k=s.spec_k,
        skipped=served["prefill_skipped"],
        step_tokens=s.decode_gain / s.decode_slots if s.spec_k is not None and s.decode_slots else None,
        memory=(tokens, reserved, max(0, slots - tokens - reserved), lost * R.TOKENS_PER_BLOCK,
                (R.VISIBLE_CELLS - s.held - lost) * R.TOKENS_PER_BLOCK))


@dataclass(slots=True)
class Moment:
    """A run read once, at the first step that reaches game time `at_ms`: the requests running
    then, the share of VRAM they held and the waste. Call read() after every step."""

    at_ms: float
    running: int | None = None  # None: not reached yet
    held: float = 0.0
    waste: float = 0.0

    def read(self, game: Game) -> None:
        if self.running is None and game.time_ms >= self.at_ms:
            self.running = len(game.serving.running)
            self.held = game.serving.held / R.VISIBLE_CELLS
            self.waste = game.waste_share()
