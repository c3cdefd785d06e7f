"""The engine benchmark command prints every figure it promises (its speed is not tested)."""
from __future__ import annotations

import re
import subprocess
import sys


def test_bench_prints_frame_recording_and_bot_figures():
    out = subprocess.run([sys.executable, "-m", "engine.bench", "--frames", "60", "--seconds", "0.2"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for mode in ("contiguous", "paged"):
        frame = [line for line in lines if line.startswith(mode) and "frame (update + telemetry)" in line]
        assert len(frame) == 1 and re.search(r"median +\d+\.\d us, p99 +\d+\.\d us", frame[0])
        rec = [line for line in lines if line.startswith(mode) and "recording the run" in line]
        assert len(rec) == 1 and re.search(r"share code \d+ chars for \d+ frames", rec[0])
        bot = [line for line in lines if line.startswith(mode) and "bot run" in line]
        assert len(bot) == 1 and re.search(r"\d+\.\d\d s CPU for +\d+\.\d game minutes", bot[0])
        assert re.search(r"\d+ pieces/s", bot[0])
    assert "Traceback" not in out.stderr


def test_bench_bad_arguments_exit_2():
    out = subprocess.run([sys.executable, "-m", "engine.bench", "--frames", "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.count(": error:") == 1 and "Traceback" not in out.stderr
