"""No dead ends: when the runtime or the game archive cannot load, the page links the source
repository and the published copy (filled in at build time, left out when unknown) and says what
running the game locally needs."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.webkit import CHROMIUM, chromium, web_python

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test-output"
REPO = "https://github.com/example-owner/vram-tetris"
SITE = "https://example-owner.github.io/vram-tetris/"
sys.path.insert(0, str(ROOT / "tools"))

import build_web  # noqa: E402

pytestmark = pytest.mark.timeout(300)

ARCHIVE_FAILS = """
window.python = { config: { debug: false } };
vtBoot.stage("archive");
vtBoot.fail("archive", "vram-tetris.tar.gz: FileNotFoundError");
"""


def build(out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("REPO_URL", "SITE_URL", "GITHUB_REPOSITORY", "GITHUB_SERVER_URL")}
    return subprocess.run([web_python(), str(ROOT / "tools" / "build_web.py"), "--pygbag-python", web_python(),
                           "--out", str(out), *extra], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=dict(clean, **(env or {})))


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory):
    """Two bundles: one built the way the Pages workflow builds it, one with no URLs known."""
    root = tmp_path_factory.mktemp("links")
    known = build(root / "known", env={"GITHUB_REPOSITORY": "example-owner/vram-tetris",
                                       "GITHUB_SERVER_URL": "https://github.com", "SITE_URL": SITE})
    assert known.returncode == 0, known.stdout[-2000:] + known.stderr[-2000:]
    unknown = build(root / "unknown")
    assert unknown.returncode == 0, unknown.stdout[-2000:] + unknown.stderr[-2000:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_urls_are_filled_in_at_build_time(sites) -> None:
    _, root = sites
    known = (root / "known" / "index.html").read_text(encoding="utf-8")
    assert f'knownUrl("{REPO}")' in known and f'knownUrl("{SITE}")' in known
    unknown = (root / "unknown" / "index.html").read_text(encoding="utf-8")
    assert 'knownUrl("")' in unknown and REPO not in unknown
    assert "@@" not in known and "@@" not in unknown


def test_repo_url_from_env_and_bad_urls_refused(tmp_path: Path) -> None:
    assert build_web.js_string('a"b</script>') == 'a\\"b\\u003c/script\\u003e'
    res = build(tmp_path / "web", "--repo-url", "javascript:alert(1)")
    assert res.returncode == 2 and "--repo-url" in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("build_web.py: error:")


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian chromium is not installed (./build.sh test installs it with apt-get)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[dev])")
    OUT.mkdir(exist_ok=True)
    with chromium() as b:
        yield b


def open_failed(browser, url: str, width: int, loader: str | None):
    """The page with pygbag's loader blocked (offline), or replaced by one whose archive fails."""
    ctx = browser.new_context(viewport={"width": width, "height": 600})
    ctx.set_default_timeout(30_000)
    pg = ctx.new_page()
    if loader is None:
        pg.route("**/pythons.js", lambda route: route.abort("internetdisconnected"))
    else:
        pg.route("**/pythons.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body=loader))
    pg.goto(url)
    pg.wait_for_selector("#boot[data-state=failed]", timeout=40_000)
    return ctx, pg


def links(pg) -> dict[str, list[str]]:
    return pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#error a')].map(
        (a) => [a.href, [a.textContent, a.target, a.rel]]))""")


@pytest.mark.parametrize("kind, loader", [("runtime", None), ("archive", ARCHIVE_FAILS)])
@pytest.mark.parametrize("width", [320, 680])
def test_failure_messages_link_the_repository_and_the_published_copy(sites, browser, kind, loader, width) -> None:
    base, _ = sites
    ctx, pg = open_failed(browser, f"{base}/known/index.html", width, loader)
    try:
        text = pg.inner_text("#error")
        heading = "Python runtime unavailable" if kind == "runtime" else "Game files unavailable"
        assert heading in text
        found = links(pg)
        assert found == {SITE: [SITE.removeprefix("https://"), "_blank", "noopener"],
                         REPO: ["its source", "_blank", "noopener"]}
        # What running locally needs, honestly: Python, the command, network the first time.
        assert "Python 3.11" in text and "./build.sh play" in text and "PyPI" in text
        assert "with no network" not in text  # the first run needs it
        box = pg.locator("#error").bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 600 and box["x"] + box["width"] <= width
        pg.screenshot(path=str(OUT / f"links-{kind}-{width}x600.png"))
    finally:
        ctx.close()


@pytest.mark.parametrize("kind, loader", [("runtime", None), ("archive", ARCHIVE_FAILS)])
def test_unknown_urls_are_left_out(sites, browser, kind, loader) -> None:
    base, _ = sites
    ctx, pg = open_failed(browser, f"{base}/unknown/index.html", 360, loader)
    try:
        assert links(pg) == {}
        text = pg.inner_text("#error")
        assert "published copy" not in text
        assert "run it on your computer from its source" in text and "./build.sh play" in text
    finally:
        ctx.close()
