"""The production nginx server block, run with Debian's nginx on a loopback port.

The container (Dockerfile) and `./build.sh serve` use web/nginx/default.conf.template; here it
serves a freshly built bundle and every answer is checked: types, compression, cache headers.
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.webkit import ARCHIVE, web_python

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import serve_web  # noqa: E402

NGINX = serve_web.find_nginx()
pytestmark = [
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (./build.sh test installs it with apt-get)"),
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("server") / "web"
    res = subprocess.run(
        [web_python(), str(ROOT / "tools" / "build_web.py"), "--pygbag-python", web_python(), "--out", str(out),
         "--stage", str(out.parent / "stage"), "--site-url", ""],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    # Files the bundle may hold in other set-ups, to check their types too.
    (out / "probe.wasm").write_bytes(b"\0asm\1\0\0\0" + b"\0" * 600)
    (out / "probe.apk").write_bytes(b"PK\3\4" + b"\0" * 600)
    (out / "probe.js").write_text("console.log('x');\n" * 100)
    (out / "probe.json").write_text('{"pygame_ce": "pygame_ce-2.5.7-cp312.whl"}\n' * 20)
    (out / "sub").mkdir()
    shutil.copy2(out / "index.html", out / "sub" / "index.html")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_nginx(prefix: Path, root: Path, port: int, host: str = "127.0.0.1") -> Iterator[None]:
    """nginx with serve_web's config for `root`, listening and answering, stopped on leaving."""
    conf = serve_web.write_prefix(prefix, root, host, port)
    cmd = serve_web.nginx_command(NGINX, prefix, conf)
    check = subprocess.run(cmd + ["-t"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = (prefix / "error.log").read_text() if (prefix / "error.log").exists() else ""
                    pytest.fail(f"nginx did not start: {err}")
                until_exit(proc, 0.1)
        yield
    finally:
        stop(proc)
        if proc.stderr:
            proc.stderr.close()


@pytest.fixture(scope="module")
def server(bundle: Path, tmp_path_factory: pytest.TempPathFactory):
    port = free_port()
    with running_nginx(tmp_path_factory.mktemp("nginx"), bundle, port):
        yield port


def until_exit(proc: subprocess.Popen, seconds: float) -> None:
    """Between two connection attempts: wait for the server to exit (its failure), at most `seconds`."""
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def stop(proc: subprocess.Popen) -> None:
    """Graceful nginx shutdown, killed if it lingers."""
    proc.send_signal(signal.SIGQUIT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def get(port: int, path: str, headers: dict[str, str] | None = None,
        host: str = "127.0.0.1") -> tuple[http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp, resp.read()
    finally:
        conn.close()


def served_page(bundle: Path, name: str, base: str) -> bytes:
    """The page as built, with the relative link-preview URLs made absolute by the server."""
    page = (bundle / name).read_bytes()
    own = "" if name == "index.html" else name
    assert b'content="og-image.png"' in page  # built without SITE_URL
    assert f'<meta property="og:url" content="./{own}">'.encode() in page
    page = page.replace(f'<meta property="og:url" content="./{own}">'.encode(), f'<meta property="og:url" content="{base}/{own}">'.encode())
    return page.replace(b'content="og-image.png"', f'content="{base}/og-image.png"'.encode())


def test_index_is_html_never_cached_and_compressed(server: int, bundle: Path) -> None:
    resp, body = get(server, "/", {"Accept-Encoding": "gzip"})
    assert resp.status == 200
    assert resp.getheader("Content-Type") == "text/html; charset=utf-8"
    assert resp.getheader("Cache-Control") == "no-cache"
    assert resp.getheader("Content-Encoding") == "gzip"
    assert "Accept-Encoding" in (resp.getheader("Vary") or "")
    assert gzip.decompress(body) == served_page(bundle, "index.html", "http://127.0.0.1")


def test_index_plain_for_clients_without_gzip(server: int, bundle: Path) -> None:
    resp, body = get(server, "/index.html")
    assert resp.status == 200
    assert resp.getheader("Content-Encoding") is None
    assert body == served_page(bundle, "index.html", "http://127.0.0.1")
    assert resp.getheader("X-Content-Type-Options") == "nosniff"


def test_social_image_url_is_absolute_behind_cloud_run(server: int, bundle: Path) -> None:
    """Cloud Run terminates TLS: the public scheme comes in X-Forwarded-Proto."""
    headers = {"Host": "vram-tetris-abc123-ew.a.run.app", "X-Forwarded-Proto": "https"}
    for name in ("index.html", "embed.html"):
        resp, body = get(server, f"/{name}", headers)
        assert resp.status == 200
        assert body == served_page(bundle, name, "https://vram-tetris-abc123-ew.a.run.app")
    resp, body = get(server, "/embed.html", headers)
    assert b'<meta property="og:url" content="https://vram-tetris-abc123-ew.a.run.app/embed.html">' in body
    resp, body = get(server, "/", headers)
    assert b'<meta property="og:url" content="https://vram-tetris-abc123-ew.a.run.app/">' in body
    resp, body = get(server, "/sub/index.html", headers)
    assert resp.status == 200
    assert b'content="https://vram-tetris-abc123-ew.a.run.app/sub/og-image.png"' in body
    assert b'<meta property="og:url" content="https://vram-tetris-abc123-ew.a.run.app/sub/">' in body


def test_archive_is_gzip_data_not_gzip_encoded(server: int, bundle: Path) -> None:
    """A Content-Encoding would make the browser unpack it before Python's tarfile reads it."""
    resp, body = get(server, f"/{ARCHIVE}", {"Accept-Encoding": "gzip, br"})
    assert resp.status == 200
    assert resp.getheader("Content-Type") == "application/gzip"
    assert resp.getheader("Content-Encoding") is None
    assert body == (bundle / ARCHIVE).read_bytes()
    cache = resp.getheader("Cache-Control") or ""
    assert "max-age=300" in cache and "must-revalidate" in cache
    etag = resp.getheader("ETag")
    assert etag
    again, body2 = get(server, f"/{ARCHIVE}", {"If-None-Match": etag})
    assert again.status == 304 and body2 == b""


@pytest.mark.parametrize(
    ("path", "ctype", "compressed"),
    [
        ("/embed.html", "text/html; charset=utf-8", True),
        ("/favicon.png", "image/png", False),
        ("/og-image.png", "image/png", False),
        ("/probe.wasm", "application/wasm", True),
        ("/probe.apk", "application/vnd.android.package-archive", False),
        ("/probe.js", "application/javascript; charset=utf-8", True),
        ("/probe.json", "application/json; charset=utf-8", True),
    ],
)
def test_types_and_compression(server: int, path: str, ctype: str, compressed: bool) -> None:
    resp, _ = get(server, path, {"Accept-Encoding": "gzip"})
    assert resp.status == 200, path
    assert resp.getheader("Content-Type") == ctype
    assert (resp.getheader("Content-Encoding") == "gzip") is compressed
    assert resp.getheader("Cache-Control")


def test_missing_file_is_404(server: int) -> None:
    resp, _ = get(server, "/nope.js")
    assert resp.status == 404


def test_server_header_hides_version(server: int) -> None:
    resp, _ = get(server, "/")
    assert resp.getheader("Server") == "nginx"
    assert resp.getheader("X-Frame-Options") is None  # Dev.to must be able to frame the game


def test_container_uses_the_same_server_block() -> None:
    """The image's entrypoint substitutes every defined environment variable: only ours appear."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY web/nginx/default.conf.template /etc/nginx/templates/default.conf.template" in dockerfile
    assert re.search(r"ENV PORT=8080", dockerfile) and "WEB_ROOT=/usr/share/nginx/html" in dockerfile
    template = serve_web.SITE_TEMPLATE.read_text()
    body = "\n".join(line.split("#", 1)[0] for line in template.splitlines())
    assert set(re.findall(r"\$\{(\w+)\}", body)) == {"PORT", "WEB_ROOT"}
    # Plain $NAME forms are nginx variables: none may collide with a typical environment variable.
    assert not set(re.findall(r"\$([A-Z_]+)\b", body)) - {"PORT", "WEB_ROOT"}


def test_dockerignore_keeps_the_image_build_small() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "build", "tests", "test-output"} <= ignored


def test_page_urls_avoid_localhost() -> None:
    """On localhost:8xxx pygbag's runtime fetches pygame-ce from its own dev server's /cdn/."""
    assert serve_web.page_urls("127.0.0.1", 8000) == ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/embed.html")
    for host in ("localhost", "0.0.0.0", ""):
        assert serve_web.page_urls(host, 8123)[0] == "http://127.0.0.1:8123/"
    assert serve_web.page_urls("::1", 8000)[0] == "http://[::1]:8000/"


@pytest.mark.parametrize("python_server", [False, True], ids=["nginx", "http.server"])
def test_serve_command_serves_the_bundle_and_stops_cleanly(bundle: Path, python_server: bool) -> None:
    port = free_port()
    cmd = [sys.executable, str(ROOT / "tools" / "serve_web.py"), "--root", str(bundle), "--port", str(port)]
    proc = subprocess.Popen(cmd + (["--python-server"] if python_server else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in first and "localhost" not in first, first
        deadline = time.monotonic() + 15
        while True:
            try:
                resp, body = get(port, "/index.html")
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
                until_exit(proc, 0.1)
        assert resp.status == 200 and b"pythons.js" in body
        resp, _ = get(port, f"/{ARCHIVE}")
        assert resp.getheader("Content-Type") == "application/gzip" and resp.getheader("Content-Encoding") is None
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            raise
        err = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    assert code == 143, err  # stopped by SIGTERM, as every tool: 128 + 15, no traceback
    assert "Traceback" not in err


@pytest.mark.skipif(shutil.which("envsubst") is None, reason="envsubst (gettext-base) is not installed")
def test_container_start_substitution_gives_a_working_server(bundle: Path, tmp_path: Path) -> None:
    """What the nginx image's entrypoint does at start: envsubst with every defined variable."""
    import os

    port = free_port()
    env = dict(os.environ, PORT=f"127.0.0.1:{port}", WEB_ROOT=str(bundle), HOSTNAME="vram-tetris-00001", HOST="x", SCHEME="x")
    defined = " ".join(f"${{{name}}}" for name in env)
    res = subprocess.run(["envsubst", defined], input=serve_web.SITE_TEMPLATE.read_text(), capture_output=True, text=True, env=env, timeout=30)
    assert res.returncode == 0, res.stderr
    conf_text = res.stdout
    assert f"listen 127.0.0.1:{port};" in conf_text and f"root {bundle};" in conf_text
    assert "$vram_origin$vram_dir/og-image.png" in conf_text  # nginx's own variables untouched
    (tmp_path / "tmp").mkdir()
    (tmp_path / "site.conf").write_text(conf_text)
    mime = next(p for p in serve_web.MIME_TYPES_CANDIDATES if p.is_file())
    conf = tmp_path / "nginx.conf"
    conf.write_text(serve_web.main_conf(tmp_path, mime))
    proc = subprocess.Popen(serve_web.nginx_command(NGINX, tmp_path, conf), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                resp, body = get(port, "/", {"Host": "vram-tetris-abc123-ew.a.run.app", "X-Forwarded-Proto": "https"})
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
                until_exit(proc, 0.1)
        assert resp.status == 200
        assert b'content="https://vram-tetris-abc123-ew.a.run.app/og-image.png"' in body
    finally:
        stop(proc)
        proc.stderr.close()


# --- Hostile request headers, error caching, HSTS, capacity ------------------------------

INJECTIONS = ['"><script>x</script>', '"><script>alert(1)</script><x y="', "javascript", "https\"", "ftp"]


@pytest.mark.parametrize("proto", INJECTIONS)
@pytest.mark.parametrize("name", ["index.html", "embed.html", "sub/index.html"])
def test_forged_forwarded_proto_never_reaches_the_page(server: int, name: str, proto: str) -> None:
    resp, body = get(server, f"/{name}", {"X-Forwarded-Proto": proto})
    assert resp.status == 200
    assert b"<script>x" not in body and b"alert(1)" not in body
    urls = re.findall(rb'<meta property="og:(?:url|image)" content="([^"]*)"', body)
    assert urls and all(u.startswith((b"http://127.0.0.1/", b"https://127.0.0.1/")) for u in urls), urls


@pytest.mark.parametrize("host", ['evil"><script>x</script>', "a b", "x'y", "exa_mple.com", "-bad.com",
                                  "a..b", "<x>"])
def test_forged_host_falls_back_to_relative_urls(server: int, host: str) -> None:
    for name in ("index.html", "embed.html"):
        resp, body = get(server, f"/{name}", {"Host": host, "X-Forwarded-Proto": "https"})
        if resp.status == 400:  # nginx itself refused the header: nothing to inject into
            continue
        assert resp.status == 200
        assert b"<script>x" not in body and host.encode() not in body
        urls = re.findall(rb'<meta property="og:(?:url|image)" content="([^"]*)"', body)
        assert urls and all(u.startswith(b"/") for u in urls), urls


def test_valid_hosts_and_schemes_still_make_absolute_urls(server: int) -> None:
    for proto, host in (("HTTPS", "Vram-Tetris.example.org"), ("http", "a.b-c.run.app"), ("https", "[::1]")):
        resp, body = get(server, "/", {"X-Forwarded-Proto": proto, "Host": host})
        assert resp.status == 200
        assert f'<meta property="og:url" content="{proto.lower()}://{host.lower()}/">'.encode() in body


def test_missing_files_are_cached_briefly(server: int) -> None:
    for path in ("/nope.js", "/nope.png", "/nope.tar.gz", "/nope.wasm", "/nope.html", "/nope"):
        resp, _ = get(server, path)
        assert resp.status == 404, path
        cache = resp.getheader("Cache-Control") or ""
        assert "86400" not in cache and "max-age=300" not in cache, (path, cache)
    resp, _ = get(server, "/favicon.png")
    assert resp.status == 200 and "max-age=86400" in resp.getheader("Cache-Control")


def test_dotfiles_are_never_served(server: int, bundle: Path) -> None:
    assert (bundle / ".vram-tetris-build").is_file()
    resp, _ = get(server, "/.vram-tetris-build")
    assert resp.status == 404


def test_hsts_only_over_https(server: int) -> None:
    for path in ("/", "/index.html", "/favicon.png", f"/{ARCHIVE}", "/nope.js"):
        resp, _ = get(server, path, {"X-Forwarded-Proto": "https"})
        assert resp.getheader("Strict-Transport-Security") == "max-age=31536000", path
        resp, _ = get(server, path)
        assert resp.getheader("Strict-Transport-Security") is None, path


def test_preview_server_is_sized_for_a_room_of_readers(tmp_path: Path) -> None:
    mime = next(p for p in serve_web.MIME_TYPES_CANDIDATES if p.is_file())
    conf = serve_web.main_conf(tmp_path, mime)
    connections = int(re.search(r"worker_connections (\d+);", conf).group(1))
    assert connections >= 512
    header_timeout = re.search(r"client_header_timeout (\d+)s;", conf)
    assert header_timeout and int(header_timeout.group(1)) <= 15


def test_half_sent_requests_do_not_lock_readers_out(server: int) -> None:
    stalled = []
    try:
        for _ in range(100):  # more than the old limit of 64 connections
            s = socket.create_connection(("127.0.0.1", server), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            stalled.append(s)
        resp, body = get(server, "/index.html")
        assert resp.status == 200 and b"pythons.js" in body
    finally:
        for s in stalled:
            s.close()


def test_python_fallback_server_hides_its_version_and_lists_no_folder(tmp_path: Path) -> None:
    import functools
    import threading

    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>")
    handler = functools.partial(serve_web.BundleHandler, directory=str(tmp_path))
    server = serve_web.http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        resp, _ = get(port, "/index.html")
        assert resp.status == 200
        assert resp.getheader("Server") == "vram-tetris"
        (tmp_path / "nolisting").mkdir()
        (tmp_path / "nolisting" / "secret.txt").write_text("x")
        resp, body = get(port, "/nolisting/")
        assert resp.status == 404 and b"secret.txt" not in body
        assert b"Python" not in body and "Python" not in (resp.getheader("Server") or "")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --- What the preview server writes into nginx's config ------------------------------------


def test_a_root_nginx_would_split_is_served_from_the_right_folder(tmp_path: Path) -> None:
    """Spaces, `;`, braces, `#` and a quote in --root: written quoted, read by nginx as one path."""
    root = tmp_path / "my site; location = /pw { alias /etc/passwd; } #'"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><title>the right folder</title>")
    (tmp_path / "prefix").mkdir()
    port = free_port()
    with running_nginx(tmp_path / "prefix", root, port):
        resp, body = get(port, "/index.html")
        assert resp.status == 200 and b"the right folder" in body
        resp, body = get(port, "/pw")
        assert resp.status == 404 and b"root:" not in body


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_host_listens_in_brackets(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!doctype html><title>six</title>")
    (tmp_path / "prefix").mkdir()
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::1", 0))
        port = s.getsockname()[1]
    with running_nginx(tmp_path / "prefix", tmp_path / "site", port, host="::1"):
        resp, body = get(port, "/index.html", host="::1")
        assert resp.status == 200 and b"six" in body
