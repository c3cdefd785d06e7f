"""What tools/serve_web.py writes into nginx's configuration: only values nginx reads as meant.

No nginx needed: the checks and the config writing are called directly, and the command line is
run only where it refuses before serving (tests/test_server.py runs the configs in nginx).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import serve_web  # noqa: E402

INJECTION = "127.0.0.1:18304; location = /pw { alias /etc/passwd; } #"
HOSTILE_HOSTS = [INJECTION, "127.0.0.1:80", "a b", "exa_mple.com", "-bad.com", "bad-.com", "a..b", ".", "",
                 "999.1.1.1", "127.1", "fe80::1%eth0", "[::1]", "h\u00f6st.example", "x" * 64 + ".com",
                 "a\nb", "a;b", "a{b", "a}b", "a#b", "a'b", 'a"b', "$host", "a/b", ("a." * 127) + "aa"]
HOSTILE_PATHS = ['bundle"x', "bundle$x", "bundle\\x", "bundle\nx", "bundle\rx", "bundle\tx", "bundle\x01x"]
VALID_HOSTS = {"127.0.0.1": "127.0.0.1:8000", "0.0.0.0": "0.0.0.0:8000", "::1": "[::1]:8000", "::": "[::]:8000",
               "2001:db8::42": "[2001:db8::42]:8000", "localhost": "localhost:8000",
               "vram-tetris.example.com": "vram-tetris.example.com:8000", "a1.b2": "a1.b2:8000"}


def run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "serve_web.py"), *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def assert_usage_error(res: subprocess.CompletedProcess) -> None:
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert re.fullmatch(r"serve_web\.py: error: .+ \(try serve_web\.py --help\)", lines[0]), lines[0]
    assert res.stdout == ""


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """The least a --root needs: an index.html."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "index.html").write_text("<!doctype html><title>x</title>")
    return folder


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
def test_hostile_hosts_are_refused_before_any_config(host: str, tmp_path: Path) -> None:
    with pytest.raises(serve_web.ConfigValue):
        serve_web.check_host(host)
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    with pytest.raises(serve_web.ConfigValue):
        serve_web.write_prefix(prefix, ROOT / "web", host, 8000)
    assert list(prefix.iterdir()) == []  # nothing written


@pytest.mark.parametrize("host", [INJECTION, "a b", "exa_mple.com", "999.1.1.1", "fe80::1%eth0", "a\nb", "-bad.com"])
def test_hostile_hosts_on_the_command_line_exit_2_in_one_line(host: str, bundle: Path) -> None:
    assert_usage_error(run_tool("--root", str(bundle), f"--host={host}", "--python-server"))


@pytest.mark.parametrize("port", ["1; x", "8000;", "0", "65536", "-1", "80 80", "0x50", "nan", ""])
def test_hostile_ports_exit_2_in_one_line(port: str, bundle: Path) -> None:
    assert_usage_error(run_tool("--root", str(bundle), f"--port={port}", "--python-server"))


@pytest.mark.parametrize("port", [0, 65536, -1, True, "80"])
def test_bad_ports_are_never_written(port: object, tmp_path: Path) -> None:
    with pytest.raises(serve_web.ConfigValue):
        serve_web.write_prefix(tmp_path, ROOT / "web", "127.0.0.1", port)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", HOSTILE_PATHS)
def test_hostile_root_paths_are_refused_before_any_config(name: str, tmp_path: Path) -> None:
    root = tmp_path / name
    root.mkdir()
    (root / "index.html").write_text("x")
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    with pytest.raises(serve_web.ConfigValue):
        serve_web.write_prefix(prefix, root, "127.0.0.1", 8000)
    assert list(prefix.iterdir()) == []
    assert_usage_error(run_tool("--root", str(root), "--python-server"))


def test_a_root_reached_through_a_hostile_link_is_refused(tmp_path: Path, bundle: Path) -> None:
    target = tmp_path / "real$site"
    bundle.rename(target)
    link = tmp_path / "plain"
    link.symlink_to(target)
    assert_usage_error(run_tool("--root", str(link), "--python-server"))


@pytest.mark.parametrize("name", ["my site", "a;b", "a{b}c", "a#b", "it's"])
def test_paths_nginx_would_split_are_written_quoted(name: str, tmp_path: Path) -> None:
    root = tmp_path / name
    root.mkdir()
    conf = serve_web.site_conf(root, "127.0.0.1", 8000)
    assert f'    root "{root}";\n' in conf
    block = conf.split("server {", 1)[1]
    assert block.count("root ") == 1 and "${" not in block


def test_the_prefix_and_mime_types_are_checked_and_quoted(tmp_path: Path) -> None:
    conf = serve_web.main_conf(tmp_path / "a b", Path("/etc/nginx/mime.types"))
    assert f'include "{tmp_path}/a b/site.conf";' in conf and 'include "/etc/nginx/mime.types";' in conf
    assert not re.search(r"(pid|error_log|access_log|_temp_path) [^\"]", conf)
    for bad in (tmp_path / "a$b", tmp_path / 'a"b', tmp_path / "a\nb"):
        with pytest.raises(serve_web.ConfigValue):
            serve_web.main_conf(bad, Path("/etc/nginx/mime.types"))
        with pytest.raises(serve_web.ConfigValue):
            serve_web.main_conf(tmp_path, bad)


@pytest.mark.parametrize("host", sorted(VALID_HOSTS))
def test_addresses_and_host_names_are_accepted(host: str, tmp_path: Path) -> None:
    assert serve_web.listen_address(host, 8000) == VALID_HOSTS[host]
    conf = serve_web.site_conf(tmp_path, host, 8000)
    assert f"    listen {VALID_HOSTS[host]};\n" in conf


def test_an_address_is_written_in_its_plain_form() -> None:
    assert serve_web.check_host("2001:0db8:0000::0042") == "2001:db8::42"
    assert serve_web.check_host("Vram-Tetris.Example") == "Vram-Tetris.Example"
