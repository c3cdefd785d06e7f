"""The README's and the docs' screenshots are what the current build renders: every shot of
tools/screenshots.py is rendered again (one process, as `./build.sh screenshots` does) and
compared with the committed PNG pixel by pixel; the docs show every shot and no other picture;
nothing drawn depends on the day or the machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import screenshots  # noqa: E402
from screenshots import GAME, SHOTS, Shot  # noqa: E402
from tests.prockit import is_usage_error  # noqa: E402

TOOL = ROOT / "tools" / "screenshots.py"
DOCS = ROOT / "docs"
ENV = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")

pytestmark = pytest.mark.timeout(240)


def tool(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every shot, rendered by the command into a fresh folder."""
    out = tmp_path_factory.mktemp("screenshots")
    res = tool("--out", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stderr == "", res.stderr  # no notice: nothing went wrong on the way
    return out


def name(shot: Shot) -> str:
    return shot.name


@pytest.mark.parametrize("shot", SHOTS, ids=name)
def test_the_committed_screenshot_is_what_the_build_renders(shot: Shot, rendered: Path) -> None:
    committed = DOCS / shot.name
    assert committed.is_file(), f"docs/{shot.name} is missing: run ./build.sh screenshots"
    how = screenshots.difference(rendered / shot.name, committed)
    if how:
        import pygame

        pytest.fail(f"docs/{shot.name} is not what the current build renders ({how}; rendered with "
                    f"pygame-ce {pygame.version.ver}, SDL {'.'.join(map(str, pygame.get_sdl_version()))}): "
                    f"run ./build.sh screenshots (the shot: {shot.command()})")


def test_a_shot_is_what_its_own_command_line_saves(tmp_path: Path, rendered: Path) -> None:
    """The command a doc quotes for a picture (Shot.command) saves that very picture."""
    shot = next(s for s in SHOTS if s.name == "screenshot-oom.png")
    argv = shot.command(str(tmp_path)).split()
    assert argv[:2] == ["python", "main.py"]
    res = subprocess.run([sys.executable, str(ROOT / "main.py"), *argv[2:]], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert screenshots.difference(tmp_path / shot.name, rendered / shot.name) == ""


def test_the_check_names_a_picture_that_differs(tmp_path: Path, rendered: Path) -> None:
    import pygame

    shutil.copy(rendered / "screenshot-help.png", tmp_path / "screenshot-help.png")
    assert tool("--check", "--out", str(tmp_path), "--only", "help").returncode == 0
    image = pygame.image.load(str(tmp_path / "screenshot-help.png"))
    image.fill((255, 0, 255), pygame.Rect(10, 10, 3, 2))
    pygame.image.save(image, str(tmp_path / "screenshot-help.png"))
    assert screenshots.difference(rendered / "screenshot-help.png", tmp_path / "screenshot-help.png") \
        == "6 of 464,000 pixels differ"
    res = tool("--check", "--out", str(tmp_path), "--only", "help")
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()
    assert len(last) == 1 and "screenshot-help.png (6 of 464,000 pixels differ)" in last[0], res.stderr
    assert "DIFFERS" in res.stdout


def test_pictures_of_another_size_differ(rendered: Path) -> None:
    how = screenshots.difference(rendered / "screenshot-play.png", rendered / "screenshot-portrait.png")
    assert how == "800x580 against 420x700 pixels"


def test_a_picture_with_the_same_pixels_is_left_alone(tmp_path: Path, rendered: Path) -> None:
    """Re-encoded (other bytes, the same pixels), a picture is not rewritten."""
    import pygame

    target = tmp_path / "screenshot-help.png"
    image = pygame.image.load(str(rendered / "screenshot-help.png"))
    with_alpha = pygame.Surface(image.get_size(), pygame.SRCALPHA, 32)  # an RGBA file this time
    with_alpha.blit(image, (0, 0))
    pygame.image.save(with_alpha, str(target))
    before = target.read_bytes()
    assert before != (rendered / "screenshot-help.png").read_bytes()
    res = tool("--out", str(tmp_path), "--only", "help")
    assert res.returncode == 0 and "the same" in res.stdout, res.stdout + res.stderr
    assert target.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["screenshot-help.png"]


# --- The list of shots and the docs ---------------------------------------------------------

def pictures_the_docs_show() -> dict[str, set[str]]:
    shown: dict[str, set[str]] = {}
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for found in re.findall(r"screenshot-[a-z0-9-]+\.png", page.read_text(encoding="utf-8")):
            shown.setdefault(found, set()).add(page.name)
    return shown


def test_the_docs_show_every_shot_and_only_shots() -> None:
    names = {s.name for s in SHOTS}
    shown = pictures_the_docs_show()
    assert names - set(shown) == set(), f"shots no page shows: {sorted(names - set(shown))}"
    assert set(shown) - names == set(), f"pictures no shot makes: {sorted(set(shown) - names)}"
    committed = {p.name for p in DOCS.glob("screenshot-*.png")}
    assert committed == names, f"docs/ holds {sorted(committed ^ names)} beyond or short of the shots"


def test_every_shot_fixes_what_would_change_its_picture() -> None:
    """Seed, frames, language (else the locale's) and the title's date (else today's)."""
    for shot in SHOTS:
        argv = shot.argv
        needed = ("--frames", "--lang") + (("--seed", "--day") if shot.tool == GAME else ())
        assert all(flag in argv for flag in needed), f"{shot.name}: {shot.args}"
        assert "--screenshot" not in argv and "--headless" not in argv, shot.name
        assert shot.shows and len({s.name for s in SHOTS}) == len(SHOTS)


def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--only", "nope"], ["--only", "play,"], ["--frames", "3"]):
        with pytest.raises(SystemExit) as stop:
            screenshots.main(argv)
        out, err = capsys.readouterr()
        assert stop.value.code == 2 and out == "" and is_usage_error(err), (argv, err)


def test_list_prints_each_shot_with_its_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert screenshots.main(["--list"]) == 0
    out = capsys.readouterr().out
    for shot in SHOTS:
        assert f"{shot.name}: " in out and shot.command() in out


# --- No wall clock in what is drawn ---------------------------------------------------------

def title_pixels(tmp_path: Path, day: date | None) -> bytes:
    import pygame

    from ui import headless
    from ui.options import Options

    opts = Options(headless=True, frames=2, screenshot="x.png", scene="title", seed=7, lang="en", day=day)
    app, _ = headless.render(opts, str(tmp_path))
    return pygame.image.tobytes(app.surface, "RGB")


def test_the_title_shows_the_day_it_is_given_whatever_the_clock_says(tmp_path: Path, monkeypatch) -> None:
    """The title offers the daily run of the clock's UTC date; --day fixes it, so a picture of the
    title is the same on any day."""
    import engine.daily

    pictures = {}
    for clock_day in (date(2031, 2, 3), date(2032, 11, 30)):
        monkeypatch.setattr(engine.daily, "utc_day", lambda _timestamp, d=clock_day: d)
        pictures[clock_day, None] = title_pixels(tmp_path, None)
        pictures[clock_day, "fixed"] = title_pixels(tmp_path, date(2025, 6, 1))
    assert pictures[date(2031, 2, 3), None] != pictures[date(2032, 11, 30), None]  # the clock is drawn
    assert pictures[date(2031, 2, 3), "fixed"] == pictures[date(2032, 11, 30), "fixed"]


def test_the_app_takes_its_day_for_today(tmp_path: Path) -> None:
    from tests.uikit import canvas
    from ui.app import GameApp
    from ui.storage import Storage
    from ui.title_scene import TitleScene

    app = GameApp(canvas(), storage=Storage(directory=str(tmp_path)), seed=1, audio=False,
                  language="en", day=date(2025, 6, 1))
    assert app.today() == date(2025, 6, 1)
    app.show_title(seed=1)
    assert isinstance(app.top, TitleScene) and app.top.today == "2025-06-01"
