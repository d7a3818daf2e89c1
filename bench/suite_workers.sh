#!/usr/bin/env bash
# How long the README's test command (scripts/test.sh: set-up, lint, the whole suite) takes with 1, 2 and 3 pytest
# workers per core, or the factors given, one after another on this checkout: wall and CPU time, and pytest's last
# line. Run it on a quiet machine; each run takes minutes.
#
#     bash bench/suite_workers.sh [FACTOR ...]      # default: 1 2 3
set -euo pipefail
cd "$(dirname "$0")/.."
TIMEFORMAT='%0R s wall, CPU %0U s user + %0S s system'
factors=("$@")
[ ${#factors[@]} -gt 0 ] || factors=(1 2 3)
for f in "${factors[@]}"; do
  log=$(mktemp)
  # -p no:cacheprovider: no run's cache (failed tests first) changes the order of the next.
  took=$( { time WORKERS_PER_CORE="$f" bash scripts/test.sh -q -p no:cacheprovider >"$log" 2>&1 || true; } 2>&1 )
  echo "$f workers per core ($(getconf _NPROCESSORS_ONLN) cores): $took; $(grep -E 'passed|failed' "$log" | tail -n 1)"
  rm -f "$log"
done
