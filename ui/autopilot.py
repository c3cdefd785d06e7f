"""Feeds the engine's bot to a game a few key presses per step, like a person would."""
from __future__ import annotations

from collections import deque

from engine import Game, Input
from engine.bot import DEFAULT_SKILL, Bot

FINAL = (Input.HARD_DROP, Input.SPLIT)
RETRY_STEPS = 12  # a bot that chose to wait looks again this many steps later (200 ms)


class AutoPilot:
    """Plans each request at the front with engine.bot.Bot and replays the plan at a human pace.

    The bot may answer "wait" (an empty plan, or only a preemption-mode change): the request
    then falls (or waits to be paged) and the bot looks again a little later, as engine.autoplay
    does.
    """

    def __init__(self, skill: float = DEFAULT_SKILL, seed: int = 0, steps_per_input: int = 4) -> None:
        self.bot = Bot(skill=skill, seed=seed)
        self.steps_per_input = max(1, steps_per_input)
        self._plan: deque[Input] = deque()
        self._request: int | None = None
        self._wait = 0
        self._retry = 0
        self._final = False  # the plan in hand ends in a drop or a split

    def inputs(self, game: Game) -> list[Input]:
        """The inputs for this step (often none)."""
        if game.over:
            return []
        a = game.active
        front = a.request_id if a is not None else game.blocked.id if game.blocked is not None else None
        if front is None:
            return []
        if front != self._request:
            self._request = front
            self._plan.clear()
            self._final = False
            self._retry = 0
            self._wait = self.steps_per_input * 2  # a short look at the new piece first
        if not self._plan and self._final:
            # Its drop or split was pressed and the same request is still at the front (a
            # refused split, say): look again a little later.
            self._final = False
            self._retry = RETRY_STEPS
        if not self._plan:
            self._retry -= 1
            if self._retry > 0:
                return []
            plan = self.bot.plan(game)
            self._plan = deque(plan)
            self._final = bool(plan) and plan[-1] in FINAL
            if not self._final:
                self._retry = RETRY_STEPS
        self._wait -= 1
        if self._wait > 0 or not self._plan:
            return []
        self._wait = self.steps_per_input
        return [self._plan.popleft()]
