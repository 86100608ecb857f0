"""The C kernels of the normalization family against the interpreter (gcc, ASan, UBSan):

- batchnorm (training) on `[N, C]`, `[N, C, L]` and `[N, C, H, W]` inputs, its running
  statistics stored to their params and updated over several steps; default and other
  momentum and eps;
- batchnorm_eval, and batchnorm_grad fed by a real forward pass;
- dropout bit for bit: p = 0, 0.5 and 1 (nan and inf through dropped elements), i64, i32 and
  f32 steps (negative steps wrap modulo 2^64), the mask changing from step to step, and
  dropout_grad applying the forward's mask;
- a training step with batchnorm and dropout from autodiff + insert-optimizer over 5 steps.
"""

from __future__ import annotations

import numpy as np
import pytest
from adir_testing import tensor_type
from c_testing import check_c_against_interpreter

RNG = np.random.default_rng(1)


def normal(shape: tuple[int, ...], offset: float = 0.0) -> np.ndarray:
    return (RNG.standard_normal(shape) + offset).astype(np.float32)


def channel_offsets(shape: tuple[int, ...]) -> np.ndarray:
    """x with a different mean and scale per channel (a typical pre-normalisation input)."""
    c = shape[1]
    broadcast = (1, c) + (1,) * (len(shape) - 2)
    mean = RNG.uniform(-2, 2, c).reshape(broadcast)
    scale = RNG.uniform(0.5, 3, c).reshape(broadcast)
    return (normal(shape) * scale + mean).astype(np.float32)


# --- batchnorm ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "attributes"),
    [
        ((8, 4), ""),
        ((2, 3, 7), "{momentum = 3.000000e-01 : f32, eps = 1.000000e-03 : f32}"),
        ((3, 4, 5, 5), ""),
    ],
)
def test_batchnorm_updates_running_statistics_over_steps(
    shape: tuple[int, ...], attributes: str
) -> None:
    """Output, batch mean and invstd at each of 4 steps, and the running statistics in their
    params after them."""
    t, c = tensor_type(shape), tensor_type((shape[1],))
    text = f"""
adir.param @gamma : {c} = #adir.uniform<low = 0.5, high = 1.5, seed = 1>
adir.param @beta : {c} = #adir.uniform<low = -0.5, high = 0.5, seed = 2>
adir.param @mean : {c} = #adir.zeros {{trainable = false}}
adir.param @var : {c} = #adir.fill<value = 1.0> {{trainable = false}}
func.func @f(%x: {t}) -> ({t}, {c}, {c}) {{
  %g = adir.load @gamma : {c}
  %b = adir.load @beta : {c}
  %rm = adir.load @mean : {c}
  %rv = adir.load @var : {c}
  %y, %m, %s, %rm2, %rv2 = adir.batchnorm %x, %g, %b, %rm, %rv {attributes}
      : {t}, {c}, {c}, {c}, {c} -> ({t}, {c}, {c}, {c}, {c})
  adir.store %rm2, @mean : {c}
  adir.store %rv2, @var : {c}
  func.return %y, %m, %s : {t}, {c}, {c}
}}"""
    check_c_against_interpreter(text, "f", [[channel_offsets(shape)] for _ in range(4)])


@pytest.mark.parametrize("shape", [(5, 6), (4, 3, 2, 2)])
def test_batchnorm_eval(shape: tuple[int, ...]) -> None:
    """(x - running_mean) * scale + beta; eps 1e-3 shows on small variances."""
    t, c = tensor_type(shape), tensor_type((shape[1],))
    text = f"""
func.func @f(%x: {t}, %g: {c}, %b: {c}, %rm: {c}, %rv: {c}) -> {t} {{
  %y = adir.batchnorm_eval %x, %g, %b, %rm, %rv {{eps = 1.000000e-03 : f32}}
      : {t}, {c}, {c}, {c}, {c} -> {t}
  func.return %y : {t}
}}"""
    channels = (shape[1],)
    variance = RNG.uniform(0.001, 4, channels).astype(np.float32)
    args = [channel_offsets(shape), normal(channels), normal(channels), normal(channels), variance]
    check_c_against_interpreter(text, "f", [args])


@pytest.mark.parametrize(
    "shape",
    [(6, 3), (3, 5), (2, 3, 7), (2, 4, 8), (3, 2, 17), (2, 4, 3, 5), (2, 3, 5, 25), (2, 2, 10, 20)],
)
def test_batchnorm_and_its_grad_equal_the_interpreter_bit_for_bit(shape: tuple[int, ...]) -> None:
    """The forward pass, and the adjoints of input, gamma and beta from its batch mean and
    invstd. The C and the interpreter sum each channel in the same order (each sample's row in
    adir_row_sum's order, then the samples in order) and compute the same expressions, so on
    the same inputs every result is the same float: rows of 1, 7 and 8 values (the partial
    sums' edges), 17, 125 (DS-CNN's) and 200 (past 128, where numpy's own pairwise sum would
    split the row in halves)."""
    t, c = tensor_type(shape), tensor_type((shape[1],))
    text = f"""
func.func @f(%x: {t}, %g: {c}, %b: {c}, %dy: {t}) -> ({t}, {c}, {c}, {t}, {c}, {c}) {{
  %rm = "adir.constant"() {{value = dense<0.0> : {c}}} : () -> {c}
  %rv = "adir.constant"() {{value = dense<1.0> : {c}}} : () -> {c}
  %y, %m, %s, %rm2, %rv2 = adir.batchnorm %x, %g, %b, %rm, %rv
      : {t}, {c}, {c}, {c}, {c} -> ({t}, {c}, {c}, {c}, {c})
  %dx, %dg, %db = adir.batchnorm_grad %x, %g, %m, %s, %dy
      : {t}, {c}, {c}, {c}, {t} -> ({t}, {c}, {c})
  func.return %y, %m, %s, %dx, %dg, %db : {t}, {c}, {c}, {t}, {c}, {c}
}}"""
    channels = (shape[1],)
    args = [channel_offsets(shape), normal(channels, 1.0), normal(channels), normal(shape)]
    check_c_against_interpreter(text, "f", [args], rtol=0.0, atol=0.0)


# --- dropout --------------------------------------------------------------------------------


def dropout_ir(shape: tuple[int, ...], step_type: str, p: float) -> str:
    """`@f(x, dy, step) = (dropout(x), dropout_grad(dy))`, one seed and p."""
    t = tensor_type(shape)
    properties = f"{{p = {p} : f32, seed = 7 : i64}}"
    return f"""
func.func @f(%x: {t}, %dy: {t}, %step: tensor<{step_type}>) -> ({t}, {t}) {{
  %y = adir.dropout %x, %step {properties} : {t}, tensor<{step_type}> -> {t}
  %dx = adir.dropout_grad %dy, %step {properties} : {t}, tensor<{step_type}> -> {t}
  func.return %y, %dx : {t}, {t}
}}"""


STEP_DTYPES = {"i64": np.int64, "i32": np.int32, "f32": np.float32}


@pytest.mark.parametrize(
    ("step_type", "p"),
    [("i64", 0.5), ("i32", 0.5), ("f32", 0.5), ("i64", 0.0), ("i64", 0.25)],
)
def test_dropout_and_its_grad_bit_for_bit(step_type: str, p: float) -> None:
    """The masked values and the masked adjoints, at steps 0, 1, 2, 1 and -1 (wrapping to
    2^64 - 1 for integers; -1.0's bits for f32): the mask changes from step to step, returns
    at a repeated step, and the backward drops what the forward dropped."""
    shape = (6, 37)
    step_values = [0, 1, 2, 1, -1]
    steps = [
        [normal(shape), normal(shape), np.asarray(s, STEP_DTYPES[step_type])] for s in step_values
    ]
    results = check_c_against_interpreter(
        dropout_ir(shape, step_type, p), "f", steps, rtol=0.0, atol=0.0
    )
    masks = [results[2 * i] != 0 for i in range(len(steps))]
    for index, mask in enumerate(masks):
        assert np.array_equal(mask, results[2 * index + 1] != 0)
    if p:
        assert not np.array_equal(masks[0], masks[1])
        assert np.array_equal(masks[1], masks[3])
    else:
        assert all(mask.all() for mask in masks)


def test_dropout_of_p_1_drops_everything_and_keeps_nan() -> None:
    """p = 1: every element times 0, so nan and inf give nan, as in the interpreter."""
    shape = (3, 4)
    x = normal(shape)
    x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
    steps = [[x, normal(shape), np.asarray(5, np.int64)]]
    results = check_c_against_interpreter(dropout_ir(shape, "i64", 1.0), "f", steps, atol=0.0)
    assert np.isnan(results[0]).sum() == 3
    assert not results[1].any()


# --- in a training step ---------------------------------------------------------------------

BATCHNORM_DROPOUT_MLP = """
adir.param @w1 : tensor<12x10xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 11>
adir.param @gamma : tensor<12xf32> = #adir.fill<value = 1.0>
adir.param @beta : tensor<12xf32> = #adir.zeros
adir.param @bn_mean : tensor<12xf32> = #adir.zeros {trainable = false}
adir.param @bn_var : tensor<12xf32> = #adir.fill<value = 1.0> {trainable = false}
adir.param @w2 : tensor<4x12xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 13>

func.func @loss(%x: tensor<8x10xf32>, %label: tensor<8xi64>, %step: tensor<i64>) -> tensor<f32>
    attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<12x10xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<8x10xf32>, tensor<12x10xf32> -> tensor<8x12xf32>
  %g = adir.load @gamma : tensor<12xf32>
  %b = adir.load @beta : tensor<12xf32>
  %rm = adir.load @bn_mean : tensor<12xf32>
  %rv = adir.load @bn_var : tensor<12xf32>
  %n, %m, %s, %rm2, %rv2 = adir.batchnorm %h, %g, %b, %rm, %rv
      : tensor<8x12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>
      -> (tensor<8x12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>)
  adir.store %rm2, @bn_mean : tensor<12xf32>
  adir.store %rv2, @bn_var : tensor<12xf32>
  %a = adir.relu %n : tensor<8x12xf32>
  %d = adir.dropout %a, %step {p = 2.500000e-01 : f32, seed = 5 : i64}
      : tensor<8x12xf32>, tensor<i64> -> tensor<8x12xf32>
  %w2 = adir.load @w2 : tensor<4x12xf32>
  %z = adir.matmul %d, %w2 {transpose_b} : tensor<8x12xf32>, tensor<4x12xf32> -> tensor<8x4xf32>
  %l = adir.cross_entropy %z, %label : tensor<8x4xf32>, tensor<8xi64> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def test_training_step_with_batchnorm_and_dropout() -> None:
    """Loss, weights and running statistics after 5 SGD steps, a new dropout mask each step:
    batchnorm_grad and dropout_grad as autodiff uses them."""
    steps = [
        [normal((8, 10)), RNG.integers(0, 4, 8).astype(np.int64), np.asarray(step, np.int64)]
        for step in range(5)
    ]
    check_c_against_interpreter(
        BATCHNORM_DROPOUT_MLP,
        "train_step",
        steps,
        differentiate="autodiff,insert-optimizer{kind=sgd lr=0.1}",
        atol=1e-5,
    )
