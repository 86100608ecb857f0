"""Bufferization keeps the numbers: the training step interpreted before and after
`fuse-weight-updates`, `reorder-updates`, `bufferize` and `plan-memory` gives bit-identical
losses and parameters, with parameter updates written in place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_insert_optimizer import RELU_MLP, relu_mlp_data, seed_mlp_data
from xdsl.dialects import memref

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.passes import ADIR_PASSES, PLANNING_PASSES
from adir.passes.autodiff import AutodiffPass
from adir.passes.insert_optimizer import InsertOptimizerPass

SEED_MLP = (Path(__file__).parents[2] / "examples" / "mnist_mlp.mlir").read_text()


def compile_step(ir: str, optimizer: dict, buffers: bool):
    module = parse_module(ir, "model.mlir")
    for transform in [AutodiffPass(), InsertOptimizerPass(**optimizer)]:
        transform.apply(adir_context(), module)
    if buffers:
        for name in (*PLANNING_PASSES, "verify-memory-plan"):
            ADIR_PASSES[name]()().apply(adir_context(), module)
    module.verify()
    return module


@pytest.mark.parametrize(
    "optimizer",
    [
        {"kind": "sgd", "lr": 0.1},
        {"kind": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
        {"kind": "adam", "lr": 0.01, "clip_norm": 1.0},
        {"kind": "adamw", "lr": 0.01, "schedule": "cosine", "t_max": 5},
    ],
    ids=["sgd", "sgd_nesterov", "adam_clip", "adamw_cosine"],
)
@pytest.mark.parametrize("model", ["seed_mlp", "relu_mlp"])
def test_bufferized_step_equals_tensor_step_bit_for_bit(model: str, optimizer: dict) -> None:
    ir, make_data = {"seed_mlp": (SEED_MLP, seed_mlp_data), "relu_mlp": (RELU_MLP, relu_mlp_data)}[
        model
    ]
    tensors = Session(compile_step(ir, optimizer, buffers=False))
    buffers = Session(compile_step(ir, optimizer, buffers=True))
    for x, y in make_data(np.random.default_rng(0))[:6]:
        expected = tensors.call("train_step", x, y)[0]
        actual = buffers.call("train_step", x, y)[0]
        assert actual.tobytes() == expected.tobytes()
    for name, value in tensors.params.items():
        assert buffers.params[name].tobytes() == value.tobytes(), name


def test_sgd_updates_parameters_in_place() -> None:
    """No parameter is copied: every update writes its parameter's own buffer."""
    module = compile_step(SEED_MLP, {"kind": "sgd", "lr": 0.1}, buffers=True)
    step = next(
        op
        for op in module.ops
        if getattr(op, "sym_name", None) and op.sym_name.data == "train_step"
    )
    assert not [op for op in step.walk() if isinstance(op, memref.CopyOp)]


OLD_VALUE_AFTER_STORE = """
adir.param @w : tensor<3xf32> = #adir.fill<value = 2.0>
func.func @f(%g: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %w = adir.load @w : tensor<3xf32>
  %e = adir.exp %g : tensor<3xf32>
  adir.store %e, @w : tensor<3xf32>
  %r = adir.mul %w, %g : tensor<3xf32>
  func.return %r, %w : tensor<3xf32>, tensor<3xf32>
}
"""


def test_a_value_loaded_before_a_store_keeps_the_old_parameter() -> None:
    """`%w` is read (and returned) after `@w` is overwritten: bufferization copies it out at the
    load, so the results are 2 * g and 2, not exp(g) * g and exp(g) (what reading the
    parameter's buffer itself gave before the copy existed)."""
    module = parse_module(OLD_VALUE_AFTER_STORE, "test.mlir")
    g = np.array([1.0, 2.0, 3.0], np.float32)
    expected = Session(module).call("f", g)
    ADIR_PASSES["bufferize"]()().apply(adir_context(), module)
    module.verify()
    assert [op.name for op in module.walk()].count("memref.copy") == 2  # snapshot and store
    actual = Session(module).call("f", g)
    np.testing.assert_array_equal(expected[0], 2 * g)
    for got, want in zip(actual, expected, strict=True):
        assert got.tobytes() == want.tobytes()
