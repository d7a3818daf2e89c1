#!/usr/bin/env bash
# Create .venv (if missing) and install everything from requirements.txt. Sourced by lab.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Python 3.11 or newer is needed (the message catalogue is read with tomllib) (found: $("$PY" --version 2>&1)). Set PYTHON=/path/to/python3.x." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
# This checkout's harness, importable from the venv's python anywhere (the notebooks' kernel, the harness's child
# processes): its folder in a .pth file, which is what an editable install amounts to here, without a build step.
# (pip's editable install printed setuptools' "compat editable mode will be removed" warning on every setup.)
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if compgen -G "$site/harness-*.dist-info" >/dev/null; then  # a venv made before: the old editable install goes
  .venv/bin/python -m pip uninstall -q -y --disable-pip-version-check harness
fi
printf '%s\n' "$PWD" >"$site/harness-checkout.pth"
# The Japanese prose linter for scripts/test.sh (npm packages pinned in package-lock.json), when Node.js is there;
# reinstalled only when the lock file changed. The notebooks themselves never need Node.
if command -v npm >/dev/null 2>&1 && [ ! package-lock.json -ot node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
# Build matplotlib's font cache now, so its first-use message never lands in a notebook's output.
.venv/bin/python -c "import matplotlib.pyplot" >/dev/null 2>&1
