#!/usr/bin/env bash
# textlint (textlint-rule-preset-ja-technical-writing, pinned in package-lock.json) over the Japanese prose: the
# notebooks' MyST sources and the README's Japanese part (everything above "# Reference (English)").
# Config: .textlintrc (every relaxed rule says why).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/textlint ]; then
  echo "textlint is not installed: it needs Node.js 20.18 or newer and npm, then 'npm ci' (scripts/setup.sh runs it)." >&2
  exit 1
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 18) ? 0 : 1)'; then
  echo "textlint 15 needs Node.js 20.18 or newer (found: $(node --version))." >&2
  exit 1
fi
status=0
node_modules/.bin/textlint src/notebooks/*.md src/solutions/*.md browser/*.md || status=1
sed '/^# Reference (English)/,$d' README.md | node_modules/.bin/textlint --stdin --stdin-filename README.md || status=1
exit $status
