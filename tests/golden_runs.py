"""The golden runs of tests/test_sharecode.py, recorded under the current rules.

    python -m tests.golden_runs      # prints the GOLDEN entry for engine.rules.RULES_VERSION

Each run is played at 60 Hz frames by a scripted player and written down with engine.replay's
Recorder; a rule change that alters how a seed and inputs play out makes these codes stop
verifying, which is their job: bump RULES_VERSION and paste the printed block.
"""

from __future__ import annotations

from collections.abc import Callable

from engine import sharecode
from engine.bot import Bot
from engine.game import Game, Input
from engine.replay import Outcome, Recorder
from engine.rules import RULES_VERSION

FRAME = 1000.0 / 60.0
Player = Callable[[Game, int], list[Input]]


def split_at_once(game: Game, frame: int) -> list[Input]:
    """Paged: every request split the frame it falls, preemption by swap."""
    if frame == 0:
        return [Input.PREEMPT_TOGGLE]
    return [Input.SPLIT] if game.active is not None or game.blocked is not None else []


def bot_player(skill: float, seed: int) -> Player:
    bot = Bot(skill=skill, seed=seed)
    pending: list[Input] = []

    def play(game: Game, frame: int) -> list[Input]:
        if not pending and (game.active is not None or game.blocked is not None):
            pending.extend(bot.plan(game))
        return [pending.pop(0)] if pending else []

    return play


def paged_then_contiguous(game: Game, frame: int) -> list[Input]:
    if frame == 2 * 60 * 60:
        return [Input.MODE_CONTIGUOUS]
    if game.allocator.player_split:
        return split_at_once(game, frame + 1)
    return [Input.HARD_DROP] if game.active is not None and frame % 40 == 0 else []


def scheduler(game: Game, frame: int) -> list[Input]:
    """Paged, rules 4's scheduler: a bigger step budget after a minute, a smaller one after
    three, and the second waiting request picked to run next now and then."""
    if frame == 60 * 60:
        return [Input.BUDGET_UP]
    if frame == 3 * 60 * 60:
        return [Input.BUDGET_DOWN, Input.BUDGET_DOWN]
    if frame % 97 == 0 and len(game.serving.waiting) > 1:
        return [Input.PICK_2]
    return split_at_once(game, frame + 1)


def drop_and_hold(game: Game, frame: int) -> list[Input]:
    if game.active is None:
        return []
    return [Input.HOLD] if frame % 300 == 0 else [Input.HARD_DROP]


RUNS: tuple[tuple[str, str, int, Callable[[], Player]], ...] = (
    ("paged, every request split at once, preemption by swap", "paged", 3,
     lambda: split_at_once),
    ("contiguous bot at skill 0.8 until its CUDA OOM", "contiguous", 4, lambda: bot_player(0.8, 4)),
    ("paged bot at skill 0.8 until the engine is overloaded", "paged", 5, lambda: bot_player(0.8, 5)),
    ("mixed: paged for two minutes, then contiguous", "paged", 6, lambda: paged_then_contiguous),
    ("contiguous, hard drops at the spawn pose and a hold now and then", "contiguous", 7,
     lambda: drop_and_hold),
    ("paged, the step budget set and waiting requests picked", "paged", 8, lambda: scheduler),
)

MAX_FRAMES = 60 * 60 * 40  # 40 game minutes


def record(mode: str, seed: int, player: Player) -> tuple[Outcome, str]:
    rec = Recorder(seed=seed, mode=mode, endless=True)
    frame = 0
    while not rec.game.over and frame < MAX_FRAMES:
        rec.update(FRAME, player(rec.game, frame))
        frame += 1
    replay = rec.finish()
    out = Outcome(rec.game)
    return out, sharecode.encode(replay, out)


def main() -> None:
    print(f"    {RULES_VERSION}: [")
    for note, mode, seed, make in RUNS:
        out, code = record(mode, seed, make())
        g = out.game
        print(f"        # {note}: {g.result.outcome if g.result else 'unfinished'}, "
              f"{g.serving.preempted_swap} swap / {g.serving.preempted_recompute} recompute")
        print(f"        ({g.score}, {g.pieces}, {g.mixed},")
        lines = [code[i:i + 84] for i in range(0, len(code), 84)]
        for i, line in enumerate(lines):
            end = ")," if i == len(lines) - 1 else ""
            print(f'        "{line}"{end}')
    print("    ],")


if __name__ == "__main__":
    main()
