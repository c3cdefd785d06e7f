"""JSON replays: a run is (seed, mode, endless, timed inputs), so replaying reproduces it exactly.

Format (version 1):
    {"format": "vram-tetris-replay", "version": 1, "seed": 7, "mode": "paged", "endless": false,
     "steps": [[dt_ms, ["LEFT", "HARD_DROP"]], [dt_ms, [], repeat], ...],
     "final": {"score": ..., "lines": ..., "mode": ..., "active": [...], "board": "<digest>", ...}}
A step with a third number repeats that step (runs of idle frames stay small). `final` is the
state replaying must reach (see final_state).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from .events import Event
from .game import MODES, Game, Input

FORMAT = "vram-tetris-replay"
VERSION = 1
MAX_DT_MS = 60_000
MAX_STEPS = 10_000_000  # about 46 hours of 60 Hz frames


class ReplayError(ValueError):
    """A replay file that cannot be read; the message says what is wrong."""


def board_digest(game: Game) -> str:
    text = ";".join(",".join(map(str, row)) for row in game.board.grid)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def final_state(game: Game) -> dict[str, object]:
    """Everything a run's future depends on, so a replay that verifies is the same run."""
    a = game.active
    return {"score": game.score, "lines": game.lines, "pieces": game.pieces, "level": game.level,
            "tokens": game.tokens, "served": game.served, "mode": game.mode,
            "time_ms": game.time_ms, "charge": game.charge, "over": game.over,
            "hold": game.hold_kind.name if game.hold_kind is not None else None,
            "active": [a.kind.name, a.rotation, a.x, a.y, a.request_id] if a else None,
            "next": [k.name for k in game.next_queue], "board": board_digest(game)}


@dataclass
class Replay:
    seed: int
    mode: str
    endless: bool = False
    steps: list[tuple[float, tuple[Input, ...]]] = field(default_factory=list)
    final: dict[str, object] | None = None

    def play(self) -> Game:
        game = Game(seed=self.seed, mode=self.mode, endless=self.endless)
        for dt, inputs in self.steps:
            game.update(dt, inputs)
        return game

    def verify(self) -> bool:
        """True when replaying reaches the recorded final state."""
        return self.final is None or final_state(self.play()) == self.final

    def to_json(self) -> str:
        packed: list[list[object]] = []
        for dt, inputs in self.steps:
            names = [i.value for i in inputs]
            last = packed[-1] if packed else None
            if last is not None and last[0] == dt and last[1] == names and not names:
                if len(last) == 2:
                    last.append(2)
                else:
                    last[2] = int(last[2]) + 1  # type: ignore[call-overload]
                continue
            packed.append([dt, names])
        doc = {"format": FORMAT, "version": VERSION, "seed": self.seed, "mode": self.mode,
               "endless": self.endless, "steps": packed, "final": self.final}
        return json.dumps(doc, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Replay:
        try:
            doc = json.loads(text)
        except (ValueError, TypeError, RecursionError) as exc:  # ValueError covers bad JSON too
            raise ReplayError(f"not a JSON document: {str(exc)[:200]}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ReplayError(f"not a replay: expected an object with format {FORMAT!r}")
        if doc.get("version") != VERSION:
            raise ReplayError(f"unsupported replay version {doc.get('version')!r} (this reads {VERSION})")
        seed, mode, endless = doc.get("seed"), doc.get("mode"), doc.get("endless", False)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ReplayError("'seed' must be an integer")
        if mode not in MODES:
            raise ReplayError(f"'mode' must be one of {MODES}")
        if not isinstance(endless, bool):
            raise ReplayError("'endless' must be true or false")
        raw = doc.get("steps")
        if not isinstance(raw, list):
            raise ReplayError("'steps' must be a list")
        steps: list[tuple[float, tuple[Input, ...]]] = []
        for n, step in enumerate(raw):
            dt, inputs, repeat = _parse_step(n, step)
            if len(steps) + repeat > MAX_STEPS:
                raise ReplayError(f"too long: more than {MAX_STEPS} steps")
            steps.extend([(dt, inputs)] * repeat)
        final = doc.get("final")
        if final is not None and not isinstance(final, dict):
            raise ReplayError("'final' must be an object or null")
        return cls(seed, mode, endless, steps, final)


def _parse_step(n: int, step: object) -> tuple[float, tuple[Input, ...], int]:
    if not isinstance(step, list) or len(step) not in (2, 3):
        raise ReplayError(f"step {n}: expected [dt_ms, [inputs]] or [dt_ms, [inputs], repeat]")
    dt, names = step[0], step[1]
    repeat = step[2] if len(step) == 3 else 1
    if not _valid_dt(dt):
        raise ReplayError(f"step {n}: dt_ms must be a number of milliseconds from 0 to {MAX_DT_MS}")
    if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= MAX_STEPS:
        raise ReplayError(f"step {n}: repeat must be a positive integer")
    if not isinstance(names, list):
        raise ReplayError(f"step {n}: inputs must be a list of names")
    try:
        inputs = tuple(Input(name) for name in names)
    except (ValueError, TypeError):
        valid = ", ".join(i.value for i in Input)
        raise ReplayError(f"step {n}: unknown input in {names!r} (valid: {valid})") from None
    return float(dt), inputs, repeat


def _valid_dt(dt: object) -> bool:
    return (not isinstance(dt, bool) and isinstance(dt, (int, float)) and math.isfinite(dt)
            and 0 <= dt <= MAX_DT_MS)


class Recorder:
    """Drives a Game and writes down every step, so the run can be saved as a replay."""

    def __init__(self, seed: int = 0, mode: str = "contiguous", endless: bool = False) -> None:
        self.game = Game(seed=seed, mode=mode, endless=endless)
        self.replay = Replay(seed, mode, endless)

    def update(self, dt_ms: float, inputs: Iterable[Input | str] = ()) -> list[Event]:
        """Game.update, written down; refuses what a replay file could not hold."""
        if not _valid_dt(dt_ms):
            raise ValueError(f"dt_ms must be a finite number from 0 to {MAX_DT_MS}, not {dt_ms!r}")
        inputs = tuple(Input(i) for i in inputs)
        if not self.game.over:
            self.replay.steps.append((float(dt_ms), inputs))
        return self.game.update(dt_ms, inputs)

    def finish(self) -> Replay:
        self.replay.final = final_state(self.game)
        return self.replay


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.replay FILE`: replay a saved run and check it reaches its final state."""
    import sys

    from .cli_args import parser as cli_parser

    parser = cli_parser("python -m engine.replay", "Replay a saved run and verify its final state.")
    parser.add_argument("file", help="replay file (JSON)")
    args = parser.parse_args(argv)
    try:
        with open(args.file, "rb") as fh:
            data = fh.read(64 * 1024 * 1024 + 1)
        if len(data) > 64 * 1024 * 1024:
            raise ReplayError("file larger than 64 MiB")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ReplayError("not UTF-8 text") from None
        replay = Replay.from_json(text)
    except (OSError, ReplayError) as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {args.file}: {exc}", file=sys.stderr)
        return 2
    game = replay.play()
    state = final_state(game)
    print(f"seed {replay.seed}, mode {replay.mode}, {len(replay.steps)} steps: "
          f"score {game.score}, lines {game.lines}, pieces {game.pieces}"
          + (", run ended" if game.over else ""))
    if replay.final is None:
        print("no recorded final state to compare")
        return 0
    if state == replay.final:
        print("final state reproduced exactly")
        return 0
    print(f"final state differs: recorded {replay.final}, replayed {state}")
    return 1


if __name__ == "__main__":
    from .cli_args import run

    raise SystemExit(run(main, prog="python -m engine.replay"))
