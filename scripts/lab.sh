#!/usr/bin/env bash
# Set everything up, then open JupyterLab on the first notebook (or on the repository while there is none).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
first=$(ls notebooks/*.ipynb 2>/dev/null | head -n 1 || true)
root_flag=()
[ "$(id -u)" = 0 ] && root_flag=(--allow-root)  # Jupyter refuses to run as root without it
exec .venv/bin/jupyter lab ${root_flag[@]+"${root_flag[@]}"} ${first:+"$first"} "$@"
