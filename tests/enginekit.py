"""Small builders for engine tests: boards from text and a chosen falling piece."""

from __future__ import annotations

from engine import PIECES, Board, Game, Kind
from engine.pieces import FOOTPRINTS
from engine.game import Active, Request


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
    """Replace the falling piece with `kind` at the given pose (default: the spawn pose, one row
    lower when that row is free, as the game spawns)."""
    assert game.active is not None
    p = PIECES[kind]
    rid = game.active.request_id
    game.requests[rid] = Request(rid, kind)
    if y is None:
        shape = FOOTPRINTS[kind][rotation]
        y = p.spawn_y + game.board.fits(shape, p.spawn_x if x is None else x, p.spawn_y + 1)
    game.active = Active(kind, rotation, p.spawn_x if x is None else x, y, rid)
    return game.active


def cells_on_board(game: Game) -> int:
    return sum(1 for row in game.board.grid for v in row if v)
