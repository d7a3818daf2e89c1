#!/usr/bin/env bash
# Set everything up, then lint and run the whole test suite (the command the README gives and .ci/run runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest "$@"
