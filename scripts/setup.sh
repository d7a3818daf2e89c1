#!/usr/bin/env bash
# Create .venv (if missing) and install everything from requirements.txt. Sourced by lab.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "Python 3.10 or newer is needed (found: $("$PY" --version 2>&1)). Set PYTHON=/path/to/python3.x." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
# Build matplotlib's font cache now, so its first-use message never lands in a notebook's output.
.venv/bin/python -c "import matplotlib.pyplot" >/dev/null 2>&1
