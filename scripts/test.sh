#!/usr/bin/env bash
# Set everything up, then lint and run the whole test suite (the command the README gives and .ci/run runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# The Japanese prose (notebook sources, the README's Japanese part) through textlint, which needs Node.js: without it,
# say so and go on, unless REQUIRE_TEXTLINT=1 (.ci/run) makes that a failure.
if [ -x node_modules/.bin/textlint ] && command -v node >/dev/null 2>&1; then
  bash scripts/lint_japanese.sh
elif [ -n "${REQUIRE_TEXTLINT:-}" ]; then
  echo "REQUIRE_TEXTLINT=1, but textlint is not installed (it needs Node.js 20.18+ and npm; scripts/setup.sh runs npm ci)." >&2
  exit 1
else
  echo "textlint (the Japanese prose check) skipped: Node.js and npm are not installed." >&2
fi
# WORKERS_PER_CORE pytest workers per core (default 2): many tests spend their time waiting (a deadline, a browser, a
# database, a judge's limit) and the other workers use the core meanwhile (bench/suite_workers.sh measures it).
# conftest.py keeps a notebook's cells, and the tests sharing a module-wide fixture, in one worker. The 20 slowest
# tests are listed at the end. `bash scripts/test.sh -n 0` runs everything in one process.
workers=$(.venv/bin/python -c "import os; print(max(1, round((os.cpu_count() or 1) * float('${WORKERS_PER_CORE:-2}'))))")
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup --durations=20 "$@"
