"""A player's save is read or kept byte for byte where a newer build or a person finds it, and
the game never hangs on it: FIFOs and folders, oversized and newer saves, symlinks, full disks."""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from engine.rules import RULES_VERSION
from ui import storage as storage_mod
from ui.storage import FILE_NAME, MAX_SAVE_BYTES, OWN_SAVE_SUFFIX, FileBackend, Settings, Storage

OWN = f"settings{OWN_SAVE_SUFFIX}.json"


def player() -> Settings:
    s = Settings(language="ko", muted=True, games_played=12)
    s.best["paged"]["serve"] = 4321
    s.best["contiguous"]["endless"] = 77
    s.daily = {"2026-12-01": {"contiguous": 5, "paged": 900}}
    return s


def kept_aside(folder: Path) -> list[Path]:
    return sorted(folder.glob(FILE_NAME + ".bad-*"))


def on_disk(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.timeout(10)
def test_a_fifo_in_place_of_the_save_is_left_alone_and_never_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / FILE_NAME
    os.mkfifo(fifo)
    store = Storage(tmp_path)
    assert store.load() == Settings()
    assert store.last_error is not None and "FIFO" in store.last_error and OWN in store.last_error
    store.save(player())
    assert store.last_error is None
    assert fifo.is_fifo() and on_disk(tmp_path / OWN)["best"]["paged"]["serve"] == 4321
    again = Storage(tmp_path)
    assert again.load() == player() and fifo.is_fifo()


def test_a_folder_in_place_of_the_save_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    store = Storage(tmp_path)
    assert store.load() == Settings()
    assert store.last_error is not None and "folder" in store.last_error
    store.save(player())
    assert Storage(tmp_path).load() == player() and (tmp_path / FILE_NAME).is_dir()


@pytest.mark.parametrize("padding", ["a field before the scores", "blank characters in the middle"])
def test_an_oversized_save_is_replaced_at_once_by_all_it_holds(tmp_path: Path, padding: str) -> None:
    saved = player().to_dict()
    if padding == "a field before the scores":
        text = json.dumps({"aaa_padding": "x" * (2 << 20), **saved}, indent=1)
    else:
        text = json.dumps(saved, indent=1).replace('"best"', " " * (2 << 20) + '"best"', 1)
    raw = text.encode()
    assert len(raw) > 2 * MAX_SAVE_BYTES
    (tmp_path / FILE_NAME).write_bytes(raw)
    store = Storage(tmp_path)
    assert store.load() == player()
    assert store.last_error is not None and "larger than" in store.last_error
    # before any save: the file already holds the player's data, the original is kept whole
    now = on_disk(tmp_path / FILE_NAME)
    assert (now["best"], now["language"], now["daily"]) == (saved["best"], "ko", saved["daily"])
    assert [p.read_bytes() for p in kept_aside(tmp_path)] == [raw]


def test_a_save_of_a_newer_build_is_never_rewritten(tmp_path: Path) -> None:
    newer = {**player().to_dict(), "version": 99, "a_newer_field": [1, 2, 3]}
    raw = json.dumps(newer, indent=1).encode()
    (tmp_path / FILE_NAME).write_bytes(raw)
    store = Storage(tmp_path)
    s = store.load()
    assert store.last_error is not None and "newer build (rules 99)" in store.last_error
    assert OWN in store.last_error
    # what this build understands of it (not the scores of other rules)
    assert s.language == "ko" and s.muted is True and s.best == Settings().best and s.daily == {}
    s.best["paged"]["serve"] = 10
    store.save(s)
    assert (tmp_path / FILE_NAME).read_bytes() == raw and kept_aside(tmp_path) == []
    again = Storage(tmp_path)
    assert again.load().best["paged"]["serve"] == 10  # this build's own save is read back
    assert (tmp_path / FILE_NAME).read_bytes() == raw
    assert on_disk(tmp_path / OWN)["version"] == RULES_VERSION


def test_a_symlinked_save_is_written_through_its_link(tmp_path: Path) -> None:
    real = tmp_path / "synced" / "vram.json"
    real.parent.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / FILE_NAME).symlink_to(real)
    store = Storage(data)
    store.save(player())
    assert (data / FILE_NAME).is_symlink() and on_disk(real) == player().to_dict()
    assert Storage(data).load() == player()


def test_a_symlinked_corrupt_save_is_copied_aside_and_its_file_rewritten(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.json"
    raw = json.dumps(player().to_dict()).encode()[:-40]
    real.write_bytes(raw)
    (tmp_path / FILE_NAME).symlink_to(real)
    store = Storage(tmp_path)
    s = store.load()
    assert s.best["paged"]["serve"] == 4321 and "kept as" in (store.last_error or "")
    assert (tmp_path / FILE_NAME).is_symlink() and on_disk(real)["best"]["paged"]["serve"] == 4321
    assert [p.read_bytes() for p in kept_aside(tmp_path)] == [raw]


def test_on_a_full_disk_a_corrupt_save_is_left_whole_and_no_empty_copy_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = json.dumps(player().to_dict()).encode()[:-40]
    (tmp_path / FILE_NAME).write_bytes(raw)
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage_mod.os, "fsync", full)
    store = Storage(tmp_path)
    s = store.load()
    assert s.best["paged"]["serve"] == 4321
    assert store.last_error is not None and "could not be set aside (No space left on device)" in store.last_error
    assert (tmp_path / FILE_NAME).read_bytes() == raw
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]  # no copy, no temp file
    store.save(s)
    assert store.last_error is not None and "not saved" in store.last_error and "No space" in store.last_error
    assert (tmp_path / FILE_NAME).read_bytes() == raw
    monkeypatch.setattr(storage_mod.os, "fsync", real_fsync)
    store.save(s)  # room again: this build's save goes beside the one it could not keep
    assert store.last_error is None and (tmp_path / FILE_NAME).read_bytes() == raw


def test_a_copy_that_fails_midway_leaves_nothing_behind(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "target.json"
    raw = b'{"best": {"paged": {"serve": 77'
    real.write_bytes(raw)
    (tmp_path / FILE_NAME).symlink_to(real)
    calls = []

    def second_fails(fd: int) -> None:  # the new save is written, the copy runs out of room
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage_mod.os, "fsync", second_fails)
    store = Storage(tmp_path)
    assert store.load().best["paged"]["serve"] == 77
    assert "could not be set aside" in (store.last_error or "") and kept_aside(tmp_path) == []
    assert real.read_bytes() == raw and (tmp_path / FILE_NAME).is_symlink()


def test_a_failed_save_is_reported_by_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.uikit import make_app

    app = make_app(tmp_path)

    def refuse(self: FileBackend, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(FileBackend, "write", refuse)
    app.save_settings()
    assert any("not saved" in text and str(tmp_path) in text for _, text in app.notices)
