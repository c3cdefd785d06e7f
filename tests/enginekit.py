"""Small builders for engine tests: boards from text and a chosen falling piece."""

from __future__ import annotations

from engine import Board, Game, Input, Kind
from engine.game import Active


def game_with(rows: list[str], kind: Kind | None = None, mode: str = "contiguous",
              seed: int = 0, **kwargs: object) -> Game:
    """A game whose board is `rows` (bottom-aligned text) and, optionally, whose piece is `kind`."""
    game = Game(seed=seed, mode=mode, **kwargs)  # type: ignore[arg-type]
    if rows:
        game.set_board(Board.from_strings(rows, owner=100))
    if kind is not None and not game.over:
        put_piece(game, kind)
    return game


def put_piece(game: Game, kind: Kind, rotation: int = 0, x: int | None = None,
              y: int | None = None) -> Active:
    """Make the falling piece `kind` at the given pose (default: the spawn pose, one row lower
    when that row is free, as the game spawns), through Game.set_active."""
    game.set_active(kind, rotation, x, y)
    assert game.active is not None
    return game.active


def clear_lines(game: Game, count: int) -> None:
    """Clear `count` lines by play: I pieces dropped into a well in column 9 of a prepared
    board, four lines at a time. The board is empty afterwards; level follows the lines."""
    while count > 0:
        n = min(4, count)
        game.set_board(Board.from_strings(["#########."] * n, owner=100))
        game.set_active(Kind.I, rotation=1, x=7)  # vertical, in column 9
        before = game.lines
        game.update(0, [Input.HARD_DROP])
        assert game.lines == before + n and not game.over
        count -= n


def spend_split(game: Game) -> None:
    """Split the falling piece (paged mode, full meter): the meter is spent afterwards (empty, or
    a quarter per line the pages completed)."""
    assert game.mode == "paged" and game.charge == 1.0
    game.update(0, [Input.SPLIT])
    assert game.charge < 1.0


def cells_on_board(game: Game) -> int:
    return sum(1 for row in game.board.grid for v in row if v)
