"""Replay files: JSON, written and read one step at a time (desktop tools; not in the web bundle).

Format (version 2; version 1 files, without `rules`, `daily` and `modes`, still read):
    {"format": "vram-tetris-replay", "version": 2, "rules": 1, "seed": 7, "mode": "paged",
     "endless": false, "daily": "2026-12-01" or null, "chapter": 2 or null,
     "steps": [[dt_ms, ["LEFT", "HARD_DROP"]], [dt_ms, [], repeat], ...],
     "modes": ["paged"], "final": {"score": ..., "served": ..., "board": "<digest>", ...}}
A step with a third number stands for that many identical steps. `mode` is the allocator the run
started in; `modes` the allocators it used (the engine's Game.modes_used: more than one when it
changed allocator after its first request, a mixed run). `final` is the state replaying must
reach (engine.replay.final_state). `chapter` names a chapter's run (engine.chapters: its rules,
load and goal); a file without it is a free-play run.

Reading is streamed: a file is parsed one step at a time into a Timeline, which keeps runs of
identical steps as one entry in compact arrays, so memory follows the steps that matter
(inputs, changes of pace), not the file's size or its idle frames.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from typing import IO

from . import files
from .chapters import CHAPTERS
from .daily import parse_day
from .game import MODES, Input
from .replay import (MAX_DT_MS, MAX_INPUTS_PER_STEP, MAX_SEED, MAX_STEPS, MIN_SEED, Replay, ReplayError,
                     Timeline, _valid_dt, check_items, check_pace)

FORMAT = "vram-tetris-replay"
VERSION = 2
READS = (1, 2)
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_VALUE_CHARS = 1024 * 1024  # one step or one header value; a replay has no bigger item
CHUNK_CHARS = 64 * 1024
MAX_INT_DIGITS = 20  # no whole number in a replay needs more (2**63 has 19 digits)
_NOT_SPACE = re.compile(r"[^ \t\n\r]")  # JSON's blank characters, skipped at C speed


def to_json(replay: Replay) -> str:
    return "".join(_json_parts(replay))


def write(replay: Replay, fh: IO[str]) -> None:
    for part in _json_parts(replay):
        fh.write(part)


def save(replay: Replay, path: str) -> None:
    """Write `replay` to `path` whole or not at all (a temporary file, then a rename)."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            write(replay, fh)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _json_parts(replay: Replay) -> Iterator[str]:
    head = {"format": FORMAT, "version": VERSION, "rules": replay.rules, "seed": replay.seed,
            "mode": replay.mode, "endless": replay.endless, "daily": replay.daily}
    if replay.chapter is not None:
        head["chapter"] = replay.chapter
    yield json.dumps(head, separators=(",", ":"))[:-1] + ',"steps":['
    first = True
    for dt, inputs, rep in replay.steps.runs():
        step = [_dt_out(dt), [i.value for i in inputs]] + ([rep] if rep > 1 else [])
        yield ("" if first else ",") + json.dumps(step, separators=(",", ":"))
        first = False
    tail = {"modes": list(replay.modes) if replay.modes is not None else None, "final": replay.final}
    yield "]," + json.dumps(tail, separators=(",", ":"))[1:]


def from_json(text: str) -> Replay:
    return read(io.StringIO(text))


def open_text(path: str) -> IO[str]:
    """`path` opened as UTF-8 text (a byte-order mark skipped), for a replay or a share code.

    Only a regular file of at most MAX_FILE_BYTES (engine.files): a FIFO, a device or a folder
    is refused at once (ReplayError) instead of blocking or reading forever; OSError when it
    cannot be opened.
    """
    try:
        handle = files.open_regular(path)
    except files.NotAFile as exc:
        raise ReplayError(f"{exc.strerror}: give a replay file or a share code") from None
    try:
        if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
            raise ReplayError(f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        return io.TextIOWrapper(handle, encoding="utf-8-sig", errors="strict", newline="")
    except BaseException:
        handle.close()
        raise


def load(path: str) -> Replay:
    """Read a replay file, streamed; ReplayError (or OSError) when it cannot be."""
    with open_text(path) as fh:
        try:
            return read(fh)
        except UnicodeDecodeError:
            raise ReplayError("not UTF-8 text") from None


def read(fh: IO[str]) -> Replay:
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
            presses, game_ms = 0, 0.0
            for n, item in enumerate(stream.items()):
                check_items(n + 1)
                dt, inputs, repeat = _parse_step(n, item)
                presses += len(inputs) * repeat
                game_ms += dt * repeat
                check_pace(presses, game_ms, steps.steps + repeat)
                steps.add(dt, inputs, repeat)
            doc["steps"] = True
        else:
            doc[key] = stream.value()
    stream.end()
    if "steps" not in doc:
        _check_header(doc)
        raise ReplayError("'steps' must be a list")
    return _from_doc(doc, steps)


def _from_doc(doc: dict[str, object], steps: Timeline) -> Replay:
    _check_header(doc)
    seed, mode, endless = doc.get("seed"), doc.get("mode"), doc.get("endless", False)
    if not isinstance(seed, int) or isinstance(seed, bool) or not MIN_SEED <= seed <= MAX_SEED:
        raise ReplayError(f"'seed' must be a whole number from {MIN_SEED} to {MAX_SEED:,}")
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
            raise ReplayError("'daily' must be a date as YYYY-MM-DD, from 1970-01-01, or null") from None
    modes = doc.get("modes")
    if modes is not None:
        if (not isinstance(modes, list) or not modes or len(modes) > MAX_STEPS
                or any(m not in MODES for m in modes)):
            raise ReplayError(f"'modes' must list the allocators used (of {', '.join(MODES)})")
        modes = tuple(modes)
    final = doc.get("final")
    if final is not None and not isinstance(final, dict):
        raise ReplayError("'final' must be an object or null")
    chapter = doc.get("chapter")
    if chapter is not None and (not isinstance(chapter, int) or isinstance(chapter, bool)
                                or not 1 <= chapter <= len(CHAPTERS)):
        raise ReplayError(f"'chapter' must be a chapter number from 1 to {len(CHAPTERS)}, or null")
    return Replay(seed, mode, endless, steps, final, rules, daily, modes,  # type: ignore[arg-type]
                  chapter=chapter)


def _check_header(doc: dict[str, object]) -> None:
    if doc.get("format") != FORMAT:
        raise ReplayError(f"not a replay: expected an object with format {FORMAT!r}")
    version = doc.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise ReplayError(f"replay format version {version} is newer than this game reads "
                          f"({VERSION}): update the game")
    if version not in READS:
        raise ReplayError(f"unsupported replay version {version!r} (this reads {READS})")


def _dt_out(dt: float) -> float | int:
    return int(dt) if dt == int(dt) else dt


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


def _whole(text: str) -> int:
    """A JSON whole number, refused beyond MAX_INT_DIGITS digits (before int() works on it)."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ReplayError(f"not a replay: a number of more than {MAX_INT_DIGITS} digits")
    return int(text)


class _JsonStream:
    """Just enough of a streaming JSON reader for one object whose big member is a flat list.

    Values are decoded one at a time with json's own decoder from a window over the file, so
    at most one item (bounded by MAX_VALUE_CHARS) is held besides what the caller keeps.
    """

    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.decoder = json.JSONDecoder(parse_int=_whole)

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
            found = _NOT_SPACE.search(self.buf, self.pos)
            if found is not None:
                self.pos = found.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
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
            raise ReplayError("not a replay: the file holds nothing but blank characters"
                              if self.pos else "not a replay: the file is empty")
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
            except ReplayError:
                raise
            except ValueError as exc:  # a value json cannot turn into a Python one
                raise ReplayError(f"not a JSON document: {str(exc)[:80]}") from None
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
