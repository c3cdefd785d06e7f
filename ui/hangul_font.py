"""The Korean pack (the Hangul font and the Korean catalogue) arrives only when Korean is chosen.

On the desktop (and in headless tools) both sit in ui/ and are simply there. The web build leaves
them out of the game archive, so an English reader never downloads them, and serves them beside
the page (WEB_FILES); the browser fetches them the first time Korean is chosen and writes them
where the desktop keeps them, so everything after that is the same on both.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ui import i18n, theme

CATALOGUE_FILE = Path(__file__).resolve().parent / "i18n" / "ko.py"
WEB_PATH = "fonts/" + theme.HANGUL_FONT_NAME  # relative to the page: build/web/fonts/...
CATALOGUE_WEB_PATH = "i18n/ko.py"
WEB_FILES: tuple[tuple[str, Path], ...] = ((WEB_PATH, theme.HANGUL_FONT_FILE), (CATALOGUE_WEB_PATH, CATALOGUE_FILE))
MIN_BYTES = 1024  # an error page is not a font


def font_available(path: Path = theme.HANGUL_FONT_FILE) -> bool:
    """Whether the Hangul font is on this machine's file system now."""
    try:
        return path.is_file() and path.stat().st_size >= MIN_BYTES
    except OSError:
        return False


def available(path: Path = theme.HANGUL_FONT_FILE) -> bool:
    """Whether Korean can be shown now: its font and its catalogue are both here."""
    return font_available(path) and i18n.available("ko")


def problem_with(data: bytes, url: str = WEB_PATH) -> str | None:
    """Why downloaded bytes are not what `url` should be (a TrueType font, a catalogue), or None."""
    if url.endswith(".py"):
        try:
            compile(data, url, "exec")
        except (SyntaxError, ValueError) as exc:
            return f"not a catalogue ({exc.__class__.__name__})"
        return None if b"MESSAGES" in data else "not a catalogue"
    if len(data) < MIN_BYTES:
        return f"only {len(data)} bytes"
    if data[:4] not in (b"\x00\x01\x00\x00", b"true"):
        return "not a TrueType file"
    return None


async def fetch(files: tuple[tuple[str, Path], ...] = WEB_FILES) -> str | None:
    """Download what is missing of the Korean pack in the browser (pygbag's platform.fopen); None
    when it is all in place, else a one-line reason. Never raises: the game goes on in English."""
    missing = [(url, dest) for url, dest in files
               if not (font_available(dest) if dest.suffix == ".ttf" else dest.is_file())]
    if missing and sys.platform != "emscripten":
        return f"{missing[0][1].name} is missing (run python tools/subset_font.py)"
    for url, dest in missing:
        try:
            import platform  # pygbag's browser bridge

            fopen = getattr(platform, "fopen")  # pygbag's module has it; the stdlib's does not
            async with fopen(url, "rb") as handle:
                data = handle.read()
        except Exception as exc:  # offline, 404, an old page: play on in English
            return f"{url}: {exc}"
        why = problem_with(data, url)
        if why is not None:
            return f"{url}: {why}"
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        except OSError as exc:
            return f"{dest}: {exc}"
    importlib.invalidate_caches()  # the catalogue module is importable now
    return None
