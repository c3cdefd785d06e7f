"""`pygbag .` from a checkout: it packs the game and leaves the checkout and `./build.sh web`'s
bundle alone.

pygbag writes into `build/` of the folder it packs (its archive, page and CDN cache in
`build/web/`, `build/web-cache/`, `build/version.txt`), so `./build.sh web` builds into
`build/site/`. Its optimiser writes a `-pygbag` copy beside any module holding a `.wav"`-like
string, so the game holds none. The run below is pygbag's own, from a fresh copy of the checkout
named like the game (so its archive would collide with ours if the folders were shared), offline:
packing needs no network, and the run is stopped when pygbag turns to its CDN for the page
template.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from tests.webkit import ARCHIVE, web_python

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import build_web  # noqa: E402

pytestmark = pytest.mark.timeout(600)
PACK_TIMEOUT = 180.0
# pygbag's optimiser (pygbag/optimizing.py, BAD) rewrites a module when a line holds one of these.
OPTIMISER_TRIGGERS = ('.wav"', '.mp3"', '.bmp"', '.xm"')
OFFLINE = "http://127.0.0.1:9"  # the discard port: nothing listens, every fetch fails at once


def game_files(root: Path, shipped: bool = False) -> list[Path]:
    """The game's files; `shipped`: only those the web archive holds (no desktop-only tools)."""
    files = [root / name for name in build_web.GAME_FILES]
    for name in build_web.GAME_DIRS:
        files += [p for p in sorted((root / name).rglob("*")) if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix not in (".pyc", ".pyo")]
    if shipped:
        files = [p for p in files if p.relative_to(root).as_posix() not in build_web.DESKTOP_ONLY]
    return files


def test_no_game_module_wakes_pygbags_optimiser() -> None:
    hits = []
    for path in game_files(ROOT):
        if path.suffix != ".py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(t in line for t in OPTIMISER_TRIGGERS):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "pygbag would write a -pygbag.py copy of these modules into the checkout:\n" + "\n".join(hits)


def test_no_image_or_sound_file_in_the_game() -> None:
    """pygbag's optimiser also writes -pygbag.png / .ogg copies of images and sounds it packs."""
    media = [p for p in game_files(ROOT) if p.suffix.lower() in (".png", ".bmp", ".wav", ".mp3", ".ogg", ".flac", ".xm")]
    assert not media


def snapshot(root: Path, skip: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not any(rel.parts[: len(s.split("/"))] == tuple(s.split("/")) for s in skip):
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def git(cwd: Path, *args: str) -> str:
    res = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                         cwd=cwd, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh checkout of this tree (tracked and new files, as git would commit them)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    dest = tmp_path_factory.mktemp("clone") / "vram-tetris"
    names = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "checkout")
    return dest


def run_pygbag_until_it_needs_the_cdn(py: str, cwd: Path) -> str:
    """`pygbag .` as documented, offline; stopped once packing is done and it asks its CDN."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "http_proxy", "https_proxy", "all_proxy")}
    env.update(http_proxy=OFFLINE, https_proxy=OFFLINE, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([py, "-m", "pygbag", "."], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    deadline = time.monotonic() + PACK_TIMEOUT
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "urlretrieve(" in line and any("packing" in ln and "complete" in ln for ln in lines):
                break
            if time.monotonic() > deadline:
                pytest.fail(f"pygbag did not finish packing within {PACK_TIMEOUT:.0f} s:\n" + "".join(lines[-30:]))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
    return "".join(lines)


@pytest.fixture(scope="module")
def packed(checkout: Path) -> tuple[Path, str, dict[str, str], dict[str, str]]:
    py = web_python()
    res = subprocess.run([py, str(checkout / "tools" / "build_web.py"), "--pygbag-python", py],
                         cwd=checkout, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    site_before = snapshot(checkout / "build" / "site", ())
    assert ARCHIVE in site_before and "index.html" in site_before
    source_before = snapshot(checkout, ("build", ".git"))
    log = run_pygbag_until_it_needs_the_cdn(py, checkout)
    return checkout, log, site_before, source_before


def test_pygbag_packs_the_checkout_offline(packed) -> None:
    checkout, log, _, _ = packed
    assert re.search(r"packing \d+ files complete", log), log[-3000:]
    assert (checkout / "build" / "web" / ARCHIVE).is_file()
    assert "Applying black format" not in log


def test_pygbag_leaves_git_status_clean(packed) -> None:
    checkout, log, _, source_before = packed
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == "", log[-2000:]
    # Not even an ignored file outside build/ (a -pygbag copy, a reformatted module).
    assert snapshot(checkout, ("build", ".git")) == source_before


def test_pygbag_never_touches_the_web_bundle(packed) -> None:
    checkout, _, site_before, _ = packed
    assert snapshot(checkout / "build" / "site", ()) == site_before


def test_pygbag_packs_exactly_the_game_build_sh_ships(packed) -> None:
    """pygbag.ini keeps everything but the game out of `pygbag .`'s archive."""
    checkout, _, _, _ = packed

    def members(archive: Path) -> set[str]:
        with tarfile.open(archive, "r:gz") as tar:
            return {m.name for m in tar.getmembers() if m.isfile()}

    ours = members(checkout / "build" / "site" / ARCHIVE)
    theirs = members(checkout / "build" / "web" / ARCHIVE)
    assert theirs == ours, f"only pygbag's: {sorted(theirs - ours)}, only ours: {sorted(ours - theirs)}"
    assert ours == {"assets/" + p.relative_to(checkout).as_posix() for p in game_files(checkout, shipped=True)}


def test_the_environments_the_readme_names_for_pygbag_have_no_black() -> None:
    """pygbag runs black over the whole folder it packs when black is importable: the README tells
    players to run `pygbag .` from .venv (this test's environment) or build/venv-web."""
    import importlib.util

    assert importlib.util.find_spec("black") is None, "black in .venv: `pygbag .` would reformat the checkout"
    res = subprocess.run([web_python(), "-c", "import importlib.util as u; print(u.find_spec('black') is None)"],
                         capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "True"
