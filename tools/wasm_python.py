"""Run the pure-Python core in CPython compiled to WebAssembly (Pyodide) inside Chromium.

pygbag's own runtime comes from its CDN, which a build machine may not reach; Pyodide, pinned
here and fetched from the npm registry, is the same kind of interpreter (CPython for wasm32 in a
browser: no threads, no subprocesses, numpy not loaded). `engine/` runs in it unchanged, so the
tests check it gives the same results there, and `bench` measures what it costs.

Usage:
    python tools/wasm_python.py install            fetch the pinned Pyodide into build/pyodide/
    python tools/wasm_python.py bench [--frames N] [--seconds S] [--requests N]
                                                   engine and lab figures, Pyodide beside native
Exit status: 0 done, 1 Pyodide, npm or Chromium unavailable or a run failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYODIDE_VERSION = "0.27.7"  # CPython 3.12, as pygbag's runtime (--PYBUILD 3.12)
# The npm registry's integrity string for pyodide-0.27.7.tgz (`npm view pyodide@0.27.7 dist.integrity`).
PYODIDE_INTEGRITY = "sha512-RUSVJlhQdfWfgO9hVHCiXoG+nVZQRS5D9FzgpLJ/VcgGBLSAKoPL8kTiOikxbHQm1kRISeWUBdulEgO26qpSRA=="
CACHE = ROOT / "build" / "pyodide"
NEEDED = ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-default-apps", "--disable-extensions", "--disable-sync",
    "--no-first-run", "--no-default-browser-check", "--metrics-recording-only", "--mute-audio",
]
SOURCE_DIRS = ("engine",)
APP_DIR = "/home/pyodide/game"
LOAD_TIMEOUT_MS = 120_000


class Unavailable(Exception):
    """What the WebAssembly runs need is missing here (npm, Chromium, playwright)."""


class WasmError(Exception):
    """Python raised inside the WebAssembly interpreter; the message is its traceback."""


def pyodide_dir(cache: Path = CACHE) -> Path:
    return cache / PYODIDE_VERSION


def installed(cache: Path = CACHE) -> bool:
    return all((pyodide_dir(cache) / name).is_file() for name in NEEDED)


def install(cache: Path = CACHE, timeout: float = 600) -> Path:
    """The pinned Pyodide, fetched once from the npm registry with `npm pack` and checked."""
    dest = pyodide_dir(cache)
    if installed(cache):
        return dest
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed (Debian: apt-get install npm); it fetches Pyodide from the npm registry")
    download = cache / "download"
    download.mkdir(parents=True, exist_ok=True)
    tgz = download / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.is_file() or _integrity(tgz) != PYODIDE_INTEGRITY:
        tgz.unlink(missing_ok=True)
        try:
            res = subprocess.run([npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(download)],
                                 cwd=download, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm pack pyodide@{PYODIDE_VERSION} took over {timeout:.0f} s") from None
        if res.returncode != 0 or not tgz.is_file():
            tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
            raise Unavailable(f"npm pack pyodide@{PYODIDE_VERSION} failed: {' / '.join(tail)}")
    got = _integrity(tgz)
    if got != PYODIDE_INTEGRITY:
        raise WasmError(f"{tgz} does not match the pinned integrity ({got[:30]}...); delete it and retry")
    if dest.exists() or dest.is_symlink():
        # Unpacked whole into a fresh folder and renamed into place, an install is never left
        # half-done here: whatever this is, it is not ours to delete.
        raise WasmError(f"{dest} exists but is not a complete Pyodide {PYODIDE_VERSION}; move it away and retry")
    import tempfile

    staging = Path(tempfile.mkdtemp(prefix=f".{PYODIDE_VERSION}-", suffix=".tmp", dir=cache))
    try:
        with tarfile.open(tgz, "r:gz") as tar:
            tar.extractall(staging, filter="data")
        (staging / "package").rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # made just now by this call, holding only the archive's files
    return dest


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def source_zip(root: Path = ROOT, dirs: tuple[str, ...] = SOURCE_DIRS) -> bytes:
    """The game's pure-Python packages as a zip, the way they are written (no bytecode)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in dirs:
            for path in sorted((root / name).rglob("*.py")):
                if "__pycache__" not in path.parts:
                    zf.write(path, path.relative_to(root).as_posix())
    return buf.getvalue()


# Runs a module's command line inside Pyodide and hands back (exit status, stdout, stderr).
RUN_MODULE = """
import contextlib, io, json, runpy, sys
_out, _err = io.StringIO(), io.StringIO()
_argv = sys.argv
sys.argv = [{module!r}] + {args!r}
_rc = 0
with contextlib.redirect_stdout(_out), contextlib.redirect_stderr(_err):
    try:
        runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        _rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
sys.argv = _argv
json.dumps([_rc, _out.getvalue(), _err.getvalue()])
"""

BOOT_PAGE = b"""<!doctype html><meta charset="utf-8"><title>wasm core</title>
<script type="module">
import { loadPyodide } from "./pyodide.mjs";
window.pyodideReady = loadPyodide({ indexURL: "./" }).then((py) => { window.py = py; return py.version; });
</script>
"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path in ("/", "/index.html"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(BOOT_PAGE)))
            self.end_headers()
            self.wfile.write(BOOT_PAGE)
            return
        super().do_GET()


_Handler.extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map, **{".wasm": "application/wasm", ".mjs": "text/javascript"})


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser dropped a request
            super().handle_error(request, client_address)


class WasmPython:
    """One Chromium page running Pyodide with `engine/` on its path."""

    def __init__(self, page: Any) -> None:  # a playwright Page
        self.page = page
        self.version = ""

    def load_sources(self, root: Path = ROOT, dirs: tuple[str, ...] = SOURCE_DIRS) -> None:
        data = base64.b64encode(source_zip(root, dirs)).decode()
        self.page.evaluate(
            """([b64, dir]) => {
                const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
                window.py.unpackArchive(bytes.buffer, "zip", { extractDir: dir });
            }""", [data, APP_DIR])
        self.run(f"import sys\nif {APP_DIR!r} not in sys.path: sys.path.insert(0, {APP_DIR!r})\n''")

    def run(self, code: str) -> str:
        """Run Python source (top-level `await` allowed); returns its last expression as JavaScript String() gives it (so pass
        str values: Python True comes back as "true"). Raises WasmError on an exception."""
        res = self.page.evaluate(
            """async (code) => {
                try { const v = await window.py.runPythonAsync(code); return [true, v === undefined ? "" : String(v)]; }
                catch (e) { return [false, String(e && e.message || e)]; }
            }""", code)
        if not res[0]:
            raise WasmError(res[1])
        return res[1]

    def run_module(self, module: str, args: list[str]) -> tuple[int, str, str]:
        """`python -m MODULE ARGS` inside the browser: (exit status, stdout, stderr)."""
        rc, out, err = json.loads(self.run(RUN_MODULE.format(module=module, args=list(args))))
        return rc, out, err


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM", CHROMIUM)
    if not Path(path).is_file():
        raise Unavailable(f"Chromium is not installed at {path} (Debian: apt-get install chromium)")
    return path


@contextlib.contextmanager
def wasm_python(cache: Path = CACHE, root: Path = ROOT) -> Iterator[WasmPython]:
    """Serve the pinned Pyodide on loopback, open it in headless Chromium, load `engine/`."""
    folder = install(cache)
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise Unavailable("the playwright Python package is not installed (pip install -e .[dev])") from None
    server = _Server(("127.0.0.1", 0), lambda *a: _Handler(*a, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, name="pyodide-http", daemon=True)
    thread.start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, timeout=60_000)
            try:
                page = browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/", wait_until="load")
                page.wait_for_function("window.pyodideReady !== undefined", timeout=LOAD_TIMEOUT_MS)
                try:
                    version = page.evaluate("window.pyodideReady")
                except Exception as exc:
                    raise WasmError(f"Pyodide did not start: {exc} {errors}") from None
                session = WasmPython(page)
                session.version = str(version)
                session.load_sources(root)
                yield session
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# ---------------------------------------------------------------------------------------------
# bench: the same measurements natively and in the browser, side by side.

# Runs natively (a fresh `python -c`) and in Pyodide alike; prints one JSON object. Frame cost is
# a mean over all frames: in a browser the clock ticks in steps of up to 100 us, which turns a
# per-frame median into 0 or 100, while the mean of many quantized spans stays true.
BENCH_CODE = """
import json, statistics, sys, time
from engine.autoplay import play_one
from engine.bench import frame_costs
from engine.game import MODES
from engine.lab.cli import main as lab_main
import contextlib, io

def clock_step(clock, budget_s=0.2):
    steps, last = [], clock()
    end = time.perf_counter() + budget_s
    while len(steps) < 200 and time.perf_counter() < end:
        now = clock()
        if now != last:
            steps.append(now - last)
            last = now
    return statistics.median(steps) if steps else None

def bot_rate(mode, seconds):
    # Bot runs of 30 game minutes, by wall time: process_time() does not advance in a browser.
    pieces = runs = 0
    start = time.perf_counter()
    while runs == 0 or time.perf_counter() - start < seconds:
        pieces += play_one(mode, runs, "bot", 0.8, 30.0).pieces
        runs += 1
    return pieces / (time.perf_counter() - start)

out = {"python": sys.version.split()[0], "platform": sys.platform}
for mode in MODES:
    costs = frame_costs(mode, FRAMES)
    out[mode + "_frame_mean_us"] = sum(costs) / len(costs)
    out[mode + "_frame_median_us"] = statistics.median(costs)
for mode in MODES:
    out[mode + "_bot_pieces_s"] = bot_rate(mode, SECONDS)
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    lab_main(["bench", "--requests", str(REQUESTS), "--json"])
lab = json.loads(buf.getvalue())
out["lab_total_s"] = lab["total_s"]
out["lab_cpu_s"] = lab["total_cpu_s"]
out["lab_trace_s"] = lab["trace_s"]
out["perf_counter_step_us"] = (clock_step(time.perf_counter) or 0) * 1e6
step = clock_step(time.process_time)
out["process_time_step_us"] = None if step is None else step * 1e6
json.dumps(out)
"""


def bench_code(frames: int, seconds: float, requests: int) -> str:
    return f"FRAMES = {frames!r}\nSECONDS = {seconds!r}\nREQUESTS = {requests!r}\n" + BENCH_CODE


def native_bench(code: str, timeout: float = 900) -> dict:
    script = code.rstrip().rsplit("\n", 1)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    res = subprocess.run([sys.executable, "-c", script[0] + "\nprint(" + script[1] + ")"], cwd=ROOT,
                         capture_output=True, text=True, timeout=timeout, env=env)
    if res.returncode != 0:
        raise WasmError(f"native run failed (exit {res.returncode}): {res.stderr.strip()[-400:]}")
    return json.loads(res.stdout)


def _fmt(value: object, unit: str) -> str:
    if value is None:
        return "never"
    if unit == "us":
        return f"{value:,.1f} us"
    if unit == "s":
        return f"{value:,.3f} s"
    return f"{value:,.0f}"


def bench(args: argparse.Namespace) -> int:
    code = bench_code(args.frames, args.seconds, args.requests)
    print(f"native CPython {sys.version.split()[0]}: {args.frames} frames and {args.seconds:g} s of bot per mode, "
          f"engine.lab bench --requests {args.requests}", flush=True)
    here = native_bench(code)
    with wasm_python() as py:
        print(f"Pyodide {py.version} in Chromium: the same", flush=True)
        there = json.loads(py.run(code))
    rows = [
        ("contiguous frame, update + telemetry (mean)", "contiguous_frame_mean_us", "us", False),
        ("paged frame, update + telemetry (mean)", "paged_frame_mean_us", "us", False),
        ("contiguous frame (median)", "contiguous_frame_median_us", "us", False),
        ("paged frame (median)", "paged_frame_median_us", "us", False),
        ("contiguous bot (30-minute runs), pieces/s", "contiguous_bot_pieces_s", "n", True),
        ("paged bot (30-minute runs), pieces/s", "paged_bot_pieces_s", "n", True),
        (f"engine.lab bench, {args.requests} requests x 4 allocators", "lab_total_s", "s", False),
        ("  its CPU time (process_time)", "lab_cpu_s", "s", False),
        ("perf_counter step (median)", "perf_counter_step_us", "us", None),
        ("process_time step (median)", "process_time_step_us", "us", None),
    ]
    print()
    print(f"{'':46} {'native':>14} {'Pyodide':>14} {'slower by':>10}")
    print(f"{'':46} {'CPython ' + here['python']:>14} {'CPython ' + there['python']:>14}")
    for label, key, unit, higher_is_faster in rows:
        a, b = here.get(key), there.get(key)
        ratio = ""
        if higher_is_faster is not None and a and b:
            ratio = f"{(a / b if higher_is_faster else b / a):.2f}x"
        print(f"{label:46} {_fmt(a, unit):>14} {_fmt(b, unit):>14} {ratio:>10}")
    print()
    print(f"In the browser time.perf_counter() moves in steps of {_fmt(there['perf_counter_step_us'], 'us')} "
          "(performance.now(), coarsened on a page that is not cross-origin isolated), so a per-frame "
          "median there is a multiple of that step: compare the means.")
    if there["process_time_step_us"] is None:
        print("time.process_time() does not advance there: CPU times read 0.")
    return 0


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from engine.cli_args import HelpFormatter, failure, number, parser as make_parser, whole

    parser = make_parser("wasm_python.py",
                         "The pure-Python core in Pyodide (CPython for WebAssembly) in Chromium.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help=f"fetch Pyodide {PYODIDE_VERSION} from the npm registry into build/pyodide/",
                   allow_abbrev=False)
    b = sub.add_parser("bench", help="engine frame cost, bot speed and engine.lab bench, Pyodide beside native",
                       allow_abbrev=False, formatter_class=HelpFormatter)
    b.add_argument("--frames", type=whole(1, 1_000_000), default=30000, help="engine frames timed per mode")
    b.add_argument("--seconds", type=number(0.0, 600.0, above=True), default=3.0, help="bot seconds per mode")
    b.add_argument("--requests", type=whole(1, 1_000_000), default=10000, help="engine.lab bench requests")
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            path = install()
            print(f"Pyodide {PYODIDE_VERSION} in {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
            return 0
        return bench(args)
    except (Unavailable, WasmError) as exc:
        return failure("wasm_python.py", str(exc))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from engine.cli_args import run

    sys.exit(run(main, prog="wasm_python.py"))
