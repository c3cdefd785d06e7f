"""JSON read into a tree that keeps what json.loads would merge or drop, strictly or from a broken text.

Objects become `Pairs` (every key/value pair in file order, duplicate keys included), arrays
lists, numbers int or float, NaN/Infinity and anything unreadable `NOT_A_VALUE`. `strict` is
json.loads with those rules; `salvage` reads a text that is not valid JSON (truncated, a stray
byte, zeroed blocks) as far as it can, keeping each value where it stood: a pair is taken only
inside the object it was written in, so nothing is read out of its context.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64  # a settings file is 3 deep; deeper content is skipped, not recursed into
MAX_DIGITS = 30  # longer integers are just large (no 4,300-digit conversion error)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORDS: dict[str, object] = {"true": True, "false": False, "null": None}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SPACE = " \t\r\n\x00"
_JUNK = re.compile(r'[^ \t\r\n\x00{}\[\]",:A-Za-z0-9_-]+')


class Pairs(list[tuple[str, Any]]):
    """A JSON object as written: (key, value) pairs in order, duplicates kept."""


class _NotAValue:
    def __repr__(self) -> str:
        return "NOT_A_VALUE"


NOT_A_VALUE: Any = _NotAValue()  # NaN, Infinity, or text that is no JSON value


def _int(text: str, huge: int) -> int:
    return int(text) if len(text.lstrip("-")) <= MAX_DIGITS else huge


def strict(text: str, huge: int) -> object:
    """json.loads into the tree (raises ValueError or RecursionError as json.loads does).
    Integers longer than MAX_DIGITS read as `huge`."""
    return json.loads(text, object_pairs_hook=Pairs, parse_int=lambda t: _int(t, huge),
                      parse_constant=lambda _t: NOT_A_VALUE)


def salvage(text: str, huge: int) -> object:
    """What can be read of `text` as a JSON value; NOT_A_VALUE when nothing can."""
    return _Reader(text, huge).value(0)


class _Reader:
    def __init__(self, text: str, huge: int) -> None:
        self.text = text
        self.pos = 0
        self.huge = huge

    def _skip_space(self) -> str:
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos] in _SPACE:
            self.pos += 1
        return text[self.pos] if self.pos < n else ""

    def value(self, depth: int) -> object:
        ch = self._skip_space()
        if ch == "":
            return NOT_A_VALUE
        if ch in "{[":
            if depth >= MAX_DEPTH:
                self._skip_container()
                return NOT_A_VALUE
            return self._object(depth) if ch == "{" else self._array(depth)
        if ch == '"':
            return self._string()
        number = _NUMBER.match(self.text, self.pos)
        if number:
            self.pos = number.end()
            raw = number.group()
            if number.group(1) or number.group(2):
                try:
                    return float(raw)
                except (ValueError, OverflowError):
                    return NOT_A_VALUE
            return _int(raw, self.huge)
        word = _WORD.match(self.text, self.pos)
        if word:
            self.pos = word.end()
            return _WORDS.get(word.group(), NOT_A_VALUE)
        junk = _JUNK.match(self.text, self.pos)  # characters that start nothing: not a value
        self.pos = junk.end() if junk else self.pos + 1
        return NOT_A_VALUE

    def _string(self) -> object:
        try:
            value, self.pos = json.decoder.scanstring(self.text, self.pos + 1, False)  # type: ignore[attr-defined]
        except ValueError:  # a bad escape: past the string, no value; unterminated: the end
            end = _STRING.match(self.text, self.pos)
            self.pos = end.end() if end else len(self.text)
            return NOT_A_VALUE
        return value

    def _object(self, depth: int) -> Pairs:
        self.pos += 1
        pairs = Pairs()
        while True:
            ch = self._skip_space()
            if ch == "":
                return pairs  # truncated: what was read so far
            if ch in "}]":
                self.pos += 1
                return pairs
            if ch == ",":
                self.pos += 1
                continue
            if ch != '"':
                self.value(depth + 1)  # no key here: read past it, keep nothing of it
                continue
            key = self._string()
            if self._skip_space() != ":":
                continue  # a key without a value
            self.pos += 1
            value = self.value(depth + 1)
            if isinstance(key, str):
                pairs.append((key, value))

    def _array(self, depth: int) -> list[object]:
        self.pos += 1
        items: list[object] = []
        while True:
            ch = self._skip_space()
            if ch == "":
                return items
            if ch in "]}":
                self.pos += 1
                return items
            if ch == ",":
                self.pos += 1
                continue
            items.append(self.value(depth + 1))

    def _skip_container(self) -> None:
        """Past one nested object or array, without recursion (strings honoured)."""
        text, n, level = self.text, len(self.text), 0
        while self.pos < n:
            ch = text[self.pos]
            if ch == '"':
                self._string()
                continue
            self.pos += 1
            if ch in "{[":
                level += 1
            elif ch in "}]":
                level -= 1
                if level == 0:
                    return
