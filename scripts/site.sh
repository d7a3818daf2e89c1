#!/usr/bin/env bash
# Build the browser edition into site/ (a static JupyterLite site; nothing is fetched from the network at run time).
# Downloads and the build tools are cached in .cache/site/ (git-ignored): a second build only copies files.
# Serve it with: python3 -m http.server -d site   (then open http://127.0.0.1:8000/)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.cache/site/venv
mkdir -p .cache/site
if [ ! -x "$VENV/bin/python" ] || ! cmp -s requirements-site.txt "$VENV/requirements-site.txt"; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements-site.txt
  cp requirements-site.txt "$VENV/requirements-site.txt"
fi
# jupytext is here only to convert the note; its lab extension (a server-side contents manager) has no place in a
# site without a server
rm -rf "$VENV/share/jupyter/labextensions/jupyterlab-jupytext"
exec "$VENV/bin/python" scripts/site_build.py "$@"
