#!/usr/bin/env bash
# The main job: compile the seed MNIST MLP (examples/mnist_mlp.mlir) to C that trains it, build
# it with the system C compiler, and train it on real handwritten digits (scikit-learn's bundled
# 8x8 digits, upsampled to 28x28; no download), printing the loss per epoch and test accuracy.
# Usage: bash tools/demo.sh [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh demo
mkdir -p build
.venv/bin/python tools/digits.py build/digits
# Differentiate, insert SGD, derive the inference function, plan the memory, print C (a rerun
# removes the files an earlier emit wrote there and this one does not, as the build below
# compiles every .c of the directory):
.venv/bin/adir-opt --predict --optimizer=sgd --lr=0.1 --memory-report --emit-c=build/mnist_c \
    --c-prefix=mnist_ --c-main examples/mnist_mlp.mlir
"${CC:-cc}" -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror build/mnist_c/*.c -o build/mnist_train -lm
build/mnist_train build/digits/train.bin build/digits/test.bin "${1:-10}"
