"""Autodiff prunes the backward pass of a sparse scheme to what the kept gradients need, on the
MLPerf Tiny models (examples/torch/resnet8.py, ds_cnn.py) at batch 1 with SGD. Activity analysis
(adir/passes/autodiff/backward.py) gives adjoints only to values that depend on a trainable
parameter and reach the loss, and dead-code elimination drops every gradient op and saved
activation nothing kept reads; these tests hold it to that.

- Last layer only: the training step's arena is exactly the forward pass's (the `loss`
  function's planned arena): the backward keeps nothing beyond the fc's input, 64 floats; the
  full step needs more than three times as much (docs/sparse_updates.md has the figures).
- ResNet-8 with its last two layers (stacks.2.shortcut and fc): the shortcut's weight gradient
  is the only convolution gradient; no conv computes an input gradient, since nothing below the
  shortcut trains.

The numbers of a pruned step equal the full step's for the kept parameters
(test_sparse_updates.py::test_the_pruned_backward_pass_gives_the_full_passes_gradients...).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from c_testing import run_pipeline
from xdsl.dialects import func

from adir.frontends.torch_import import import_module
from adir.passes import PLANNING_PIPELINE

ROOT = Path(__file__).resolve().parents[2]


def planned(model: str, scheme: str):
    spec = importlib.util.spec_from_file_location(
        model, ROOT / "examples" / "torch" / f"{model}.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    *inputs, _ = example.example_input(1)
    module = import_module(example.model(), tuple(inputs), loss=example.LOSS, train=scheme)
    return run_pipeline(
        module,
        "infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.01}," + PLANNING_PIPELINE,
    )


def arenas(module) -> dict[str, int]:
    return {
        f.sym_name.data: f.attributes["adir.arena_size"].value.data
        for f in module.ops
        if isinstance(f, func.FuncOp) and "adir.arena_size" in f.attributes
    }


@pytest.mark.slow
@pytest.mark.parametrize("model", ["ds_cnn", "resnet8"])
def test_last_layer_training_needs_no_more_arena_than_the_forward_pass(model: str) -> None:
    last = arenas(planned(model, "last:1"))
    assert last["train_step"] == last["loss"]
    full = arenas(planned(model, "all"))
    assert full["train_step"] > 3 * last["train_step"]


@pytest.mark.slow
def test_no_input_gradient_below_the_earliest_trained_layer() -> None:
    module = planned("resnet8", "last:2")
    step = next(
        f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "train_step"
    )
    kernels = [op.name for op in step.walk()]
    assert sum("conv2d_grad_weight" in name for name in kernels) == 1
    assert not any("conv2d_grad_input" in name for name in kernels)
