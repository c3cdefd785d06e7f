"""Replays: a run is (seed, mode, rules version, timed inputs), so replaying reproduces it exactly.

JSON format (version 2; version 1 files, without `rules`, `daily` and `modes`, still read):
    {"format": "vram-tetris-replay", "version": 2, "rules": 1, "seed": 7, "mode": "paged",
     "endless": false, "daily": "2026-12-01" or null,
     "steps": [[dt_ms, ["LEFT", "HARD_DROP"]], [dt_ms, [], repeat], ...],
     "modes": ["paged"], "final": {"score": ..., "lines": ..., "board": "<digest>", ...}}
A step with a third number stands for that many identical steps. `mode` is the allocator the run
started in; `modes` the allocators it used (the engine's Game.modes_used: more than one when it
changed allocator after its first request, a mixed run). `final` is the state
replaying must reach (see final_state). Share codes (engine.sharecode) hold the same run.

Reading is streamed: a file is parsed one step at a time into a Timeline, which keeps runs of
identical steps as one entry in compact arrays, so memory follows the steps that matter
(inputs, changes of pace), not the file's size or its idle frames.
"""

from __future__ import annotations

import hashlib
import json
import math
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

from .daily import daily_seed, parse_day
from .events import Event
from . import modes as M
from .game import MODES, Game, Input
from .rules import RULES_VERSION

FORMAT = "vram-tetris-replay"
VERSION = 2
READS = (1, 2)
MAX_DT_MS = 60_000
MAX_STEPS = 10_000_000  # about 46 hours of 60 Hz frames
MAX_INPUTS_PER_STEP = 64
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_VALUE_CHARS = 1024 * 1024  # one step or one header value; a replay has no bigger item
CHUNK_CHARS = 64 * 1024
MIXED = M.MIXED
OUTCOMES = ("oom", "victory", "unfinished")


class ReplayError(ValueError):
    """A replay that cannot be read; the message says what is wrong, in one line."""


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


def state_digest(state: dict[str, object]) -> bytes:
    """Eight bytes that stand for a whole final state (what a share code carries)."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).digest()[:8]


def outcome_of(game: Game) -> str:
    return game.result.outcome if game.over and game.result is not None else "unfinished"


def mode_label(game: Game) -> str:
    """The run's allocator, or "mixed" when it switched after it started (the engine decides)."""
    return MIXED if game.mixed else game.mode


@dataclass(frozen=True)
class Claim:
    """What a recorded run says it reached; anyone can re-simulate it and compare."""

    score: int
    lines: int
    pieces: int
    outcome: str
    mode: str  # the allocator the run counts for, or "mixed"
    digest: bytes  # state_digest(final_state(game))

    @property
    def mixed(self) -> bool:
        return self.mode == MIXED

    @classmethod
    def of(cls, game: Game) -> Claim:
        return cls(game.score, game.lines, game.pieces, outcome_of(game), mode_label(game),
                   state_digest(final_state(game)))


class Timeline:
    """A run's timed inputs, kept as runs of identical steps (dt_ms, inputs, repeat).

    Three flat arrays and a table of the distinct input combinations: a few bytes per run,
    and appending a step is O(1). This is what the game writes every frame.
    """

    __slots__ = ("_dt", "_set", "_rep", "_sets", "_index", "steps")

    def __init__(self, steps: Iterable[tuple[float, Iterable[Input]]] = ()) -> None:
        self._dt = array("d")
        self._set = array("H")
        self._rep = array("Q")
        self._sets: list[tuple[Input, ...]] = [()]
        self._index: dict[tuple[Input, ...], int] = {(): 0}
        self.steps = 0
        for dt, inputs in steps:
            self.add(dt, tuple(inputs))

    def add(self, dt_ms: float, inputs: tuple[Input, ...] = (), repeat: int = 1) -> None:
        """Append `repeat` identical steps (merged into the last run when equal to it)."""
        if self.steps + repeat > MAX_STEPS:
            raise ReplayError(f"too long: more than {MAX_STEPS} steps")
        key = self._index.get(inputs)
        if key is None:
            if len(self._sets) >= 65535:
                raise ReplayError("too many distinct input combinations")
            key = self._index[inputs] = len(self._sets)
            self._sets.append(inputs)
        self.steps += repeat
        if self._rep and self._set[-1] == key and self._dt[-1] == dt_ms:
            self._rep[-1] += repeat
            return
        self._dt.append(dt_ms)
        self._set.append(key)
        self._rep.append(repeat)

    def append(self, step: tuple[float, Iterable[Input]]) -> None:
        self.add(float(step[0]), tuple(step[1]))

    def runs(self) -> Iterator[tuple[float, tuple[Input, ...], int]]:
        sets = self._sets
        for dt, key, rep in zip(self._dt, self._set, self._rep):
            yield dt, sets[key], rep

    def __iter__(self) -> Iterator[tuple[float, tuple[Input, ...]]]:
        for dt, inputs, rep in self.runs():
            for _ in range(rep):
                yield dt, inputs

    def __len__(self) -> int:
        return self.steps

    @property
    def run_count(self) -> int:
        return len(self._rep)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Timeline):
            return NotImplemented
        return list(self.runs()) == list(other.runs())


@dataclass(frozen=True)
class Outcome:
    """A re-simulated run: the game at its end and the allocators it used."""

    game: Game

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.game.modes_used)

    @property
    def mode(self) -> str:
        return mode_label(self.game)

    def summary(self) -> dict[str, object]:
        g = self.game
        return {"score": g.score, "lines": g.lines, "pieces": g.pieces, "mode": self.mode,
                "modes": list(self.modes), "outcome": outcome_of(g), "time_ms": round(g.time_ms, 3)}


@dataclass
class Replay:
    seed: int
    mode: str
    endless: bool = False
    steps: Timeline = field(default_factory=Timeline)
    final: dict[str, object] | None = None  # the full final state (replay files)
    rules: int = RULES_VERSION
    daily: str | None = None  # ISO date of a daily-challenge run
    modes: tuple[str, ...] | None = None  # allocators used, when recorded
    claim: Claim | None = None  # what a share code says the run reached

    def __post_init__(self) -> None:
        if not isinstance(self.steps, Timeline):
            self.steps = Timeline(self.steps)

    def simulate(self) -> Outcome:
        game = Game(seed=self.seed, mode=self.mode, endless=self.endless)
        update = game.update
        for dt, inputs, rep in self.steps.runs():
            for _ in range(rep):
                update(dt, inputs)
                if game.over:
                    return Outcome(game)
        return Outcome(game)

    def play(self) -> Game:
        return self.simulate().game

    def check(self) -> tuple[Outcome | None, str | None]:
        """Re-simulate and compare: (outcome, None) when the run is what it claims, else a reason."""
        if self.rules > RULES_VERSION:
            return None, (f"recorded under game rules v{self.rules}, newer than this game's "
                          f"v{RULES_VERSION}: update the game to check it")
        if self.daily is not None and self.seed != daily_seed(parse_day(self.daily)):
            return None, f"seed {self.seed} is not the daily seed of {self.daily}"
        if self.claim is None and self.final is None:
            return None, "unverifiable: the replay has no recorded final state to check against"
        out = self.simulate()
        return out, self.mismatch(out)

    def mismatch(self, out: Outcome) -> str | None:
        """Why `out` (this replay re-simulated) is not the run it claims; None when it is."""
        if self.claim is None and self.final is None:
            return "unverifiable: the replay has no recorded final state to check against"
        got = Claim.of(out.game)
        if self.claim is not None:
            return None if got == self.claim else _difference(self.claim, got, self.rules)
        if final_state(out.game) == self.final and (self.modes is None or tuple(self.modes) == out.modes):
            return None
        f = self.final or {}
        recorded = Claim(_int(f.get("score")), _int(f.get("lines")), _int(f.get("pieces")),
                         got.outcome, self._file_mode(got.mode), b"")
        return _difference(recorded, got, self.rules)

    def claimed_score(self) -> int | None:
        """The final score this replay says its run reached (None when it says nothing)."""
        if self.claim is not None:
            return self.claim.score
        score = (self.final or {}).get("score")
        return score if isinstance(score, int) and not isinstance(score, bool) else None

    def claimed_mode(self) -> str:
        """The allocator label the replay claims: a mode, or "mixed"."""
        if self.claim is not None:
            return self.claim.mode
        return self._file_mode(self.mode)

    def _file_mode(self, otherwise: str) -> str:
        if not self.modes:
            return otherwise
        return MIXED if len(self.modes) > 1 else self.modes[0]

    def verify(self) -> bool:
        """True when replaying reaches the recorded final state."""
        out, problem = self.check()
        return problem is None

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> str:
        return "".join(self._json_parts())

    def write(self, fh: IO[str]) -> None:
        for part in self._json_parts():
            fh.write(part)

    def save(self, path: str) -> None:
        """Write the replay to `path` whole or not at all (a temporary file, then a rename)."""
        import os

        tmp = f"{path}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                self.write(fh)
                fh.write("\n")
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _json_parts(self) -> Iterator[str]:
        head = {"format": FORMAT, "version": VERSION, "rules": self.rules, "seed": self.seed,
                "mode": self.mode, "endless": self.endless, "daily": self.daily}
        yield json.dumps(head, separators=(",", ":"))[:-1] + ',"steps":['
        first = True
        for dt, inputs, rep in self.steps.runs():
            step = [_dt_out(dt), [i.value for i in inputs]] + ([rep] if rep > 1 else [])
            yield ("" if first else ",") + json.dumps(step, separators=(",", ":"))
            first = False
        tail = {"modes": list(self.modes) if self.modes is not None else None, "final": self.final}
        yield "]," + json.dumps(tail, separators=(",", ":"))[1:]

    @classmethod
    def from_json(cls, text: str) -> Replay:
        import io

        return cls.read(io.StringIO(text))

    @classmethod
    def load(cls, path: str) -> Replay:
        """Read a replay file, streamed; ReplayError (or OSError) when it cannot be."""
        import os

        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise ReplayError(f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        with open(path, encoding="utf-8", errors="strict", newline="") as fh:
            try:
                return cls.read(fh)
            except UnicodeDecodeError:
                raise ReplayError("not UTF-8 text") from None

    @classmethod
    def read(cls, fh: IO[str]) -> Replay:
        """Parse a replay document from a text stream, one step at a time."""
        doc: dict[str, object] = {}
        steps = Timeline()
        stream = _JsonStream(fh)
        if not stream.open_object():
            raise ReplayError(f"not a replay: expected an object with format {FORMAT!r}")
        for key in stream.keys():
            if key == "steps":
                if doc.get("format") == FORMAT and doc.get("version") not in READS:
                    _check_header(doc)
                if not stream.open_array():
                    raise ReplayError("'steps' must be a list")
                for n, item in enumerate(stream.items()):
                    dt, inputs, repeat = _parse_step(n, item)
                    steps.add(dt, inputs, repeat)
                doc["steps"] = True
            else:
                doc[key] = stream.value()
        stream.end()
        if "steps" not in doc:
            _check_header(doc)
            raise ReplayError("'steps' must be a list")
        return cls._from_doc(doc, steps)

    @classmethod
    def _from_doc(cls, doc: dict[str, object], steps: Timeline) -> Replay:
        _check_header(doc)
        seed, mode, endless = doc.get("seed"), doc.get("mode"), doc.get("endless", False)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ReplayError("'seed' must be an integer")
        if mode not in MODES:
            raise ReplayError(f"'mode' must be one of {MODES}")
        if not isinstance(endless, bool):
            raise ReplayError("'endless' must be true or false")
        rules = doc.get("rules", 1)
        if not isinstance(rules, int) or isinstance(rules, bool) or rules < 1:
            raise ReplayError("'rules' must be a positive integer")
        daily = doc.get("daily")
        if daily is not None:
            try:
                parse_day(daily)  # type: ignore[arg-type]
            except (ValueError, TypeError):
                raise ReplayError("'daily' must be a date as YYYY-MM-DD or null") from None
        modes = doc.get("modes")
        if modes is not None:
            if (not isinstance(modes, list) or not modes or len(modes) > MAX_STEPS
                    or any(m not in MODES for m in modes)):
                raise ReplayError(f"'modes' must list the allocators used (of {', '.join(MODES)})")
            modes = tuple(modes)
        final = doc.get("final")
        if final is not None and not isinstance(final, dict):
            raise ReplayError("'final' must be an object or null")
        return cls(seed, mode, endless, steps, final, rules, daily, modes)  # type: ignore[arg-type]


def _check_header(doc: dict[str, object]) -> None:
    if doc.get("format") != FORMAT:
        raise ReplayError(f"not a replay: expected an object with format {FORMAT!r}")
    version = doc.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise ReplayError(f"replay format version {version} is newer than this game reads "
                          f"({VERSION}): update the game")
    if version not in READS:
        raise ReplayError(f"unsupported replay version {version!r} (this reads {READS})")


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _dt_out(dt: float) -> float | int:
    return int(dt) if dt == int(dt) else dt


def _difference(expected: Claim, got: Claim, rules: int) -> str:
    parts = [f"{name} {a} recorded, {b} replayed"
             for name, a, b in (("score", expected.score, got.score),
                                ("lines", expected.lines, got.lines),
                                ("pieces", expected.pieces, got.pieces),
                                ("outcome", expected.outcome, got.outcome),
                                ("allocator", expected.mode, got.mode)) if a != b]
    what = "; ".join(parts) if parts else "the final board differs"
    note = (f" (recorded under game rules v{rules}, this game plays v{RULES_VERSION})"
            if rules != RULES_VERSION else "")
    return f"does not match its re-simulation: {what}{note}"


def _parse_step(n: int, step: object) -> tuple[float, tuple[Input, ...], int]:
    if not isinstance(step, list) or len(step) not in (2, 3):
        raise ReplayError(f"step {n}: expected [dt_ms, [inputs]] or [dt_ms, [inputs], repeat]")
    dt, names = step[0], step[1]
    repeat = step[2] if len(step) == 3 else 1
    if not _valid_dt(dt):
        raise ReplayError(f"step {n}: dt_ms must be a number of milliseconds from 0 to {MAX_DT_MS}")
    if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= MAX_STEPS:
        raise ReplayError(f"step {n}: repeat must be a positive integer")
    if not isinstance(names, list) or len(names) > MAX_INPUTS_PER_STEP:
        raise ReplayError(f"step {n}: inputs must be a list of at most {MAX_INPUTS_PER_STEP} names")
    try:
        inputs = tuple(Input(name) for name in names)
    except (ValueError, TypeError):
        valid = ", ".join(i.value for i in Input)
        raise ReplayError(f"step {n}: unknown input in {str(names)[:80]} (valid: {valid})") from None
    return float(dt), inputs, repeat


def _valid_dt(dt: object) -> bool:
    return (not isinstance(dt, bool) and isinstance(dt, (int, float)) and math.isfinite(dt)
            and 0 <= dt <= MAX_DT_MS)


class _JsonStream:
    """Just enough of a streaming JSON reader for one object whose big member is a flat list.

    Values are decoded one at a time with json's own decoder from a window over the file, so
    at most one item (bounded by MAX_VALUE_CHARS) is held besides what the caller keeps.
    """

    _WS = " \t\n\r"

    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.fh.read(CHUNK_CHARS)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def _peek(self) -> str:
        """The next non-space character ('' at the end of the text)."""
        while True:
            buf, pos, n = self.buf, self.pos, len(self.buf)
            while pos < n and buf[pos] in self._WS:
                pos += 1
            self.pos = pos
            if pos < n:
                return buf[pos]
            if not self._fill():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        c = self._peek()
        if c == "" or c not in chars:
            raise ReplayError(f"not a JSON document: expected {what} at character "
                              f"{self.pos}" if c else "truncated: the document ends early")
        self.pos += 1
        return c

    def open_object(self) -> bool:
        c = self._peek()
        if c == "":
            raise ReplayError("not a JSON document: the file is empty")
        if c != "{":
            return False
        self.pos += 1
        return True

    def open_array(self) -> bool:
        if self._peek() != "[":
            return False
        self.pos += 1
        return True

    def value(self) -> object:
        """Decode the next complete value."""
        self._peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof or len(self.buf) - self.pos > MAX_VALUE_CHARS:
                    if self.eof:
                        raise ReplayError(f"not a JSON document: {exc.msg} (truncated?)") from None
                    raise ReplayError("not a replay: a value longer than "
                                      f"{MAX_VALUE_CHARS} characters") from None
                self._fill()
                continue
            except RecursionError:
                raise ReplayError("not a JSON document: nested too deeply") from None
            if end == len(self.buf) and not self.eof and self._fill():
                continue  # a number may go on in the next chunk: decode it again whole
            self.pos = end
            return value

    def keys(self) -> Iterator[str]:
        if self._peek() == "}":
            self.pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise ReplayError("not a JSON document: object keys must be strings")
            self._expect(":", "':'")
            yield key
            if self._expect(",}", "',' or '}'") == "}":
                return

    def items(self) -> Iterator[object]:
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            if self._expect(",]", "',' or ']'") == "]":
                return

    def end(self) -> None:
        if self._peek() != "":
            raise ReplayError(f"not a JSON document: extra data at character {self.pos}")


class Recorder:
    """Drives a Game and writes down every step, so the run can be saved as a replay."""

    def __init__(self, seed: int = 0, mode: str = "contiguous", endless: bool = False,
                 daily: str | None = None) -> None:
        self.game = Game(seed=seed, mode=mode, endless=endless)
        self.tape = Tape(self.game, daily=daily)

    @property
    def replay(self) -> Replay:
        return self.tape.replay

    def update(self, dt_ms: float, inputs: Iterable[Input | str] = ()) -> list[Event]:
        """Game.update, written down; refuses what a replay file could not hold."""
        if not _valid_dt(dt_ms):
            raise ValueError(f"dt_ms must be a finite number from 0 to {MAX_DT_MS}, not {dt_ms!r}")
        inputs = tuple(Input(i) for i in inputs)
        self.tape.record(float(dt_ms), inputs)
        return self.game.update(dt_ms, inputs)

    def finish(self) -> Replay:
        return self.tape.finish()


class Tape:
    """Writes down the steps given to a live game (call record() before each update).

    What the game keeps for every run: O(1) per step, a few bytes per run of identical steps.
    """

    def __init__(self, game: Game, daily: str | None = None) -> None:
        self.game = game
        self.replay = Replay(game.seed, game.mode, game.endless, daily=daily)

    @property
    def mixed(self) -> bool:
        return self.game.mixed

    @property
    def mode(self) -> str:
        return mode_label(self.game)

    def record(self, dt_ms: float, inputs: tuple[Input, ...]) -> None:
        if not self.game.over:
            self.replay.steps.add(dt_ms, inputs)

    def finish(self) -> Replay:
        r = self.replay
        r.final = final_state(self.game)
        r.modes = tuple(self.game.modes_used)
        return r

    def claim(self) -> Claim:
        """What the run reached, for its share code (no re-simulation needed: it was just played)."""
        return Claim.of(self.game)


# ---------------------------------------------------------------------- command line
def load_any(arg: str) -> Replay:
    """A replay from a file path, a share code or a link with ?replay=CODE."""
    import os

    from . import sharecode

    if "replay=" not in arg and (os.path.exists(arg) or arg.endswith(".json") or os.sep in arg):
        return Replay.load(arg)
    return sharecode.decode(arg)


def main(argv: list[str] | None = None) -> int:
    """`python -m engine.replay CODE_OR_FILE`: re-simulate a run and check what it claims."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m engine.replay", allow_abbrev=False,
        description="Re-simulate a recorded run (replay file or share code) and check its result. "
                    "Exit 0: verified; 1: corrupt, truncated, newer, unverifiable or not matching; "
                    "2: bad command line or unreadable file.")
    parser.add_argument("source", metavar="CODE_OR_FILE", help="a share code, a ?replay= link or a replay file")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--code", action="store_true", help="print the run's share code instead")
    args = parser.parse_args(argv)
    try:
        return _check_and_print(parser, args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        import os
        import sys

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _check_and_print(parser, args) -> int:
    import sys

    from . import sharecode

    try:
        replay = load_any(args.source)
    except ReplayError as exc:
        print(f"{parser.prog}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {args.source}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    out, problem = replay.check()
    if problem is not None:
        print(f"{parser.prog}: {problem}", file=sys.stderr)
        return 1
    assert out is not None
    if args.code:
        code = sharecode.encode(replay, out)
        print(code)
        if len(code) > sharecode.COMMENT_LIMIT:
            print(f"{parser.prog}: note: {len(code)} characters, more than a comment takes "
                  f"({sharecode.COMMENT_LIMIT})", file=sys.stderr)
        return 0
    summary = {"seed": replay.seed, "daily": replay.daily, "rules": replay.rules,
               "endless": replay.endless, "steps": len(replay.steps), **out.summary(),
               "verified": True}
    if args.json:
        print(json.dumps(summary, separators=(", ", ": ")))
        return 0
    day = f", daily {replay.daily}" if replay.daily else ""
    print(f"seed {replay.seed}{day}, mode {summary['mode']}, {len(replay.steps)} steps: "
          f"score {summary['score']}, lines {summary['lines']}, pieces {summary['pieces']}, "
          f"outcome {summary['outcome']}")
    print("final state reproduced exactly")
    return 0


if __name__ == "__main__":
    # Run as `python -m engine.replay`, this file is __main__: use the package's own module, so
    # its classes are the ones engine.sharecode raises and returns.
    from engine.replay import main as _main

    raise SystemExit(_main())
