"""Adapter for ../shared/bench/peer_engines.py: drives our engine through Game.update.

    python ../shared/bench/peer_engines.py --adapter tests/peer_adapter.py:make_driver=vram-tetris

Every key press is one `update(0, [input])` call, as the frontend makes them, with events and
telemetry on: the hard drop also reads `telemetry()`, as the UI does after every lock.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Game, Input  # noqa: E402

CW, LEFT, RIGHT, DROP = (Input.ROTATE_CW,), (Input.LEFT,), (Input.RIGHT,), (Input.HARD_DROP,)


def make_driver(seed: int) -> SimpleNamespace:
    state = SimpleNamespace(game=Game(seed=seed, endless=True), games=0)

    def rotate_cw() -> None:
        state.game.update(0.0, CW)

    def move(dx: int) -> None:
        state.game.update(0.0, RIGHT if dx > 0 else LEFT)

    def hard_drop() -> tuple[int, bool]:
        game = state.game
        before = game.lines
        game.update(0.0, DROP)
        game.telemetry()
        return game.lines - before, game.over

    def restart() -> None:
        state.games += 1
        state.game = Game(seed=seed + state.games, endless=True)

    return SimpleNamespace(rotate_cw=rotate_cw, move=move, hard_drop=hard_drop, restart=restart)
