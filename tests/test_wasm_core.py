"""The pure-Python core in real CPython for WebAssembly: Pyodide (pinned, from the npm registry)
in Debian's Chromium gives the same results as native CPython.

pygbag's runtime comes from its CDN; Pyodide is the same kind of interpreter (CPython built for
wasm32, run by a browser: no threads, no subprocesses, no numpy unless loaded) and installs from
npm, so these tests run `engine/` where the browser game runs it. They skip only when npm (and a
cached Pyodide) or Chromium is truly absent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import wasm_python  # noqa: E402

from engine import replay_json  # noqa: E402

pytestmark = pytest.mark.timeout(600)

# Keys whose values are wall-clock measurements: everything else must match exactly.
TIMING_KEYS = {"timings_s", "trace_s", "seconds", "total_s", "total_cpu_s"}

# Plays a run with the heuristic bot through the Recorder, one input a 60 Hz frame; the same
# source runs natively and in the browser.
RECORD = textwrap.dedent("""
    from engine import replay_json
    from engine.bot import Bot
    from engine.replay import Recorder

    def record(seed, mode, frames):
        rec = Recorder(seed=seed, mode=mode)
        bot = Bot(seed=seed)
        pending = []
        for _ in range(frames):
            if rec.game.over:
                break
            if not pending:
                pending = bot.plan(rec.game)
            rec.update(1000 / 60, (pending.pop(0),) if pending else ())
        return replay_json.to_json(rec.finish())
""")
RUNS = [(3, "contiguous", 12000), (5, "paged", 12000)]  # a CUDA OOM; 3+ minutes of paged play


def skip_reason() -> str | None:
    chromium = os.environ.get("CHROMIUM", wasm_python.CHROMIUM)
    if not Path(chromium).is_file():
        return f"Debian chromium is not installed at {chromium} (./build.sh test installs it with apt-get)"
    if not wasm_python.installed() and shutil.which("npm") is None:
        return "npm is not installed and no Pyodide is cached in build/pyodide (Debian: apt-get install npm)"
    return None


@pytest.fixture(scope="module")
def wasm():
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    with wasm_python.wasm_python() as py:
        yield py


def native(module: str, *args: str) -> tuple[int, str, str]:
    res = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return res.returncode, res.stdout, res.stderr


def without_timings(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: without_timings(v) for k, v in doc.items() if k not in TIMING_KEYS}
    if isinstance(doc, list):
        return [without_timings(v) for v in doc]
    return doc


def record_natively(seed: int, mode: str, frames: int) -> str:
    ns: dict[str, Any] = {}
    exec(RECORD, ns)
    return str(ns["record"](seed, mode, frames))


def test_the_browser_interpreter_is_cpython_for_webassembly(wasm) -> None:
    info = json.loads(wasm.run("import json, sys, platform\n"
                               "json.dumps([sys.platform, sys.implementation.name, list(sys.version_info[:2])])"))
    assert info == ["emscripten", "cpython", [3, 12]]
    # What differs there, and why the game never starts a thread: it cannot.
    err = wasm.run("import threading\n"
                   "try:\n    threading.Thread(target=lambda: None).start()\n    r = 'started'\n"
                   "except RuntimeError as exc:\n    r = str(exc)\nr")
    assert "can't start new thread" in err


def test_autoplay_json_is_byte_identical_to_native(wasm) -> None:
    args = ["--mode", "both", "--seeds", "3", "--max-minutes", "4", "--json"]
    rc, out, err = native("engine.autoplay", *args)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["paged"]["games"] == 3 and doc["contiguous"]["ended_count"] > 0
    assert wasm.run_module("engine.autoplay", args) == (0, out, "")


def test_chapter_runs_with_speculative_decoding_are_byte_identical_to_native(wasm) -> None:
    args = ["--chapter", "5", "--seeds", "2", "--max-minutes", "2", "--spec-k", "4", "--json"]
    rc, out, err = native("engine.autoplay", *args)
    assert rc == 0, err
    (row,) = json.loads(out)["chapters"]
    assert row["adds"] == "speculative" and row["spec_k"] == 4 and row["served_mean"] > 0
    assert wasm.run_module("engine.autoplay", args) == (0, out, "")


@pytest.mark.parametrize("seed, mode, frames", RUNS)
def test_replay_recorded_natively_verifies_in_the_browser(wasm, seed: int, mode: str, frames: int) -> None:
    text = record_natively(seed, mode, frames)
    replay = replay_json.from_json(text)
    assert replay.final is not None and int(str(replay.final["pieces"])) > 20  # a real run, not an empty one
    code = "from engine import replay_json\nfrom engine.replay import final_state\nimport json\n" \
           f"r = replay_json.from_json({text!r})\njson.dumps([r.verify(), final_state(r.play())])"
    verified, state = json.loads(wasm.run(code))
    assert verified is True
    assert state == json.loads(text)["final"]


@pytest.mark.parametrize("seed, mode, frames", RUNS)
def test_replay_recorded_in_the_browser_verifies_natively(wasm, seed: int, mode: str, frames: int) -> None:
    text = wasm.run(RECORD + f"\nrecord({seed!r}, {mode!r}, {frames!r})")
    replay = replay_json.from_json(text)
    assert replay.final is not None and int(str(replay.final["pieces"])) > 20
    assert replay.verify()
    assert text == record_natively(seed, mode, frames)  # the same run, byte for byte


def test_a_tampered_replay_fails_in_the_browser(wasm) -> None:
    """The check above can fail: a replay whose final state is off does not verify there."""
    doc = json.loads(record_natively(*RUNS[0]))
    doc["final"]["score"] += 1
    code = f"from engine import replay_json\nstr(replay_json.from_json({json.dumps(doc)!r}).verify())"
    assert wasm.run(code) == "False"


@pytest.mark.parametrize("args", [
    ["--requests", "400", "--json"],
    ["--dataset", "alpaca", "--requests", "400", "--block-size", "8", "--json"],
    ["bench", "--requests", "300", "--json"],
])
def test_lab_json_matches_native_minus_timings(wasm, args: list[str]) -> None:
    rc, out, err = native("engine.lab", *args)
    assert rc == 0, err
    wrc, wout, werr = wasm.run_module("engine.lab", args)
    assert (wrc, werr) == (0, "")
    here, there = json.loads(out), json.loads(wout)
    assert without_timings(here) == without_timings(there)
    assert here != {} and "allocators" in here


def test_lab_sweep_without_numpy_says_so_in_one_line(wasm) -> None:
    """Pyodide has no numpy unless it is loaded: the sweep explains instead of a traceback."""
    rc, out, err = wasm.run_module("engine.lab", ["sweep", "--requests", "50"])
    assert rc == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "numpy" in err and "Traceback" not in err


def test_lab_sweep_without_numpy_natively() -> None:
    code = "import sys, runpy; sys.modules['numpy'] = None; sys.argv = ['engine.lab', 'sweep', '--requests', '50']\n" \
           "runpy.run_module('engine.lab', run_name='__main__', alter_sys=True)"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs numpy" in lines[0], res.stderr


# What the browser game runs of the engine, in the browser's own event loop (a coroutine that
# yields every frame, as main.py does): a thread or a process raises there.
GAME_LOOP = textwrap.dedent("""
    import asyncio
    from engine import Game
    from engine.bot import Bot
    from engine.lab import LabConfig, Simulator, generate

    async def frames():
        for mode in ("contiguous", "paged"):
            game, bot, pending = Game(seed=2, mode=mode, endless=True), Bot(seed=2), []
            for _ in range(6000):
                if game.over:
                    break
                if not pending:
                    pending = bot.plan(game)
                game.update(1000 / 60, (pending.pop(0),) if pending else ())
                game.telemetry()
                await asyncio.sleep(0)
        sim = Simulator(generate("sharegpt", 300, 2.0, 0, 2048), "paged", LabConfig())
        result = sim.run(drain=True)
        return game.pieces, result.finished

    pieces, finished = await frames()
""")


def test_engine_frame_loop_runs_in_the_browser(wasm) -> None:
    pieces, finished = json.loads(wasm.run(GAME_LOOP + "\nimport json\njson.dumps([pieces, finished])"))
    assert pieces > 20 and finished == 300


# Natively, with every way to start a thread or a process replaced by a recorder, the real game
# (main.py, headless) runs its title, play and LAB screens.
GUARD = textwrap.dedent("""
    import _thread, os, subprocess, sys, threading, multiprocessing.process
    CALLS = []
    def refuse(name):
        def call(*args, **kwargs):
            import traceback
            CALLS.append(name + "\\n" + "".join(traceback.format_stack(limit=8)))
            raise RuntimeError(name + " is not available in the browser")
        return call
    threading.Thread.start = refuse("threading.Thread.start")
    _thread.start_new_thread = refuse("_thread.start_new_thread")
    subprocess.Popen.__init__ = refuse("subprocess.Popen")
    multiprocessing.process.BaseProcess.start = refuse("multiprocessing.Process.start")
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            setattr(os, name, refuse("os." + name))
    import atexit, runpy
    def report():
        sys.__stderr__.write("\\nGUARD " + repr(CALLS) + "\\n")
    atexit.register(report)
""")


@pytest.mark.parametrize("argv", [
    ["main.py", "--headless", "--frames", "240", "--scene", "title"],
    ["main.py", "--headless", "--frames", "600", "--scene", "play", "--autoplay", "--mode", "paged"],
    ["-m", "ui.lab_scene", "--frames", "600"],
], ids=["title", "play", "lab"])
def test_nothing_the_browser_game_imports_starts_a_thread_or_process(tmp_path: Path, argv: list[str]) -> None:
    shot = tmp_path / "shot.png"
    if argv[0] == "main.py":
        run = f"sys.argv = {argv + ['--screenshot', str(shot)]!r}\nrunpy.run_path('main.py', run_name='__main__')"
    else:
        run = f"sys.argv = {[argv[1]] + argv[2:] + ['--screenshot', str(shot)]!r}\n" \
              f"runpy.run_module({argv[1]!r}, run_name='__main__', alter_sys=True)"
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy", PYGAME_HIDE_SUPPORT_PROMPT="1",
               VRAM_TETRIS_DATA_DIR=str(tmp_path / "data"))
    res = subprocess.run([sys.executable, "-c", GUARD + run], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=env)
    guard = [line for line in res.stderr.splitlines() if line.startswith("GUARD ")]
    assert guard == ["GUARD []"], res.stderr[-3000:]
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.is_file()


def test_the_guard_catches_a_thread() -> None:
    """The guard above is not blind: a thread started under it is reported."""
    code = GUARD + "import threading\ntry:\n    threading.Thread(target=print).start()\nexcept RuntimeError:\n    pass\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "GUARD ['threading.Thread.start" in res.stderr


def test_bench_wasm_prints_each_figure_native_beside_pyodide() -> None:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "wasm_python.py"), "bench", "--frames", "300",
                          "--seconds", "0.2", "--requests", "200"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    for label in ("contiguous frame, update + telemetry (mean)", "paged bot (30-minute runs), pieces/s",
                  "engine.lab bench, 200 requests x 4 allocators", "perf_counter step"):
        row = next((line for line in res.stdout.splitlines() if line.startswith(label)), None)
        assert row, f"no row {label!r} in:\n{res.stdout}"
        figures = re.findall(r"\d[\d,]*\.?\d*", row[len(label):])
        assert len(figures) >= 2, row  # native and Pyodide


@pytest.mark.parametrize("args", [["bench", "--frames", "0"], ["bench", "--seconds", "nan"], ["bench", "--fram", "9"],
                                  ["nope"], []])
def test_wasm_cli_bad_input_is_one_line_and_exit_2(args: list[str]) -> None:
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "wasm_python.py"), *args], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_a_share_code_made_natively_verifies_in_the_browser(wasm) -> None:
    """The game in the browser reads codes made on a desktop (zlib, base62, the same rules)."""
    from engine import sharecode

    text = record_natively(*RUNS[1])
    code = sharecode.encode(replay_json.from_json(text))
    done = wasm.run("from engine import sharecode\nimport json\n"
                    f"out, problem = sharecode.decode({code!r}).check()\n"
                    "json.dumps([problem, out.summary()])")
    problem, summary = json.loads(done)
    assert problem is None
    assert summary == replay_json.from_json(text).simulate().summary()
    assert wasm.run(f"from engine import sharecode\nsharecode.encode(sharecode.decode({code!r}))") == code
