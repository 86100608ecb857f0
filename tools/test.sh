#!/usr/bin/env bash
# Set up the environment (once) and run every test: the lit/FileCheck suite, then pytest.
# Usage: bash tools/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh test
.venv/bin/lit -sv test
# -n auto: one pytest worker per core (pytest-xdist); the tests share no files.
.venv/bin/python -m pytest -n auto "$@"
