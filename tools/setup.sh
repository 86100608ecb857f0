#!/usr/bin/env bash
# Create .venv with adir installed in editable mode, plus an optional extra:
#   bash tools/setup.sh          the compiler alone (xdsl, numpy)
#   bash tools/setup.sh test     + pytest, lit, filecheck, hypothesis, torch==2.13.0 (CPU wheel)
#   bash tools/setup.sh demo     + scikit-learn (its bundled digits are the demo's data)
#   bash tools/setup.sh bench    + torch and jax, tools/bench.py's peers
# With an extra, it also makes sure gcc and clang are there (the tests build the generated C with
# both; the demo with gcc), and for the tests the Cortex-M and RISC-V toolchains and QEMU (the
# generated C trains under QEMU's Cortex-M and RV32 boards), CMake (the generated
# CMakeLists.txt builds), librsvg's rsvg-convert (the memory plan's SVG is rendered) and
# upstream MLIR's mlir-opt (round trips of adir's IR), installing them with apt-get when they
# are missing and we may.
# The CMSIS-DSP sources are fetched by the tests themselves (tools/fetch_cmsis_dsp.sh).
# Idempotent: a second run only checks that everything is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
target="."
if [ -n "${1:-}" ]; then
    target=".[$1]"
    packages="gcc clang"
    commands="gcc clang"
    if [ "$1" = "test" ] || [ "$1" = "bench" ]; then
        # torch.compile's inductor (a peer of tools/bench.py, run by its test) builds C++.
        packages="$packages g++"
        commands="$commands g++"
    fi
    if [ "$1" = "test" ]; then
        packages="$packages gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm make cmake"
        commands="$commands arm-none-eabi-gcc qemu-system-arm make cmake"
        # The RV32 boards (QEMU's virt): the bare-metal RISC-V compiler, picolibc (115 MB
        # download, 1 GB installed: every multilib) and qemu-system-riscv32.
        packages="$packages gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc"
        commands="$commands riscv64-unknown-elf-gcc qemu-system-riscv32"
        # The memory plan's picture is rendered to PNG (one package, 6 MB installed); adir's IR
        # goes through upstream MLIR's mlir-opt and back (73 MB download, 420 MB installed).
        packages="$packages librsvg2-bin mlir-22-tools"
        commands="$commands rsvg-convert mlir-opt-22"
    fi
    missing=""
    for command in $commands; do
        command -v "$command" >/dev/null || missing="$missing $command"
    done
    if [ -n "$missing" ]; then
        if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                $packages >/dev/null
        else
            echo "setup: missing$missing; install: apt-get install $packages" >&2
        fi
    fi
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target"
