"""Share codes: a whole run in one line of letters and digits, small enough for a comment.

`vt` + format version (a base62 digit) + base62 (8-byte blocks -> 11 characters) of
`varint body length | body | CRC-32`; the body (raw-deflated) holds the rules version, the run's
flags, seed or daily date, allocators, the claimed result with a digest of the final state, and
the timed inputs as three streams (ops, gaps, arguments). The format: docs/replays.md.
"""

from __future__ import annotations

import re
import struct
import sys
import zlib
from array import array
from collections.abc import Callable, Iterator
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

from .chapters import CHAPTERS
from .daily import daily_seed, day_number, from_day_number
from .game import Input
from .replay import (MAX_INPUTS_PER_STEP, MAX_SEED, MAX_STEPS, MIXED, OUTCOMES, Claim, Outcome,
                     Replay, ReplayError, Timeline, _valid_dt, check_items, check_pace, check_seed,
                     rules_mismatch)
from .rules import RULES_VERSION

PREFIX = "vt"
VERSION = 2  # the newest format this build reads and writes
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
COMMENT_LIMIT = 2000  # characters: what a three-minute run must fit in
MAX_CODE_CHARS = 1024 * 1024  # 100,000 items (replay.MAX_ITEMS) of a real run fit many times over
MAX_BODY_BYTES = 32 * 1024 * 1024
CHUNK_BYTES = 64 * 1024  # the run data is unpacked and read this much at a time

# Input numbering under rules 2 and later (a code of other rules is refused before its inputs
# are read). Append only.
INPUT_CODES: tuple[Input, ...] = (
    Input.LEFT, Input.RIGHT, Input.SOFT_DROP, Input.HARD_DROP, Input.ROTATE_CW, Input.ROTATE_CCW,
    Input.HOLD, Input.SPLIT, Input.MODE_CONTIGUOUS, Input.MODE_PAGED, Input.MODE_TOGGLE,
    Input.PREEMPT_TOGGLE, Input.PICK_1, Input.PICK_2, Input.PICK_3, Input.BUDGET_UP,
    Input.BUDGET_DOWN, Input.SPEC_UP, Input.SPEC_DOWN,
)
_CODE_OF = {inp: n for n, inp in enumerate(INPUT_CODES)}


class Ops(NamedTuple):
    """A format's token numbering: ops below `inputs` are single presses, then the others."""

    inputs: int
    multi: int
    dt: int
    end: int


# Format 1 numbers the first 12 inputs and its other tokens right after them; format 2 leaves
# room for 32 inputs. A run is written in format 1 when every input it holds has a format-1
# number, so the codes of older builds and this one's agree.
FORMATS = {1: Ops(12, 12, 13, 14), 2: Ops(len(INPUT_CODES), 32, 33, 34)}
OP_MULTI, OP_DT, OP_END = FORMATS[1].multi, FORMATS[1].dt, FORMATS[1].end  # format 1's

_FLAG_DEFLATED = 1
_RUN_ENDLESS, _RUN_DAILY, _RUN_CHAPTER = 1, 2, 4

_BLOCK = 8
_BLOCK_CHARS = 11
# Characters for a last block of 1..8 bytes: the fewest whose range holds 2**(8 * n) values.
_TAIL_CHARS = {n: next(c for c in range(1, 12) if 62**c >= 256**n) for n in range(1, _BLOCK + 1)}
_TAIL_BYTES = {c: n for n, c in _TAIL_CHARS.items()}
_INDEX = {ch: i for i, ch in enumerate(ALPHABET)}
_NOT_CODE = re.compile("[^" + ALPHABET + "]")
_DIGITS = bytes.maketrans(ALPHABET.encode("ascii"), bytes(range(62)))  # a character -> its value


def _chars_for(size: int) -> int:
    """How many characters b62encode writes for `size` bytes."""
    full, tail = divmod(size, _BLOCK)
    return full * _BLOCK_CHARS + (_TAIL_CHARS[tail] if tail else 0)


# ---------------------------------------------------------------------- base62 in blocks
def b62encode(data: bytes) -> str:
    out = []
    for i in range(0, len(data), _BLOCK):
        block = data[i:i + _BLOCK]
        n = int.from_bytes(block, "big")
        width = _TAIL_CHARS[len(block)]
        chars = []
        for _ in range(width):
            n, r = divmod(n, 62)
            chars.append(ALPHABET[r])
        out.append("".join(reversed(chars)))
    return "".join(out)


def b62decode(text: str) -> bytes:
    """Inverse of b62encode; ReplayError names what is wrong. `text` holds only ALPHABET's
    characters (decode checks that first). The full blocks are read eleven digit-columns at a
    time, so the interpreter's work is one expression a block."""
    full, tail = divmod(len(text), _BLOCK_CHARS)
    if tail and tail not in _TAIL_BYTES:
        raise ReplayError("truncated: the code ends in the middle of a block; copy all of it")
    end = full * _BLOCK_CHARS
    d = text[:end].encode("ascii").translate(_DIGITS)
    values = [((((((((((a * 62 + b) * 62 + c) * 62 + e) * 62 + f) * 62 + g) * 62 + h) * 62 + i) * 62
                + j) * 62 + k) * 62 + m)
              for a, b, c, e, f, g, h, i, j, k, m in zip(*(d[n:end:_BLOCK_CHARS] for n in range(_BLOCK_CHARS)))]
    if values and max(values) >> 64:
        at = next(n for n, v in enumerate(values) if v >> 64) * _BLOCK_CHARS
        raise ReplayError(f"corrupt: characters {at + 1}-{at + _BLOCK_CHARS} do not decode")
    blocks = array("Q", values)
    if sys.byteorder == "little":
        blocks.byteswap()
    out = blocks.tobytes()
    if tail:
        n = 0
        for ch in text[end:]:
            n = n * 62 + _INDEX[ch]
        if n >= 256**_TAIL_BYTES[tail]:
            raise ReplayError(f"corrupt: characters {end + 1}-{len(text)} do not decode")
        out += n.to_bytes(_TAIL_BYTES[tail], "big")
    return out


# ---------------------------------------------------------------------- varints
def _varint(n: int) -> bytes:
    if n < 0:
        raise ValueError("varints are unsigned")
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class _Reader:
    """Bytes read in order from `chunks` (a whole bytes object, or an iterator of pieces, such as
    _unpacked), holding one piece at a time. It starts `skip` bytes in and ends at `end`."""

    def __init__(self, chunks: bytes | Iterator[bytes], skip: int = 0, end: int | None = None) -> None:
        self.chunks = iter((chunks,)) if isinstance(chunks, bytes) else chunks
        self.buf = b""
        self.at = 0  # in buf
        self.base = 0  # bytes before buf
        self.end = end
        while self.base + len(self.buf) <= skip and self._more():
            pass
        self.at = max(0, min(len(self.buf), skip - self.base))
        if self.base + self.at < skip:
            raise ReplayError("corrupt: the run data ends early")

    @property
    def pos(self) -> int:
        return self.base + self.at

    def _more(self) -> bool:
        """The next piece into buf; False at the end (of the data, or of this reader)."""
        self.base += len(self.buf)
        self.buf, self.at = b"", 0
        room = None if self.end is None else self.end - self.base
        if room is not None and room <= 0:
            return False
        chunk = next(self.chunks, b"")
        if room is not None and len(chunk) > room:
            chunk = chunk[:room]
        self.buf = chunk
        return bool(chunk)

    def at_end(self) -> bool:
        while self.at >= len(self.buf):
            if not self._more():
                return True
        return False

    def byte(self) -> int:
        if self.at >= len(self.buf) and self.at_end():
            raise ReplayError("corrupt: the run data ends early")
        b = self.buf[self.at]
        self.at += 1
        return b

    def varint(self, limit: int = 2**63) -> int:
        n = shift = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            if n >= limit:
                raise ReplayError("corrupt: a number in the run data is out of range")
            if not b & 0x80:
                return n
            shift += 7

    def take(self, size: int) -> bytes:
        out = b""
        while len(out) < size:
            if self.at >= len(self.buf) and self.at_end():
                raise ReplayError("corrupt: the run data ends early")
            part = self.buf[self.at:self.at + size - len(out)]
            self.at += len(part)
            out += part
        return out


def _unpacked(packed: bytes) -> Iterator[bytes]:
    """The raw-deflated `packed`, unpacked CHUNK_BYTES at a time (at most MAX_BODY_BYTES)."""
    unpacker = zlib.decompressobj(-15)
    pending, total = packed, 0
    while True:
        try:
            out = unpacker.decompress(pending, CHUNK_BYTES)
        except zlib.error:
            raise ReplayError("corrupt: the run data does not unpack") from None
        pending = unpacker.unconsumed_tail
        total += len(out)
        if total > MAX_BODY_BYTES:
            raise ReplayError("corrupt: the run data does not unpack")
        if out:
            yield out
        if unpacker.eof:
            return
        if not out and not pending:
            raise ReplayError("corrupt: the run data does not unpack")


# ---------------------------------------------------------------------- encode
def _format_of(timeline: Timeline) -> int:
    """The oldest format that numbers every input of `timeline`."""
    codes = [_CODE_OF[i] for _, inputs, _ in timeline.runs() for i in inputs]
    return 1 if all(c < FORMATS[1].inputs for c in codes) else 2


def _tokens(timeline: Timeline, first_dt: float, fmt: Ops) -> bytes:
    """The timed inputs as three streams: ops (a byte each), gaps (a varint each), arguments."""
    ops, gaps, args = bytearray(), bytearray(), bytearray()
    dt_now, gap = first_dt, 0

    def token(op: int, extra: bytes = b"") -> None:
        nonlocal gap
        ops.append(op)
        gaps.extend(_varint(gap))
        args.extend(extra)
        gap = 0

    for dt, inputs, rep in timeline.runs():
        if dt != dt_now:
            token(fmt.dt, struct.pack(">d", dt))
            dt_now = dt
        if not inputs:
            gap += rep
            continue
        for _ in range(rep):
            if len(inputs) == 1:
                token(_CODE_OF[inputs[0]])
            else:
                token(fmt.multi, _varint(len(inputs)) + bytes(_CODE_OF[i] for i in inputs))
    token(fmt.end)
    return _varint(len(ops)) + _varint(len(gaps)) + bytes(ops) + bytes(gaps) + bytes(args)


def encode(replay: Replay, claim: Claim | Outcome | None = None) -> str:
    """The share code of `replay`. `claim` is what the run reached (re-simulated when omitted)."""
    if claim is None:
        claim = replay.simulate()
    if isinstance(claim, Outcome):
        claim = Claim.of(claim.game)
    first_dt = next((dt for dt, _, _ in replay.steps.runs()), 1000.0 / 60.0)
    flags = ((_RUN_ENDLESS if replay.endless else 0) | (_RUN_DAILY if replay.daily else 0)
             | (_RUN_CHAPTER if replay.chapter is not None else 0))
    if not isinstance(replay.rules, int) or not 1 <= replay.rules < 2**31:
        raise ReplayError(f"rules version must be from 1 to {2**31 - 1}")
    head = bytearray(_varint(replay.rules))
    head.append(flags)
    if replay.chapter is not None:
        head += _varint(_check_chapter(replay.chapter))
    if replay.daily:
        from .daily import parse_day

        try:
            head += _varint(day_number(parse_day(replay.daily)))
        except ValueError as exc:
            raise ReplayError(str(exc)) from None
    else:
        head += _varint(check_seed(replay.seed))
    for name in (replay.mode, claim.mode):
        text = name.encode("ascii")
        head += _varint(len(text)) + text
    head += _varint(claim.score) + _varint(claim.served) + _varint(claim.pieces)
    head.append(OUTCOMES.index(claim.outcome))
    head += claim.digest
    head += struct.pack(">d", first_dt)
    version = _format_of(replay.steps)
    raw = bytes(head) + _tokens(replay.steps, first_dt, FORMATS[version])
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    packed = packer.compress(raw) + packer.flush()
    body = bytes([_FLAG_DEFLATED]) + packed if len(packed) < len(raw) else bytes([0]) + raw
    payload = _varint(len(body)) + body + struct.pack(">I", zlib.crc32(body))
    return PREFIX + ALPHABET[version] + b62encode(payload)


# ---------------------------------------------------------------------- decode
def extract(text: str) -> str:
    """The code in `text`: itself, or the `replay` parameter of a pasted link."""
    text = "".join(str(text).split())
    if "replay=" in text:
        query = urlsplit(text).query or text.split("?", 1)[-1]
        values = parse_qs(query).get("replay")
        if values:
            return "".join(values[0].split())
    return text


def decode(text: str) -> Replay:
    """The replay in a share code (or a link holding one); ReplayError with a one-line reason."""
    code = extract(text)
    if not code:
        raise ReplayError("empty share code")
    if len(code) > MAX_CODE_CHARS:
        raise ReplayError(f"not a share code: longer than {MAX_CODE_CHARS} characters")
    if not code.startswith(PREFIX) or len(code) < 3:
        raise ReplayError(f"not a share code or replay file: a share code starts with {PREFIX!r}")
    version = _INDEX.get(code[2])
    if version is None or version == 0:
        raise ReplayError("corrupt: bad format version character")
    if version > VERSION:
        raise ReplayError(f"share code format {version} is newer than this game reads ({VERSION}): "
                          "update the game")
    payload_text = code[3:]
    bad = _NOT_CODE.search(payload_text)
    if bad is not None:
        raise ReplayError(f"corrupt: character {bad.group()!r} at position {bad.start() + 4} "
                          "is not part of a share code")
    # The length comes first and is checked before the rest is decoded, so a code cut short
    # anywhere says it is truncated.
    if len(payload_text) < _BLOCK_CHARS:
        raise ReplayError("truncated: the code is too short to hold a run; copy the whole code")
    head = _Reader(b62decode(payload_text[:_BLOCK_CHARS]))
    try:
        size = head.varint(MAX_BODY_BYTES)
    except ReplayError:
        raise ReplayError("corrupt: the code does not start with the length of a run") from None
    need = _chars_for(head.pos + size + 4)
    if len(payload_text) < need:
        raise ReplayError(f"truncated: {len(payload_text) + 3:,} of {need + 3:,} characters; "
                          "copy the whole code")
    if len(payload_text) > need:
        raise ReplayError("corrupt: extra characters after the end of the run")
    payload = b62decode(payload_text)
    body = payload[head.pos:head.pos + size]
    (crc,) = struct.unpack(">I", payload[head.pos + size:])
    if zlib.crc32(body) != crc:
        raise ReplayError("corrupt: checksum mismatch (a character was changed, added or lost)")
    return _parse_body(body, FORMATS[version])


def _check_chapter(n: int) -> int:
    if not 1 <= n <= len(CHAPTERS):
        raise ReplayError(f"no chapter {n}: this game has chapters 1 to {len(CHAPTERS)}")
    return n


def _name(r: _Reader) -> str:
    try:
        return r.take(r.varint(64)).decode("ascii")
    except UnicodeDecodeError:
        raise ReplayError("corrupt: bad allocator name") from None


def _parse_body(body: bytes, fmt: Ops) -> Replay:
    if not body:
        raise ReplayError("corrupt: empty run data")
    flags, rest = body[0], body[1:]
    if flags & ~_FLAG_DEFLATED:
        raise ReplayError("corrupt: unknown flags")
    # The run data is read as it is unpacked, a piece at a time, by three readers (the head and
    # ops, the gaps, the arguments: three streams one after the other), so a code is refused as
    # soon as it holds more than a real run can, before the rest is unpacked or expanded.
    def source() -> Iterator[bytes]:
        return _unpacked(rest) if flags & _FLAG_DEFLATED else iter((rest,))

    r = _Reader(source())
    rules = r.varint(2**31)
    if rules < 1:
        raise ReplayError("corrupt: bad rules version")
    if rules != RULES_VERSION:
        raise ReplayError(rules_mismatch(rules))
    run = r.byte()
    if run & ~(_RUN_ENDLESS | _RUN_DAILY | _RUN_CHAPTER):
        raise ReplayError("corrupt: unknown run flags")
    chapter = _check_chapter(r.varint(2**16)) if run & _RUN_CHAPTER else None
    daily = None
    if run & _RUN_DAILY:
        day = r.varint(3_000_000)
        try:
            when = from_day_number(day)
        except (ValueError, OverflowError):
            raise ReplayError("corrupt: bad daily date") from None
        daily, seed = when.isoformat(), daily_seed(when)
    else:
        seed = r.varint(2**63)
        if seed > MAX_SEED:
            raise ReplayError(f"corrupt: seed {seed} is out of range (0 to {MAX_SEED:,})")
    mode, label = _name(r), _name(r)
    from .game import MODES

    if mode not in MODES or label not in (*MODES, MIXED):
        unknown = mode if mode not in MODES else label
        raise ReplayError(f"unknown allocator {unknown[:20]!r} (this game has {', '.join(MODES)})")
    score, served, pieces = r.varint(), r.varint(), r.varint()
    outcome_n = r.byte()
    if outcome_n >= len(OUTCOMES):
        raise ReplayError("corrupt: bad outcome")
    digest = r.take(8)
    claim = Claim(score, served, pieces, OUTCOMES[outcome_n], label, digest)
    (dt,) = struct.unpack(">d", r.take(8))
    if not _valid_dt(dt):
        raise ReplayError("corrupt: bad step length")
    n_ops, n_gaps = r.varint(MAX_BODY_BYTES), r.varint(MAX_BODY_BYTES)
    check_items(n_ops)
    ops_at = r.pos
    r.end = ops_at + n_ops
    gaps = _Reader(source(), ops_at + n_ops, ops_at + n_ops + n_gaps)
    args = _Lazy(lambda: _Reader(source(), ops_at + n_ops + n_gaps))
    steps = _read_tokens(r, n_ops, gaps, args, dt, fmt)
    if gaps.pos != ops_at + n_ops + n_gaps or not args.get().at_end():
        raise ReplayError("corrupt: data after the end of the run")
    return Replay(seed, mode, bool(run & _RUN_ENDLESS), steps, None, rules, daily, None, claim,
                  chapter)


class _Lazy:
    """A reader made the first time it is needed (most runs never read an argument)."""

    def __init__(self, make: Callable[[], _Reader]) -> None:
        self.make = make
        self.reader: _Reader | None = None

    def get(self) -> _Reader:
        if self.reader is None:
            self.reader = self.make()
        return self.reader


def _read_tokens(ops: _Reader, n_ops: int, gaps: _Reader, args: _Lazy, dt: float, fmt: Ops) -> Timeline:
    """The timed inputs, checked against what a real run holds (check_pace) as they are read."""
    steps = Timeline()
    presses, game_ms = 0, 0.0
    for n in range(n_ops):
        op = ops.byte()
        gap = gaps.varint(MAX_STEPS + 1)
        if gap:
            game_ms += dt * gap
            check_pace(presses, game_ms, steps.steps + gap)
            steps.add(dt, (), gap)
        if op < fmt.inputs:
            presses += 1
            game_ms += dt
            check_pace(presses, game_ms, steps.steps + 1)
            steps.add(dt, (INPUT_CODES[op],))
        elif op == fmt.multi:
            a = args.get()
            count = a.varint(MAX_INPUTS_PER_STEP + 1)
            codes = a.take(count)
            if any(c >= fmt.inputs for c in codes):
                raise ReplayError("corrupt: unknown input")
            presses += count
            game_ms += dt
            check_pace(presses, game_ms, steps.steps + 1)
            steps.add(dt, tuple(INPUT_CODES[c] for c in codes))
        elif op == fmt.dt:
            (dt,) = struct.unpack(">d", args.get().take(8))
            if not _valid_dt(dt):
                raise ReplayError("corrupt: bad step length")
        elif op == fmt.end:
            if n != n_ops - 1:
                raise ReplayError("corrupt: data after the end of the run")
            return steps
        else:
            raise ReplayError("corrupt: unknown token")
    raise ReplayError("corrupt: the run data has no end")
