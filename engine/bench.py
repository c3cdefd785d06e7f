"""Engine speed figures: cost of one 60 Hz frame, recording, a 30-game-minute bot run, and the
cost of refusing a hostile share code.

    python -m engine.bench [--frames N] [--seconds S]

At most MAX_FRAMES frames and MAX_SECONDS of bot time per mode; a long run shows its progress on
a terminal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from .autoplay import play_one
from .bot import DEFAULT_SKILL, Bot
from . import cli_args
from .cli_args import number, whole
from .game import MODES, Game, Input
from .rules import RULES_VERSION

FRAME_MS = 1000.0 / 60.0
MAX_FRAMES = 10_000_000
MAX_SECONDS = 3600.0


class _OneKeyPerFrame:
    """A bot's plan played one key press per frame (planning stays outside the timed part)."""

    def __init__(self, seed: int) -> None:
        self._bot = Bot(seed=seed)
        self._pending: list[Input] = []

    def drop_plan(self) -> None:
        self._pending = []

    def next(self, game: Game) -> tuple[Input, ...]:
        if not self._pending:
            self._pending = self._bot.plan(game)
        return (self._pending.pop(0),) if self._pending else ()


def frame_costs(mode: str, frames: int, seed: int = 1,
                progress: cli_args.Progress | None = None) -> list[float]:
    """µs per frame of update + telemetry while a bot plays one key press per frame."""
    game = Game(seed=seed, mode=mode, endless=True)
    keys = _OneKeyPerFrame(seed)
    costs: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(frames):
        if game.over:
            game = Game(seed=seed + len(costs), mode=mode, endless=True)
            keys.drop_plan()
        inputs = keys.next(game)
        t0 = clock()
        game.update(FRAME_MS, inputs)
        game.telemetry()
        costs.append((clock() - t0) / 1000.0)
        if progress is not None and len(costs) % 1024 == 0:
            progress.update(len(costs))
    return costs


def recording_costs(mode: str, frames: int, seed: int = 1) -> tuple[list[float], int]:
    """µs per frame the game spends writing the run down (Tape.record), and the share
    code's length for those frames, while a bot plays one key press per frame."""
    from .replay import Tape
    from .sharecode import encode

    game = Game(seed=seed, mode=mode, endless=True)
    tape = Tape(game)
    keys = _OneKeyPerFrame(seed)
    costs: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(frames):
        if game.over:
            break
        inputs = keys.next(game)
        t0 = clock()
        tape.record(FRAME_MS, inputs)
        costs.append((clock() - t0) / 1000.0)
        game.update(FRAME_MS, inputs)
    return costs, len(encode(tape.finish()))


def bot_run(mode: str, seconds: float) -> tuple[float, float, float]:
    """(CPU seconds per run, game minutes per run, pieces per CPU second) of bot games of up to
    30 game minutes, played for about `seconds` of CPU time."""
    pieces = runs = 0
    minutes = 0.0
    start = time.process_time()
    while runs == 0 or time.process_time() - start < seconds:
        stats = play_one(mode, runs, "bot", DEFAULT_SKILL, 30.0)
        pieces += stats.pieces
        minutes += stats.minutes
        runs += 1
    cpu = time.process_time() - start
    return cpu / runs, minutes / runs, pieces / cpu


HOSTILE_PRESSES = 9_900_000


def hostile_share_code(presses: int = HOSTILE_PRESSES) -> str:
    """A well-formed share code of `presses` alternating LEFT/RIGHT presses at dt 0: millions of
    steps in a few tens of thousands of characters, far beyond what a real run holds."""
    import struct
    import zlib

    from . import sharecode as S
    from .replay import OUTCOMES

    head = bytearray(S._varint(RULES_VERSION))
    head.append(0)  # run flags: not endless, not a daily
    head += S._varint(5)  # seed
    for name in ("contiguous", "contiguous"):
        head += S._varint(len(name)) + name.encode("ascii")
    head += S._varint(0) * 3 + bytes([OUTCOMES.index("unfinished")]) + bytes(8)
    head += struct.pack(">d", 0.0)
    left, right = S.INPUT_CODES.index(Input.LEFT), S.INPUT_CODES.index(Input.RIGHT)
    ops = bytes([left, right]) * (presses // 2) + bytes([left] * (presses % 2)) + bytes([S.OP_END])
    gaps = bytes(len(ops))
    raw = bytes(head) + S._varint(len(ops)) + S._varint(len(gaps)) + ops + gaps
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    body = bytes([1]) + packer.compress(raw) + packer.flush()
    payload = S._varint(len(body)) + body + struct.pack(">I", zlib.crc32(body))
    return S.PREFIX + S.ALPHABET[1] + S.b62encode(payload)


def hostile_refusal(code: str) -> tuple[float, int, str]:
    """(seconds, peak bytes traced, the reason) to refuse `code`; AssertionError if accepted."""
    import tracemalloc

    from .replay import ReplayError
    from .sharecode import decode

    tracemalloc.start()
    started = time.perf_counter()
    try:
        decode(code)
    except ReplayError as exc:
        reason = str(exc)
    else:
        reason = ""
    finally:
        took = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert reason, "the hostile share code was accepted"
    return took, peak, reason


def main(argv: list[str] | None = None) -> int:
    p = cli_args.parser("python -m engine.bench", __doc__.splitlines()[0])
    p.add_argument("--frames", type=whole(1, MAX_FRAMES), default=30000,
                   help=f"frames timed per mode, at most {MAX_FRAMES:,}")
    p.add_argument("--seconds", type=number(0.0, MAX_SECONDS, above=True), default=3.0,
                   help=f"bot time per mode, at most {MAX_SECONDS:.0f}")
    args = p.parse_args(argv)
    print(f"Python {sys.version.split()[0]}")
    for mode in MODES:
        progress = cli_args.Progress(f"{mode} frames", args.frames)
        costs = sorted(frame_costs(mode, args.frames, progress=progress))
        progress.close()
        med = statistics.median(costs)
        p99 = costs[int(len(costs) * 0.99)]
        print(f"{mode:<11} frame (update + telemetry): median {med:6.1f} us, p99 {p99:6.1f} us "
              f"(target <= 100 us median)")
    for mode in MODES:
        costs, code = recording_costs(mode, min(args.frames, 10800))
        costs.sort()
        print(f"{mode:<11} recording the run: median {statistics.median(costs):5.2f} us, "
              f"p99 {costs[int(len(costs) * 0.99)]:5.2f} us per frame; share code {code} chars "
              f"for {len(costs)} frames")
    for mode in MODES:
        cpu, minutes, rate = bot_run(mode, args.seconds)
        print(f"{mode:<11} bot run: {cpu:5.2f} s CPU for {minutes:4.1f} game minutes "
              f"(target < 2 s for 30), {rate:6.0f} pieces/s")
    hostile = hostile_share_code()
    took, peak, _ = hostile_refusal(hostile)
    print(f"hostile share code ({len(hostile):,} chars, {HOSTILE_PRESSES:,} presses at dt 0): refused in "
          f"{took * 1000:.0f} ms, peak {peak / 1e6:.1f} MB traced (target <= 200 ms, 30 MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(cli_args.run(main, prog="python -m engine.bench"))
