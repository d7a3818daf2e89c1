#!/usr/bin/env bash
# Set everything up, then run the whole test suite (the command the README gives and .ci/run runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
