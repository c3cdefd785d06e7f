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
the old save aside, scores and all. A save from a newer build is never rewritten: it is left as it
is, and this build keeps its own save beside it (settings.rules<N>.json), starting from that
save's settings. Only a regular file is read (a FIFO or a folder is left alone in the same way),
no more than MAX_READ_BYTES of it; a symlinked save is written through its link.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engine import files
from engine import modes as _modes
from engine.chapters import CHAPTERS
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
MAX_RULES = 10**9  # a stored version beyond this is shown as this
MAX_SEEN_CARDS = 256  # a save is small; refuse to grow without bound from a hostile file
MAX_GAMES = 10**9
MAX_SAVE_BYTES = 1 << 20  # a real save is well under 4 KB; a larger one is set aside and rewritten
MAX_READ_BYTES = 8 << 20  # read whole up to this (json's own parser), so a padded save is not lost
# This build's own save, beside a main save it must leave alone (one of newer rules, a folder).
OWN_SAVE_SUFFIX = f".rules{RULES_VERSION}"
BAD_SUFFIX = ".bad-"
MAX_KEPT_ASIDE = 50  # copies compared before keeping another (identical ones are not repeated)
MAX_DAILY_DAYS = 62  # daily bests kept: about two months, the oldest dropped first
CHAPTER_KEYS = tuple(str(c.number) for c in CHAPTERS)  # a chapter's progress, by its number
# The last chapter-1 run (chapter 2 replays its arrivals and sets its figures beside its own):
# its seed, when it ended, and the requests running, the VRAM held and the waste (per mille)
# then, the tokens and requests it served.
PAIR_KEYS = ("seed", "end_ms", "running", "held", "waste", "tokens", "served")
MAX_PAIR_VALUE = 10**12


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
    # Chapter number -> the most requests a run of it served, and its best score (engine.chapters).
    chapters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHAPTER_KEYS, 0))
    chapter_scores: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHAPTER_KEYS, 0))
    chapter_pair: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PAIR_KEYS, 0))
    chapter_runs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHAPTER_KEYS, 0))  # runs ended

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
        "endless" choice becomes the goal when no goal is stored; the scores of a save from other
        rules (older, or a newer build's) are left behind."""
        fields = save_schema.read(SCHEMA, data)
        if rules_of(data) != SCHEMA_VERSION:
            fields["best"], fields["daily"] = _default_best(), {}
            fields["chapters"] = dict.fromkeys(CHAPTER_KEYS, 0)
            fields["chapter_scores"] = dict.fromkeys(CHAPTER_KEYS, 0)
            fields["chapter_pair"] = dict.fromkeys(PAIR_KEYS, 0)
            fields["chapter_runs"] = dict.fromkeys(CHAPTER_KEYS, 0)
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
    return min(max(versions), MAX_RULES) if versions else SCHEMA_VERSION


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
    ("chapters", save_schema.Table(save_schema.Count(MAX_SCORE), keys=CHAPTER_KEYS)),
    ("chapter_scores", save_schema.Table(save_schema.Count(MAX_SCORE), keys=CHAPTER_KEYS)),
    ("chapter_pair", save_schema.Table(save_schema.Count(MAX_PAIR_VALUE), keys=PAIR_KEYS)),
    ("chapter_runs", save_schema.Table(save_schema.Count(MAX_GAMES), keys=CHAPTER_KEYS)),
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


def chapter_met(settings: Settings, number: int) -> bool:
    """Whether a run of chapter `number` has met its goal (the endless chapter: been played)."""
    ch = CHAPTERS[number - 1]
    served = settings.chapters.get(str(number), 0)
    return served >= ch.goal if ch.goal is not None else settings.chapter_scores.get(str(number), 0) > 0


def chapters_met(settings: Settings) -> int:
    """How many chapters a run has met the goal of."""
    return sum(chapter_met(settings, ch.number) for ch in CHAPTERS)


def chapter_played(settings: Settings, number: int) -> bool:
    """Whether a run of chapter `number` has ended (its goal met or not)."""
    return settings.chapter_runs.get(str(number), 0) > 0 or chapter_met(settings, number)


def chapter_reached(settings: Settings, number: int) -> bool:
    """Whether chapter `number` is open: the first always, each other once a run of the one before
    has ended, its goal met or not (chapter 1 is about the crash most first runs end in, and each
    chapter's outro teaches what the next builds on; the goals are for MET and the bests)."""
    return number == 1 or chapter_played(settings, number - 1)


def record_chapter(settings: Settings, number: int, served: int, score: int) -> bool:
    """Keep a chapter run's served requests and score where they beat the old; True when the
    score is the chapter's best."""
    key = str(number)
    if key not in settings.chapters or _score(served) is None or _score(score) is None:
        return False
    settings.chapter_runs[key] = min(settings.chapter_runs.get(key, 0) + 1, MAX_GAMES)
    settings.chapters[key] = max(settings.chapters[key], min(served, MAX_SCORE))
    if score > settings.chapter_scores.get(key, 0):
        settings.chapter_scores[key] = min(score, MAX_SCORE)
        return True
    return False


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
        """The stored data, or None when nothing has been saved yet (may raise; files.NotAFile
        when the place holds something that is not a save at all)."""

    def write(self, text: str) -> None:
        """Replace the stored text (may raise; Storage catches)."""

    def replace(self, data: str | bytes | None, text: str, stamp: str) -> str:
        """Keep the stored save (`data` as read; None: it could not be read) where no save
        overwrites it, then write `text` in its place; all or nothing: when this raises, the
        stored save is as it was. Returns where the old save was kept."""

    def beside(self, suffix: str) -> Backend:
        """A place of its own next to this one (this build's save, when this one must be left
        alone)."""

    def describe(self) -> str:
        """Where the data goes, for the log."""


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


class FileBackend:
    """A JSON file, replaced atomically so a crash mid-save cannot leave half a file. A symlinked
    save is written through its link (the file it points to is replaced, the link stays)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> bytes | None:
        """Only a regular file is read (engine.files: a FIFO or a folder is refused at once), and
        no more than MAX_READ_BYTES + 1 bytes of it."""
        try:
            return files.read_regular(self.path, MAX_READ_BYTES)
        except FileNotFoundError:
            return None

    def _target(self) -> Path:
        """The file a save replaces: the save itself, or what its symlink points to."""
        return Path(os.path.realpath(self.path))

    def _temp(self, text: str, directory: Path) -> str:
        """`text` written in full to a new temporary file in `directory` (and flushed to disk)."""
        import tempfile  # desktop only: the browser saves to localStorage

        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            _unlink(tmp)
            raise
        return tmp

    def write(self, text: str) -> None:
        target = self._target()
        tmp = self._temp(text, target.parent)
        try:
            os.replace(tmp, target)
        except BaseException:
            _unlink(tmp)
            raise

    def _copy_kept(self, raw: bytes) -> Path | None:
        """A copy already kept aside holding exactly `raw` (the same bad save is kept once)."""
        for old in sorted(self.path.parent.glob(self.path.name + BAD_SUFFIX + "*"))[-MAX_KEPT_ASIDE:]:
            try:
                if files.size_of(old) == len(raw) and files.read_regular(old, len(raw)) == raw:
                    return old
            except OSError:
                continue
        return None

    def _aside_name(self, stamp: str) -> Path:
        prefix = self.path.name + BAD_SUFFIX
        target = self.path.parent / (prefix + stamp)
        n = 1
        while os.path.lexists(target):
            target = self.path.parent / f"{prefix}{stamp}-{n}"
            n += 1
        return target

    def _keep(self, raw: bytes | None, aside: Path) -> None:
        """Keep the stored save as `aside`, byte for byte: a hard link or a copy of a symlink's
        file; the file itself renamed only where neither can be made. A copy that fails
        leaves nothing behind."""
        if not self.path.is_symlink():
            try:
                os.link(self.path, aside, follow_symlinks=False)
                return
            except OSError:
                pass
        try:
            with open(aside, "xb") as out:
                if raw is not None and len(raw) <= MAX_READ_BYTES:
                    out.write(raw)
                else:
                    with files.open_regular(self.path) as source:
                        shutil.copyfileobj(source, out)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            _unlink(aside)
            if self.path.is_symlink():
                raise
            os.rename(self.path, aside)  # no room for a copy: a rename needs none

    def replace(self, data: str | bytes | None, text: str, stamp: str) -> str:
        raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        target = self._target()
        tmp = self._temp(text, target.parent)  # no room or no permission: nothing has changed
        try:
            kept = self._copy_kept(raw) if raw is not None and len(raw) <= MAX_READ_BYTES else None
            if kept is None:
                kept = self._aside_name(stamp)
                self._keep(raw, kept)
            os.replace(tmp, target)
        except BaseException:
            _unlink(tmp)
            raise
        return str(kept)

    def beside(self, suffix: str) -> FileBackend:
        return FileBackend(self.path.with_name(self.path.stem + suffix + self.path.suffix))

    def describe(self) -> str:
        return str(self.path)


def _unlink(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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

    def replace(self, data: str | bytes | None, text: str, stamp: str) -> str:
        if data is None:
            raise OSError("nothing could be read to keep")
        kept = data if isinstance(data, str) else data.decode("utf-8", "replace")
        target = f"{self.key}{BAD_SUFFIX}{stamp}"
        store = self._local_storage()
        if store.getItem(target) not in (None, kept):
            target += "-1"
        store.setItem(target, kept)  # over the quota: raises, and nothing has changed
        store.setItem(self.key, text)
        return f"localStorage[{target!r}]"

    def beside(self, suffix: str) -> LocalStorageBackend:
        return LocalStorageBackend(self.key + suffix)

    def describe(self) -> str:
        return f"localStorage[{self.key!r}]"


HUGE = 10 ** loose_json.MAX_DIGITS  # what a longer integer reads as: more than any maximum here


def _text(data: str | bytes) -> tuple[str, str | None]:
    """The stored save as text, and what was wrong with its encoding (None: nothing)."""
    if isinstance(data, str):
        text, problem = data.removeprefix("\ufeff"), None
    else:
        problem = None
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
    oversized = f"larger than {MAX_SAVE_BYTES} bytes" if len(data) > MAX_SAVE_BYTES else None
    text, problem = _text(data[:MAX_READ_BYTES])
    if problem is None:
        try:
            tree = loose_json.strict(text, HUGE)
        except (ValueError, RecursionError) as exc:
            problem = str(exc)[:120]
        else:
            problem = _oddity(tree)
            if problem != "nested too deep":
                return tree, oversized or problem
    # Salvage reads character by character: no further than a save can be long.
    return loose_json.salvage(text[:MAX_SAVE_BYTES], HUGE), oversized or problem


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
    `last_error` holds a one-line reason after a failed or corrupt load/save, for the log: it
    says where the player's data is.

    A save is read, or kept byte for byte: one that needs setting aside (unreadable, corrupt,
    older rules, values the game would change) is kept as settings.json.bad-<time> and replaced
    at once by what could be read of it. A save this build must leave alone (one from a newer
    build, a place that holds no file, a bad save that could not be kept) stays untouched, and
    this build reads and writes its own save beside it (settings.rules<N>.json).
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
        self.main = self.backend  # where saves go unless it must be left alone

    def load(self) -> Settings:
        self.last_error = None
        self.backend = self.main
        settings, self.last_error = self._load(self.main, own=True)
        return settings if settings is not None else Settings()

    def _load(self, backend: Backend, own: bool) -> tuple[Settings | None, str | None]:
        """The settings at `backend` (None: nothing is stored there) and the line to log (None:
        nothing to say). `own` is False for this build's own save beside one it leaves alone."""
        where = backend.describe()
        try:
            data = backend.read()
        except files.NotAFile as exc:
            return self._leave_alone(f"settings at {where} are {exc.strerror}", None, own)
        except Exception as exc:  # unreadable file, browser without storage, ...
            return self._set_aside(backend, None, Settings(), f"settings unreadable at {where}: {exc}", own)
        if data is None:
            return None, None
        parsed, problem = decode(data)
        played = rules_of(parsed)
        if played > SCHEMA_VERSION:
            return self._leave_alone(f"settings at {where} come from a newer build (rules {played})",
                                     parsed, own)
        settings = Settings.from_dict(parsed)
        if problem is None and not isinstance(parsed, Pairs):
            problem = "not a settings object"
        if problem is not None:
            reason = f"settings corrupt at {where} ({problem}); using what could be read"
        elif played < SCHEMA_VERSION:
            reason = (f"settings at {where} were saved under rules {played}: their best scores "
                      f"are not comparable with rules {SCHEMA_VERSION} and start again; every "
                      "other setting is kept")
        elif _would_change(dict(parsed) if isinstance(parsed, Pairs) else {}, settings.to_dict()):
            reason = (f"settings at {where} held values the game cannot keep "
                      "(out of range or unknown); corrected")
        else:
            return settings, None
        return self._set_aside(backend, data, settings, reason, own)

    def _set_aside(self, backend: Backend, data: str | bytes | None, settings: Settings, reason: str,
                   own: bool) -> tuple[Settings, str]:
        """Keep the stored save aside and put what was read of it in its place, at once."""
        try:
            kept = backend.replace(data, _dump(settings), _stamp())
        except Exception as exc:
            if not own:
                self.backend = _Nowhere(backend)
                return settings, f"{reason}; could not be set aside ({_why(exc)}): left as it is, and nothing is saved"
            settings, note = self._leave_alone(f"{reason}; could not be set aside ({_why(exc)})", None, own,
                                               settings)
            return settings, note
        return settings, f"{reason}; the old save is kept as {kept}"

    def _leave_alone(self, reason: str, parsed: object, own: bool,
                     read: Settings | None = None) -> tuple[Settings, str]:
        """Touch nothing at the main save: this build reads and writes its own beside it. With
        no save of its own yet, it starts from what it understands of the main one (every
        setting but scores of other rules)."""
        if not own:
            self.backend = _Nowhere(self.backend)
            return read or Settings(), f"{reason}: left as it is, and nothing is saved"
        beside = self.main.beside(OWN_SAVE_SUFFIX)
        self.backend = beside
        settings, note = self._load(beside, own=False)
        told = f"{reason}: left as it is; this build keeps its save at {beside.describe()}"
        if settings is None:  # no save of its own yet
            settings = read or (Settings.from_dict(parsed) if parsed is not None else Settings())
        return settings, told if note is None else f"{told}; {note}"

    def save(self, settings: Settings) -> None:
        self.last_error = None
        try:
            self.backend.write(_dump(settings))
        except Exception as exc:  # read-only dir, full disk, quota exceeded: play on unsaved
            self.last_error = f"settings not saved to {self.backend.describe()}: {_why(exc)}"


def _dump(settings: Settings) -> str:
    return json.dumps(settings.to_dict(), indent=1, sort_keys=True)


def _why(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)[:160]


class _Nowhere:
    """Where saves go when neither the main save nor this build's own may be written."""

    def __init__(self, place: Backend) -> None:
        self.place = place

    def read(self) -> None:
        return None

    def write(self, text: str) -> None:
        raise OSError(f"{self.place.describe()} is left as it is")

    def replace(self, data: str | bytes | None, text: str, stamp: str) -> str:
        raise OSError(f"{self.place.describe()} is left as it is")

    def beside(self, suffix: str) -> Backend:
        return self

    def describe(self) -> str:
        return self.place.describe()
