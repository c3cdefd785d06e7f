"""Settings persistence: round trips, corrupt and hostile data, unwritable places, backends."""

from __future__ import annotations

import json
import os
import stat
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from engine.rules import RULES_VERSION
from ui import storage as storage_mod
from ui.storage import (
    ENV_DATA_DIR,
    FILE_NAME,
    LOCAL_STORAGE_KEY,
    MODES,
    FileBackend,
    LocalStorageBackend,
    Settings,
    Storage,
    default_data_dir,
    record_best,
)


def sample_settings() -> Settings:
    return Settings(
        muted=True,
        cards_enabled=False,
        best={"contiguous": {"serve": 1200, "endless": 0}, "paged": {"serve": 5400, "endless": 77}},
        seen_cards={"split", "sealed_hole"},
        mode="contiguous",
        goal="endless",
        games_played=7,
    )


def test_defaults() -> None:
    s = Settings()
    assert s.muted is False and s.cards_enabled is True and s.goal == "serve" and s.endless is False
    assert s.mode == "contiguous"  # new players meet the problem before the fix
    assert s.best == {"contiguous": {"serve": 0, "endless": 0}, "paged": {"serve": 0, "endless": 0}}
    assert s.seen_cards == set() and s.daily == {}
    # defaults are per instance, not shared
    s.best["paged"]["serve"] = 9
    s.seen_cards.add("x")
    assert Settings().best["paged"]["serve"] == 0 and Settings().seen_cards == set()


def test_dict_round_trip() -> None:
    s = sample_settings()
    assert Settings.from_dict(s.to_dict()) == s
    assert Settings.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_file_round_trip(tmp_path: Path) -> None:
    store = Storage(tmp_path)
    store.save(sample_settings())
    assert store.last_error is None
    assert (tmp_path / FILE_NAME).is_file()
    assert Storage(tmp_path).load() == sample_settings()
    # no temp files left behind by the atomic write
    assert [p.name for p in tmp_path.iterdir()] == [FILE_NAME]


def test_save_creates_missing_directories(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    Storage(target).save(sample_settings())
    assert Storage(target).load() == sample_settings()


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    store = Storage(tmp_path / "nothing-here")
    assert store.load() == Settings()
    assert store.last_error is None


@pytest.mark.parametrize("text", ["", "{", "not json", "\x00\xff", "[1, 2]", "null", "42", '"s"',
                                  "[" * 100000])
def test_corrupt_json_gives_defaults(tmp_path: Path, text: str) -> None:
    (tmp_path / FILE_NAME).write_text(text, encoding="utf-8", errors="surrogateescape")
    store = Storage(tmp_path)
    assert store.load() == Settings()
    assert store.last_error is not None and "corrupt" in store.last_error


def test_binary_garbage_gives_defaults(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"\xff\xfe\x00garbage\x80")
    store = Storage(tmp_path)
    assert store.load() == Settings()
    assert store.last_error


def test_corrupt_file_is_overwritten_by_next_save(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text("{{{{", encoding="utf-8")
    store = Storage(tmp_path)
    s = store.load()
    s.muted = True
    store.save(s)
    assert Storage(tmp_path).load().muted is True


def test_wrong_types_fall_back_per_field() -> None:
    data = {
        "muted": "yes",             # not a bool
        "cards_enabled": False,     # fine
        "best": {"contiguous": {"serve": "100"}, "paged": {"serve": 300, "endless": -1}, "other": {"serve": 5}},
        "seen_cards": ["split", 3, None, "oom"],
        "mode": "tetris",           # unknown mode
        "goal": "forty_lines",      # unknown goal
        "games_played": -4,
    }
    s = Settings.from_dict(data)
    assert s.muted is False
    assert s.cards_enabled is False
    assert s.best == {"contiguous": {"serve": 0, "endless": 0}, "paged": {"serve": 300, "endless": 0}}
    assert s.seen_cards == {"split", "oom"}
    assert s.mode == "contiguous"
    assert s.goal == "serve"
    assert s.games_played == 0


@pytest.mark.parametrize("best", [None, [], "x", 5, {"paged": True}, {"paged": 1.5}, {"paged": 500},
                                  {"paged": {"serve": True}}, {"paged": {"serve": 1.5}},
                                  {"paged": {"serve": -10}}, {"paged": {"serve": None}}, {"paged": {"forty": 9}}])
def test_bad_best_scores(best: object) -> None:
    assert Settings.from_dict({"best": best}).best == Settings().best


@pytest.mark.parametrize("seen", [None, "split", 5, {"split": 1}])
def test_bad_seen_cards(seen: object) -> None:
    assert Settings.from_dict({"seen_cards": seen}).seen_cards == set()


def test_missing_and_extra_fields() -> None:
    s = Settings.from_dict({"muted": True, "from_the_future": [1, 2, 3], "version": 99})
    assert s == Settings(muted=True)


def test_a_saved_mode_is_kept_and_a_bad_one_falls_back_to_contiguous() -> None:
    assert Settings.from_dict({"mode": "paged"}).mode == "paged"
    assert Settings.from_dict({"mode": "contiguous"}).mode == "contiguous"
    assert Settings.from_dict({"mode": ["paged"]}).mode == "contiguous"
    assert Settings.from_dict({"mode": "mixed"}).mode == "contiguous"


def test_a_mixed_run_sets_no_best_score() -> None:
    s = Settings()
    assert record_best(s, "mixed", "serve", 10_000) is False
    assert s.best == Settings().best


def test_record_best_is_kept_per_allocator_and_goal() -> None:
    s = Settings()
    assert record_best(s, "paged", "serve", 0) is False
    assert record_best(s, "paged", "serve", 500) is True
    assert record_best(s, "paged", "serve", 400) is False
    assert record_best(s, "paged", "serve", 500) is False
    assert record_best(s, "paged", "serve", 501) is True
    assert record_best(s, "paged", "endless", 90) is True  # its own record: lower than serve's, still a best
    assert s.best == {"contiguous": {"serve": 0, "endless": 0}, "paged": {"serve": 501, "endless": 90}}
    assert record_best(s, "contiguous", "endless", 10) is True
    assert record_best(s, "nonsense", "serve", 10_000) is False
    assert record_best(s, "paged", "forty_lines", 10_000) is False
    assert set(s.best) == set(MODES) and all(set(row) == {"serve", "endless"} for row in s.best.values())


def test_unwritable_directory_does_not_raise(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        store = Storage(locked / "sub")
        store.save(sample_settings())  # must not raise
        if os.geteuid() != 0:  # root ignores permissions
            assert store.last_error is not None
        assert isinstance(store.load(), Settings)
    finally:
        locked.chmod(stat.S_IRWXU)


def test_directory_is_a_file_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("I am a file", encoding="utf-8")
    store = Storage(blocker)
    store.save(sample_settings())
    assert store.last_error is not None and "not saved" in store.last_error
    assert store.load() == Settings()


def test_settings_path_is_a_directory_gives_defaults(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    store = Storage(tmp_path)
    assert store.load() == Settings()
    assert store.last_error is not None
    store.save(Settings())  # must not raise either


def test_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DATA_DIR, str(tmp_path / "override"))
    assert default_data_dir() == tmp_path / "override"
    store = Storage()
    assert isinstance(store.backend, FileBackend)
    assert store.backend.path == tmp_path / "override" / FILE_NAME
    store.save(sample_settings())
    assert Storage().load() == sample_settings()


def test_linux_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_DATA_DIR, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "vram-tetris"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_data_dir() == tmp_path / "home" / ".local" / "share" / "vram-tetris"


def test_windows_and_mac_data_dirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_DATA_DIR, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert default_data_dir() == tmp_path / "Roaming" / "vram-tetris"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert default_data_dir() == tmp_path / "Library" / "Application Support" / "vram-tetris"


class FakeLocalStorage:
    def __init__(self) -> None:
        self.items: dict[str, str] = {}

    def getItem(self, key: str) -> str | None:  # noqa: N802 - the JS API's name
        return self.items.get(key)

    def setItem(self, key: str, value: str) -> None:  # noqa: N802
        self.items[key] = value


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> FakeLocalStorage:
    """Pretend to run under pygbag: emscripten platform and its `platform.window` bridge."""
    local = FakeLocalStorage()
    fake_platform = types.ModuleType("platform")
    fake_platform.window = types.SimpleNamespace(localStorage=local)  # type: ignore[attr-defined]
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "platform", fake_platform)
    monkeypatch.delenv(ENV_DATA_DIR, raising=False)
    return local


def test_browser_uses_local_storage(browser: FakeLocalStorage) -> None:
    store = Storage()
    assert isinstance(store.backend, LocalStorageBackend)
    assert store.load() == Settings()  # nothing saved yet: getItem gives None
    store.save(sample_settings())
    assert json.loads(browser.items[LOCAL_STORAGE_KEY])["mode"] == "contiguous"
    assert Storage().load() == sample_settings()


def test_browser_corrupt_local_storage(browser: FakeLocalStorage) -> None:
    browser.items[LOCAL_STORAGE_KEY] = "]]not json"
    store = Storage()
    assert store.load() == Settings()
    assert store.last_error


def test_browser_without_window_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "platform", types.ModuleType("platform"))
    monkeypatch.delenv(ENV_DATA_DIR, raising=False)
    store = Storage()
    assert store.load() == Settings()
    store.save(sample_settings())
    assert store.last_error is not None


def test_browser_quota_exceeded_does_not_raise(browser: FakeLocalStorage,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def full(key: str, value: str) -> None:
        raise RuntimeError("QuotaExceededError")

    monkeypatch.setattr(browser, "setItem", full)
    store = Storage()
    store.save(sample_settings())
    assert store.last_error is not None and "QuotaExceededError" in store.last_error


def test_no_module_level_platform_import() -> None:
    """Desktop must never touch pygbag's bridge: the stdlib `platform` has no `window`."""
    assert not hasattr(storage_mod, "platform")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
field_names = st.sampled_from(["muted", "cards_enabled", "best", "seen_cards", "mode", "goal", "daily",
                               "endless", "best_scores", "games_played", "version", "contiguous", "paged",
                               "serve"])


@given(st.one_of(json_values, st.dictionaries(field_names, json_values, max_size=9)))
@hyp_settings(max_examples=300, deadline=None)
def test_from_dict_never_raises(data: object) -> None:
    s = Settings.from_dict(data)
    assert isinstance(s.muted, bool) and isinstance(s.cards_enabled, bool)
    assert isinstance(s.endless, bool) and s.goal in ("serve", "endless")
    assert s.mode in MODES
    assert set(s.best) == set(MODES)
    assert all(type(v) is int and v >= 0 for row in s.best.values() for v in row.values())
    assert all(type(v) is int and v >= 0 for row in s.daily.values() for v in row.values())
    assert all(isinstance(c, str) for c in s.seen_cards)
    # whatever came in, what goes out survives a JSON round trip unchanged
    assert Settings.from_dict(json.loads(json.dumps(s.to_dict()))) == s


@given(st.dictionaries(field_names, json_values, max_size=9))
@hyp_settings(max_examples=100, deadline=None)
def test_load_never_raises_on_any_saved_json(data: dict) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        Path(d, FILE_NAME).write_text(json.dumps(data), encoding="utf-8")
        assert isinstance(Storage(d).load(), Settings)


# --- Nothing a player achieved is lost to a save that cannot be read ----------------------


def kept_aside(folder: Path) -> list[Path]:
    return sorted(folder.glob(FILE_NAME + ".bad-*"))


def serve_bests(s: Settings) -> dict[str, int]:
    """Each allocator's best score for the ordinary goal."""
    return {mode: s.best[mode]["serve"] for mode in MODES}


BESTS = '"best": {"contiguous": {"serve": 1234}, "paged": {"serve": 5678}}'  # as JSON text


def test_byte_order_mark_is_read_and_scores_kept(tmp_path: Path) -> None:
    text = json.dumps({"best": {"contiguous": {"serve": 1234}, "paged": {"serve": 5678}}, "muted": True})
    (tmp_path / FILE_NAME).write_bytes(b"\xef\xbb\xbf" + text.encode())
    store = Storage(tmp_path)
    s = store.load()
    assert serve_bests(s) == {"contiguous": 1234, "paged": 5678} and s.muted is True
    store.save(s)
    assert Storage(tmp_path).load().best["paged"]["serve"] == 5678


@pytest.mark.parametrize("damage", ["latin1", "truncated", "huge_number", "trailing_garbage"])
def test_undecodable_save_is_kept_aside_and_readable_fields_survive(tmp_path: Path, damage: str) -> None:
    good = json.dumps({"best": {"contiguous": {"serve": 1234}, "paged": {"serve": 5678}}, "muted": True,
                       "seen_cards": ["caf\u00e9", "split"], "games_played": 9}, indent=1, ensure_ascii=False).encode()
    raw = {
        "latin1": good.replace("caf\u00e9".encode(), b"caf\xe9"),
        "truncated": good[: good.index(b'"seen_cards"')],
        "huge_number": good.replace(b"9", b"9" * 5000),
        "trailing_garbage": good + b"\x00\x00",
    }[damage]
    (tmp_path / FILE_NAME).write_bytes(raw)
    store = Storage(tmp_path)
    s = store.load()
    assert serve_bests(s) == {"contiguous": 1234, "paged": 5678}
    assert s.muted is True
    assert store.last_error is not None and "kept as" in store.last_error
    copies = kept_aside(tmp_path)
    assert len(copies) == 1 and copies[0].read_bytes() == raw
    store.save(s)  # the next save replaces the file, the copy stays
    assert kept_aside(tmp_path) == copies and copies[0].read_bytes() == raw
    assert Storage(tmp_path).load().best["paged"]["serve"] == 5678


def test_same_bad_save_is_kept_once(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b'{"best": {"paged": {"serve": 77')
    for _ in range(3):
        assert Storage(tmp_path).load().best["paged"]["serve"] == 77
    assert len(kept_aside(tmp_path)) == 1


def test_unreadable_save_is_moved_aside_before_a_save_replaces_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.dumps({"best": {"paged": {"serve": 5678}}}).encode()
    (tmp_path / FILE_NAME).write_bytes(raw)

    def denied(self) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(FileBackend, "read", denied)
    store = Storage(tmp_path)
    assert store.load() == Settings()
    assert store.last_error is not None and "unreadable" in store.last_error and "kept as" in store.last_error
    store.save(Settings())
    copies = kept_aside(tmp_path)
    assert len(copies) == 1 and copies[0].read_bytes() == raw


@pytest.mark.parametrize("digits", [319, 400, 5000])
def test_absurd_best_scores_are_clamped_and_the_original_kept(tmp_path: Path, digits: int) -> None:
    from engine.rules import MAX_SCORE

    raw = '{"best": {"contiguous": {"serve": 12}, "paged": {"serve": %s}}}' % ("9" * digits)
    (tmp_path / FILE_NAME).write_text(raw)
    store = Storage(tmp_path)
    s = store.load()
    assert serve_bests(s) == {"contiguous": 12, "paged": MAX_SCORE}
    assert [p.read_text() for p in kept_aside(tmp_path)] == [raw]


def test_scores_and_counts_never_exceed_their_maxima() -> None:
    from engine.rules import MAX_SCORE
    from ui.storage import MAX_GAMES

    s = Settings.from_dict({"best": {"paged": {"endless": MAX_SCORE * 10}}, "games_played": 10**30})
    assert s.best["paged"]["endless"] == MAX_SCORE and s.games_played == MAX_GAMES
    assert record_best(s, "contiguous", "serve", 10**400) and s.best["contiguous"]["serve"] == MAX_SCORE


def test_unknown_fields_are_kept_aside_before_they_would_be_dropped(tmp_path: Path) -> None:
    raw = json.dumps({"best": {"paged": {"serve": 5}}, "from_a_newer_version": [1, 2]})
    (tmp_path / FILE_NAME).write_text(raw)
    Storage(tmp_path).load()
    assert [p.read_text() for p in kept_aside(tmp_path)] == [raw]


def test_a_clean_save_is_never_copied(tmp_path: Path) -> None:
    store = Storage(tmp_path)
    store.save(sample_settings())
    assert store.load() == sample_settings() and store.last_error is None
    assert kept_aside(tmp_path) == []


def test_browser_keeps_a_bad_save_aside_in_local_storage(browser: FakeLocalStorage) -> None:
    browser.items[LOCAL_STORAGE_KEY] = '{' + BESTS + ', "mu'
    store = Storage()
    s = store.load()
    assert serve_bests(s) == {"contiguous": 1234, "paged": 5678}
    copies = [k for k in browser.items if k.startswith(LOCAL_STORAGE_KEY + ".bad-")]
    assert len(copies) == 1 and browser.items[copies[0]].endswith('"mu')
    store.save(s)
    assert browser.items[copies[0]].endswith('"mu')
    assert json.loads(browser.items[LOCAL_STORAGE_KEY])["best"]["paged"]["serve"] == 5678


# --- A save that cannot be decoded: every field that can be read is kept ------------------

FULL = {
    "version": RULES_VERSION, "muted": True, "cards_enabled": False, "mode": "paged", "goal": "endless",
    "games_played": 9, "language": "ko",
    "best": {"contiguous": {"serve": 1234, "endless": 50}, "paged": {"serve": 5678, "endless": 4000}},
    "daily": {"2026-11-30": {"contiguous": 0, "paged": 4321}, "2026-12-01": {"contiguous": 999, "paged": 0}},
    "chapters": {"1": 24, "2": 40, "3": 12, "4": 0, "5": 0, "6": 0},
    "chapter_scores": {"1": 48, "2": 90, "3": 30, "4": 0, "5": 0, "6": 0},
    "chapter_pair": {"seed": 77, "end_ms": 101500, "running": 30, "held": 612, "waste": 680, "tokens": 412,
                     "served": 24},
    "chapter_runs": {"1": 3, "2": 2, "3": 1, "4": 0, "5": 0, "6": 0},
    "seen_cards": ["sealed_hole", "split"],
}


def full_save() -> bytes:
    """FULL as the game writes it, with seen_cards last (where a truncation below cuts)."""
    body = {k: v for k, v in FULL.items() if k != "seen_cards"}
    return (json.dumps(body, indent=1)[:-2] + ',\n "seen_cards": ["sealed_hole", "split"]\n}').encode()


def damaged(how: str) -> tuple[bytes, dict]:
    """A save damaged as `how` says, and what the live file must hold after a load and a save."""
    good, want = full_save(), dict(FULL)
    if how == "invalid utf-8 between fields":
        raw = good.replace(b'"muted": true,', b'"muted": true,\xff\xfe\x80')
    elif how == "invalid utf-8 in a value":
        raw = good.replace(b'"split"', b'"spl\xe9t"')
        want["seen_cards"] = ["sealed_hole", "spl\ufffdt"]
    elif how == "nul block":
        raw = good.replace(b'"goal": "endless",', b'"goal": "endless",' + b"\0" * 512)
    elif how == "nul tail":
        raw = good + b"\0" * 4096
    elif how == "utf-16 with bom":
        raw = good.decode().encode("utf-16")
    elif how == "utf-16-le":
        raw = good.decode().encode("utf-16-le")
    elif how == "utf-16-be":
        raw = good.decode().encode("utf-16-be")
    elif how == "truncated in the last field":
        raw = good[: good.index(b'"split"') + 4]
        want["seen_cards"] = ["sealed_hole"]
    else:
        assert how == "truncated before the end"
        raw = good[: good.rindex(b"]") + 1]
    return raw, want


DAMAGES = ["invalid utf-8 between fields", "invalid utf-8 in a value", "nul block", "nul tail",
           "utf-16 with bom", "utf-16-le", "utf-16-be", "truncated in the last field", "truncated before the end"]


def load_then_save(folder: Path, raw: bytes) -> tuple[dict, list[Path]]:
    """A run over a stored save: load, save; (the live file as data, the copies kept aside)."""
    (folder / FILE_NAME).write_bytes(raw)
    store = Storage(folder)
    settings = store.load()
    store.save(settings)
    assert store.last_error is None
    return json.loads((folder / FILE_NAME).read_text(encoding="utf-8")), kept_aside(folder)


@pytest.mark.parametrize("how", DAMAGES)
def test_every_readable_field_survives_an_undecodable_save(tmp_path: Path, how: str) -> None:
    raw, want = damaged(how)
    with pytest.raises(ValueError):  # undecodable indeed: json.loads cannot read it
        json.loads(raw.decode("utf-8"))
    live, copies = load_then_save(tmp_path, raw)
    assert live == want
    assert len(copies) == 1 and copies[0].read_bytes() == raw


def test_the_full_save_holds_every_field_of_the_schema() -> None:
    """The damage tests cover every field: a field the schema gains must be added to FULL."""
    assert set(FULL) == {"version"} | {name for name, _ in storage_mod.SCHEMA}
    assert FULL != Settings().to_dict()
    assert all(FULL[name] != value for name, value in Settings().to_dict().items() if name != "version")


CONTEXT = [
    '{"best": [["paged", {"serve": 5}]], "paged": {"serve": 5}, "contiguous": 9, "serve": 4}',
    '{"best": {"contiguous": {"serve": 10}, "serve": 5}, "paged": {"serve": 5}, "muted": "x",'
    ' "daily": {"2026-12-01": {"paged": 7}, "paged": {"paged": 9}}}',
    '{"settings": {"language": "ko", "muted": true, "best": {"paged": {"serve": 5}}}, "seen_cards": "split"}',
    '{"daily": {"2026-12-01": {"serve": 5}}, "games_played": {"games_played": 4}, "x": ["ko", {"mode": "paged"}],'
    ' "goal": {"goal": "endless"}}',
]


@pytest.mark.parametrize("broken", [False, True], ids=["json", "not-utf-8"])
@pytest.mark.parametrize("text", CONTEXT)
def test_a_value_is_taken_only_from_where_it_belongs(tmp_path: Path, text: str, broken: bool) -> None:
    raw = text.encode() + (b"\xff" if broken else b"")
    (tmp_path / FILE_NAME).write_bytes(raw)
    s = Storage(tmp_path).load()
    assert s.best["paged"]["serve"] == 0 and s.language is None and s.mode == "contiguous"
    assert s.muted is False and s.games_played == 0 and s.seen_cards == set() and s.goal == "serve"
    assert all(day == "2026-12-01" for day in s.daily)
    assert all(v in (0, 7) for row in s.daily.values() for v in row.values())
    assert s.best["contiguous"]["serve"] in (0, 10)
    assert [p.read_bytes() for p in kept_aside(tmp_path)] == [raw]


@pytest.mark.parametrize("text, path, best", [
    ('{"best": {"paged": {"serve": 500, "serve": NaN}}}', ("best", "paged", "serve"), 500),
    ('{"best": {"paged": {"serve": NaN, "serve": 500}}}', ("best", "paged", "serve"), 500),
    ('{"best": {"paged": {"serve": 500, "serve": 3}}}', ("best", "paged", "serve"), 500),
    ('{"best": {"paged": {"serve": 500}, "paged": {"endless": 7}}}', ("best", "paged", "serve"), 500),
    ('{"best": {"paged": {"serve": 500}}, "best": {"contiguous": {"endless": 7}}}', ("best", "paged", "serve"), 500),
    ('{"best": {"paged": {"serve": 500}}, "best": {"contiguous": {"endless": 7}}}', ("best", "contiguous", "endless"), 7),
    ('{"best": {"paged": {"serve": -Infinity, "serve": 12, "serve": 1e999}}}', ("best", "paged", "serve"), 12),
    ('{"daily": {"2026-12-01": {"paged": 50, "paged": Infinity}}}', ("daily", "2026-12-01", "paged"), 50),
    ('{"daily": {"2026-12-01": {"paged": 50}}, "daily": {"2026-12-01": {"paged": 40}, "2026-11-30": {"paged": 3}}}',
     ("daily", "2026-12-01", "paged"), 50),
    ('{"best": {"paged": {"serve": NaN}}}', ("best", "paged", "serve"), 0),
])
@pytest.mark.parametrize("broken", [False, True], ids=["json", "truncated"])
def test_nan_and_repeated_keys_keep_the_largest_valid_value(tmp_path: Path, text: str, path: tuple[str, ...],
                                                            best: int, broken: bool) -> None:
    raw = (text[:-1] if broken else text).encode()
    live, copies = load_then_save(tmp_path, raw)
    value = live
    for key in path:
        value = value[key]
    assert value == best
    assert [p.read_bytes() for p in copies] == [raw]


def test_repeated_flags_and_choices_keep_the_last_valid_one(tmp_path: Path) -> None:
    raw = b'{"language": "ko", "language": "xx", "muted": true, "muted": 1, "mode": "paged", "mode": null}'
    live, copies = load_then_save(tmp_path, raw)
    assert live["language"] == "ko" and live["muted"] is True and live["mode"] == "paged"
    assert [p.read_bytes() for p in copies] == [raw]


def test_the_salvage_follows_the_schema_it_is_given() -> None:
    """A schema with best scores keyed by (mode, goal): read from a broken save with no new code."""
    from ui import save_schema
    from ui.loose_json import salvage

    schema = (("best", save_schema.Table(save_schema.Table(save_schema.Count(100), keys=("short", "long")),
                                         keys=("contiguous", "paged"))),
              ("goal", save_schema.Choice(("short", "long"), "short")))
    text = ('{"best": {"paged": {"long": 40, "short": 7, "long": 60, "long": NaN}, "short": 99,'
            ' "contiguous": {"short": 500}}, "long": 5, "goal": "long", "goal": "never", "best": {"paged": {"sho')
    got = save_schema.read(schema, salvage(text, 10**30))
    assert got == {"best": {"contiguous": {"short": 100, "long": 0}, "paged": {"short": 7, "long": 60}},
                   "goal": "long"}


# --- A save from rules 1 ---------------------------------------------------------------------

RULES1 = {"version": 1, "muted": True, "cards_enabled": False, "mode": "paged", "endless": True,
          "games_played": 9, "language": "ko", "seen_cards": ["sealed_hole", "split"],
          "best_scores": {"contiguous": 1234, "paged": 5678}, "daily_best": {"2026-12-01": 999}}


def test_a_rules_1_save_keeps_its_settings_but_not_its_scores(tmp_path: Path) -> None:
    raw = json.dumps(RULES1, indent=1)
    (tmp_path / FILE_NAME).write_text(raw)
    store = Storage(tmp_path)
    s = store.load()
    assert (s.muted, s.cards_enabled, s.mode, s.games_played, s.language) == (True, False, "paged", 9, "ko")
    assert s.seen_cards == {"sealed_hole", "split"} and s.goal == "endless"  # its endless choice is the goal
    assert s.best == Settings().best and s.daily == {}  # rules-1 scores are no record of rules 4
    assert store.last_error is not None and "rules 1" in store.last_error and "kept as" in store.last_error
    assert [p.read_text() for p in kept_aside(tmp_path)] == [raw]  # the old scores are not lost
    store.save(s)
    saved = json.loads((tmp_path / FILE_NAME).read_text())
    assert saved["version"] == 4 and "best_scores" not in saved and "daily_best" not in saved
    again = Storage(tmp_path)
    assert again.load() == s and again.last_error is None and len(kept_aside(tmp_path)) == 1


def test_a_save_of_older_rules_keeps_its_settings_but_not_its_scores(tmp_path: Path) -> None:
    """A version-2 save has today's fields, but its scores were played under rules 2."""
    old = {**FULL, "version": 2}
    raw = json.dumps(old)
    (tmp_path / FILE_NAME).write_text(raw)
    store = Storage(tmp_path)
    s = store.load()
    assert (s.muted, s.cards_enabled, s.mode, s.goal, s.games_played, s.language) == (
        True, False, "paged", "endless", 9, "ko")
    assert s.best == Settings().best and s.daily == {}
    assert store.last_error is not None and "rules 2" in store.last_error and "kept as" in store.last_error
    assert [p.read_text() for p in kept_aside(tmp_path)] == [raw]
    assert Settings.from_dict({**FULL, "version": RULES_VERSION}).best == FULL["best"]  # today's rules: kept
    assert Settings.from_dict({k: v for k, v in FULL.items() if k != "version"}).best == FULL["best"]


def test_a_rules_1_save_without_endless_plays_the_ordinary_goal() -> None:
    assert Settings.from_dict({**RULES1, "endless": False}).goal == "serve"
    assert Settings.from_dict({"endless": True, "goal": "serve"}).goal == "serve"  # a stored goal wins


# --- The daily challenge: a best per allocator and day -----------------------------------------


def test_record_daily_keeps_a_best_per_allocator_and_day() -> None:
    from ui.storage import MAX_DAILY_DAYS, record_daily

    s = Settings()
    assert record_daily(s, "2026-12-01", "paged", 500) is True
    assert record_daily(s, "2026-12-01", "paged", 400) is False
    assert record_daily(s, "2026-12-01", "contiguous", 40) is True  # the other allocator's own best
    assert s.daily == {"2026-12-01": {"contiguous": 40, "paged": 500}}
    assert record_daily(s, "2026-12-01", "mixed", 10_000) is False
    assert record_daily(s, "not a day", "paged", 10_000) is False
    assert record_daily(s, "2026-12-02", "paged", 0) is False and "2026-12-02" not in s.daily
    assert s.best == Settings().best  # the ordinary bests are untouched
    from datetime import date, timedelta

    for n in range(1, MAX_DAILY_DAYS + 1):
        assert record_daily(s, (date(2027, 1, 1) + timedelta(days=n)).isoformat(), "paged", n)
    assert len(s.daily) == MAX_DAILY_DAYS and "2026-12-01" not in s.daily


def test_a_daily_best_is_kept_only_under_the_one_spelling_of_its_day() -> None:
    """Python also reads "2024-W09-4" as 2024-02-29: such a key would be a second best for the
    same day, so only YYYY-MM-DD keys (from the first day a daily can have) are kept."""
    row = {"contiguous": 10, "paged": 20}
    data = {"version": RULES_VERSION, "daily": {"2024-02-29": row, "2024-W09-4": row, "1969-12-31": row}}
    assert set(Settings.from_dict(data).daily) == {"2024-02-29"}
