"""The chapters: a guided run through a serving engine, one mechanism at a time.

Each chapter adds one mechanism to the last and sets a goal in the game's own terms: serve a
number of requests. Chapter 1's run goes on past its goal until memory runs out (what the
chapter is about), the others end at it, and the last is endless, for the best scores.

1. Reserve for the maximum: contiguous allocation, as the paper's baselines did (Orca, FasterTransformer).
2. Pages on demand: PagedAttention, on the same arrivals as the player's chapter-1 run (same
   seed, same load, same workload), so the two runs can be set side by side.
3. Share the prompt: prefix caching (vLLM's automatic prefix caching) and picking from the queue.
4. Prefill in chunks: chunked prefill and the step's token budget (vLLM V1's default).
5. Guess ahead: speculative decoding (drafts verified by the target model, lookahead slots).
6. The whole engine: every mechanism on, endless.

A chapter's clock starts with the player's first move, so a reader who reads never loses for it.
Rules are data: this table is the one place a chapter's mode, mechanisms, load and goal live.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import rules as R
from .features import RULES3, RULES4, SPECULATIVE, Features
from . import speculative
from .game import Game

ADDS = ("contiguous", "paged", "prefix_cache", "chunked_prefill", "speculative", "all")
FIRST_PAIR = 1  # chapter 2 plays the arrivals of this chapter's run


@dataclass(frozen=True, slots=True)
class Chapter:
    """One chapter: `key` names its texts (chapter.<key>.*), `adds` the mechanism it brings in,
    `goal` the requests to serve (None: endless), `plays_on` whether the run goes on after it
    until it ends, `arrivals_of` the chapter whose run's arrivals it replays (None: its own),
    `queue_max` the most requests that may wait before the run is overloaded, `spec_k` the drafts
    a step a run starts with (speculative decoding; the player changes it)."""

    number: int
    key: str
    name: str
    adds: str
    mode: str
    features: Features
    load: R.Load
    goal: int | None
    plays_on: bool = False
    arrivals_of: int | None = None
    queue_max: int = R.QUEUE_MAX
    spec_k: int = 0

    def new_game(self, seed: int) -> Game:
        """A run of this chapter on `seed`, waiting for the player's first move."""
        game = Game(seed=seed, mode=self.mode, endless=self.goal is None or self.plays_on,
                    features=self.features, load=self.load,
                    goal_requests=self.goal if self.goal is not None else 0, ready=True,
                    queue_max=self.queue_max)
        if self.spec_k:
            speculative.set_k(game.serving, self.spec_k)
        return game

    def met(self, served: int, won: bool) -> bool:
        """Whether a run that served `served` requests (and won, when `won`) met the goal (the
        endless chapter's: to serve at all)."""
        if self.goal is None:
            return served > 0
        return won or (self.plays_on and served >= self.goal)


# Chapters 1 and 2 share one load, rising within the first minute past what contiguous memory
# holds: requests queue behind reservations there while paged memory admits every one of them.
# The chapters' queue is longer than free play's (a reader's runs end in the memory they play
# with, not in a queue of 16), so it is memory that decides how many run at once.
PAIR_LOAD = R.Load(start=0.40, per_minute=1.0)
PAIR_QUEUE = 40
SHARED = Features(prefixes=True, prefix_cache=True, pick=True)
# Chapter 5 starts drafting, so that its drafts show from the first request; the player sets it.
GUESS_K = 2

CHAPTERS: tuple[Chapter, ...] = (
    Chapter(1, "reserve", "Reserve for the maximum", "contiguous", "contiguous", RULES3, PAIR_LOAD,
            8, plays_on=True, queue_max=PAIR_QUEUE),
    Chapter(2, "pages", "Pages on demand", "paged", "paged", RULES3, PAIR_LOAD, 15,
            plays_on=True, arrivals_of=FIRST_PAIR, queue_max=PAIR_QUEUE),
    Chapter(3, "share", "Share the prompt", "prefix_cache", "paged", SHARED, R.Load(start=0.5, per_minute=0.2), 110, queue_max=PAIR_QUEUE),
    Chapter(4, "chunks", "Prefill in chunks", "chunked_prefill", "paged", RULES4, R.Load(start=0.5, per_minute=0.2), 110, queue_max=PAIR_QUEUE),
    Chapter(5, "guess", "Guess ahead", "speculative", "paged", SPECULATIVE, R.Load(start=0.5, per_minute=0.2), 110,
            queue_max=PAIR_QUEUE, spec_k=GUESS_K),
    Chapter(6, "engine", "The whole engine", "all", "paged", SPECULATIVE, R.LOAD, None),
)


def chapter(number: int) -> Chapter:
    """Chapter `number` (1-based). Raises ValueError for one that does not exist."""
    if not 1 <= number <= len(CHAPTERS):
        raise ValueError(f"no chapter {number}: there are {len(CHAPTERS)}")
    return CHAPTERS[number - 1]
