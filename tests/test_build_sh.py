"""`./build.sh`: help for every command, a one-line usage error, and `play` that starts at once
when nothing changed (no reinstall)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD_SH = ROOT / "build.sh"

pytestmark = pytest.mark.timeout(120)


def build_sh(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BUILD_SH), *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **(env or {})), cwd=ROOT)


def commands() -> list[str]:
    """The commands the dispatcher accepts, read from its case branches."""
    text = BUILD_SH.read_text(encoding="utf-8")
    body = text[text.index('case "$cmd" in'):]
    found = re.findall(r"^  ([a-z][a-z|-]*)\)", body, re.M)
    return [name for branch in found for name in branch.split("|") if not name.startswith("-")]


def test_the_dispatcher_has_the_documented_commands() -> None:
    assert {"help", "test", "play", "bench", "bench-wasm", "web", "serve", "preview", "setup", "web-env"} <= set(commands())


@pytest.mark.parametrize("flag", ["help", "-h", "--help"])
def test_help_describes_every_command_and_exits_0(flag: str) -> None:
    res = build_sh(flag)
    assert res.returncode == 0 and res.stderr == ""
    for name in commands():
        line = re.search(rf"^  {re.escape(name)}\b.*$", res.stdout, re.M)
        assert line, f"{name} is not described"
        assert len(line.group(0).split()) > 2, f"{name} has no description"
    assert "build/site" in res.stdout and "npm" in res.stdout


@pytest.mark.parametrize("args", [[], ["bogus"], ["--bogus"]])
def test_unknown_command_is_one_line_and_exit_2(args: list[str]) -> None:
    res = build_sh(*args)
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.startswith("./build.sh: error: ") and res.stderr.rstrip().endswith("(try ./build.sh --help)")


def fake_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A .venv whose python writes down how it was called (pip, import check, main.py)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    py = venv / "bin" / "python"
    py.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexit 0\n')
    py.chmod(0o755)
    return venv, log


def test_play_installs_once_then_starts_without_reinstalling(tmp_path: Path) -> None:
    venv, log = fake_venv(tmp_path)
    first = build_sh("play", "--seed", "3", env={"VENV": str(venv)})
    assert first.returncode == 0, first.stderr
    calls = log.read_text().splitlines()
    assert any("pip install" in c and "-e" in c for c in calls), calls
    assert calls[-1] == "main.py --seed 3"
    log.unlink()
    again = build_sh("play", "--seed", "4", env={"VENV": str(venv)})
    assert again.returncode == 0 and again.stderr == ""
    calls = log.read_text().splitlines()
    assert not any("pip" in c for c in calls), calls
    assert calls[-1] == "main.py --seed 4"


def test_play_reinstalls_when_the_environment_is_broken(tmp_path: Path) -> None:
    """The stamp is not trusted alone: a .venv that cannot import the game is set up again."""
    venv, log = fake_venv(tmp_path)
    assert build_sh("play", env={"VENV": str(venv)}).returncode == 0
    py = venv / "bin" / "python"
    # Now the import check fails (exit 1 for `-c`), everything else succeeds.
    py.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n[ "$1" = "-c" ] && exit 1\nexit 0\n')
    log.unlink()
    build_sh("play", env={"VENV": str(venv)})
    assert any("pip install" in c for c in log.read_text().splitlines())
