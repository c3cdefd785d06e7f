"""Replays: a run is (seed, mode, rules version, timed inputs), so replaying reproduces it exactly.

The game writes every run down as it is played (Tape, a few bytes per run of identical steps in
a Timeline), and anyone can re-simulate a Replay and compare it with what it claims (a Claim
from a share code, or the full final state from a replay file). Share codes are
engine.sharecode, replay files engine.replay_json (to_json, from_json, save, load), the command
line engine.replay_cli (`python -m engine.replay CODE_OR_FILE`). Those modules build on this one
and this one imports none of them: only the `__main__` block at the end, run as a script and
never on import, hands the command line to engine.replay_cli.
"""

from __future__ import annotations

import hashlib
import json
import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from . import chapters
from . import modes as M
from .daily import SEED_LIMIT, daily_seed, parse_day
from .events import Event
from .game import Game, Input
from .rules import RULES_VERSION

# What a real run can hold. A replay (share code or file) beyond these bounds is refused while
# it is read, before its steps are expanded (engine.sharecode, engine.replay_json call
# check_pace after every run-length they read), so a hostile code costs the reader no more than
# the bound. A change of the game's rules may move them; docs/replays.md gives the reasoning.
MAX_DT_MS = 60_000  # one step
MAX_STEPS = 10_000_000  # frames: about 46 hours of 60 Hz frames, the longest run
MAX_GAME_MS = 48 * 3600 * 1000.0  # game time: the longest run (46.3 h at 60 Hz) and a margin
INPUTS_PER_SECOND = 120  # presses per second of game time: twice one press every 60 Hz frame
INPUT_SLACK = 10_000  # presses allowed on top, whatever the game time (zero-length steps)
MAX_INPUTS_PER_STEP = 64
# Steps per second of game time: four times the game's fixed 60 Hz step (a step costs the
# replayer a tick of the game whatever its length, so a code of millions of 1e-9 ms steps would
# take minutes to verify), plus STEP_SLACK steps whatever the game time.
STEPS_PER_SECOND = 240
STEP_SLACK = 20_000
# Items a replay may hold, whatever the game time they cover: every token of a share code (a
# press, a change of step length, the end) and every step item of a replay file. Reading one
# costs a fixed amount of work, so this caps what checking any code or file costs. A real run
# writes one per press or change of pace: five presses a second for five hours is 90,000.
MAX_ITEMS = 100_000
MIN_SEED, MAX_SEED = 0, SEED_LIMIT - 1  # every seed the game hands out, and the daily's
MIXED = M.MIXED
OUTCOMES = ("oom", "overload", "victory", "unfinished")


class ReplayError(ValueError):
    """A replay that cannot be read; the message says what is wrong, in one line."""


def check_pace(inputs: int, game_ms: float, steps: int = 0) -> None:
    """Refuse a replay being read once it holds more than a real run can: more game time than
    MAX_GAME_MS, more than INPUTS_PER_SECOND presses per second of game time (plus
    INPUT_SLACK), or more than STEPS_PER_SECOND steps (plus STEP_SLACK). `inputs`, `game_ms`
    and `steps` count everything read so far, this step included."""
    if game_ms > MAX_GAME_MS:
        raise ReplayError(f"too long: more than {MAX_GAME_MS / 3_600_000:.0f} hours of game time")
    if steps > STEPS_PER_SECOND * game_ms / 1000.0 + STEP_SLACK:
        raise ReplayError(f"not a real run: {steps:,} steps in {game_ms / 1000.0:,.1f} s of game "
                          f"time (a run takes at most {STEPS_PER_SECOND} a second, "
                          f"plus {STEP_SLACK:,})")
    if inputs > INPUTS_PER_SECOND * game_ms / 1000.0 + INPUT_SLACK:
        raise ReplayError(f"not a real run: {inputs:,} key presses in {game_ms / 1000.0:,.1f} s of "
                          f"game time (a run holds at most {INPUTS_PER_SECOND} a second, "
                          f"plus {INPUT_SLACK:,})")


def check_items(items: int) -> None:
    """Refuse a replay holding more than MAX_ITEMS items (tokens of a code, steps of a file)."""
    if items > MAX_ITEMS:
        raise ReplayError(f"not a real run: more than {MAX_ITEMS:,} recorded items "
                          "(presses and changes of pace)")


def check_seed(seed: object) -> int:
    """`seed` when it is a whole number from MIN_SEED to MAX_SEED; ReplayError otherwise."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not MIN_SEED <= seed <= MAX_SEED:
        shown = repr(seed) if isinstance(seed, int) and abs(seed) < 10**30 else "a value"
        raise ReplayError(f"seed must be a whole number from {MIN_SEED} to {MAX_SEED:,}, "
                          f"got {shown}"[:200])
    return seed


def board_digest(game: Game) -> str:
    text = ";".join(",".join(map(str, row)) for row in game.board.grid)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def final_state(game: Game) -> dict[str, object]:
    """Everything a run's future depends on, so a replay that verifies is the same run."""
    a = game.active
    s = game.serving
    state: dict[str, object] = {
        "score": game.score, "pieces": game.pieces, "level": game.level,
        "tokens": game.tokens, "served": game.served, "mode": game.mode,
        "time_ms": game.time_ms, "step": s.step, "preempt": s.preempt_mode,
        "preempted": [s.preempted_swap, s.preempted_recompute], "over": game.over,
        "hold": game.hold.id if game.hold is not None else None,
        "active": [a.kind.name, a.rotation, a.x, a.y, a.request_id] if a else None,
        "waiting": [r.id for r in s.waiting], "board": board_digest(game)}
    if game.over and game.result is not None:
        state["outcome"] = game.result.outcome
    return state


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
    served: int  # requests served
    pieces: int
    outcome: str
    mode: str  # the allocator the run counts for, or "mixed"
    digest: bytes  # state_digest(final_state(game))

    @property
    def mixed(self) -> bool:
        return self.mode == MIXED

    @classmethod
    def of(cls, game: Game) -> Claim:
        return cls(game.score, game.served, game.pieces, outcome_of(game), mode_label(game),
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
        return {"score": g.score, "served": g.served, "tokens": g.tokens, "pieces": g.pieces,
                "minutes": round(g.time_ms / 60_000.0, 2), "mode": self.mode,
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
    chapter: int | None = None  # a chapter's run (engine.chapters): its rules, load and goal

    def __post_init__(self) -> None:
        if not isinstance(self.steps, Timeline):
            self.steps = Timeline(self.steps)

    def new_game(self) -> Game:
        """The game this run starts from."""
        if self.chapter is not None:
            return chapters.chapter(self.chapter).new_game(self.seed)
        return Game(seed=self.seed, mode=self.mode, endless=self.endless)

    def simulate(self, after_step: Callable[[Game], None] | None = None) -> Outcome:
        """Play the run again; `after_step` (if any) reads the game after every step."""
        game = self.new_game()
        update = game.update
        for dt, inputs, rep in self.steps.runs():
            for _ in range(rep):
                update(dt, inputs)
                if after_step is not None:
                    after_step(game)
                if game.over:
                    return Outcome(game)
        return Outcome(game)

    def play(self) -> Game:
        return self.simulate().game

    def check(self) -> tuple[Outcome | None, str | None]:
        """Re-simulate and compare: (outcome, None) when the run is what it claims, else a reason."""
        if self.rules != RULES_VERSION:
            return None, rules_mismatch(self.rules)
        try:
            check_seed(self.seed)
            day = None if self.daily is None else parse_day(self.daily)
        except ValueError as exc:
            return None, str(exc)
        if day is not None and self.seed != daily_seed(day):
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
        recorded = Claim(_int(f.get("score")), _int(f.get("served")), _int(f.get("pieces")),
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


def rules_mismatch(rules: int) -> str:
    """The one line an old (or newer) run is refused with: it would not replay as it was played."""
    return f"recorded under rules {rules}; this build plays rules {RULES_VERSION}"


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _difference(expected: Claim, got: Claim, rules: int) -> str:
    parts = [f"{name} {a} recorded, {b} replayed"
             for name, a, b in (("score", expected.score, got.score),
                                ("served", expected.served, got.served),
                                ("pieces", expected.pieces, got.pieces),
                                ("outcome", expected.outcome, got.outcome),
                                ("allocator", expected.mode, got.mode)) if a != b]
    what = "; ".join(parts) if parts else "the final board differs"
    note = (f" (recorded under game rules v{rules}, this game plays v{RULES_VERSION})"
            if rules != RULES_VERSION else "")
    return f"does not match its re-simulation: {what}{note}"


def _valid_dt(dt: object) -> bool:
    return (not isinstance(dt, bool) and isinstance(dt, (int, float)) and math.isfinite(dt)
            and 0 <= dt <= MAX_DT_MS)


class Recorder:
    """Drives a Game and writes down every step, so the run can be saved as a replay."""

    def __init__(self, seed: int = 0, mode: str = "contiguous", endless: bool = False,
                 daily: str | None = None, chapter: int | None = None) -> None:
        self.game = (chapters.chapter(chapter).new_game(seed) if chapter is not None
                     else Game(seed=seed, mode=mode, endless=endless))
        self.tape = Tape(self.game, daily=daily, chapter=chapter)

    @property
    def replay(self) -> Replay:
        return self.tape.replay

    def update(self, dt_ms: float, inputs: Iterable[Input | str] = ()) -> list[Event]:
        """Game.update, written down; refuses what a replay file could not hold."""
        if not _valid_dt(dt_ms):
            raise ValueError(f"dt_ms must be a finite number from 0 to {MAX_DT_MS}, not {dt_ms!r}")
        pressed = tuple(Input(i) for i in inputs)
        self.tape.record(float(dt_ms), pressed)
        return self.game.update(dt_ms, pressed)

    def finish(self) -> Replay:
        return self.tape.finish()


class Tape:
    """Writes down the steps given to a live game (call record() before each update).

    What the game keeps for every run: O(1) per step, a few bytes per run of identical steps.
    """

    def __init__(self, game: Game, daily: str | None = None, chapter: int | None = None) -> None:
        self.game = game
        self.replay = Replay(game.seed, game.mode, game.endless, daily=daily, chapter=chapter)

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




if __name__ == "__main__":
    # `python -m engine.replay`: the command line lives in engine.replay_cli (not in the web
    # bundle). This block runs only when this file is the script (__main__), never when the
    # module is imported, so it is an entry point and no import circle: engine.replay_cli
    # imports engine.replay (a module of its own, apart from this script), never the reverse.
    from engine.cli_args import run
    from engine.replay_cli import main

    raise SystemExit(run(main, prog="python -m engine.replay"))
