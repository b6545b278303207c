#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install esqlog with its dev, integrations and distributed
# extras; idempotent and quiet when nothing changed. Sourced by test.sh and demo.sh so each
# README command is self-contained.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${PYTHON:-python3}
if [[ ! -x "$root/.venv/bin/python" ]]; then
  echo "[setup] creating $root/.venv" >&2
  "$py" -m venv "$root/.venv"
fi
stamp="$root/.venv/.esqlog-installed"
if [[ ! -f "$stamp" || "$root/pyproject.toml" -nt "$stamp" ]]; then
  echo "[setup] installing esqlog[dev,integrations,distributed] into .venv" >&2
  "$root/.venv/bin/python" -m pip install -q --upgrade pip >&2
  "$root/.venv/bin/python" -m pip install -q -e "$root[dev,integrations,distributed]" >&2
  touch "$stamp"
fi
