"""Persistent settings and best scores: browser localStorage under pygbag, a JSON file on desktop.

Saved data comes from outside the program (an old version, a hand edit, a half-written file),
so every field is validated on its own: a bad field falls back to its default, numbers are
clamped to what a run can reach, and the rest of the save survives. A save that cannot be read
or decoded, or that holds anything the next save would drop or change, is first kept aside
(`settings.json.bad-<UTC time>`, or the same key suffix in the browser's storage), so no best
score is ever lost to an overwrite. A save that cannot be decoded (a stray byte, NUL bytes,
UTF-16, truncation) is read as far as it goes (ui/loose_json.py) and every field is taken from
its own place by the one description of the save, SCHEMA (ui/save_schema.py): a repeated key or
a NaN keeps the largest valid score, never resets it. Loading and saving never raise; a game must not crash over
a settings file.

Best scores are kept per (allocator, goal), and the daily challenge's per allocator; a mixed run
sets none, and a daily run sets only the daily best. A save from older rules (its version is the
rules version; rules 1 had a 40-line goal and rows that cleared) keeps every setting (sound, cards,
language, allocator, cards seen, games played; a rules-1 endless choice becomes the goal) but not
its scores, which no run of today's rules can be compared with: the game says so once and keeps
the old save aside, scores and all.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine import modes as _modes
from engine.rules import GOALS, MAX_SCORE, RULES_VERSION
from ui import loose_json, save_schema
from ui.i18n import LANGUAGES
from ui.loose_json import NOT_A_VALUE, Pairs

MODES: tuple[str, ...] = _modes.NAMES  # one best score per allocator in the engine's registry...
DEFAULT_MODE = _modes.DEFAULT  # new players start in CONTIGUOUS: the problem before the fix
DEFAULT_GOAL = GOALS[0]  # ...and per goal: serve rules.GOAL_REQUESTS requests, or endless
APP_DIR_NAME = "vram-tetris"
FILE_NAME = "settings.json"
LOCAL_STORAGE_KEY = "vram-tetris.settings"
ENV_DATA_DIR = "VRAM_TETRIS_DATA_DIR"
# A save's version is the rules version its scores were played under (2 brought best scores per
# mode and goal, and daily bests per mode). Scores of older rules are not comparable and are not
# carried over; every other setting is.
SCHEMA_VERSION = RULES_VERSION
# Fields of a version-1 save (rules 1: a 40-line goal, rows that cleared). Its scores are not
# comparable with later rules and are not carried over; "endless" becomes the goal (see Storage.load).
RULES1_FIELDS = ("best_scores", "daily_best", "endless")
MAX_SEEN_CARDS = 256  # a save is small; refuse to grow without bound from a hostile file
MAX_GAMES = 10**9
MAX_SAVE_BYTES = 1 << 20  # a real save is well under 4 KB; read no more than this
BAD_SUFFIX = ".bad-"
MAX_KEPT_ASIDE = 50  # copies compared before keeping another (identical ones are not repeated)
MAX_DAILY_DAYS = 62  # daily bests kept: about two months, the oldest dropped first


def _default_best() -> dict[str, dict[str, int]]:
    return {mode: {goal: 0 for goal in GOALS} for mode in MODES}


@dataclass
class Settings:
    """What the player chose and achieved; everything the game remembers between runs."""

    muted: bool = False
    cards_enabled: bool = True
    best: dict[str, dict[str, int]] = field(default_factory=_default_best)  # mode -> goal -> score
    seen_cards: set[str] = field(default_factory=set)
    mode: str = DEFAULT_MODE
    goal: str = DEFAULT_GOAL
    games_played: int = 0
    language: str | None = None  # None: follow the reader's browser or locale
    daily: dict[str, dict[str, int]] = field(default_factory=dict)  # UTC day -> mode -> score

    @property
    def endless(self) -> bool:
        """The chosen goal is the endless run (no victory)."""
        return self.goal == "endless"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (sets become sorted lists so saves diff cleanly)."""
        return {"version": SCHEMA_VERSION,
                **{name: kind.dump(getattr(self, name)) for name, kind in SCHEMA}}

    @classmethod
    def from_dict(cls, data: object) -> Settings:
        """Build settings from untrusted data (a dict, or loose_json's Pairs with every repeated
        key): each missing or malformed field gets its default (see SCHEMA). A version-1 save's
        "endless" choice becomes the goal when no goal is stored; the scores of a save from older
        rules are left behind."""
        fields = save_schema.read(SCHEMA, data)
        if rules_of(data) < SCHEMA_VERSION:
            fields["best"], fields["daily"] = _default_best(), {}
        if not save_schema.stored(data, "goal") and save_schema.Flag(False).take(save_schema.stored(data, "endless")):
            fields["goal"] = "endless"
        return cls(**fields)


def rules_of(data: object) -> int:
    """The rules version a save's scores were played under: its stored version (of several, the
    largest), 1 for a save with rules-1 fields, the current one when nothing says otherwise."""
    if any(save_schema.stored(data, name) for name in RULES1_FIELDS):
        return 1
    versions = [v for v in save_schema.stored(data, "version")
                if isinstance(v, int) and not isinstance(v, bool) and v >= 1]
    return min(max(versions), SCHEMA_VERSION) if versions else SCHEMA_VERSION


def _is_day(text: object) -> bool:
    """A daily best's key: a day as the engine writes it (one spelling per day)."""
    from engine.daily import parse_day

    if not isinstance(text, str):
        return False
    try:
        parse_day(text)
    except ValueError:
        return False
    return True


# Every saved field and what it may hold: the one description a save is read (clean or broken)
# and written by. Names are the Settings attributes and the JSON keys alike.
SCHEMA: tuple[tuple[str, save_schema.Kind], ...] = (
    ("muted", save_schema.Flag(False)),
    ("cards_enabled", save_schema.Flag(True)),
    ("best", save_schema.Table(save_schema.Table(save_schema.Count(MAX_SCORE), keys=GOALS), keys=MODES)),
    ("seen_cards", save_schema.Names(MAX_SEEN_CARDS)),
    ("mode", save_schema.Choice(MODES, DEFAULT_MODE)),
    ("goal", save_schema.Choice(GOALS, DEFAULT_GOAL)),
    ("games_played", save_schema.Count(MAX_GAMES)),
    ("language", save_schema.Choice(LANGUAGES, None)),
    ("daily", save_schema.Table(save_schema.Table(save_schema.Count(MAX_SCORE), keys=MODES), accept=_is_day,
                                keep=MAX_DAILY_DAYS)),
)


def _score(score: object) -> int | None:
    if isinstance(score, bool) or not isinstance(score, int) or score < 0:
        return None
    return min(score, MAX_SCORE)


def record_daily(settings: Settings, day: str, mode: str, score: int) -> bool:
    """Store `score` as the best of `mode` in the daily challenge of `day`; True when it beat the
    old one. A mixed run is a record of no mode."""
    value = _score(score)
    if not _is_day(day) or mode not in MODES or value is None:
        return False
    best = settings.daily
    row = dict(best.get(day) or {m: 0 for m in MODES})
    if value <= row.get(mode, 0):
        return False
    row[mode] = value
    best[day] = row
    for old in sorted(best)[:-MAX_DAILY_DAYS]:
        del best[old]
    return day in best


def record_best(settings: Settings, mode: str, goal: str, score: int) -> bool:
    """Store `score` as the best for (`mode`, `goal`) if it beats the old one; True when it did.
    A mixed run (allocator changed mid-run) is a record of no mode."""
    value = _score(score)
    if mode not in MODES or goal not in GOALS or value is None:
        return False
    row = settings.best.setdefault(mode, {g: 0 for g in GOALS})
    if value > row.get(goal, 0):
        row[goal] = value
        return True
    return False


# --------------------------------------------------------------------------- backends


class Backend(Protocol):
    """Where the serialized settings live."""

    def read(self) -> str | bytes | None:
        """The stored data, or None when nothing has been saved yet (may raise)."""

    def write(self, text: str) -> None:
        """Replace the stored text (may raise; Storage catches)."""

    def keep_aside(self, data: str | bytes | None, stamp: str) -> str:
        """Keep a copy of `data` (None: the stored data could not be read) where no save
        overwrites it; returns where (may raise)."""

    def describe(self) -> str:
        """Where the data goes, for the log."""


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


class FileBackend:
    """A JSON file, replaced atomically so a crash mid-save cannot leave half a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> bytes | None:
        try:
            with open(self.path, "rb") as handle:
                return handle.read(MAX_SAVE_BYTES + 1)
        except FileNotFoundError:
            return None

    def keep_aside(self, data: str | bytes | None, stamp: str) -> str:
        """Copy the bytes read to settings.json.bad-<stamp>; a file that could not be read is
        renamed there instead (renaming needs no read permission)."""
        directory = self.path.parent
        prefix = self.path.name + BAD_SUFFIX
        if data is not None:
            raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
            for old in sorted(directory.glob(prefix + "*"))[-MAX_KEPT_ASIDE:]:
                try:
                    if old.stat().st_size == len(raw) and old.read_bytes() == raw:
                        return str(old)  # the same bad save is kept already
                except OSError:
                    continue
        target = directory / (prefix + stamp)
        n = 1
        while target.exists():
            target = directory / f"{prefix}{stamp}-{n}"
            n += 1
        if data is None or len(data) > MAX_SAVE_BYTES:
            if not self.path.is_file():
                raise OSError(f"{self.path} is not a file")
            os.replace(self.path, target)
        else:
            target.write_bytes(raw)
        return str(target)

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

    def keep_aside(self, data: str | bytes | None, stamp: str) -> str:
        if data is None:
            raise OSError("nothing could be read to keep")
        text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        target = f"{self.key}{BAD_SUFFIX}{stamp}"
        store = self._local_storage()
        if store.getItem(target) not in (None, text):
            target += "-1"
        store.setItem(target, text)
        return f"localStorage[{target!r}]"

    def describe(self) -> str:
        return f"localStorage[{self.key!r}]"


HUGE = 10 ** loose_json.MAX_DIGITS  # what a longer integer reads as: more than any maximum here


def _text(data: str | bytes) -> tuple[str, str | None]:
    """The stored save as text, and what was wrong with its encoding (None: nothing)."""
    if isinstance(data, str):
        text, problem = data.removeprefix("\ufeff"), None
    else:
        problem = None
        if len(data) > MAX_SAVE_BYTES:
            data, problem = data[:MAX_SAVE_BYTES], f"larger than {MAX_SAVE_BYTES} bytes"
        utf16 = _utf16(data)
        if utf16:
            return data.decode(utf16, "replace").removeprefix("\ufeff"), problem or "UTF-16 text"
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", "replace").removeprefix("\ufeff")
            problem = problem or f"not UTF-8 text at byte {exc.start}"
    if "\x00" in text:
        problem = problem or "NUL bytes in the text"
    return text, problem


def _utf16(data: bytes) -> str | None:
    """The UTF-16 codec `data` is written in (a byte-order mark, or ASCII's zero high bytes)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    head = data[:64]
    if len(head) >= 4 and not any(head[1::2]) and all(head[0::2]):
        return "utf-16-le"
    if len(head) >= 4 and not any(head[0::2]) and all(head[1::2]):
        return "utf-16-be"
    return None


def _oddity(tree: object) -> str | None:
    """What json.loads would silently lose in a parsed save: a repeated key (only its last value
    kept), NaN or Infinity, or nesting deeper than a save ever is."""
    todo: list[tuple[object, int]] = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        if node is NOT_A_VALUE:
            return "a number that is not one (NaN or Infinity)"
        if depth > loose_json.MAX_DEPTH:
            return "nested too deep"
        if isinstance(node, Pairs):
            keys = [key for key, _ in node]
            if len(set(keys)) != len(keys):
                return f"a repeated key ({next(k for k in keys if keys.count(k) > 1)[:40]!r})"
            todo.extend((value, depth + 1) for _, value in node)
        elif isinstance(node, list):
            todo.extend((value, depth + 1) for value in node)
    return None


def decode(data: str | bytes) -> tuple[object, str | None]:
    """Parse a stored save: (data, None), or (what could be read, what was wrong). Objects come
    back as loose_json.Pairs, repeated keys and all, for the schema to pick the valid values."""
    text, problem = _text(data)
    if problem is None:
        try:
            tree = loose_json.strict(text, HUGE)
        except (ValueError, RecursionError) as exc:
            problem = str(exc)[:120]
        else:
            problem = _oddity(tree)
            if problem != "nested too deep":
                return tree, problem
    return loose_json.salvage(text, HUGE), problem


def _would_change(stored: dict[str, Any], saved: dict[str, Any]) -> bool:
    """True when saving `saved` would drop or change a field the stored data holds."""
    missing = object()
    return any(key != "version" and _plain(saved.get(key, missing)) != _plain(value)
               for key, value in stored.items())


def _plain(value: object) -> object:
    """A save's content compared as data: key order and list order do not count."""
    if isinstance(value, (dict, Pairs)):
        return {k: _plain(v) for k, v in save_schema.items(value) if k != "version"}
    if isinstance(value, list):
        return sorted((_plain(v) for v in value), key=repr)
    return value


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
        where = self.backend.describe()
        try:
            data = self.backend.read()
        except Exception as exc:  # unreadable file, browser without storage, ...
            self.last_error = f"settings unreadable at {where}: {exc}"
            self._keep_aside(None)
            return Settings()
        if data is None:
            return Settings()
        parsed, problem = decode(data)
        settings = Settings.from_dict(parsed)
        if problem is None and not isinstance(parsed, Pairs):
            problem = "not a settings object"
        played = rules_of(parsed)
        if problem is not None:
            self.last_error = f"settings corrupt at {where} ({problem}); using what could be read"
        elif played < SCHEMA_VERSION:
            self.last_error = (f"settings at {where} were saved under rules {played}: their best scores "
                               f"are not comparable with rules {SCHEMA_VERSION} and start again; every "
                               "other setting is kept")
        elif _would_change(dict(parsed) if isinstance(parsed, Pairs) else {}, settings.to_dict()):
            self.last_error = (f"settings at {where} held values the game cannot keep "
                               "(out of range or unknown); corrected")
        else:
            return settings
        self._keep_aside(data)
        return settings

    def _keep_aside(self, data: str | bytes | None) -> None:
        """Keep what was stored before any save can replace it; note where in last_error."""
        try:
            kept = self.backend.keep_aside(data, _stamp())
        except Exception as exc:
            if data is not None or self.last_error is None:
                self.last_error = f"{self.last_error or 'settings'}; no copy kept ({exc})"
            return
        self.last_error = f"{self.last_error}; the old save is kept as {kept}"

    def save(self, settings: Settings) -> None:
        self.last_error = None
        try:
            text = json.dumps(settings.to_dict(), indent=1, sort_keys=True)
            self.backend.write(text)
        except Exception as exc:  # read-only dir, full disk, quota exceeded: play on unsaved
            self.last_error = f"settings not saved to {self.backend.describe()}: {exc}"
