#!/usr/bin/env bash
# Create .venv with adir (editable) and its test dependencies. Idempotent: a second run only
# checks that everything is installed. torch==2.13.0 is pinned to the CPU wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
