"""Serve the web bundle locally with the production nginx server block.

The container runs web/nginx/default.conf.template inside the official nginx image. Here the
same server block runs with Debian's nginx as a single foreground process under a private
prefix, so what you test locally is what Cloud Run serves. Without nginx it falls back to
Python's http.server (correct types, no compression).

Open it at http://127.0.0.1:PORT/, not http://localhost:PORT/: on a localhost:8xxx address
pygbag's runtime expects its own development server and fetches pygame-ce from /cdn/ on that
server, which a static server does not have.

Usage:
    python tools/serve_web.py [--root build/site] [--port 8000] [--host 127.0.0.1]
Exit status: 0 stopped with Ctrl-C, 1 server failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE_TEMPLATE = ROOT / "web" / "nginx" / "default.conf.template"
MIME_TYPES_CANDIDATES = (Path("/etc/nginx/mime.types"), Path("/usr/local/etc/nginx/mime.types"))

# Same surroundings as the official image's /etc/nginx/nginx.conf, minus users and daemons.
MAIN_CONF = """\
daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 64; }}
http {{
    include {mime_types};
    default_type application/octet-stream;
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    sendfile on;
    keepalive_timeout 65;
    include {prefix}/site.conf;
}}
"""


def page_urls(host: str, port: int) -> tuple[str, str]:
    """The game and the article embed, at an address pygbag's runtime treats as a real site."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "localhost", "") else host
    base = f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"
    return base, base + "embed.html"


def find_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).is_file()), None)


def site_conf(root: Path, listen: str) -> str:
    """The production server block with the two values the container's entrypoint fills in."""
    text = SITE_TEMPLATE.read_text(encoding="utf-8")
    return text.replace("${PORT}", listen).replace("${WEB_ROOT}", str(root.resolve()))


def write_prefix(prefix: Path, root: Path, host: str, port: int) -> Path:
    """Write nginx.conf and site.conf under prefix; return the main config's path."""
    mime = next((p for p in MIME_TYPES_CANDIDATES if p.is_file()), None)
    if mime is None:
        raise FileNotFoundError("nginx mime.types not found (is nginx installed?)")
    (prefix / "tmp").mkdir(parents=True, exist_ok=True)
    (prefix / "site.conf").write_text(site_conf(root, f"{host}:{port}"), encoding="utf-8")
    conf = prefix / "nginx.conf"
    conf.write_text(MAIN_CONF.format(prefix=prefix, mime_types=mime), encoding="utf-8")
    return conf


def nginx_command(nginx: str, prefix: Path, conf: Path) -> list[str]:
    return [nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]


class BundleHandler(http.server.SimpleHTTPRequestHandler):
    """Fallback server: the bundle's types and cache headers, without compression."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".gz": "application/gzip",
        ".apk": "application/vnd.android.package-archive",
        ".wasm": "application/wasm",
        ".js": "application/javascript",
        ".html": "text/html; charset=utf-8",
    }

    def end_headers(self) -> None:
        if self.path.endswith((".tar.gz", ".apk")):
            self.send_header("Cache-Control", "public, max-age=300, must-revalidate")
        else:
            self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()


def serve_python(root: Path, host: str, port: int) -> int:
    handler = functools.partial(BundleHandler, directory=str(root))
    with http.server.ThreadingHTTPServer((host, port), handler) as server:
        game, embed = page_urls(host, port)
        print(f"serving {root} with Python's http.server on {game} (Ctrl-C stops)", flush=True)
        print(f"  game: {game}   article embed: {embed}", flush=True)
        signal.signal(signal.SIGTERM, _stop)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


def serve_nginx(nginx: str, root: Path, host: str, port: int) -> int:
    with tempfile.TemporaryDirectory(prefix="vram-nginx-") as tmp:
        prefix = Path(tmp)
        conf = write_prefix(prefix, root, host, port)
        test = subprocess.run(nginx_command(nginx, prefix, conf) + ["-t", "-q"], capture_output=True, text=True)
        if test.returncode != 0:
            print(f"nginx rejected the config:\n{test.stderr}", file=sys.stderr)
            return 1
        game, embed = page_urls(host, port)
        print(f"serving {root} with nginx (production config) on {game} (Ctrl-C stops)", flush=True)
        print(f"  game: {game}   article embed: {embed}", flush=True)
        proc = subprocess.Popen(nginx_command(nginx, prefix, conf))
        signal.signal(signal.SIGTERM, _stop)
        try:
            return proc.wait()
        except (KeyboardInterrupt, SystemExit):
            return 0
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGQUIT)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="serve_web.py", description="Serve the web bundle locally.")
    parser.add_argument("--root", type=Path, default=ROOT / "build" / "site")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--python-server", action="store_true", help="use http.server even if nginx is installed")
    args = parser.parse_args(argv)
    if not 1 <= args.port <= 65535:
        parser.error(f"--port must be 1..65535, got {args.port}")
    if not (args.root / "index.html").is_file():
        parser.error(f"no index.html in {args.root}: run ./build.sh web first")
    nginx = None if args.python_server else find_nginx()
    try:
        if nginx:
            return serve_nginx(nginx, args.root.resolve(), args.host, args.port)
        return serve_python(args.root.resolve(), args.host, args.port)
    except OSError as exc:
        print(f"cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
