#!/usr/bin/env bash
# Build, serve, play and test VRAM Tetris.
#
#   ./build.sh test [pytest args]  set everything up (venvs, Chromium, nginx), check types, run the tests
#   ./build.sh types               the type gate alone: mypy --strict on engine/, mypy on ui/, main.py, tools/
#   ./build.sh mutate [args]       break the game on purpose in copies of the source; every break must
#                                  fail a test (tools/mutate.py --help)
#   ./build.sh play [args]         run the desktop game
#   ./build.sh bench [args]        engine benchmarks
#   ./build.sh web [args]          build the web bundle into build/web (offline, checked)
#   ./build.sh serve [port]        build, then serve build/web on http://127.0.0.1:8000/ (not localhost:
#                                  there pygbag's runtime looks for its own dev server's /cdn/)
#   ./build.sh preview             pygbag's own dev server on the staged game (needs network)
#   ./build.sh setup               set up .venv only
#   ./build.sh web-env             set up the web build environment (build/venv-web) only
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}
WEB_VENV=${WEB_VENV:-build/venv-web}
PY=${PYTHON:-python3}

usage() {
  echo "usage: ./build.sh test|types|mutate|play|bench|web|serve|preview|setup|web-env [args]" >&2
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

setup() {
  if [ ! -x "$VENV/bin/python" ]; then ensure_venv; "$PY" -m venv "$VENV"; fi
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e ".[dev]"
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

# Debian packages the browser and server tests drive: Chromium (through playwright) and nginx.
setup_system() {
  local need=()
  [ -x /usr/bin/chromium ] || need+=(chromium fonts-dejavu-core)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
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
    --out build/web --report build/web-report.json "${render[@]}" "$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  test)
    setup
    setup_web
    setup_system
    export WEB_PYTHON="$PWD/$WEB_VENV/bin/python"
    types
    "$VENV/bin/python" -m pytest "$@"
    ;;
  types) setup; types ;;
  mutate) setup; "$VENV/bin/python" tools/mutate.py "$@" ;;
  play)  setup; "$VENV/bin/python" main.py "$@" ;;
  bench) setup; "$VENV/bin/python" -m engine.bench "$@" ;;
  setup) setup ;;
  web-env) setup_web ;;
  web)   build_web "$@" ;;
  serve)
    build_web
    port=${1:-8000}
    "$PY" tools/serve_web.py --root build/web --port "$port"
    ;;
  preview)
    # pygbag's test server packs and serves the staged game and proxies its CDN.
    build_web
    "$WEB_VENV/bin/python" -m pygbag --template web/vram-tetris.tmpl --icon web/favicon.png \
      --title "PagedAttention: VRAM Tetris" --width 800 --height 580 --can_close 1 --no_opt "$@" build/stage/vram-tetris
    ;;
  *) usage ;;
esac
