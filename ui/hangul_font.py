"""The Korean font arrives only when Korean is chosen.

On the desktop (and in headless tools) the subset sits in ui/fonts/ and is simply there. The web
build leaves it out of the game archive, so an English reader never downloads it, and serves it
beside the page (WEB_PATH); the browser fetches it the first time Korean is chosen and writes it
where the desktop keeps it, so everything after that is the same on both.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ui import theme

WEB_PATH = "fonts/" + theme.HANGUL_FONT_NAME  # relative to the page: build/web/fonts/...
MIN_BYTES = 1024  # an error page is not a font


def available(path: Path = theme.HANGUL_FONT_FILE) -> bool:
    """Whether the Hangul font is on this machine's file system now."""
    try:
        return path.is_file() and path.stat().st_size >= MIN_BYTES
    except OSError:
        return False


def problem_with(data: bytes) -> str | None:
    """Why downloaded bytes are not a TrueType font, or None."""
    if len(data) < MIN_BYTES:
        return f"only {len(data)} bytes"
    if data[:4] not in (b"\x00\x01\x00\x00", b"true"):
        return "not a TrueType file"
    return None


async def fetch(url: str = WEB_PATH, dest: Path = theme.HANGUL_FONT_FILE) -> str | None:
    """Download the font in the browser (pygbag's platform.fopen); None when it is in place,
    else a one-line reason. Never raises: the game goes on in English without it."""
    if available(dest):
        return None
    if sys.platform != "emscripten":
        return f"{dest.name} is missing (run python tools/subset_font.py)"
    try:
        import platform  # pygbag's browser bridge

        async with platform.fopen(url, "rb") as handle:
            data = handle.read()
    except Exception as exc:  # offline, 404, an old page: play on in English
        return f"{url}: {exc}"
    why = problem_with(data)
    if why is not None:
        return f"{url}: {why}"
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    except OSError as exc:
        return f"{dest}: {exc}"
    return None
