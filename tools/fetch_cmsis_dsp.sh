#!/usr/bin/env bash
# Fetch the CMSIS-DSP C sources (Include/, PrivateInclude/, Source/) from the PyPI sdist
# cmsisdsp==1.10.3, check its hash, and unpack them into a cache outside the repository, so
# that fresh clones on the same machine (CI's) find them:
#
#   bash tools/fetch_cmsis_dsp.sh     -> ~/.cache/adir/cmsis-dsp/cmsisdsp-1.10.3
#   ADIR_CMSIS_DSP_CACHE=/some/dir bash tools/fetch_cmsis_dsp.sh     (e.g. build/, git-ignored)
#
# Prints the unpacked directory (what `-DCMSIS_DSP=` / `make CMSIS_DSP=` and the tests take).
# Idempotent: a second run only prints the directory. pip reads the sdist's metadata with
# --no-build-isolation, so the Python that runs it needs setuptools, wheel and numpy: $PYTHON
# when given, else a small venv made once in the cache (python3 -m venv, then pip install).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.10.3
SHA256=307d32298faa7c58db912851027fce35f886fec7eb1a27c4b309ce1a97f47519
cache="${ADIR_CMSIS_DSP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/adir/cmsis-dsp}"
target="$cache/cmsisdsp-$VERSION"
if [ -f "$target/.complete" ]; then
    echo "$target"
    exit 0
fi
mkdir -p "$cache"
sdist="$cache/cmsisdsp-$VERSION.tar.gz"
if [ ! -f "$sdist" ] || ! echo "$SHA256  $sdist" | sha256sum --check --status; then
    python="${PYTHON:-}"
    if [ -z "$python" ]; then
        python="$cache/fetch-venv/bin/python"
        if [ ! -x "$python" ] || ! "$python" -c "import setuptools, wheel, numpy" 2>/dev/null; then
            python3 -m venv "$cache/fetch-venv"
            "$python" -m pip install --quiet --disable-pip-version-check setuptools wheel numpy >&2
        fi
    fi
    download="$(mktemp -d "$cache/download.XXXXXX")"
    trap 'rm -rf "$download"' EXIT
    if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
        --no-binary :all: --no-build-isolation "cmsisdsp==$VERSION" -d "$download" >&2; then
        echo "fetch_cmsis_dsp: pip could not download the cmsisdsp==$VERSION sdist with $python" \
            "(it needs setuptools, wheel and numpy there)" >&2
        exit 1
    fi
    mv "$download/cmsisdsp-$VERSION.tar.gz" "$sdist"
    rm -rf "$cache/fetch-venv"  # only pip's helper: the sdist is cached from now on
fi
if ! echo "$SHA256  $sdist" | sha256sum --check --status; then
    echo "fetch_cmsis_dsp: $sdist does not have the expected sha256 $SHA256" >&2
    exit 1
fi
rm -rf "$target"
unpack="$(mktemp -d "$cache/unpack.XXXXXX")"
tar -xzf "$sdist" -C "$unpack" \
    "cmsisdsp-$VERSION/Include" "cmsisdsp-$VERSION/PrivateInclude" "cmsisdsp-$VERSION/Source" \
    "cmsisdsp-$VERSION/LICENSE"
mv "$unpack/cmsisdsp-$VERSION" "$target"
rmdir "$unpack"
touch "$target/.complete"
echo "$target"
