"""Persistent settings and best scores: browser localStorage under pygbag, a JSON file on desktop.

Saved data comes from outside the program (an old version, a hand edit, a half-written file),
so every field is validated on its own: a bad field falls back to its default and the rest of
the save survives. Loading and saving never raise; a game must not crash over a settings file.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine import modes as _modes

MODES: tuple[str, ...] = _modes.NAMES  # one best score per allocator in the engine's registry
DEFAULT_MODE = _modes.DEFAULT  # new players start in CONTIGUOUS: the problem before the fix
APP_DIR_NAME = "vram-tetris"
FILE_NAME = "settings.json"
LOCAL_STORAGE_KEY = "vram-tetris.settings"
ENV_DATA_DIR = "VRAM_TETRIS_DATA_DIR"
SCHEMA_VERSION = 1
MAX_SEEN_CARDS = 256  # a save is small; refuse to grow without bound from a hostile file
MAX_DAILY_DAYS = 62  # daily bests kept: about two months, the oldest dropped first


def _default_best() -> dict[str, int]:
    return {mode: 0 for mode in MODES}


@dataclass
class Settings:
    """What the player chose and achieved; everything the game remembers between runs."""

    muted: bool = False
    cards_enabled: bool = True
    best_scores: dict[str, int] = field(default_factory=_default_best)
    seen_cards: set[str] = field(default_factory=set)
    mode: str = DEFAULT_MODE
    endless: bool = False
    games_played: int = 0
    daily_best: dict[str, int] = field(default_factory=dict)  # UTC date (YYYY-MM-DD) -> best score

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (sets become sorted lists so saves diff cleanly)."""
        return {
            "version": SCHEMA_VERSION,
            "muted": self.muted,
            "cards_enabled": self.cards_enabled,
            "best_scores": {mode: int(self.best_scores.get(mode, 0)) for mode in MODES},
            "seen_cards": sorted(self.seen_cards),
            "mode": self.mode,
            "endless": self.endless,
            "games_played": self.games_played,
            "daily_best": {day: int(score) for day, score in sorted(self.daily_best.items())},
        }

    @classmethod
    def from_dict(cls, data: object) -> Settings:
        """Build settings from untrusted data: each missing or malformed field gets its default."""
        default = cls()
        if not isinstance(data, dict):
            return default
        return cls(
            muted=_bool(data.get("muted"), default.muted),
            cards_enabled=_bool(data.get("cards_enabled"), default.cards_enabled),
            best_scores=_best_scores(data.get("best_scores")),
            seen_cards=_seen_cards(data.get("seen_cards")),
            mode=data["mode"] if data.get("mode") in MODES else default.mode,
            endless=_bool(data.get("endless"), default.endless),
            games_played=_count(data.get("games_played")),
            daily_best=_daily_best(data.get("daily_best")),
        )


def _bool(value: object, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def _count(value: object) -> int:
    """A non-negative int; JSON has no int/bool distinction problem but Python does (True == 1)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


def _best_scores(value: object) -> dict[str, int]:
    best = _default_best()
    if isinstance(value, dict):
        for mode in MODES:
            best[mode] = _count(value.get(mode))
    return best


def _seen_cards(value: object) -> set[str]:
    if not isinstance(value, (list, tuple)):
        return set()
    return {item for item in value[:MAX_SEEN_CARDS] if isinstance(item, str)}


def _is_day(text: object) -> bool:
    if not isinstance(text, str) or len(text) != 10:
        return False
    try:
        from datetime import date

        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _daily_best(value: object) -> dict[str, int]:
    if not isinstance(value, dict):
        return {}
    days = sorted(day for day in value if _is_day(day))[-MAX_DAILY_DAYS:]
    return {day: _count(value[day]) for day in days}


def record_daily(settings: Settings, day: str, score: int) -> bool:
    """Store `score` as the best of the daily challenge of `day`; True when it beat the old one."""
    if not _is_day(day) or isinstance(score, bool) or not isinstance(score, int) or score < 0:
        return False
    best = settings.daily_best
    if day in best and score <= best[day]:
        return False
    best[day] = score
    for old in sorted(best)[:-MAX_DAILY_DAYS]:
        del best[old]
    return True


def record_best(settings: Settings, mode: str, score: int) -> bool:
    """Store `score` as the best for `mode` if it beats the old one; True when it did. A mixed
    run (allocator changed mid-run) is a record of no mode."""
    if mode not in MODES or isinstance(score, bool) or not isinstance(score, int):
        return False
    if score > settings.best_scores.get(mode, 0):
        settings.best_scores[mode] = score
        return True
    return False


# --------------------------------------------------------------------------- backends


class Backend(Protocol):
    """Where the serialized settings live."""

    def read(self) -> str | None:
        """The stored text, or None when nothing has been saved yet."""

    def write(self, text: str) -> None:
        """Replace the stored text (may raise; Storage catches)."""

    def describe(self) -> str:
        """Where the data goes, for the log."""


class FileBackend:
    """A JSON file, replaced atomically so a crash mid-save cannot leave half a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write(self, text: str) -> None:
        import tempfile  # desktop only: the browser saves to localStorage

        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def describe(self) -> str:
        return str(self.path)


class LocalStorageBackend:
    """The browser's window.localStorage, reached through the `platform` module pygbag provides.

    Under pygbag the stdlib `platform` module is replaced by one exposing the JS `window`;
    files written in the browser vanish on reload, localStorage does not.
    """

    def __init__(self, key: str = LOCAL_STORAGE_KEY) -> None:
        self.key = key

    @staticmethod
    def _local_storage() -> Any:
        import platform  # pygbag's browser bridge, not the stdlib module

        window: Any = getattr(platform, "window")  # absent from the stdlib module's stubs
        return window.localStorage

    def read(self) -> str | None:
        value = self._local_storage().getItem(self.key)
        return value if isinstance(value, str) else None  # JS null arrives as None

    def write(self, text: str) -> None:
        self._local_storage().setItem(self.key, text)

    def describe(self) -> str:
        return f"localStorage[{self.key!r}]"


def is_browser() -> bool:
    return sys.platform == "emscripten"


def default_data_dir() -> Path:
    """The per-user data directory of this platform, with our folder appended."""
    override = os.environ.get(ENV_DATA_DIR)
    if override:
        return Path(override).expanduser()
    home = Path.home()
    if sys.platform.startswith("win"):
        base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".local" / "share"
    return base / APP_DIR_NAME


class Storage:
    """Loads and saves Settings through the right backend; never raises.

    `directory` forces the file backend in that folder (tests, portable installs); otherwise
    the browser uses localStorage and the desktop the user data dir (or $VRAM_TETRIS_DATA_DIR).
    `last_error` holds a one-line reason after a failed or corrupt load/save, for the log.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.last_error: str | None = None
        self.backend: Backend
        if directory is not None:
            self.backend = FileBackend(Path(directory) / FILE_NAME)
        elif is_browser() and not os.environ.get(ENV_DATA_DIR):
            self.backend = LocalStorageBackend()
        else:
            self.backend = FileBackend(default_data_dir() / FILE_NAME)

    def load(self) -> Settings:
        self.last_error = None
        try:
            text = self.backend.read()
        except Exception as exc:  # unreadable file, browser without storage, ...
            self.last_error = f"settings unreadable at {self.backend.describe()}: {exc}"
            return Settings()
        if text is None:
            return Settings()
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self.last_error = f"settings corrupt at {self.backend.describe()} ({exc}); using defaults"
            return Settings()
        if not isinstance(data, dict):
            self.last_error = f"settings corrupt at {self.backend.describe()}; using defaults"
        return Settings.from_dict(data)

    def save(self, settings: Settings) -> None:
        self.last_error = None
        try:
            text = json.dumps(settings.to_dict(), indent=1, sort_keys=True)
            self.backend.write(text)
        except Exception as exc:  # read-only dir, full disk, quota exceeded: play on unsaved
            self.last_error = f"settings not saved to {self.backend.describe()}: {exc}"
