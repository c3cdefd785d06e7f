"""The engine benchmark command prints every figure it promises (its speed is not tested)."""
from __future__ import annotations

import subprocess
import sys


def test_bench_prints_frame_recording_and_bot_figures():
    out = subprocess.run([sys.executable, "-m", "engine.bench", "--frames", "60", "--seconds", "0.2"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for mode in ("contiguous", "paged"):
        assert any(line.startswith(mode) and "frame (update + telemetry)" in line for line in out.stdout.splitlines())
        assert any(line.startswith(mode) and "recording the run" in line for line in out.stdout.splitlines())
        assert any(line.startswith(mode) and "heuristic bot" in line for line in out.stdout.splitlines())
    assert "Traceback" not in out.stderr
