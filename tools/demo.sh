#!/usr/bin/env bash
# The main job, as far as the pipeline goes today: compile the seed MNIST MLP (shape inference),
# print the IR, then evaluate its loss on a random digit in the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
.venv/bin/adir-opt --infer-shapes examples/mnist_mlp.mlir
.venv/bin/adir-run examples/mnist_mlp.mlir --func loss --random-inputs 0
