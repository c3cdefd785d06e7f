"""Parts of the game the web page fetches after its first frame, only when a player needs them.

The web archive holds what the first frame needs. The memory LAB (its serving simulator and its
screen), the Korean pack (the Hangul font and the Korean catalogue), the chapters' screens and the
replay screen are served beside the page,
one gzipped tar each (LATER_URL + "<pack>.tar.gz", made by tools/build_web.py from these lists), and
fetched the first time the LAB opens or Korean is chosen; each file is written where the desktop
keeps it, so everything after that is the same on both. On the desktop and in headless tools every
file is simply there.
"""
from __future__ import annotations

import importlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the game folder: main.py, engine/, ui/
LATER_URL = "later/"  # relative to the page: build/site/later/<path>

PACKS: dict[str, tuple[str, ...]] = {
    "lab": ("engine/lab/__init__.py", "engine/lab/allocators.py", "engine/lab/beams.py",
            "engine/lab/latency.py", "engine/lab/memory.py", "engine/lab/paper.py", "engine/lab/projection.py",
            "engine/lab/sharing.py", "engine/lab/simulator.py", "engine/lab/workload.py",
            "ui/lab_layout.py", "ui/memory_map.py", "ui/lab_scene.py", "ui/i18n/en_lab.py"),
    "ko": ("ui/fonts/VRAMTetrisHangul-Bold.ttf", "ui/i18n/ko.py"),
    "chapters": ("ui/chapter_scenes.py", "ui/chapter_text.py", "ui/i18n/en_chapters.py"),
    "replay": ("ui/replay_scene.py",),
}
# Served beside the pack files but never fetched by the game: the Hangul font's licence.
ALSO_SERVED: tuple[str, ...] = ("ui/fonts/OFL-Hangul.txt",)
MIN_FONT_BYTES = 1024  # an error page is not a font


def present(path: Path) -> bool:
    """Whether a pack file is on this machine's file system (a font: of a plausible size)."""
    try:
        return path.is_file() and (path.suffix != ".ttf" or path.stat().st_size >= MIN_FONT_BYTES)
    except OSError:
        return False


def missing(name: str, root: Path = ROOT) -> list[str]:
    """The files of pack `name` not here yet."""
    return [rel for rel in PACKS[name] if not present(root / rel)]


def problem_with(data: bytes, rel: str) -> str | None:
    """Why downloaded bytes are not the file `rel` (Python source, a TrueType font), or None."""
    if rel.endswith(".py"):
        try:
            compile(data, rel, "exec")
        except (SyntaxError, ValueError) as exc:
            return f"not Python source ({exc.__class__.__name__})"
        return None
    if len(data) < MIN_FONT_BYTES:
        return f"only {len(data)} bytes"
    if data[:4] not in (b"\x00\x01\x00\x00", b"true"):
        return "not a TrueType file"
    return None


def archive_url(name: str) -> str:
    """Where the page serves pack `name`, relative to the page."""
    return f"{LATER_URL}{name}.tar.gz"


def unpack(data: bytes, name: str, root: Path = ROOT) -> str | None:
    """Write pack `name` from its downloaded tar.gz; None when done, else a one-line reason.

    Nothing is written unless the whole pack checks out: exactly the pack's files, each of them
    Python source or a TrueType font as its name says.
    """
    import tarfile

    wanted = set(PACKS[name])
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar.getmembers():
                if not member.isfile() or member.name not in wanted:
                    return f"unexpected member {member.name!r}"
                handle = tar.extractfile(member)
                files[member.name] = handle.read() if handle is not None else b""
    except (tarfile.TarError, OSError, EOFError) as exc:
        return f"not a pack ({exc.__class__.__name__})"
    if set(files) != wanted:
        return f"incomplete: {sorted(wanted - set(files))[:1]}"
    for rel, content in files.items():
        why = problem_with(content, rel)
        if why is not None:
            return f"{rel}: {why}"
    try:
        for rel, content in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(content)
    except OSError as exc:
        return f"{exc}"
    importlib.invalidate_caches()  # the pack's modules are importable now
    return None


async def fetch(name: str, root: Path = ROOT) -> str | None:
    """Download pack `name` in the browser (pygbag's platform.fopen) unless it is all here; None
    when it is in place, else a one-line reason. Never raises: the game plays on without it."""
    wanted = missing(name, root)
    if not wanted:
        return None
    if sys.platform != "emscripten":
        return f"{wanted[0]} is missing"
    url = archive_url(name)
    try:
        import platform  # pygbag's browser bridge

        fopen = getattr(platform, "fopen")  # pygbag's module has it; the stdlib's does not
        async with fopen(url, "rb") as handle:
            data = handle.read()
    except Exception as exc:  # offline, 404, an old page: play on without it
        return f"{url}: {exc}"
    why = unpack(data, name, root)
    return f"{url}: {why}" if why is not None else None


def pack_bytes(name: str, root: Path = ROOT) -> bytes:
    """Pack `name` as a gzipped tar, byte for byte the same for the same files (the web build)."""
    import gzip
    import tarfile

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in PACKS[name]:
            content = (root / rel).read_bytes()
            info = tarfile.TarInfo(rel)
            info.size, info.mtime, info.mode = len(content), 0, 0o644
            tar.addfile(info, io.BytesIO(content))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()
