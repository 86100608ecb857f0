#!/usr/bin/env bash
# Create .venv with adir installed in editable mode, plus an optional extra:
#   bash tools/setup.sh          the compiler alone (xdsl, numpy)
#   bash tools/setup.sh test     + pytest, lit, filecheck, hypothesis, torch==2.13.0 (CPU wheel)
#   bash tools/setup.sh demo     + scikit-learn (its bundled digits are the demo's data)
# With an extra, it also makes sure gcc and clang are there (the tests build the generated C with
# both; the demo with gcc), installing them with apt-get when they are missing and we may.
# Idempotent: a second run only checks that everything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
target="."
if [ -n "${1:-}" ]; then
    target=".[$1]"
    if ! command -v gcc >/dev/null || ! command -v clang >/dev/null; then
        if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
            apt-get update -qq && apt-get install -y -qq gcc clang >/dev/null
        else
            echo "setup: gcc and clang are needed; install them (e.g. apt-get install gcc clang)" >&2
        fi
    fi
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target"
