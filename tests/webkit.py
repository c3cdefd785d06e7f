"""Shared by the bundle, server and browser tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = "vram-tetris.tar.gz"


def web_python() -> str:
    """pygbag's own environment; ./build.sh web-env makes it when missing."""
    env = os.environ.get("WEB_PYTHON")
    if env and Path(env).is_file():
        return env
    py = ROOT / "build" / "venv-web" / "bin" / "python"
    if not py.is_file():
        subprocess.run(["bash", str(ROOT / "build.sh"), "web-env"], check=True, timeout=900)
    return str(py)
