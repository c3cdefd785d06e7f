"""Serve the web bundle locally with the production nginx server block.

The container runs web/nginx/default.conf.template inside the official nginx image. Here the
same server block runs with Debian's nginx as a single foreground process under a private
prefix, so what you test locally is what Cloud Run serves. Without nginx it falls back to
Python's http.server (correct types, no compression).

Open it at http://127.0.0.1:PORT/, not http://localhost:PORT/: on a localhost:8xxx address
pygbag's runtime expects its own development server and fetches pygame-ce from /cdn/ on that
server, which a static server does not have.

Every value written into nginx's configuration is checked first: --host must be an IP address
or a host name (RFC 1123 labels), --port a number from 1 to 65535, and paths (--root, the
temporary prefix, mime.types) are written quoted and refused when they hold what a quoted nginx
value cannot (a double quote, a backslash, `$`, a control character such as a newline).

Usage:
    python tools/serve_web.py [--root build/site] [--port 8000] [--host 127.0.0.1]
Exit status: 130/143 stopped by SIGINT (Ctrl-C) or SIGTERM, 1 server failed, 2 bad usage.
"""

from __future__ import annotations

import argparse

import functools
import http.server
import ipaddress
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine import cli_args  # noqa: E402  (standard library only, like this tool)

T = TypeVar("T")
SITE_TEMPLATE = ROOT / "web" / "nginx" / "default.conf.template"
CONNECTIONS = 1024
MIME_TYPES_CANDIDATES = (Path("/etc/nginx/mime.types"), Path("/usr/local/etc/nginx/mime.types"))

# Same surroundings as the official image's /etc/nginx/nginx.conf, minus users and daemons.
MAIN_CONF = """\
daemon off;
master_process off;
worker_processes 1;
pid "{prefix}/nginx.pid";
error_log "{prefix}/error.log" warn;
worker_rlimit_nofile 4096;
# A room of readers opening the page at once: many connections, and a client that sends half a
# request is dropped within seconds instead of holding a connection for a minute.
events {{ worker_connections {connections}; }}
http {{
    include "{mime_types}";
    default_type application/octet-stream;
    access_log "{prefix}/access.log";
    client_body_temp_path "{prefix}/tmp/body";
    proxy_temp_path "{prefix}/tmp/proxy";
    fastcgi_temp_path "{prefix}/tmp/fastcgi";
    uwsgi_temp_path "{prefix}/tmp/uwsgi";
    scgi_temp_path "{prefix}/tmp/scgi";
    sendfile on;
    client_header_timeout 10s;
    client_body_timeout 10s;
    send_timeout 30s;
    keepalive_timeout 15s;
    reset_timedout_connection on;
    include "{prefix}/site.conf";
}}
"""


# RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 1 to 63 each.
HOST_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
MAX_HOST_NAME = 253
# What a double-quoted nginx value cannot hold as itself: its quote, its escape character, the
# start of a variable, and control characters (a newline ends nothing inside quotes, but a
# config is read line by line by people too).
UNQUOTABLE = re.compile(r'["\\$\x00-\x1f\x7f]')


class ConfigValue(ValueError):
    """A value that must not be written into nginx's configuration; the message says why."""


def check_host(text: str) -> str:
    """An IPv4 or IPv6 address or an RFC 1123 host name, as nginx's `listen` takes it."""
    shown = text[:80]
    if not text or len(text) > MAX_HOST_NAME or not text.isascii() or "%" in text:  # no IPv6 zone: nginx has none
        raise ConfigValue(f"expected an IP address or a host name, got {shown!r}")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        pass
    else:
        return str(address)
    labels = text.split(".")
    if not all(HOST_LABEL.fullmatch(label) for label in labels):
        raise ConfigValue(f"expected an IP address or a host name, got {shown!r}")
    if labels[-1].isdigit():  # 999.1.1.1, 127.1: not an address, nor a name
        raise ConfigValue(f"not a valid IP address: {shown!r}")
    return text


def check_port(port: int) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigValue(f"expected a TCP port from 1 to 65535, got {port!r}")
    return port


def nginx_path(path: Path | str, what: str) -> str:
    """`path` as the inside of a double-quoted nginx value; refused when it cannot be one."""
    text = str(path)
    bad = UNQUOTABLE.search(text)
    if not text or bad:
        found = repr(bad.group()) if bad else "nothing"
        raise ConfigValue(f"{what} {text[:80]!r} holds {found}, which nginx's config cannot carry; "
                          "use a path without it")
    return text


def listen_address(host: str, port: int) -> str:
    """nginx's `listen` value: host:port, an IPv6 address in brackets."""
    host, port = check_host(host), check_port(port)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def page_urls(host: str, port: int) -> tuple[str, str]:
    """The game and the article embed, at an address pygbag's runtime treats as a real site."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "localhost", "") else host
    base = f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"
    return base, base + "embed.html"


def find_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).is_file()), None)


def site_conf(root: Path, host: str, port: int) -> str:
    """The production server block with the two values the container's entrypoint fills in,
    each checked (ConfigValue otherwise); the root is written quoted."""
    values = {"PORT": listen_address(host, port), "WEB_ROOT": f'"{nginx_path(root.resolve(), "--root")}"'}
    text = SITE_TEMPLATE.read_text(encoding="utf-8")
    return re.sub(r"\$\{(PORT|WEB_ROOT)\}", lambda m: values[m.group(1)], text)


def main_conf(prefix: Path, mime_types: Path) -> str:
    """nginx.conf around the site: the official image's surroundings, sized for a room of readers."""
    return MAIN_CONF.format(prefix=nginx_path(prefix, "the nginx prefix folder"),
                            mime_types=nginx_path(mime_types, "mime.types"), connections=CONNECTIONS)


def write_prefix(prefix: Path, root: Path, host: str, port: int) -> Path:
    """Write nginx.conf and site.conf under prefix; return the main config's path. Every value is
    checked before anything is written (ConfigValue)."""
    mime = next((p for p in MIME_TYPES_CANDIDATES if p.is_file()), None)
    if mime is None:
        raise FileNotFoundError("nginx mime.types not found (is nginx installed?)")
    site, main = site_conf(root, host, port), main_conf(prefix, mime)
    (prefix / "tmp").mkdir(parents=True, exist_ok=True)
    (prefix / "site.conf").write_text(site, encoding="utf-8")
    conf = prefix / "nginx.conf"
    conf.write_text(main, encoding="utf-8")
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

    server_version = "vram-tetris"

    def version_string(self) -> str:
        """No server or Python version for the world to read."""
        return self.server_version

    def list_directory(self, path):  # type: ignore[no-untyped-def]
        """Folders are never listed (nginx neither): a folder without index.html is a 404."""
        self.send_error(404, "File not found")
        return None

    def end_headers(self) -> None:
        if self.path.endswith((".tar.gz", ".apk")):
            self.send_header("Cache-Control", "public, max-age=300, must-revalidate")
        else:
            self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()


class IPv6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


def serve_python(root: Path, host: str, port: int) -> int:
    handler = functools.partial(BundleHandler, directory=str(root))
    server_class = IPv6Server if ":" in host else http.server.ThreadingHTTPServer
    with server_class((host, port), handler) as server:
        game, embed = page_urls(host, port)
        print(f"serving {root} with Python's http.server on {game} (Ctrl-C stops)", flush=True)
        print(f"  game: {game}   article embed: {embed}", flush=True)
        server.serve_forever()  # until a signal stops it (cli_args.run: 130/143)
    return 0


def serve_nginx(nginx: str, root: Path, host: str, port: int) -> int:
    with tempfile.TemporaryDirectory(prefix="vram-nginx-") as tmp:
        prefix = Path(tmp)
        conf = write_prefix(prefix, root, host, port)
        test = subprocess.run(nginx_command(nginx, prefix, conf) + ["-t", "-q"], capture_output=True, text=True)
        if test.returncode != 0:
            return cli_args.failure("serve_web.py", f"nginx rejected the config: {test.stderr}", most=2000)
        game, embed = page_urls(host, port)
        print(f"serving {root} with nginx (production config) on {game} (Ctrl-C stops)", flush=True)
        print(f"  game: {game}   article embed: {embed}", flush=True)
        proc = subprocess.Popen(nginx_command(nginx, prefix, conf))
        try:
            return proc.wait()  # until a signal stops this tool (cli_args.run: 130/143)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGQUIT)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def checked(parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type from a check that raises ConfigValue."""
    def convert(text: str) -> T:
        try:
            return parse(text)
        except ConfigValue as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return convert


def main(argv: list[str] | None = None) -> int:
    parser = cli_args.OneLineParser(prog="serve_web.py", description="Serve the web bundle locally.",
                                    allow_abbrev=False, formatter_class=cli_args.HelpFormatter)
    parser.add_argument("--root", type=checked(lambda text: Path(nginx_path(Path(text).absolute(), "folder"))),
                        default=ROOT / "build" / "site", help="bundle folder")
    parser.add_argument("--port", type=cli_args.whole(1, 65535), default=8000, help="TCP port")
    parser.add_argument("--host", type=checked(check_host), default="127.0.0.1",
                        help="address to listen on: an IP address or a host name")
    parser.add_argument("--python-server", action="store_true", help="use http.server even if nginx is installed")
    args = parser.parse_args(argv)
    if not (args.root / "index.html").is_file():
        parser.error(f"--root: no index.html in {args.root}: run ./build.sh web first")
    try:
        nginx_path(args.root.resolve(), "--root")  # where a link in the path leads, too
    except ConfigValue as exc:
        parser.error(str(exc))
    nginx = None if args.python_server else find_nginx()
    try:
        if nginx:
            return serve_nginx(nginx, args.root.resolve(), args.host, args.port)
        return serve_python(args.root.resolve(), args.host, args.port)
    except OSError as exc:
        return cli_args.failure("serve_web.py", f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}")
    except ConfigValue as exc:  # the temporary folder's path, from TMPDIR
        return cli_args.failure("serve_web.py", str(exc))


if __name__ == "__main__":
    sys.exit(cli_args.run(main, prog="serve_web.py"))
