"""One command-line policy for every tool: abbreviations refused, defaults in --help, bad input and
unwritable outputs in one line with exit 2, SIGINT/SIGTERM stop within a second with 130/143,
a full disk or a closed pipe on standard output ends quietly, no traceback anywhere."""

from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


from engine import cli_args
from tests.prockit import wait_until_catching

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
ENV.pop("PYGAME_HIDE_SUPPORT_PROMPT", None)  # each tool must hide the banner itself

# Every command line and one long run of it (minutes at least, if nothing stops it).
TOOLS = {
    "main.py": ([str(ROOT / "main.py")], ["--headless", "--frames", "1000000", "--screenshot", "{tmp}/o.png"]),
    "engine.autoplay": (["-m", "engine.autoplay"], ["--seeds", "1000", "--max-minutes", "240"]),
    "engine.bench": (["-m", "engine.bench"], ["--frames", "10000000"]),
    "engine.lab": (["-m", "engine.lab"], ["--requests", "1000000"]),
    "engine.lab sweep": (["-m", "engine.lab", "sweep"], ["--requests", "60000"]),
    "engine.lab bench": (["-m", "engine.lab", "bench"], ["--requests", "1000000"]),
    # No replay a real run could leave takes long to check (engine.replay.check_pace bounds
    # steps and presses by game time, and a run's game time by its rules): no long run.
    "engine.replay": (["-m", "engine.replay"], None),
    "ui.sound": (["-m", "ui.sound"], ["--repeat", "1000"]),
    "ui.lab_scene": (["-m", "ui.lab_scene"], ["--frames", "100000"]),
    "ui.bench": (["-m", "ui.bench"], ["--frames", "1000000"]),
    "tools/build_web.py": ([str(ROOT / "tools" / "build_web.py")], None),
    "tools/serve_web.py": ([str(ROOT / "tools" / "serve_web.py")], None),
    "tools/social_card.py": ([str(ROOT / "tools" / "social_card.py")], None),
    # Seconds, not minutes: every screenshot the docs show, into a scratch folder.
    "tools/screenshots.py": ([str(ROOT / "tools" / "screenshots.py")], ["--out", "{tmp}"]),
}


def run(argv: list[str], timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout, **kw)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_help_shows_defaults_without_the_pygame_banner(tool: str) -> None:
    res = run(TOOLS[tool][0] + ["--help"])
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage:"), res.stdout[:200]  # nothing printed before the usage
    if tool not in ("engine.replay", "tools/social_card.py"):
        assert "(default: " in res.stdout, tool


ABBREVIATIONS = {
    "main.py": ["--head"], "engine.autoplay": ["--seed", "3"], "engine.bench": ["--frame", "5"],
    "engine.lab": ["--request", "5"], "engine.lab sweep": ["--block-size", "4", "--rate", "1", "--request", "5"],
    "engine.lab bench": ["--request", "5"], "engine.replay": ["x.json", "--verb"],
    "ui.sound": ["--rep", "2"], "ui.lab_scene": ["--fram", "3"], "ui.bench": ["--fram", "3"], "tools/build_web.py": ["--budget", "10"],
    "tools/serve_web.py": ["--por", "8000"], "tools/social_card.py": ["card", "x.png", "--screen", "a.png"],
    "tools/screenshots.py": ["--onl", "play"],
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_abbreviations_are_refused_in_one_line(tool: str) -> None:
    res = run(TOOLS[tool][0] + ABBREVIATIONS[tool])
    assert res.returncode == 2, res.stdout + res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert "error:" in last and "unrecognized arguments" in last, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


# Long runs of a tool's other modes (the frame benchmark through main.py).
MORE_LONG_RUNS = {
    "main.py --bench-frame": ([str(ROOT / "main.py")], ["--bench-frame", "--frames", "1000000"]),
}
LONG_RUNS = {**{t: (argv, long) for t, (argv, long) in TOOLS.items() if long}, **MORE_LONG_RUNS}


@pytest.mark.parametrize("tool", sorted(LONG_RUNS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_long_runs_stop_within_a_second_on_signals(tool: str, sig: int, tmp_path: Path) -> None:
    argv, long = LONG_RUNS[tool]
    proc = subprocess.Popen([sys.executable, *argv, *[a.format(tmp=tmp_path) for a in long]], cwd=ROOT,
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_catching(proc)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + sig, err
    assert took < 1.5, took
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["-m", "engine.autoplay", "--seeds", "1", "--max-minutes", "0.2"],
                                  ["-m", "engine.lab", "--requests", "20"],
                                  ["-m", "ui.sound", "--repeat", "1"],
                                  [str(ROOT / "main.py"), "--headless", "--frames", "2", "--screenshot", "/tmp/vram-full.png"]])
def test_a_full_disk_on_stdout_is_one_line(argv: list[str]) -> None:
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, *argv], cwd=ROOT, env=ENV, stdout=full, stderr=subprocess.PIPE,
                             text=True, timeout=120)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr and "Exception ignored" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "error:" in res.stderr


@pytest.mark.parametrize("argv", [["-m", "engine.lab", "--requests", "50"],
                                  ["-m", "engine.autoplay", "--seeds", "2", "--max-minutes", "0.5"],
                                  [str(ROOT / "main.py"), "--bench-frame", "--frames", "30"]])
def test_a_reader_that_goes_away_ends_quietly(argv: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head -0`
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    proc.stderr.close()
    assert "Traceback" not in err and "Exception ignored" not in err


# --- The shared pieces themselves ----------------------------------------------------------


def test_output_file_check(tmp_path: Path) -> None:
    ok = cli_args.check_output_file(str(tmp_path / "a.png"), (".png",))
    assert ok == tmp_path / "a.png"
    (tmp_path / "dir.png").mkdir()
    (tmp_path / "file").write_text("x")
    for bad, why in ((str(tmp_path / "a.txt"), "must name a .png"), ("", "expected a file name"),
                     (str(tmp_path / "missing" / "a.png"), "does not exist"),
                     (str(tmp_path / "dir.png"), "is a folder"),
                     (str(tmp_path / "file" / "a.png"), "is not a folder")):
        with pytest.raises(argparse.ArgumentTypeError, match=why):
            cli_args.check_output_file(bad, (".png",))


def test_output_dir_check(tmp_path: Path) -> None:
    assert cli_args.check_output_dir(str(tmp_path / "new" / "deeper")) == tmp_path / "new" / "deeper"
    (tmp_path / "file").write_text("x")
    for bad in ("", str(tmp_path / "file"), str(tmp_path / "file" / "sub")):
        with pytest.raises(argparse.ArgumentTypeError):
            cli_args.check_output_dir(bad)


def test_parser_refuses_abbreviations_and_shows_defaults() -> None:
    p = cli_args.parser("tool")
    p.add_argument("--seeds", type=cli_args.whole(1, 10), default=3, help="games")
    p.add_argument("--flag", action="store_true", help="a switch")
    with pytest.raises(SystemExit):
        p.parse_args(["--seed", "3"])
    text = p.format_help()
    assert "games (default: 3)" in text and "a switch (default" not in text


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_only() -> None:
    now = [0.0]
    term = FakeTerminal()
    p = cli_args.Progress("games", 200, stream=term, clock=lambda: now[0])
    p.update(1)
    assert term.getvalue() == ""  # not before half a second
    now[0] = 1.0
    p.update(50)
    assert "games: 50/200 (25%)" in term.getvalue()
    p.close()
    assert term.getvalue().endswith("\r")
    piped = io.StringIO()
    q = cli_args.Progress("games", 200, stream=piped, clock=lambda: now[0])
    now[0] = 5.0
    q.update(100)
    q.close()
    assert piped.getvalue() == ""


def test_stopped_carries_the_shell_status() -> None:
    assert cli_args.Stopped(signal.SIGINT).status == 130
    assert cli_args.Stopped(signal.SIGTERM).status == 143
    assert not isinstance(cli_args.Stopped(2), Exception)  # `except Exception` never swallows it


@pytest.mark.parametrize(("argv", "says"), [
    (["--max-seq-len", "10"], "--max-seq-len 10"),
    (["--slots", "10"], "at least --max-seq-len (2048)"),
    (["--max-seq-len", "1"], "--max-seq-len: must be at least 2"),
    (["sweep", "--block-sizes", ",".join(["4"] * 17)], "at most 16 values"),
    (["sweep", "--requests", "1000000"], "more than 2,000,000"),
    (["sweep", "--ns", "2,4,6", "--requests", "1000000"], "more than 2,000,000"),
])
def test_lab_names_the_option_at_fault_and_its_limit(argv: list[str], says: str) -> None:
    res = run(["-m", "engine.lab", *argv])
    assert res.returncode == 2 and res.stdout == ""
    last = res.stderr.strip().splitlines()[-1]
    assert says in last and "Traceback" not in res.stderr, res.stderr


@pytest.mark.parametrize(("argv", "says"), [
    (["-m", "engine.autoplay", "--seeds", "10000"], "at most 1,000"),
    (["-m", "engine.autoplay", "--max-minutes", "1000"], "at most 240"),
    (["-m", "engine.bench", "--frames", "100000000"], "at most 10,000,000"),
    (["-m", "ui.sound", "--repeat", "5000"], "at most 1,000"),
    ([str(ROOT / "main.py"), "--bench-frame", "--frames", "2000000"], "at most 1,000,000"),
])
def test_counts_have_documented_maxima(argv: list[str], says: str) -> None:
    res = run(argv)
    assert res.returncode == 2 and says in res.stderr and "Traceback" not in res.stderr, res.stderr
    helped = run([a for a in argv if not a.isdigit() and not a.startswith("--") or a in ("-m",)] + ["--help"])
    assert says.split()[-1] in helped.stdout.replace("\n", " ") or "at most" in helped.stdout


def test_a_stop_request_swallowed_by_a_library_is_repeated_until_honoured() -> None:
    """A C library may clear the exception a signal raised (pygame's init calls do): the tool
    must stop anyway, and the repeats end once run() has honoured the request."""
    def swallowing_tool() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100):  # the first Stopped arrives here and is cleared, as a C call would
                time.sleep(0)
        except cli_args.Stopped:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the tool's own work: must be interrupted by a repeat
            sum(range(1000))
        return 0

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}
    try:
        started = time.monotonic()
        assert cli_args.run(swallowing_tool, prog="t") == 143
        assert time.monotonic() - started < 1.0
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


# --- Every entry point: --help, and one voice for bad input -----------------------------------

# Each module with a __main__ (or a script), as it is started, and the files that hold its main.
ENTRY_POINTS = {
    "main.py": ([str(ROOT / "main.py")], ("main.py",)),
    "engine.autoplay": (["-m", "engine.autoplay"], ("engine/autoplay.py",)),
    "engine.bench": (["-m", "engine.bench"], ("engine/bench.py",)),
    "engine.replay": (["-m", "engine.replay"], ("engine/replay.py",)),
    "engine.lab": (["-m", "engine.lab"], ("engine/lab/__main__.py",)),
    "engine.lab sweep": (["-m", "engine.lab", "sweep"], ()),
    "engine.lab bench": (["-m", "engine.lab", "bench"], ()),
    "ui.bench": (["-m", "ui.bench"], ("ui/bench.py",)),
    "ui.lab_cli": (["-m", "ui.lab_cli"], ("ui/lab_cli.py",)),
    "ui.lab_scene": (["-m", "ui.lab_scene"], ("ui/lab_scene.py",)),
    "ui.sound": (["-m", "ui.sound"], ("ui/sound.py",)),
    **{f"tools/{p.name}": ([str(p)], (f"tools/{p.name}",)) for p in sorted((ROOT / "tools").glob("*.py"))
       if not p.name.startswith("_")},  # a leading underscore: a module the tools import
    "tools/social_card.py card": ([str(ROOT / "tools" / "social_card.py"), "card"], ()),
    "tools/wasm_python.py bench": ([str(ROOT / "tools" / "wasm_python.py"), "bench"], ()),
}


def files_with_a_main() -> set[str]:
    found = {str(p.relative_to(ROOT)) for folder in ("engine", "ui", "tools") for p in (ROOT / folder).rglob("*.py")
             if '__name__ == "__main__"' in p.read_text(encoding="utf-8") or p.name == "__main__.py"}
    return found | {"main.py"}


def test_the_entry_point_list_holds_every_module_with_a_main() -> None:
    listed = {f for _, files in ENTRY_POINTS.values() for f in files}
    assert files_with_a_main() <= listed, sorted(files_with_a_main() - listed)


def one_voice(prog: str, stderr: str) -> bool:
    lines = stderr.splitlines()
    return (len(lines) == 1 and lines[0].startswith(f"{prog}: error: ")
            and lines[0].endswith(f" (try {prog} --help)"))


def test_every_entry_point_prints_help_and_refuses_a_bogus_option_in_one_line(tmp_path: Path) -> None:
    """`--help`: exit 0, usage first, nothing run. `--bogus`: exit 2 and exactly one stderr line
    `PROG: error: WHAT (try PROG --help)`. All started at once (a batch, not one after another)."""
    procs = {}
    for name, (argv, _) in ENTRY_POINTS.items():
        for flag in ("--help", "--bogus"):
            procs[name, flag] = subprocess.Popen([sys.executable, *argv, flag], cwd=tmp_path, env=dict(
                ENV, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    problems = []
    for (name, flag), proc in procs.items():
        out, err = proc.communicate(timeout=120)
        if flag == "--help":
            if proc.returncode != 0 or not out.startswith("usage:") or err or "Traceback" in out:
                problems.append(f"{name} --help: exit {proc.returncode}, {out[:80]!r}, {err[-200:]!r}")
            elif len(out.splitlines()) > 80 or "frame benchmark" in out or "synthesized" in out:
                problems.append(f"{name} --help ran more than the help: {out[-200:]!r}")
            continue
        prog = err.split(": error: ")[0]
        if proc.returncode != 2 or out or not prog or not one_voice(prog, err):
            problems.append(f"{name} --bogus: exit {proc.returncode}, stderr {err!r}")
    assert not problems, "\n".join(problems)


# --- Numbers on a command line: plain decimal digits, one grammar for every option -----------

NOT_PLAIN = ["1_0", "1e3", "+5", " 5", "5 ", "0x10", "١٠", "inf", "nan", "1.5.2", "", "-", "1,0"]


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_numbers_take_plain_digits_only(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="plain digits"):
        cli_args.whole()(text)
    with pytest.raises(argparse.ArgumentTypeError, match="plain digits"):
        cli_args.number()(text)


def test_plain_numbers_still_read() -> None:
    assert [cli_args.whole()(t) for t in ("0", "10", "-16", "007")] == [0, 10, -16, 7]
    assert [cli_args.number()(t) for t in ("2", "0.5", ".5", "3.", "-0")] == [2.0, 0.5, 0.5, 3.0, 0.0]


@pytest.mark.parametrize("text", ["1,", ",1", "1,,2", " , "])
def test_a_list_with_an_empty_item_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        cli_args.listing(cli_args.whole(1))(text)


@pytest.mark.parametrize("argv", [
    ["-m", "engine.autoplay", "--seeds", "1_0"],
    ["-m", "engine.lab", "sweep", "--block-sizes", "1,"],
    ["-m", "ui.lab_scene", "--speed", "1_6"],
])
def test_a_number_that_is_not_plain_exits_2_in_one_line(argv: list[str]) -> None:
    res = run(argv)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_a_stop_that_lands_in_a_callback_is_repeated_not_printed() -> None:
    # A signal handled inside a weak reference's callback (as during an import) raises Stopped
    # where Python can only print it as "Exception ignored"; the tool still stops, quietly.
    code = (
        "import os, signal, time, weakref\n"
        "from engine import cli_args\n"
        "cli_args.stop_on_signals()\n"
        "class A: pass\n"
        "a = A()\n"
        "def cb(_):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    [x for x in range(100000)]\n"
        "r = weakref.ref(a, cb)\n"
        "try:\n"
        "    del a\n"
        "    for _ in range(100): time.sleep(0.01)\n"
        "    print('not stopped')\n"
        "except cli_args.Stopped as e:\n"
        "    cli_args.disarm_stop_repeats()\n"
        "    print('stopped', e.signum)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == f"stopped {int(signal.SIGTERM)}", done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
