"""Feeds the engine's bot to a game a few key presses per step, like a person would."""
from __future__ import annotations

from collections import deque

from engine import Game, Input
from engine.bot import DEFAULT_SKILL, Bot


class AutoPilot:
    """Plans each new request with engine.bot.Bot and replays the plan at a human pace."""

    def __init__(self, skill: float = DEFAULT_SKILL, seed: int = 0, steps_per_input: int = 4) -> None:
        self.bot = Bot(skill=skill, seed=seed)
        self.steps_per_input = max(1, steps_per_input)
        self._plan: deque[Input] = deque()
        self._request = 0
        self._wait = 0

    def inputs(self, game: Game) -> list[Input]:
        """The inputs for this step (often none)."""
        a = game.active
        if game.over or a is None:
            return []
        if a.request_id != self._request:
            self._request = a.request_id
            self._plan = deque(self.bot.plan(game))
            self._wait = self.steps_per_input * 2  # a short look at the new piece first
        self._wait -= 1
        if self._wait > 0 or not self._plan:
            return []
        self._wait = self.steps_per_input
        return [self._plan.popleft()]
