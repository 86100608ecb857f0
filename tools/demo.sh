#!/usr/bin/env bash
# The main job, as far as the pipeline goes today: differentiate the seed MNIST MLP and insert
# SGD (compile time), print the training step, then train it in the reference interpreter for
# 20 steps on one random digit, printing the loss of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
mkdir -p build
.venv/bin/adir-opt --optimizer=sgd --lr=0.1 examples/mnist_mlp.mlir -o build/mnist_mlp_train.mlir
sed -n '/func.func @train_step/,$p' build/mnist_mlp_train.mlir
.venv/bin/adir-run build/mnist_mlp_train.mlir --func train_step --random-inputs 0 --repeat 20
.venv/bin/adir-opt --optimizer=sgd --lr=0.1 --plan-memory --memory-report examples/mnist_mlp.mlir \
    -p verify-memory-plan -o build/mnist_mlp_planned.mlir
