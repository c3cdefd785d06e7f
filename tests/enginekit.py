"""Small builders for engine tests: boards from text, a chosen falling request, scripted arrivals."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine import Board, Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.game import Active
from engine.request import Request
from engine.workload import Arrival, Scripted

FRAME_MS = 1000.0 / 60.0


def of(events: Iterable[ev.Event], cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def game_with(rows: list[str], kind: Kind | None = None, mode: str = "contiguous",
              seed: int = 0, prompt: int | None = None, output: int | None = None,
              arrivals: Iterable[Arrival] | None = (), **kwargs: object) -> Game:
    """A game whose board is `rows` (bottom-aligned text, static requests that never finish),
    whose falling request is `kind` with the given lengths, and after which exactly `arrivals`
    arrive (none by default; None keeps the seeded stream)."""
    game = Game(seed=seed, mode=mode, **kwargs)  # type: ignore[arg-type]
    if arrivals is not None:
        game.set_workload(Scripted(arrivals))
    if rows:
        game.set_board(Board.from_strings(rows, owner=100))
    if kind is not None and not game.over:
        put_piece(game, kind)
    if game.falling is not None:
        lengths(game.falling, prompt, output)
    return game


def lengths(req: Request, prompt: int | None = None, output: int | None = None) -> Request:
    """Give a request that is not admitted yet its prompt and (hidden) output, in tokens."""
    assert req.state == "queued"
    if prompt is not None:
        req.prompt = prompt
    if output is not None:
        req.output = output
    return req


def arrival(rid: int, at_ms: float, kind: Kind = Kind.O, prompt: int = 16,
            output: int = 16) -> Arrival:
    return Arrival(rid, kind, at_ms, prompt, output)


def put_piece(game: Game, kind: Kind, rotation: int = 0, x: int | None = None,
              y: int | None = None) -> Active:
    """Make the falling piece `kind` at the given pose (default: the spawn pose, one row lower
    when that row is free, as the game spawns), through Game.set_active."""
    game.set_active(kind, rotation, x, y)
    assert game.active is not None
    return game.active


def drop(game: Game, kind: Kind, rotation: int = 0, x: int | None = None,
         prompt: int | None = None, output: int | None = None) -> Request:
    """Hard-drop the falling request as `kind` at column x (its admission follows)."""
    put_piece(game, kind, rotation, x)
    req = game.falling
    assert req is not None
    lengths(req, prompt, output)
    game.update(0, [Input.HARD_DROP])
    return req


def run_until(game: Game, done: Callable[[], bool], dt: float = 100.0,
              limit_ms: float = 600_000.0) -> list[ev.Event]:
    """Let time pass in steps of `dt` until `done()` (or the run ends, or `limit_ms` passes)."""
    out: list[ev.Event] = []
    end = game.time_ms + limit_ms
    while not done() and not game.over and game.time_ms < end:
        out += game.update(dt)
    return out


def owners(game: Game) -> set[int]:
    return {v for row in game.board.grid for v in row if v}


def cells_of(game: Game, rid: int) -> set[tuple[int, int]]:
    return {(x, y) for y, row in enumerate(game.board.grid) for x, v in enumerate(row) if v == rid}


def cells_on_board(game: Game) -> int:
    return sum(1 for row in game.board.grid for v in row if v)


def steps_for(tokens: int) -> float:
    """Game time for `tokens` decode steps."""
    return tokens * R.DECODE_STEP_MS
