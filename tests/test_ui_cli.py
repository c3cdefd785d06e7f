"""The headless tool: argument errors exit 2 in one line, runs are deterministic PNGs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.rules import RULES_VERSION
from tests.prockit import is_usage_error
from ui.cli import Options, UsageError, parse

ROOT = Path(__file__).resolve().parents[1]


def run_main(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
           "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args", [
    ["--headless", "--screenshot", "x.png"],  # no --frames
    ["--headless", "--frames", "10"],  # no --screenshot
    ["--headless", "--frames", "ten", "--screenshot", "x.png"],
    ["--headless", "--frames", "1_0", "--screenshot", "x.png"],
    ["--headless", "--frames", "0", "--screenshot", "x.png"],
    ["--headless", "--frames", "5", "--screenshot", "x.jpg"],
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--scene", "credits"],
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--mode", "buddy"],
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--seed", "-4"],
    ["--screenshot", "x.png"],
    ["--headless", "--bench-frame", "--frames", "3", "--screenshot", "x.png"],
    ["--scene", "oom"],  # a window cannot start on a crash report
    ["--headless", "--frames", "5", "--record", "r.json", "--daily", "--endless"],  # the daily has a goal
    ["--frobnicate"],
    ["--day", "2025-06-01"],  # a window plays on the clock's date
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--day", "2025-6-1"],
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--day", "1969-12-31"],
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--day", "2025-02-30"],
    ["--headless", "--frames", "5", "--screenshot", "x.png", "--replay", "r.json", "--day", "2025-06-01"],
])
def test_bad_arguments_give_usage_and_exit_2(args):
    with pytest.raises(UsageError):
        parse(args)


def test_bad_arguments_exit_2_from_the_command_line(tmp_path):
    proc = run_main("--headless", "--frames", "5", "--screenshot", str(tmp_path / "a.png"), "--scene", "nope")
    assert proc.returncode == 2
    assert is_usage_error(proc.stderr) and "--scene" in proc.stderr, proc.stderr


def test_unwritable_screenshot_exits_2(tmp_path):
    proc = run_main("--headless", "--frames", "2", "--screenshot", str(tmp_path / "missing" / "a.png"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_valid_arguments_parse():
    opts = parse(["--headless", "--frames", "60", "--screenshot", "o.png", "--scene", "oom",
                  "--mode", "paged", "--autoplay", "--seed", "9"])
    assert opts == Options(headless=True, frames=60, screenshot="o.png", scene="oom", mode="paged",
                           autoplay=True, seed=9)


def test_a_headless_run_takes_the_day_it_is_given():
    from datetime import date

    opts = parse(["--headless", "--frames", "2", "--screenshot", "o.png", "--scene", "title", "--day", "2025-06-01"])
    assert opts.day == date(2025, 6, 1)
    assert parse(["--headless", "--frames", "2", "--screenshot", "o.png"]).day is None


def test_headless_screenshot_is_deterministic(tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    for out in (a, b):
        proc = run_main("--headless", "--frames", "240", "--screenshot", str(out), "--scene", "play",
                        "--autoplay", "--mode", "paged", "--seed", "4")
        assert proc.returncode == 0, proc.stderr
    import pygame

    img = pygame.image.load(str(a))
    assert img.get_size() == (800, 580)
    assert pygame.image.tobytes(img, "RGB") == pygame.image.tobytes(pygame.image.load(str(b)), "RGB")


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_desktop_loop_runs_without_error(tmp_path, layout):
    env = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
           "PYGAME_HIDE_SUPPORT_PROMPT": "1", "VRAM_TETRIS_DATA_DIR": str(tmp_path)}
    # --frames N: the window loop (the one players run, with sound start-up and settings)
    # draws N frames and leaves; any error on the way is a traceback and a non-zero status.
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--autoplay", "--mode", "paged",
                           "--layout", layout, "--frames", "30"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr


def test_the_game_loads_without_numpy():
    code = ("import sys; import ui.app, ui.play_scene, ui.title_scene, ui.overlays, ui.headless; "
            "print('numpy' in sys.modules)")
    env = {"SDL_VIDEODRIVER": "dummy", "PATH": "/usr/bin:/bin", "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_a_whole_game_runs_with_numpy_unavailable(tmp_path):
    """The browser has no numpy: title, play, crash report and sound synthesis without it."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"  # any `import numpy` now fails
        "from ui.cli import Options\n"
        "from ui import headless\n"
        "for scene in ('title', 'play', 'oom', 'victory', 'help'):\n"
        "    opts = Options(headless=True, frames=120, screenshot=sys.argv[1] + '/' + scene + '.png',\n"
        "                   scene=scene, autoplay=True, seed=3)\n"
        "    assert headless.run(opts) == 0, scene\n"
        "from ui.sound import NAMES, synthesize_all\n"
        "assert set(synthesize_all(22050, -16, 2)) == set(NAMES)\n"
        "print('ok')\n"
    )
    env = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
           "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ok")


def test_an_endless_run_with_no_input_is_recorded_to_its_end(tmp_path):
    """The contract of a recorded run: nothing pressed, requests keep arriving, the queue
    overflows or a deadline passes, and the replay's final state says the run is over and how."""
    import json

    out = tmp_path / "run.json"
    proc = run_main("--headless", "--frames", "4000", "--scene", "play", "--mode", "paged", "--endless",
                    "--seed", "5", "--record", str(out))
    assert proc.returncode == 0, proc.stderr
    replay = json.loads(out.read_text())
    assert replay["endless"] is True and replay["mode"] == "paged" and replay["rules"] == 4
    final = replay["final"]
    assert final["over"] is True and final["outcome"] in ("oom", "overload")
    assert "served" in proc.stdout and final["outcome"] in proc.stdout
    assert parse(["--headless", "--frames", "5", "--record", "r.json", "--endless"]).endless is True
    assert parse(["--headless", "--frames", "5", "--record", "r.json"]).endless is None


def test_main_keeps_the_pygbag_shape():
    """pygbag runs main.py as written: one asyncio loop that yields every frame, no threads."""
    import ast

    source = (ROOT / "main.py").read_text(encoding="utf-8")
    assert source.rstrip().endswith("asyncio.run(main())")
    assert "await asyncio.sleep(0)" in source
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & {"threading", "multiprocessing", "concurrent", "numpy", "time.sleep"}
    assert "time.sleep(" not in source


def test_frame_benchmark_prints_median_and_p99():
    env = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
           "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--bench-frame", "--frames", "30"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    draw = next(line for line in proc.stdout.splitlines() if line.startswith("draw"))
    assert "median" in draw and "p99" in draw and draw.split()[2].isdigit()


def test_a_paged_crash_screenshot_says_it_shows_a_contiguous_run(tmp_path):
    out = tmp_path / "oom.png"
    proc = run_main("--headless", "--scene", "oom", "--mode", "paged", "--frames", "1",
                    "--seed", "3", "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.exists()
    assert "note: a paged run lasts many minutes and rarely ends in a CUDA OOM" in proc.stdout
    assert "crash shown is from contiguous mode" in proc.stdout
    same = run_main("--headless", "--scene", "oom", "--mode", "contiguous", "--frames", "1",
                    "--seed", "3", "--screenshot", str(out))
    assert same.returncode == 0 and "note:" not in same.stdout


# --- Stopping: SIGINT/SIGTERM end every mode within a second, 130/143, no traceback --------

import json  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

from tests.prockit import wait_until_catching  # noqa: E402

GAME_ENV = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
            "PYGAME_HIDE_SUPPORT_PROMPT": "1"}


def stop_after(args: list[str], sig: int, tmp_path: Path, env: dict | None = None,
               ready: str | None = None) -> tuple[int, float, str]:
    """Start main.py, send `sig` once it handles signals (and `ready` exists), return (status, s, stderr)."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *args], cwd=tmp_path,
                            env=env or GAME_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        if ready is not None:
            while not Path(ready).exists():
                assert time.monotonic() < deadline, "never ready"
                try:  # between looks, wait for the game to end (its failure), at most 50 ms
                    proc.wait(timeout=0.05)
                    pytest.fail("ended before it was ready: " + proc.stderr.read())
                except subprocess.TimeoutExpired:
                    pass
        wait_until_catching(proc)
        sent = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, took, proc.stderr.read()


@pytest.mark.parametrize(("args", "sig", "status"), [
    (["--headless", "--frames", "1000000", "--scene", "title", "--screenshot", "out.png"], signal.SIGTERM, 143),
    (["--headless", "--frames", "1000000", "--scene", "title", "--screenshot", "out.png"], signal.SIGINT, 130),
    (["--bench-frame", "--frames", "1000000"], signal.SIGINT, 130),
    (["--bench-frame", "--frames", "1000000"], signal.SIGTERM, 143),
], ids=["headless-term", "headless-int", "bench-int", "bench-term"])
def test_long_runs_stop_on_signals(tmp_path, args, sig, status):
    code, took, err = stop_after(args, sig, tmp_path)
    assert code == status, err
    assert took < 2.0
    assert "Traceback" not in err and err.strip() == ""


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_window_game_saves_settings_then_stops_on_signals(tmp_path, sig, status):
    env = dict(GAME_ENV, VRAM_TETRIS_DATA_DIR=str(tmp_path / "data"))
    code, took, err = stop_after(["--mode", "contiguous"], sig, tmp_path, env)
    assert code == status, err
    assert took < 2.0 and "Traceback" not in err
    saved = json.loads((tmp_path / "data" / "settings.json").read_text())
    assert saved["mode"] == "contiguous"


# --- --data-dir: the headless tool against a given settings store --------------------------


def test_headless_survives_an_absurd_best_score_in_its_data_dir(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text('{"best_scores": {"contiguous": 1, "paged": %s}}' % ("9" * 400))
    proc = run_main("--headless", "--data-dir", str(data), "--frames", "120", "--scene", "play",
                    "--mode", "paged", "--screenshot", str(tmp_path / "out.png"))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and (tmp_path / "out.png").is_file()


def test_headless_run_saves_into_its_data_dir_and_keeps_scores_behind_a_bom(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    text = json.dumps({"version": RULES_VERSION, "best": {"contiguous": {"serve": 1234, "endless": 0},
                                             "paged": {"serve": 5678, "endless": 0}}})
    (data / "settings.json").write_bytes(b"\xef\xbb\xbf" + text.encode())
    proc = run_main("--headless", "--data-dir", str(data), "--frames", "60", "--scene", "oom",
                    "--mode", "paged", "--autoplay", "--screenshot", str(tmp_path / "out.png"))
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((data / "settings.json").read_text(encoding="utf-8"))
    assert saved["games_played"] >= 1  # the run ended and the game saved, as it does in play
    kept = [saved] + [json.loads(p.read_bytes().decode("utf-8-sig")) for p in data.glob("settings.json.bad-*")]
    assert any(k["best"]["paged"]["serve"] >= 5678 for k in kept)


def test_data_dir_is_headless_only_and_must_be_writable(tmp_path):
    with pytest.raises(UsageError, match="--data-dir"):
        parse(["--data-dir", str(tmp_path)])
    (tmp_path / "file").write_text("x")
    proc = run_main("--headless", "--frames", "2", "--screenshot", str(tmp_path / "a.png"),
                    "--data-dir", str(tmp_path / "file"))
    assert proc.returncode == 2 and "--data-dir" in proc.stderr and "Traceback" not in proc.stderr


# --- One command-line convention --------------------------------------------------------


@pytest.mark.parametrize("args", [["--head", "--frames", "2", "--screenshot", "a.png"],
                                  ["--headless", "--frame", "2", "--screenshot", "a.png"],
                                  ["--bench"]])
def test_abbreviations_are_refused(args):
    with pytest.raises(UsageError, match="unrecognized"):
        parse(args)


def test_scene_lab_points_to_the_lab_command():
    proc = run_main("--scene", "lab")
    assert proc.returncode == 2
    assert "python -m ui.lab_scene" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("shot", ["notes.txt", "missing/a.png", "a-folder/", ""])
def test_screenshot_paths_are_checked_before_rendering(tmp_path, shot):
    (tmp_path / "a-folder").mkdir()
    proc = run_main("--headless", "--frames", "1000000", "--screenshot", shot, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--screenshot" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("main.py: error:")


def test_help_shows_defaults_and_no_banner():
    proc = run_main("--help")
    assert proc.returncode == 0 and "default" in proc.stdout and "pygame" not in proc.stdout.lower().split("usage")[0]
    assert "--data-dir" in proc.stdout


@pytest.mark.parametrize("what", ["fifo", "folder", "2 MiB", "version 99"])
def test_headless_ends_and_keeps_the_save_whatever_settings_json_is(tmp_path, what):
    data = tmp_path / "data"
    data.mkdir()
    save = data / "settings.json"
    bests = {"contiguous": {"serve": 1234, "endless": 5}, "paged": {"serve": 5678, "endless": 0}}
    daily = {"2026-12-01": {"contiguous": 3, "paged": 4}}
    valid = {"version": RULES_VERSION, "best": bests, "daily": daily, "language": "ko"}
    raw = b""
    if what == "fifo":
        os.mkfifo(save)
    elif what == "folder":
        save.mkdir()
    elif what == "2 MiB":
        raw = json.dumps({"aaa_pad": "x" * (2 << 20), **valid}).encode()
        save.write_bytes(raw)
    else:
        raw = json.dumps({**valid, "version": 99}).encode()
        save.write_bytes(raw)
    proc = run_main("--headless", "--frames", "2", "--screenshot", str(tmp_path / "s.png"),
                    "--data-dir", str(data), timeout=10)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert len([line for line in proc.stderr.splitlines() if "[STORE]" in line]) == 1, proc.stderr
    if what == "fifo":
        assert save.is_fifo()
    elif what == "folder":
        assert save.is_dir()
    elif what == "2 MiB":
        now = json.loads(save.read_text(encoding="utf-8"))
        assert (now["best"], now["daily"], now["language"]) == (bests, daily, "ko")
    else:
        assert save.read_bytes() == raw
