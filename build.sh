#!/usr/bin/env bash
# Build, serve, play and test VRAM Tetris.  Usage: ./build.sh test|play|bench
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then "$PY" -m venv "$VENV"; fi
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install -q -e ".[dev]"
}

case "${1:-}" in
  test)  setup; shift; "$VENV/bin/python" -m pytest "$@" ;;
  play)  setup; shift; "$VENV/bin/python" main.py "$@" ;;
  bench) setup; shift; "$VENV/bin/python" -m engine.bench "$@" ;;
  *) echo "usage: ./build.sh test|play|bench [args]" >&2; exit 2 ;;
esac
