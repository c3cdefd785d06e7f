#!/usr/bin/env bash
# Build, serve, play and test VRAM Tetris. `./build.sh help` describes every command.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}
WEB_VENV=${WEB_VENV:-build/venv-web}
PEERS_VENV=${PEERS_VENV:-build/venv-peers}
PY=${PYTHON:-python3}

COMMANDS="help test types mutate screenshots play bench bench-wasm bench-peers web serve preview setup web-env"

help() {
  cat <<'HELP'
usage: ./build.sh COMMAND [args]

Players:
  play [args]        set up .venv if needed (first time: downloads pygame-ce and numpy from
                     PyPI), then run the desktop game; later starts reuse .venv and need no
                     network. Arguments go to main.py (./build.sh play --help lists them).
  test [pytest args] set up everything the tests need, then run pytest: .venv, pygbag's own
                     environment (build/venv-web), Debian's chromium, nginx and npm (apt-get,
                     as root or with sudo), and Pyodide from the npm registry (build/pyodide/).
                     Tests whose browser or npm is missing are skipped and say why.
                     The type gate (types) runs first; the suite includes the mutation check.
                     Two workers run test files side by side (TEST_WORKERS=N to change;
                     0 runs them one after another in one process).

Checks:
  types              the type gate: mypy --strict on engine/, mypy on ui/, main.py and tools/
                     (mypy pinned in the dev extra of pyproject.toml)
  mutate [args]      break the game on purpose in copies of the source (a score entry, the
                     split's hole filling, fragmentation, the LAB screen, the OOM ceiling, a
                     replay step) and fail unless a test catches each; prints the test that did
                     (tools/mutate.py; --list shows the breaks, --full runs the whole suite)

Docs:
  screenshots [args] render every screenshot the README and docs/ show, from the current build,
                     into docs/ (tools/screenshots.py holds the shots: file, arguments, what it
                     shows; --list prints them, --only NAME renders some, --check compares and
                     writes nothing); tests/test_screenshots.py fails while a committed one differs

Benchmarks:
  bench [args]       engine frame cost and bot speed (python -m engine.bench)
  bench-wasm [args]  the same figures and `engine.lab bench`, in Pyodide (CPython for
                     WebAssembly) in headless Chromium beside native CPython
  bench-peers [args] pieces/s of our engine beside the pure-Python Tetris engines pinned in
                     tools/peers.txt (installed from PyPI into build/venv-peers)

Web bundle (docs/web.md):
  web [args]         build the web bundle into build/site/ offline (staged in build/stage/)
                     and check its size and contents (tools/build_web.py; --help for its
                     options); it replaces a folder only while it holds just what a build
                     wrote there (listed in its .vram-tetris-build marker)
  serve [port]       build, then serve build/site/ on http://127.0.0.1:PORT/ (default 8000)
                     with the production nginx config: offline preview of our page
  preview [args]     build, then run pygbag's own dev server on the staged game

Environments:
  setup              set up .venv only (an editable install of this checkout)
  web-env            set up build/venv-web only (pygbag, without black)
  help, -h, --help   this text
HELP
}

# A bad command line: one line in the format of every tool (engine/cli_args.py), exit 2.
usage() {
  echo "./build.sh: error: $1 (commands: $COMMANDS) (try ./build.sh --help)" >&2
  exit 2
}

# A bare Debian python3 lacks ensurepip: bring in python3-venv when venv cannot work.
ensure_venv() {
  "$PY" -c "import ensurepip, venv" 2>/dev/null && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  else
    echo "build.sh: $PY cannot create virtual environments; install python3-venv" >&2
    exit 1
  fi
}

# The stamp records what .venv was installed from: this checkout's place and pyproject.toml.
# The install is editable, so source changes need no reinstall; a changed stamp does.
setup_stamp() {
  { echo "$PWD"; cat pyproject.toml; } | sha256sum | cut -d' ' -f1
}

setup() {
  local stamp_file="$VENV/.vram-tetris-setup" stamp
  stamp=$(setup_stamp)
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ] \
     && "$VENV/bin/python" -c "import pygame, numpy, engine, ui" >/dev/null 2>&1; then
    return 0
  fi
  if [ ! -x "$VENV/bin/python" ]; then ensure_venv; "$PY" -m venv "$VENV"; fi
  echo "build.sh: setting up $VENV (pygame-ce, numpy and the test tools from PyPI)" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e ".[dev]"
  echo "$stamp" > "$stamp_file"
}

# The peer engines tools/peer_bench.py measures ours against, exactly as pinned, in their own
# environment (our engine needs nothing installed: it is imported from the checkout).
setup_peers() {
  local stamp_file="$PEERS_VENV/.peers" stamp
  stamp=$(sha256sum tools/peers.txt | cut -d' ' -f1)
  [ -x "$PEERS_VENV/bin/python" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ] && return 0
  if [ ! -x "$PEERS_VENV/bin/python" ]; then
    ensure_venv
    mkdir -p "$(dirname "$PEERS_VENV")"
    "$PY" -m venv "$PEERS_VENV"
  fi
  "$PEERS_VENV/bin/python" -m pip install -q -r tools/peers.txt
  echo "$stamp" > "$stamp_file"
}

# pygbag gets an environment of its own: it reformats the packed source in place whenever it
# can import black, so the build environment holds pygbag and nothing else.
setup_web() {
  local pin
  pin=$(grep -o '"pygbag==[^"]*"' pyproject.toml | head -n1 | tr -d '"')
  if [ -z "$pin" ]; then echo "build.sh: no pygbag==X pin in pyproject.toml" >&2; exit 1; fi
  if [ ! -x "$WEB_VENV/bin/python" ]; then
    ensure_venv
    mkdir -p "$(dirname "$WEB_VENV")"
    "$PY" -m venv "$WEB_VENV"
  fi
  if ! "$WEB_VENV/bin/python" -c "import sys, pygbag; sys.exit(pygbag.VERSION != '${pin#pygbag==}')" 2>/dev/null; then
    "$WEB_VENV/bin/python" -m pip install -q "$pin"
  fi
  if "$WEB_VENV/bin/python" -c "import black" 2>/dev/null; then
    echo "build.sh: black is installed in $WEB_VENV; pygbag would reformat the game. Remove $WEB_VENV and retry." >&2
    exit 1
  fi
}

# Debian packages the tests drive: Chromium (through playwright), nginx, npm (it fetches Pyodide,
# the WebAssembly CPython the engine is also tested in), and the Korean font the committed Hangul
# subset is regenerated from (tools/subset_font.py --check).
setup_system() {
  local need=()
  [ -x /usr/bin/chromium ] || need+=(chromium fonts-dejavu-core)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
  command -v npm >/dev/null 2>&1 || need+=(npm)
  [ -f /usr/share/fonts/truetype/nanum/NanumSquareB.ttf ] || need+=(fonts-nanum)
  [ ${#need[@]} -eq 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo -n); else
      echo "build.sh: not root and no sudo: cannot install ${need[*]}; their tests will be skipped" >&2
      return 0
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "build.sh: no apt-get: install ${need[*]} by hand; their tests will be skipped" >&2
    return 0
  fi
  echo "build.sh: installing ${need[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
}

# The type gate: the engine is held to mypy --strict, the frontend and tools to mypy's defaults.
types() {
  "$VENV/bin/python" -m mypy --strict engine
  "$VENV/bin/python" -m mypy ui main.py tools
}

build_web() {
  setup_web
  local render=()
  if [ -x "$VENV/bin/python" ]; then render=(--render-python "$VENV/bin/python"); fi
  "$WEB_VENV/bin/python" tools/build_web.py --pygbag-python "$WEB_VENV/bin/python" \
    --out build/site --report build/web-report.json "${render[@]}" "$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  help|-h|--help) help ;;
  test)
    setup
    setup_web
    setup_system
    if ! "$VENV/bin/python" tools/wasm_python.py install; then
      echo "build.sh: Pyodide is not available; the WebAssembly tests will say why" >&2
    fi
    export WEB_PYTHON="$PWD/$WEB_VENV/bin/python"
    types
    # Two workers, a test file each at a time: a file's shared setup (a build, a browser, Pyodide)
    # stays one setup, and the waits on browsers and subprocesses overlap with the other's work.
    "$VENV/bin/python" -m pytest -n "${TEST_WORKERS:-2}" --dist loadfile "$@"
    ;;
  types) setup; types ;;
  mutate) setup; "$VENV/bin/python" tools/mutate.py "$@" ;;
  screenshots) setup; "$VENV/bin/python" tools/screenshots.py "$@" ;;
  play)  setup; "$VENV/bin/python" main.py "$@" ;;
  bench) setup; "$VENV/bin/python" -m engine.bench "$@" ;;
  bench-wasm) setup; "$VENV/bin/python" tools/wasm_python.py bench "$@" ;;
  bench-peers) setup_peers; "$PEERS_VENV/bin/python" tools/peer_bench.py "$@" ;;
  setup) setup ;;
  web-env) setup_web ;;
  web)   build_web "$@" ;;
  serve)
    build_web
    port=${1:-8000}
    "$PY" tools/serve_web.py --root build/site --port "$port"
    ;;
  preview)
    # pygbag's test server packs and serves the staged game and proxies its CDN.
    build_web
    "$WEB_VENV/bin/python" -m pygbag --template web/vram-tetris.tmpl --icon web/favicon.png \
      --title "PagedAttention: VRAM Tetris" --width 800 --height 580 --can_close 1 --no_opt "$@" build/stage/vram-tetris
    ;;
  "") usage "no command given" ;;
  *) usage "unknown command '$cmd'" ;;
esac
