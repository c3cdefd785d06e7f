"""Shared by the bundle, server and browser tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = "vram-tetris.tar.gz"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def web_python() -> str:
    """pygbag's own environment; ./build.sh web-env makes it when missing."""
    env = os.environ.get("WEB_PYTHON")
    if env and Path(env).is_file():
        return env
    py = ROOT / "build" / "venv-web" / "bin" / "python"
    if not py.is_file():
        subprocess.run(["bash", str(ROOT / "build.sh"), "web-env"], check=True, timeout=900)
    return str(py)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium, headless through playwright, closed on leaving (a browser fixture's body)."""
    from playwright import sync_api

    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            yield b
        finally:
            b.close()
