"""What a saved field may hold, as data: one description reads a clean save, a broken one, and writes it.

Each kind reads a field from every value stored under its name (a save may repeat a key, or hold
NaN where a number belongs) and keeps the best valid reading: the largest score, the last valid
choice, every card seen. A kind never looks outside its own field, so a value is taken only from
where it belongs; a `Table` gives its own kind of value to each of its keys, and nests (best
scores keyed by mode and goal are a Table of Tables).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ui.loose_json import Pairs


class Kind(Protocol):
    def default(self) -> Any:
        """The value when nothing valid was stored."""

    def take(self, stored: Sequence[object]) -> Any:
        """The value from everything stored under this field's name, in file order."""

    def dump(self, value: Any) -> Any:
        """The value as JSON data."""


def items(data: object) -> list[tuple[object, object]]:
    """The key/value pairs of a JSON object (a dict or Pairs); nothing for any other value."""
    if isinstance(data, Pairs):
        return list(data)
    if isinstance(data, dict):
        return list(data.items())
    return []


def stored(data: object, name: str) -> list[object]:
    """Every value stored under `name` in the object `data`, in order."""
    return [value for key, value in items(data) if key == name]


def read(schema: Sequence[tuple[str, Kind]], data: object) -> dict[str, Any]:
    """Each field of `schema` read from the object `data`."""
    return {name: kind.take(stored(data, name)) for name, kind in schema}


@dataclass(frozen=True)
class Flag:
    initial: bool

    def default(self) -> bool:
        return self.initial

    def take(self, stored: Sequence[object]) -> bool:
        valid = [v for v in stored if isinstance(v, bool)]
        return valid[-1] if valid else self.initial

    def dump(self, value: bool) -> bool:
        return bool(value)


@dataclass(frozen=True)
class Count:
    """A whole number from 0, clamped to `most`; of several, the largest (a best never drops)."""

    most: int

    def default(self) -> int:
        return 0

    def take(self, stored: Sequence[object]) -> int:
        valid = [min(v, self.most) for v in stored
                 if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
        return max(valid, default=0)

    def dump(self, value: int) -> int:
        return int(value)


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]
    initial: str | None

    def default(self) -> str | None:
        return self.initial

    def take(self, stored: Sequence[object]) -> str | None:
        valid = [v for v in stored if isinstance(v, str) and v in self.options]
        return valid[-1] if valid else self.initial

    def dump(self, value: str | None) -> str | None:
        return value


@dataclass(frozen=True)
class Names:
    """A set of short strings, stored as a list; of several lists, every name in any."""

    most: int

    def default(self) -> set[str]:
        return set()

    def take(self, stored: Sequence[object]) -> set[str]:
        names: set[str] = set()
        for value in stored:
            if isinstance(value, (list, tuple)):
                names.update(v for v in value[:self.most] if isinstance(v, str))
        return set(sorted(names)[:self.most]) if len(names) > self.most else names

    def dump(self, value: set[str]) -> list[str]:
        return sorted(value)


@dataclass(frozen=True)
class Table:
    """An object from keys to values of one kind. With `keys`, exactly those keys (each at its
    default when absent); with `accept` instead, any key it accepts, the last `keep` in sort order."""

    value: Kind
    keys: tuple[str, ...] = ()
    accept: Callable[[str], bool] | None = None
    keep: int | None = None

    def default(self) -> dict[str, Any]:
        return {key: self.value.default() for key in self.keys}

    def _wanted(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return key in self.keys if self.accept is None else self.accept(key)

    def take(self, stored: Sequence[object]) -> dict[str, Any]:
        found: dict[str, list[object]] = {}
        for data in stored:
            for key, value in items(data):
                if self._wanted(key):
                    found.setdefault(str(key), []).append(value)
        if self.accept is None:
            return {key: self.value.take(found.get(key, [])) for key in self.keys}
        names = sorted(found)
        if self.keep is not None:
            names = names[-self.keep:] if self.keep else []
        return {key: self.value.take(found[key]) for key in names}

    def dump(self, value: dict[str, Any]) -> dict[str, Any]:
        if self.accept is None:
            return {key: self.value.dump(value.get(key, self.value.default())) for key in self.keys}
        return {key: self.value.dump(v) for key, v in sorted(value.items())}
