"""Waiting on a child process by what it shows, not by a clock."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path


def catches(pid: int, sig: int) -> bool:
    """Whether the process has installed a handler for `sig` (the kernel's SigCgt mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (int(sig) - 1) & 1)
    return False


def wait_until_catching(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 60.0) -> None:
    """Block until `proc` handles `sig` itself, so a signal sent now tests its own stop path.

    Python catches SIGINT from the start, so tools are watched for SIGTERM: every tool installs
    its SIGINT and SIGTERM handlers together. Fails if the process ends first or never gets there.
    """
    deadline = time.monotonic() + timeout
    while not catches(proc.pid, sig):
        if proc.poll() is not None:
            raise AssertionError(f"ended (status {proc.returncode}) before it handled signal {int(sig)}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no handler for signal {int(sig)} after {timeout:.0f} s")
        try:
            proc.wait(timeout=0.02)
        except subprocess.TimeoutExpired:
            pass


def is_usage_error(stderr: str) -> bool:
    """Whether `stderr` is exactly the one line of a bad command line (engine.cli_args):
    `PROG: error: WHAT (try PROG --help)`."""
    import re

    lines = stderr.splitlines()
    return len(lines) == 1 and re.fullmatch(r"(.+?): error: .+ \(try \1 --help\)", lines[0]) is not None
