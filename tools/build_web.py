"""Build the static web bundle (build/site) with pygbag, offline, and check it against the budget.

pygbag names the game archive after the folder it packs and packs everything in it, so the game
files (main.py, engine/, ui/, assets/) are first copied into a staging folder with a fixed name.
The staged Python files lose their docstrings and comments (tools/strip_source.py: the same code,
checked by re-parsing); the checkout is never touched.
Our own page template and icon are passed in, so pygbag never reaches for its CDN at build time.
The result is checked: archive contents (no tests, caches, build output, virtual environments),
archive size, and that the page fetches nothing but pygbag's runtime before the first frame.

The output and staging folders are replaced only when the build made them: it leaves a marker
file (MARKER) listing every file it wrote there, with its size and SHA-256, and deletes a folder
only while it holds exactly those files. An empty folder is used as it is; any other folder
(one without the marker, or with a file the build did not write or that changed since), and
any folder of the project's sources, is refused with exit status 2 before any work starts, so
a mistyped --out or --stage never deletes anything.

Usage:
    python tools/build_web.py [--out build/site] [--stage build/stage] [--pygbag-python PY] [--render-python PY]
                              [--site-url URL] [--budget-kb 150] [--timeout 300]
Exit status: 0 built and within budget, 1 build or check failed, 2 bad usage,
130/143 stopped by SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from strip_source import StripError, strip

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine import cli_args  # noqa: E402  (standard library only, like this tool)

APP_NAME = "vram-tetris"  # archive name: vram-tetris.tar.gz
TITLE = "PagedAttention: VRAM Tetris"
DESCRIPTION = (
    "A puzzle game about how LLM serving engines (vLLM, TensorRT-LLM, TGI) manage GPU memory: "
    "falling requests fill VRAM, holes are fragmentation, and PagedAttention splits a request "
    "into pages that fit anywhere."
)
CANVAS = (800, 580)
PYBUILD = "3.12"
BUDGET_KB = 150  # what an English reader's page fetches from us before the first frame
TOTAL_BUDGET_KB = 350  # the archive plus what loads later (the LAB, the Korean pack)

GAME_FILES = ("main.py",)
GAME_DIRS = ("engine", "ui", "assets")
# Command-line tools that never run in a page (benchmarks, headless screenshots, the command lines
# and their shared argument checks, the LAB's and the autoplay's reports, replay files and the
# replay checker): left out of the archive, so a phone downloads only what it runs. pygbag.ini
# leaves the same files out of a plain `pygbag .` (it matches file names in any folder, so every
# name here must belong to desktop-only files alone; engine/lab/ goes as a whole there, the LAB
# being fetched later: see LATER).
DESKTOP_ONLY = ("engine/bench.py", "engine/autoplay.py", "engine/chapter_play.py", "engine/playing.py", "engine/replay_cli.py", "engine/replay_json.py",
                "engine/lab/report.py", "engine/lab/sweep.py", "engine/lab/__main__.py", "engine/lab/cli.py",
                "engine/cli_args.py", "ui/cli.py", "ui/bench.py", "ui/headless.py", "ui/lab_cli.py")
TEMPLATE = ROOT / "web" / "vram-tetris.tmpl"
ICON = ROOT / "web" / "favicon.png"
EMBED = ROOT / "web" / "embed.html"
EMBED_KO = ROOT / "web" / "embed.ko.html"  # the article's Korean edition, framing the game in Korean
FALLBACK_CARD = ROOT / "web" / "og-image.png"
# Served beside the page, not packed: what the first frame does not need (the memory LAB, the
# Korean font and catalogue) is fetched by the game when a player asks for it (ui/packs.py).
sys.path.insert(0, str(ROOT))
from ui.packs import ALSO_SERVED, LATER_URL, PACKS, archive_url, pack_bytes  # noqa: E402  (stdlib only)

# Every file left out of the archive for later, and where the page serves it (a pack's tar.gz).
LATER = {**{rel: archive_url(pack) for pack, files in PACKS.items() for rel in files},
         **{rel: LATER_URL + rel for rel in ALSO_SERVED}}
OG_NAME = "og-image.png"
SCREENSHOT_TIMEOUT = 90.0
MAX_BUDGET_KB = 100_000
MAX_TIMEOUT_S = 24 * 3600.0
# Written into every folder the build makes, with the list of what the build wrote there (a
# manifest: each file's size and SHA-256). Only a folder whose marker lists every file it holds,
# unchanged, is ever deleted; an empty folder is used as it is.
MARKER = ".vram-tetris-build"
MARKER_FORMAT = "vram-tetris build folder 1"
# pygbag's own output inside the staged game: pygbag (and `./build.sh preview`) rewrites it there.
PYGBAG_OUTPUT = f"{APP_NAME}/build"
MAX_MANIFEST_BYTES = 16 << 20
DEFAULT_STAGE = ROOT / "build" / "stage"
# Folders of the checkout that hold the project itself: never an output, nor anything inside them.
SOURCE_DIRS = ("engine", "ui", "assets", "web", "tools", "tests", "docs", ".git", ".github", ".ci",
               ".venv")

# Archive members that must never ship: checked on every build.
FORBIDDEN = (
    (re.compile(r"(^|/)tests?/"), "tests"),
    (re.compile(r"(^|/)build/"), "build output"),
    (re.compile(r"(^|/)(\.?venv[^/]*|site-packages)/"), "virtual environment"),
    (re.compile(r"(^|/)(__pycache__|\.pytest_cache|\.hypothesis|\.mypy_cache|\.ruff_cache)/"), "cache"),
    (re.compile(r"\.py[cod]$"), "compiled bytecode"),
    (re.compile(r"(^|/)\.git(/|$)"), "git metadata"),
    (re.compile(r"(^|/)(web|tools|test-output|\.github|\.ci)/"), "non-game folder"),
    (re.compile(r"\.egg-info/"), "packaging metadata"),
    (re.compile(r"(^|/)(pyproject\.toml|build\.sh|Dockerfile|pygbag\.ini|README\.md)$"), "project file"),
    (re.compile(r"(^|/)(VRAMTetrisHangul-Bold\.ttf|ui/i18n/ko\.py|engine/lab/[a-z_]+\.py|ui/lab_scene\.py)$"),
     "a part fetched later (the LAB, the Korean pack: served beside the page)"),
)
REQUIRED = ("assets/main.py", "assets/engine/", "assets/ui/")
# Debug terminal parts of pygbag's runtime that the page must not load.
DEBUG_FEATURES = {"vt", "vtx", "stdout", "fs"}
DEBUG_FILES = re.compile(r"xterm|vtx?\.js")


class BuildError(Exception):
    """A build step failed; the message says what and what to do."""


class UnsafeFolder(Exception):
    """A folder the build must not replace; the message says why."""


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _listing(folder: Path, owned: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file, link and empty folder under `folder` (not following links): relative path ->
    what it is ("file SIZE SHA256", "link TARGET", "dir"). The marker and the folders in `owned`
    (wholly the build's: pygbag's output) are left out."""
    found: dict[str, str] = {}
    for top, dirs, files in os.walk(folder, onerror=_raise):
        here = Path(top)
        rel_top = here.relative_to(folder).as_posix()
        keep = []
        for name in sorted(dirs):
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            path = here / name
            if rel in owned:
                continue
            if path.is_symlink():
                found[rel] = f"link {os.readlink(path)}"
            else:
                keep.append(name)
                found[rel] = "dir"
        dirs[:] = keep
        for name in sorted(files):
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            if rel == MARKER:
                continue
            path = here / name
            if path.is_symlink():
                found[rel] = f"link {os.readlink(path)}"
            elif path.is_file():
                found[rel] = f"file {path.stat().st_size} {_sha256(path)}"
            else:
                found[rel] = "other"
    return found


def _raise(exc: OSError) -> None:
    raise exc


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(folder: Path) -> tuple[dict[str, str], tuple[str, ...]] | None:
    """What the marker in `folder` says the build wrote there, or None without a valid marker."""
    marker = folder / MARKER
    try:
        if marker.is_symlink() or not marker.is_file() or marker.stat().st_size > MAX_MANIFEST_BYTES:
            return None
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != MARKER_FORMAT:
        return None
    files, owned = data.get("files"), data.get("owned", [])
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None
    if not isinstance(owned, list) or not all(isinstance(o, str) for o in owned):
        return None
    return files, tuple(owned)


def write_manifest(folder: Path, owned: tuple[str, ...] = ()) -> None:
    """Record in the marker every file now under `folder`: what the build wrote there."""
    data = {"format": MARKER_FORMAT,
            "note": "Made by tools/build_web.py; the next build replaces this folder only while it "
                    "holds exactly the files listed here.",
            "owned": [o for o in owned if (folder / o).is_dir() and not (folder / o).is_symlink()],
            "files": _listing(folder, owned)}
    tmp = folder / (MARKER + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MARKER)


def check_replaceable(folder: Path, sources: tuple[Path, ...]) -> None:
    """Raise UnsafeFolder unless the build may delete and remake `folder`.

    Allowed: a folder that does not exist yet, an empty one, or one holding the build's marker
    and nothing but the files the marker lists, as the build wrote them. Never a source checkout,
    a folder that contains one, or a folder inside the project's own source folders.
    """
    folder = folder.resolve()
    for src in sources:
        src = src.resolve()
        if _within(src, folder):
            raise UnsafeFolder(f"{folder} is or contains the project's source ({src})")
        for name in SOURCE_DIRS + GAME_DIRS:
            if _within(folder, src / name):
                raise UnsafeFolder(f"{folder} is inside the project's source folder {src / name}")
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_symlink() or not folder.is_dir():
        raise UnsafeFolder(f"{folder} exists and is not a folder")
    try:
        if not any(folder.iterdir()):
            return
        manifest = read_manifest(folder)
        if manifest is None:
            raise UnsafeFolder(f"{folder} is not empty and has no {MARKER} marker of this build; "
                               "pick a new or empty folder")
        written, owned = manifest
        present = _listing(folder, owned)
    except OSError as exc:
        raise UnsafeFolder(f"cannot read {folder}: {exc.strerror or exc}") from None
    stranger = sorted(rel for rel, what in present.items() if written.get(rel) != what)
    if stranger:
        more = f" and {len(stranger) - 1} more" if len(stranger) > 1 else ""
        raise UnsafeFolder(f"{folder} holds {stranger[0]!r}{more}, which the build did not write "
                           "there (or it changed since); move it away or pick a new folder")


def make_fresh(folder: Path, sources: tuple[Path, ...]) -> None:
    """Delete `folder` if the build may (checked again, just before), recreate it, mark it."""
    check_replaceable(folder, sources)
    if folder.exists() and any(folder.iterdir()):
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_manifest(folder)


@dataclass
class Report:
    files: dict[str, int] = field(default_factory=dict)
    archive_members: dict[str, int] = field(default_factory=dict)
    archive_bytes: int = 0
    budget_bytes: int = BUDGET_KB * 1024
    first_frame: list[str] = field(default_factory=list)
    later: dict[str, int] = field(default_factory=dict)  # fetched only when needed (LAB, Korean pack)
    social_image: str = ""
    seconds: float = 0.0
    source_bytes: int = 0  # staged Python files as written
    stripped_bytes: int = 0  # the same files as shipped, without docstrings and comments
    pygbag: str = ""
    cdn: str = ""


def log(msg: str) -> None:
    print(msg, flush=True)


def run(cmd: list[str], timeout: float, cwd: Path, env: dict[str, str] | None = None, logfile: Path | None = None) -> subprocess.CompletedProcess:
    """Run a command in its own process group and kill the whole group on timeout."""
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    except OSError as exc:
        raise BuildError(f"cannot run {cmd[0]}: {exc}") from exc
    try:
        out, _ = proc.communicate(timeout=timeout)
    except BaseException as exc:  # a timeout, or this tool being stopped: take the step down too
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        if not isinstance(exc, subprocess.TimeoutExpired):
            raise
        if logfile:
            logfile.write_text(out or "")
        raise BuildError(f"timed out after {timeout:.0f} s: {' '.join(cmd)}" + (f" (log: {logfile})" if logfile else ""))
    if logfile:
        logfile.write_text(out or "")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


def check_python(py: str) -> str:
    """pygbag must be importable and black must not be: pygbag reformats the packed source with it."""
    probe = (
        "import importlib.util, sys\n"
        "if importlib.util.find_spec('pygbag') is None: sys.exit(3)\n"
        "if importlib.util.find_spec('black') is not None: sys.exit(4)\n"
        "import pygbag; print(pygbag.VERSION)\n"
    )
    try:
        res = subprocess.run([py, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"cannot run {py}: {exc}") from exc
    if res.returncode == 3:
        raise BuildError(f"pygbag is not installed for {py}; run ./build.sh web (it sets up build/venv-web)")
    if res.returncode == 4:
        raise BuildError(f"black is importable from {py}: pygbag would reformat the game source. Use a build environment without black (./build.sh web uses build/venv-web)")
    if res.returncode != 0:
        raise BuildError(f"{py} cannot import pygbag:\n{res.stderr.strip()}")
    return res.stdout.strip()


def stage(stage_root: Path, source: Path) -> Path:
    """Copy only the game into build/stage/vram-tetris: the folder pygbag packs whole."""
    app = stage_root / APP_NAME
    try:
        app.mkdir(parents=True)  # a fresh staging folder (make_fresh): nothing there to delete
    except FileExistsError:
        raise BuildError(f"{app} exists already: stage into a new or empty folder") from None
    if not (source / "main.py").is_file():
        raise BuildError(f"main.py not found in {source}: nothing to build")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*", "*.egg-info", "tests", "test_*.py")
    for name in GAME_FILES:
        shutil.copy2(source / name, app / name)
    for name in GAME_DIRS:
        if (source / name).is_dir():
            shutil.copytree(source / name, app / name, ignore=ignore)
    for name in (*DESKTOP_ONLY, *LATER):
        (app / name).unlink(missing_ok=True)
    return app


def strip_staged(app: Path) -> tuple[int, int]:
    """Rewrite every staged .py file without docstrings and comments; (bytes before, bytes after)."""
    before = after = 0
    for path in sorted(app.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            small = strip(text, str(path.relative_to(app)))
        except (SyntaxError, StripError) as exc:
            raise BuildError(f"cannot strip {path.relative_to(app)}: {exc}") from exc
        path.write_text(small, encoding="utf-8")
        before += len(text.encode("utf-8"))
        after += len(small.encode("utf-8"))
    return before, after


def _imports(tree: ast.AST, top_level_only: bool) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    nodes = ast.iter_child_nodes(tree) if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module.split(".")[0], node.lineno))
    return found


def check_main_source(main_src: str) -> list[str]:
    """pygbag preloads every package main.py names (imports and PEP 723 header) before it runs."""
    problems: list[str] = []
    if "asyncio.run(main())" not in main_src:
        problems.append("main.py: pygbag needs the literal `asyncio.run(main())`")
    try:
        main_tree = ast.parse(main_src)
    except SyntaxError as exc:
        return problems + [f"main.py does not parse: {exc}"]
    for mod, line in _imports(main_tree, top_level_only=False):
        if mod == "numpy":
            problems.append(f"main.py:{line} imports numpy: the page would download numpy before the first frame")
    header = re.search(r"(?m)^# /// script$(.*?)^# ///$", main_src, re.S)
    if header:
        deps = re.findall(r'"([A-Za-z0-9_.\-]+)', header.group(1))
        extra = [d for d in deps if d.lower().replace("_", "-") not in ("pygame-ce", "pygame")]
        if extra:
            problems.append(f"main.py PEP 723 header asks for {extra}: only pygame-ce may load before the first frame")
    return problems


def check_sources(app: Path) -> list[str]:
    """main.py's rules, and no module that loads with the game may import numpy at import time."""
    problems = check_main_source((app / "main.py").read_text(encoding="utf-8"))
    for path in sorted(app.rglob("*.py")):
        if path.name == "main.py" and path.parent == app:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as exc:
            problems.append(f"{path.relative_to(app)}: does not parse: {exc}")
            continue
        for mod, line in _imports(tree, top_level_only=True):
            if mod == "numpy":
                problems.append(f"{path.relative_to(app)}:{line} imports numpy at module level: import it lazily")
    return problems


def pygbag_build(py: str, app: Path, timeout: float, cdn: str | None, logfile: Path) -> Path:
    cmd = [
        py, "-m", "pygbag", "--build",
        "--template", str(TEMPLATE), "--icon", str(ICON),
        "--title", TITLE, "--width", str(CANVAS[0]), "--height", str(CANVAS[1]),
        "--PYBUILD", PYBUILD, "--ume_block", "1", "--can_close", "1",
        # pygbag's optimizer rewrites any source line holding '.wav"' (or .mp3, .bmp, .xm) to
        # '.ogg"' and swaps the file in: the game must ship exactly as written.
        "--no_opt",
    ]
    if cdn:
        cmd += ["--cdn", cdn]
    cmd.append(str(app))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    # pygbag reads pygbag.ini from the current directory: run it from the checkout root.
    res = run(cmd, timeout=timeout, cwd=ROOT, env=env, logfile=logfile)
    built = app / "build" / "web"
    if res.returncode != 0 or not (built / f"{APP_NAME}.tar.gz").is_file() or not (built / "index.html").is_file():
        tail = "\n".join((res.stdout or "").splitlines()[-25:])
        raise BuildError(f"pygbag failed (exit {res.returncode}); log: {logfile}\n{tail}")
    return built


def check_archive(archive: Path, budget: int) -> dict[str, int]:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = {m.name: m.size for m in tar.getmembers() if m.isfile()}
    except (tarfile.TarError, OSError) as exc:
        raise BuildError(f"{archive.name} is not a readable tar.gz: {exc}") from exc
    bad = []
    for name in members:
        for pattern, why in FORBIDDEN:
            if pattern.search(name):
                bad.append(f"{name} ({why})")
                break
    missing = [r for r in REQUIRED if not any(n == r or n.startswith(r) for n in members)]
    problems = []
    if bad:
        problems.append("archive carries files it must not:\n  " + "\n  ".join(bad))
    if missing:
        problems.append("archive lacks " + ", ".join(missing))
    size = archive.stat().st_size
    if size > budget:
        problems.append(f"archive is {size / 1024:.1f} KB, over the {budget / 1024:.0f} KB budget")
    if problems:
        raise BuildError("\n".join(problems))
    return members


def first_frame_downloads(index_html: str, cdn: str, version: str) -> list[str]:
    """Everything the page fetches before the game's first frame, in order."""
    urls = re.findall(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"', index_html)
    foreign = [u for u in urls if re.match(r"(?i)https?://", u) and not u.startswith(cdn)]
    if foreign:
        raise BuildError(f"index.html loads from outside the runtime CDN: {foreign}")
    os_attr = re.search(r'data-os="([^"]*)"', index_html)
    features = set(os_attr.group(1).split(",")) if os_attr else {"gui"}
    if features & DEBUG_FEATURES or any(DEBUG_FILES.search(u) for u in urls):
        raise BuildError(f"index.html pulls in pygbag's debug terminal (data-os={sorted(features)})")
    py = PYBUILD.replace(".", "")
    return [
        "index.html, favicon.png (this site)",
        f"{cdn}pythons.js (loader)",
        f"{cdn}cpython{py}/main.js + main.wasm + main.data (CPython {PYBUILD} for WebAssembly)",
        f"{cdn}cpythonrc.py (runtime start-up)",
        f"{APP_NAME}.tar.gz (this site: the game)",
        f"{cdn.rsplit('/', 2)[0]}/index-{version}-cp{py}.json + pygame_ce wheel (pygame-ce)",
        f"{cdn}empty.ogg (audio unlock probe)",
    ]


def content_security_policy(cdn: str) -> str:
    """The game page's Content-Security-Policy: what pygbag's runtime needs, and nothing else.

    The runtime's loader (pythons.js) and interpreter (main.js, main.wasm, main.data) come from
    its CDN and add script elements from there; the interpreter compiles WebAssembly and runs
    JavaScript through eval() for Python's `platform.window` bridge; the page's own boot screen is
    inline script with inline handlers. Everything else is this site only: no other script host,
    no plugins, no <base> or form redirection, fetches only from this site and the runtime's CDN.
    """
    m = re.match(r"(?i)(https?://[a-z0-9.\-]+(?::\d+)?)/", cdn)
    runtime = f" {m.group(1).lower()}" if m else ""
    return "; ".join((
        "default-src 'self'",
        f"script-src 'self'{runtime} 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        f"img-src 'self' data: blob:{runtime}",
        f"media-src 'self' data: blob:{runtime}",
        f"connect-src 'self' data: blob:{runtime}",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'none'",
    ))


# The article stand-in (embed.html) runs no script at all; it frames the game from anywhere.
EMBED_CSP = ("default-src 'self'; script-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
             "frame-src 'self' http: https:; object-src 'none'; base-uri 'self'; form-action 'none'")


def js_string(text: str) -> str:
    """Text for inside a double-quoted JavaScript string in an HTML <script>."""
    return json.dumps(text)[1:-1].replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def default_repo_url() -> str:
    """REPO_URL, or the repository a GitHub Actions run builds (the Pages workflow)."""
    if os.environ.get("REPO_URL"):
        return os.environ["REPO_URL"]
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    if re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        return f"{os.environ.get('GITHUB_SERVER_URL') or 'https://github.com'}/{repo}"
    return ""


def fill(text: str, values: dict[str, str], what: str) -> str:
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    left = sorted(set(re.findall(r"@@[A-Z_]+@@|\{\{[^}]*\}\}", text)))
    if left:
        raise BuildError(f"{what}: unfilled placeholders {left}")
    return text


def social_image(out: Path, render_py: str | None, stage_root: Path, source: Path, timeout: float) -> str:
    """Render the preview card from a real game screenshot when the headless tool is there."""
    target = out / OG_NAME
    if render_py:
        shot = stage_root / "screenshot.png"
        shot.unlink(missing_ok=True)
        env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy", PYGAME_HIDE_SUPPORT_PROMPT="1")
        cmd = [render_py, "main.py", "--headless", "--frames", "240", "--screenshot", str(shot), "--scene", "play", "--autoplay"]
        try:
            res = run(cmd, timeout=min(timeout, SCREENSHOT_TIMEOUT), cwd=source, env=env)
            shot_ok = res.returncode == 0 and shot.is_file()
            if not shot_ok:
                log(f"  screenshot tool unavailable (exit {res.returncode}); card without screenshot")
        except BuildError as exc:
            log(f"  screenshot: {exc}")
            shot_ok = False
        cmd = [render_py, str(ROOT / "tools" / "social_card.py"), "card", str(target)]
        if shot_ok:
            cmd += ["--screenshot", str(shot)]
        res = run(cmd, timeout=timeout, cwd=ROOT, env=env)
        if res.returncode == 0 and target.is_file():
            # The raw screenshot stays in the staging folder: no page uses it.
            return "game screenshot" if shot_ok else "drawn card"
        log(f"  social card failed (exit {res.returncode}): {(res.stdout or '').strip()[-300:]}")
    shutil.copy2(FALLBACK_CARD, target)
    return "committed card (web/og-image.png)"


def build(args: argparse.Namespace) -> Report:
    started = time.monotonic()
    report = Report(budget_bytes=int(args.budget_kb * 1024))
    out: Path = args.out.resolve()
    stage_root: Path = stage_folder(args)
    sources = (ROOT, args.source.resolve())
    try:
        make_fresh(stage_root, sources)
    except UnsafeFolder as exc:
        raise BuildError(f"staging folder: {exc}") from None
    made: list[Path] = []  # the output folder, once this build has made it afresh
    try:
        return build_in(args, report, started, out, stage_root, sources, made)
    finally:
        # Whatever happened, each marker lists what this build wrote, so the next build may
        # replace these folders (and only while they hold nothing else).
        for folder, owned in ((stage_root, (PYGBAG_OUTPUT,)), *((m, ()) for m in made)):
            try:
                write_manifest(folder, owned)
            except OSError:  # the marker then lists less: the next build refuses, deletes nothing
                pass


def stage_folder(args: argparse.Namespace) -> Path:
    """--stage, or build/stage in the checkout (git ignores build/)."""
    return (args.stage or DEFAULT_STAGE).resolve()


def build_in(args: argparse.Namespace, report: Report, started: float, out: Path, stage_root: Path,
             sources: tuple[Path, ...], made: list[Path]) -> Report:
    """The build proper, in a fresh staging folder."""
    report.pygbag = check_python(args.pygbag_python)
    log(f"pygbag {report.pygbag} ({args.pygbag_python})")

    app = stage(stage_root, args.source.resolve())
    problems = check_sources(app)
    if problems:
        raise BuildError("game source is not ready for the web:\n  " + "\n  ".join(problems))
    report.source_bytes, report.stripped_bytes = strip_staged(app)
    log(f"staged game files in {app}")

    built = pygbag_build(args.pygbag_python, app, args.timeout, args.cdn, stage_root / "pygbag.log")
    index_html = (built / "index.html").read_text(encoding="utf-8")
    m = re.search(r'<script src="([^"]+)pythons\.js"', index_html)
    if not m:
        raise BuildError("index.html has no pythons.js loader: wrong template?")
    report.cdn = m.group(1)

    try:
        make_fresh(out, sources)
    except UnsafeFolder as exc:
        raise BuildError(f"output folder: {exc}") from None
    made.append(out)
    raw_site = args.site_url.rstrip("/") + "/" if args.site_url else ""
    site = html.escape(raw_site)  # checked in main(); escaped all the same, as every value put into a page
    values = {"DESCRIPTION": html.escape(DESCRIPTION), "OG_IMAGE": site + OG_NAME, "SITE_URL": site, "TITLE": html.escape(TITLE)}
    # Where else to play and where the source is, for the page's error messages (JS strings;
    # empty when unknown, and the page then leaves the link out).
    values.update(REPO_URL_JS=js_string(args.repo_url), SITE_URL_JS=js_string(raw_site))
    # Without a public URL, link-preview URLs stay relative ("./", "og-image.png"); the
    # container's nginx makes them absolute from the address each request came to.
    page_values = dict(values, PAGE_URL=site or "./", CSP=content_security_policy(report.cdn))
    (out / "index.html").write_text(fill(index_html, page_values, "index.html"), encoding="utf-8")
    shutil.copy2(built / "favicon.png", out / "favicon.png")
    shutil.copy2(built / f"{APP_NAME}.tar.gz", out / f"{APP_NAME}.tar.gz")
    embed_values = dict(values, PAGE_URL=(site or "./") + "embed.html", CSP=EMBED_CSP)
    (out / "embed.html").write_text(fill(EMBED.read_text(encoding="utf-8"), embed_values, "embed.html"), encoding="utf-8")
    embed_values = dict(values, PAGE_URL=(site or "./") + "embed.ko.html", CSP=EMBED_CSP)
    (out / "embed.ko.html").write_text(fill(EMBED_KO.read_text(encoding="utf-8"), embed_values, "embed.ko.html"),
                                       encoding="utf-8")
    report.social_image = social_image(out, args.render_python, stage_root, args.source.resolve(), args.timeout)
    source = args.source.resolve()
    for pack, files in PACKS.items():
        if not all((source / rel).is_file() for rel in files):  # a cut-down test game: no such part
            log(f"  the {pack} pack is not in the source: the bundle goes without it")
            continue
        target = out / archive_url(pack)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pack_bytes(pack, source))
        report.later[archive_url(pack)] = target.stat().st_size
    for rel in ALSO_SERVED:
        if (source / rel).is_file():
            (out / LATER_URL / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, out / LATER_URL / rel)

    report.archive_members = check_archive(out / f"{APP_NAME}.tar.gz", report.budget_bytes)
    report.archive_bytes = (out / f"{APP_NAME}.tar.gz").stat().st_size
    total = report.archive_bytes + sum(report.later.values())
    if total > TOTAL_BUDGET_KB * 1024:
        raise BuildError(f"archive and later downloads are {total / 1024:.1f} KB, over the "
                         f"{TOTAL_BUDGET_KB} KB budget")
    report.first_frame = first_frame_downloads((out / "index.html").read_text(encoding="utf-8"), report.cdn, report.pygbag)
    report.files = {p.relative_to(out).as_posix(): p.stat().st_size for p in sorted(out.rglob("*"))
                    if p.is_file() and p.name != MARKER}
    report.seconds = time.monotonic() - started
    return report


def print_report(report: Report, out: Path) -> None:
    log("")
    log(f"bundle: {out}")
    for name, size in report.files.items():
        log(f"  {size / 1024:9.1f} KB  {name}")
    log(f"archive {APP_NAME}.tar.gz: {report.archive_bytes / 1024:.1f} KB of {report.budget_bytes / 1024:.0f} KB budget, "
        f"{len(report.archive_members)} files, {sum(report.archive_members.values()) / 1024:.1f} KB unpacked")
    log(f"python sources: {report.stripped_bytes / 1024:.1f} KB shipped without docstrings and comments "
        f"({report.source_bytes / 1024:.1f} KB as written)")
    own = ("index.html", "favicon.png", f"{APP_NAME}.tar.gz")
    index_gz = len(gzip.compress((out / "index.html").read_bytes(), 6))
    own_bytes = index_gz + sum(report.files.get(n, 0) for n in own[1:])
    log(f"this site's share before the first frame: {own_bytes / 1024:.1f} KB "
        f"(index.html {index_gz / 1024:.1f} KB gzipped, favicon, archive)")
    log("before the first frame the page downloads:")
    for item in report.first_frame:
        log(f"  - {item}")
    for pack, files in PACKS.items():
        size = report.later.get(archive_url(pack), 0)
        what = "the memory LAB, fetched when it first opens" if pack == "lab" else \
            "Korean font and catalogue, fetched only when Korean is chosen"
        log(f"later ({what}): {archive_url(pack)}, {len(files)} files, {size / 1024:.1f} KB")
    total = report.archive_bytes + sum(report.later.values())
    log(f"archive and later downloads: {total / 1024:.1f} KB of {TOTAL_BUDGET_KB} KB")
    log(f"social preview image: {report.social_image}")
    log(f"build time: {report.seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = cli_args.OneLineParser(prog="build_web.py", description="Build the pygbag web bundle offline and check it.",
                                    allow_abbrev=False, formatter_class=cli_args.HelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site",
                        help=f"output folder: made, used if empty, or replaced if its {MARKER} marker lists "
                             "every file in it as this tool wrote it (build/web is pygbag's own)")
    parser.add_argument("--source", type=Path, default=ROOT, help="folder holding main.py, engine/, ui/ (default: checkout)")
    parser.add_argument("--stage", type=Path, default=None, help="staging folder, same rules as --out (default: build/stage in the checkout)")
    parser.add_argument("--pygbag-python", default=sys.executable, help="python with pygbag and without black")
    parser.add_argument("--render-python", default=None, help="python with pygame-ce, to render the preview image")
    parser.add_argument("--site-url", default=os.environ.get("SITE_URL", ""), help="public URL, for absolute og:url and og:image")
    parser.add_argument("--repo-url", default=default_repo_url(),
                        help="source repository, linked from the page's error messages "
                             "(default: REPO_URL, or GitHub Actions' repository)")
    parser.add_argument("--cdn", default=None, help="override pygbag's runtime CDN URL")
    parser.add_argument("--budget-kb", type=cli_args.number(0, MAX_BUDGET_KB, above=True), default=BUDGET_KB,
                        help=f"game archive budget in KB, at most {MAX_BUDGET_KB:,}")
    parser.add_argument("--timeout", type=cli_args.number(0, MAX_TIMEOUT_S, above=True), default=300,
                        help=f"seconds before a build step is killed, at most {MAX_TIMEOUT_S:.0f}")
    parser.add_argument("--report", type=cli_args.output_file(".json"), default=None,
                        help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    for attr in ("pygbag_python", "render_python"):
        value = getattr(args, attr)
        if value and os.sep in value:
            setattr(args, attr, str(Path(value).absolute()))
    if args.site_url and not re.match(r"https?://[^\s\"'<>]+$", args.site_url):
        parser.error(f"--site-url must be an http:// or https:// address, got {args.site_url[:80]!r}")
    if args.repo_url and not re.fullmatch(r"https?://[^\s\"'<>\\]+", args.repo_url):
        parser.error(f"--repo-url must be an http:// or https:// URL, got {args.repo_url[:80]!r}")
    out = args.out.resolve()
    if out == ROOT / "build" / "web":
        parser.error(f"--out {args.out} is pygbag's own build folder (pygbag . writes there); pick another")
    stage_root = stage_folder(args)
    sources = (ROOT, args.source.resolve())
    for option, folder in (("--out", out), ("--stage", stage_root)):
        try:
            check_replaceable(folder, sources)
        except UnsafeFolder as exc:
            parser.error(f"{option} {exc}")
    if _within(out, stage_root) or _within(stage_root, out):
        parser.error(f"--out {out} and the staging folder {stage_root} must not hold each other")

    try:
        report = build(args)
    except BuildError as exc:
        detail = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        return cli_args.failure("build_web.py", f"web build failed: {detail}", most=4000)
    print_report(report, out)
    if args.report:
        try:
            args.report.write_text(json.dumps(report.__dict__, indent=2) + "\n")
        except OSError as exc:
            return cli_args.failure("build_web.py", f"cannot write --report {args.report}: {exc.strerror or exc}")
    return 0


if __name__ == "__main__":
    sys.exit(cli_args.run(main, prog="build_web.py"))
