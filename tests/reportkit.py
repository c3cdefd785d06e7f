"""Real run reports for the report screen's tests: engine games played until they end.

Bot runs end the way players' runs do (a contiguous stack reaching the top, a paged queue that
overflows, a won workload); prepared boards reach the endings a bot rarely meets (memory really
full in either allocator, an entry that is held, a paged request timing out with memory short).
"""
from __future__ import annotations

from functools import lru_cache

from engine import Board, Game, Input
from engine.bot import Bot
from engine.reports import RunReport

IDLE_MS, THINK_MS = 100.0, 150.0


def played(mode: str, seed: int, policy: str, skill: float = 0.8, endless: bool = True,
           max_minutes: float = 40.0) -> RunReport:
    """One run under `policy` ("bot", "centre" or "idle"), played until it ends."""
    game = Game(seed=seed, mode=mode, endless=endless)
    bot = Bot(skill=skill, seed=seed)
    while not game.over and game.time_ms < max_minutes * 60_000:
        if policy == "bot" and (game.active is not None or game.blocked is not None):
            plan = bot.plan(game)
            if not plan or plan[-1] not in (Input.HARD_DROP, Input.SPLIT):
                game.update(IDLE_MS * 2, plan)
            else:
                game.update(0.0, plan[:-1])
                game.update(THINK_MS)
                if not game.over:
                    game.update(0.0, plan[-1:])
        elif policy == "centre" and game.active is not None:
            game.update(0.0, (Input.HARD_DROP,))
        else:
            game.update(IDLE_MS)
    assert game.result is not None, (mode, seed, policy)
    return game.result


def prepared(mode: str, rows: list[str], seed: int = 3) -> RunReport:
    """A run from a prepared board (bottom-aligned text, '#' held for ever), hard-dropping every
    request, played until it ends."""
    game = Game(seed=seed, mode=mode, endless=True)
    game.update(6000.0)
    game.set_board(Board.from_strings(rows, owner=100))
    for _ in range(1000):
        if game.over:
            break
        game.update(250.0, [Input.HARD_DROP])
    assert game.result is not None, (mode, rows)
    return game.result


FULL = ["#" * 10] * 20


@lru_cache(maxsize=1)
def reports() -> dict[str, RunReport]:
    """Named real reports, one for each ending the report screen words differently."""
    return {
        "contiguous_bot": played("contiguous", 1, "bot"),
        "contiguous_sealed": played("contiguous", 5, "bot", skill=0.3),
        "contiguous_idle": played("contiguous", 1, "idle"),
        "contiguous_full": prepared("contiguous", ["#" * 10] * 19 + ["###.#.#.##"]),
        "contiguous_entry": prepared("contiguous", ["...####...", ".........."] + [".........."] * 20),
        "paged_centre": played("paged", 1, "centre"),
        "paged_busy": played("paged", 3, "bot", skill=0.8),
        "paged_idle": played("paged", 1, "idle"),
        "paged_full": prepared("paged", FULL),
        "paged_short": prepared("paged", ["#" * 10] * 19 + ["#######..."], seed=1),
        "paged_victory": played("paged", 1, "bot", skill=1.0, endless=False),
    }
