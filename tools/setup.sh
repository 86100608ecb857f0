#!/usr/bin/env bash
# Create .venv with adir installed in editable mode. `bash tools/setup.sh test` adds the test
# dependencies (pytest, lit, filecheck, hypothesis, and torch==2.13.0, the CPU wheel).
# Idempotent: a second run only checks that everything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
target="."
if [ "${1:-}" = "test" ]; then
    target=".[test]"
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target"
