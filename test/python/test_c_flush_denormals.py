"""Subnormal floats in the generated C: kept by default (IEEE 754, as the interpreter and PyTorch
compute), flushed to zero in a build with -DADIR_FLUSH_DENORMALS (runtime adir_float_mode.h:
x86 MXCSR FTZ and DAZ, the Arm FZ bit), which `Session(module, flush_denormals=True)` matches
op by op. docs/numerics.md ("Subnormal floats") says what can differ between the two."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from adir_testing import parse_example
from c_testing import build_c, c_compilers, run_pipeline
from test_c_examples import training_steps

from adir.context import parse_module
from adir.interpreter import Session
from adir.passes import PLANNING_PIPELINE

FLUSH = ("-DADIR_FLUSH_DENORMALS",)

PRODUCT = """
func.func @product(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %y = adir.mul %x, %w : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""
X = np.array([1e-20, 1e-40, 3.0, 2e-19], np.float32)
W = np.array([1e-20, 1e30, 3.0, 2e-19], np.float32)
# 1e-20 * 1e-20 = 1e-40 is subnormal (below 2^-126 = 1.18e-38): flushed to 0 (FTZ); 1e-40 is a
# subnormal operand, read as 0 (DAZ), so 1e-40 * 1e30 gives 0 instead of 1e-10; 9 and 4e-38
# are normal and stay.
KEPT = X * W
FLUSHED = np.array([0.0, 0.0, 9.0, np.float32(2e-19) * np.float32(2e-19)], np.float32)


def product_in_c(tmp_path: Path, flags: tuple[str, ...]) -> np.ndarray:
    planned = run_pipeline(
        parse_module(PRODUCT, "product.mlir"), f"infer-shapes,{PLANNING_PIPELINE}"
    )
    build = build_c(planned, "product", 1, tmp_path, c_compilers()[0], extra_flags=flags)
    return build.run(0, [[X, W]])[0]


def test_subnormal_products_are_kept_by_default(tmp_path: Path) -> None:
    assert KEPT[0] != 0 and abs(KEPT[0]) < np.finfo(np.float32).tiny
    assert 0.99e-10 < KEPT[1] < 1.01e-10  # 1e-40 is subnormal: about 5 significant digits
    got = product_in_c(tmp_path, ())
    np.testing.assert_array_equal(got.view(np.uint32), KEPT.view(np.uint32))
    session = Session(parse_module(PRODUCT, "product.mlir"))
    np.testing.assert_array_equal(session.call("product", X, W)[0], KEPT)


def test_flush_denormals_build_flushes_results_and_operands(tmp_path: Path) -> None:
    got = product_in_c(tmp_path, FLUSH)
    np.testing.assert_array_equal(got.view(np.uint32), FLUSHED.view(np.uint32))
    session = Session(parse_module(PRODUCT, "product.mlir"), flush_denormals=True)
    x = X.copy()
    np.testing.assert_array_equal(session.call("product", x, W)[0], FLUSHED)
    np.testing.assert_array_equal(x, X)  # the caller's array is not flushed


def test_adam_with_flush_denormals_agrees_with_the_interpreter(tmp_path: Path) -> None:
    """The seed MLP with Adam on inputs scaled by 1e-19: the first layer's gradients are about
    1e-20, so (1 - beta2) g g (1e-43) is subnormal and the second moments of w1 stay 0 in the
    flushed C and in the flushing interpreter, and are subnormal (not 0) with IEEE semantics."""
    optimizer = "autodiff,insert-optimizer{kind=adam lr=0.001}"
    tensor_level = run_pipeline(parse_example("mnist_mlp"), f"infer-shapes,{optimizer}")
    planned = run_pipeline(tensor_level, PLANNING_PIPELINE)
    steps = [[x * np.float32(1e-19), label] for x, label in training_steps("mnist_mlp", 3)]
    build = build_c(
        planned, "train_step", len(steps), tmp_path, c_compilers()[0], sanitize=True,
        extra_flags=FLUSH,
    )  # fmt: skip
    c_results = build.run(0, steps)
    flushing = Session(tensor_level, flush_denormals=True)
    ieee = Session(tensor_level)
    expected = [flushing.call("train_step", *args)[0] for args in steps]
    for args in steps:
        ieee.call("train_step", *args)
    np.testing.assert_allclose(np.ravel(c_results[: len(steps)]), np.ravel(expected), rtol=1e-5)
    names = [op.sym_name.data for op in tensor_level.ops if op.name == "adir.param"]
    params = dict(zip(names, c_results[len(steps) :], strict=True))
    second_moment = next(name for name in names if "w1" in name and "sq" in name)
    assert not np.any(params[second_moment])
    assert not np.any(flushing.params[second_moment])
    tiny = np.finfo(np.float32).tiny
    kept = ieee.params[second_moment]
    assert np.any((kept != 0) & (np.abs(kept) < tiny))
    # Each element to 1e-5 of its tensor's largest magnitude (c_testing's params_to_tensor_scale):
    # a first moment after steps of opposite sign is the small residue of a cancelling sum.
    for name in names:
        want = flushing.params[name]
        scale = 1e-5 * float(np.max(np.abs(want)))
        np.testing.assert_allclose(params[name], want, rtol=1e-5, atol=scale, err_msg=name)
