"""The losses family in the interpreter equals PyTorch's loss functions, for every reduction,
both forms of class target, several batch sizes and class counts, and edge values.

float64 runs compare to 1e-12 relative (the same formulas in the same order as PyTorch's CPU
kernels, up to the order of summation); float32 to 1e-6 relative. Every loss term is
non-negative here, so a sum has no cancellation that would make its relative error large.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_testing import assert_close, interpret, tensor_type, to_torch
from xdsl.dialects import test as test_dialect
from xdsl.dialects.builtin import TensorType, f32, i32

from adir.dialects.tensor.losses import CrossEntropyOp, MseOp, NllOp

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["none", "mean", "sum"]
# (batch size, class count): one sample, one class, a few, a typical batch of MNIST.
CLASS_SIZES = [(1, 2), (5, 1), (4, 3), (32, 10)]
ELEMENTWISE_SHAPES = [(1,), (7,), (4, 3), (2, 3, 5)]
LABEL_TYPES = {"i32": np.int32, "i64": np.int64}


def tolerance(dtype) -> float:
    return 1e-12 if dtype == np.float64 else 1e-6


def loss_ir(op: str, input_type: str, target_type: str, result_type: str, reduction: str) -> str:
    return f"""
func.func @f(%x: {input_type}, %t: {target_type}) -> {result_type} {{
  %0 = adir.{op} %x, %t {{reduction = "{reduction}"}} : {input_type}, {target_type} -> {result_type}
  func.return %0 : {result_type}
}}"""


def run_loss(op: str, x: np.ndarray, t: np.ndarray, reduction: str, t_elem: str = "f32"):
    """Interpret `adir.<op>` on `x` and `t` in the dtype of `x`."""
    if op in ("nll", "cross_entropy"):
        unreduced = x.shape[:-1]
    else:
        unreduced = x.shape
    result = tensor_type(unreduced if reduction == "none" else ())
    ir = loss_ir(op, tensor_type(x.shape), tensor_type(t.shape, t_elem), result, reduction)
    (actual,) = interpret(ir, "f", x, t, float_dtype=x.dtype.type)
    assert actual.dtype == x.dtype
    return actual


def log_softmax(z: np.ndarray) -> np.ndarray:
    return torch.log_softmax(to_torch(z), dim=-1).numpy()


def random_probabilities(rng: np.random.Generator, shape: tuple[int, ...], dtype) -> np.ndarray:
    """Rows that sum to 1, for class-probability targets."""
    return torch.softmax(to_torch(rng.standard_normal(shape).astype(dtype)), dim=-1).numpy()


# --- mse --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES, ids=str)
def test_mse_matches_torch(shape: tuple, reduction: str, dtype) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(dtype)
    t = rng.standard_normal(shape).astype(dtype)
    actual = run_loss("mse", x, t, reduction)
    expected = F.mse_loss(to_torch(x), to_torch(t), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)


def test_mse_edge_values_match_torch() -> None:
    """(inf - 1)**2 = inf, inf - inf = nan, a nan propagates, 1e20**2 overflows f32 to inf."""
    x = np.array([np.inf, np.inf, np.nan, 1e20, 0.0, -0.0], np.float32)
    t = np.array([1.0, np.inf, 0.0, 0.0, -0.0, 3e-38], np.float32)
    actual = run_loss("mse", x, t, "none")
    expected = F.mse_loss(to_torch(x), to_torch(t), reduction="none")
    assert_close(actual, expected, rtol=0, atol=0)
    np.testing.assert_array_equal(actual[:2], [np.inf, np.nan])
    assert np.isnan(run_loss("mse", x, t, "mean"))


# --- nll --------------------------------------------------------------------------------------


@pytest.mark.parametrize("label_type", sorted(LABEL_TYPES))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("sizes", CLASS_SIZES, ids=str)
def test_nll_class_indices_matches_torch(sizes, reduction: str, dtype, label_type: str) -> None:
    n, c = sizes
    rng = np.random.default_rng(n * 100 + c)
    logp = log_softmax(rng.standard_normal((n, c)).astype(dtype))
    labels = rng.integers(0, c, n).astype(LABEL_TYPES[label_type])
    actual = run_loss("nll", logp, labels, reduction, label_type)
    # PyTorch takes int64 labels only; the values are the same.
    expected = F.nll_loss(to_torch(logp), to_torch(labels.astype(np.int64)), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("sizes", CLASS_SIZES, ids=str)
def test_nll_class_probabilities_is_cross_entropy_of_log_probabilities(
    sizes, reduction: str, dtype
) -> None:
    """`nll(log_softmax(z), p) = F.cross_entropy(z, p)`, and per sample `-sum_c p * logp`."""
    n, c = sizes
    rng = np.random.default_rng(n * 100 + c + 1)
    z = rng.standard_normal((n, c)).astype(dtype)
    p = random_probabilities(rng, (n, c), dtype)
    actual = run_loss("nll", log_softmax(z), p, reduction)
    expected = F.cross_entropy(to_torch(z), to_torch(p), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    per_sample = -(to_torch(p) * to_torch(log_softmax(z))).sum(dim=-1)
    if reduction == "none":
        assert_close(actual, per_sample, rtol=tolerance(dtype), atol=0)


def test_nll_one_hot_probabilities_equal_class_indices() -> None:
    rng = np.random.default_rng(4)
    logp = log_softmax(rng.standard_normal((6, 4)).astype(np.float64))
    labels = np.array([0, 3, 1, 1, 2, 0], np.int32)
    one_hot = np.eye(4)[labels]
    by_index = run_loss("nll", logp, labels, "none", "i32")
    by_probability = run_loss("nll", logp, one_hot, "none")
    np.testing.assert_array_equal(by_index, -logp[np.arange(6), labels])
    assert_close(by_probability, by_index, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_unbatched_matches_torch(reduction: str, dtype) -> None:
    """Input [C] with a rank-0 label, or with [C] probabilities: a scalar for every reduction."""
    rng = np.random.default_rng(9)
    logp = log_softmax(rng.standard_normal(7).astype(dtype))
    label = np.array(5, np.int64)
    actual = run_loss("nll", logp, label, reduction, "i64")
    expected = F.nll_loss(to_torch(logp), to_torch(label), reduction=reduction)
    assert actual.shape == ()
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    assert actual == -logp[5]
    p = random_probabilities(rng, (7,), dtype)
    actual = run_loss("nll", logp, p, reduction)
    assert_close(actual, -(to_torch(p) * to_torch(logp)).sum(), rtol=tolerance(dtype), atol=0)


# --- cross_entropy ----------------------------------------------------------------------------


@pytest.mark.parametrize("label_type", sorted(LABEL_TYPES))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("sizes", CLASS_SIZES, ids=str)
def test_cross_entropy_class_indices_matches_torch(
    sizes, reduction: str, dtype, label_type: str
) -> None:
    n, c = sizes
    rng = np.random.default_rng(n * 100 + c + 2)
    z = (3 * rng.standard_normal((n, c))).astype(dtype)
    labels = rng.integers(0, c, n).astype(LABEL_TYPES[label_type])
    actual = run_loss("cross_entropy", z, labels, reduction, label_type)
    expected = F.cross_entropy(to_torch(z), to_torch(labels.astype(np.int64)), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("sizes", CLASS_SIZES, ids=str)
def test_cross_entropy_class_probabilities_matches_torch(sizes, reduction: str, dtype) -> None:
    """PyTorch's soft-label form: "mean" divides by the batch size N, not by N * C."""
    n, c = sizes
    rng = np.random.default_rng(n * 100 + c + 3)
    z = (3 * rng.standard_normal((n, c))).astype(dtype)
    p = random_probabilities(rng, (n, c), dtype)
    actual = run_loss("cross_entropy", z, p, reduction)
    expected = F.cross_entropy(to_torch(z), to_torch(p), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    if reduction == "mean":
        total = run_loss("cross_entropy", z, p, "sum")
        assert_close(actual, total / dtype(n), rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_unbatched_matches_torch(reduction: str, dtype) -> None:
    rng = np.random.default_rng(12)
    z = rng.standard_normal(5).astype(dtype)
    label = np.array(2, np.int32)
    actual = run_loss("cross_entropy", z, label, reduction, "i32")
    expected = F.cross_entropy(to_torch(z), torch.tensor(2), reduction=reduction)
    assert actual.shape == ()
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    p = random_probabilities(rng, (5,), dtype)
    actual = run_loss("cross_entropy", z, p, reduction)
    expected = F.cross_entropy(to_torch(z), to_torch(p), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_is_stable_for_logits_of_1e4(dtype) -> None:
    """Without the max subtracted, exp(1e4) overflows and every loss below would be nan.

    Row 0: the label has the largest logit by 2e4, loss 0. Row 1: the label is 2e4 below the
    largest logit, loss 2e4. Row 2: two equal logits of 1e4 share the probability, loss log 2.
    Row 3: a -inf logit is a probability of 0; choosing it costs inf.
    """
    z = np.array([[1e4, -1e4, 0.0], [1e4, -1e4, 0.0], [1e4, 1e4, -1e4], [-np.inf, 0.0, 1.0]], dtype)
    labels = np.array([0, 1, 0, 0], np.int64)
    actual = run_loss("cross_entropy", z, labels, "none", "i64")
    expected = F.cross_entropy(to_torch(z), to_torch(labels), reduction="none")
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    np.testing.assert_allclose(actual, [0.0, 2e4, np.log(2), np.inf], rtol=tolerance(dtype))
    probabilities = np.array(
        [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]], dtype
    )
    actual = run_loss("cross_entropy", z, probabilities, "none")
    expected = F.cross_entropy(to_torch(z), to_torch(probabilities), reduction="none")
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    # Row 3: 0 * log p(-inf logit) = 0 * -inf = nan, in PyTorch's soft-label form too.
    assert np.isnan(actual[3])
    np.testing.assert_allclose(actual[:3], [0.0, 1e4, np.log(2)], rtol=tolerance(dtype))


# --- class labels out of range ----------------------------------------------------------------


@pytest.mark.parametrize("op", ["nll", "cross_entropy"])
@pytest.mark.parametrize("bad_label", [10, -1, -100])
def test_class_index_out_of_range_is_an_error(op: str, bad_label: int) -> None:
    """10 and -1 raise in PyTorch too. -100 is PyTorch's default `ignore_index`, which skips the
    sample; adir has no ignore_index, so every label outside [0, C) is an error."""
    z = np.zeros((4, 10), np.float32)
    labels = np.array([3, bad_label, 0, 9], np.int32)
    with pytest.raises(
        ValueError,
        match=rf"adir\.{op}: target\[1\] = {bad_label} is not a class index in \[0, 10\)",
    ):
        run_loss(op, z, labels, "mean", "i32")
    torch_loss = F.nll_loss if op == "nll" else F.cross_entropy
    if bad_label != -100:
        with pytest.raises(IndexError, match=f"Target {bad_label} is out of bounds"):
            torch_loss(to_torch(z), to_torch(labels.astype(np.int64)))


def test_unbatched_class_index_out_of_range_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"adir\.nll: target = 3 is not a class index in \[0, 3\)"):
        run_loss("nll", np.zeros(3, np.float32), np.array(3, np.int64), "sum", "i64")


# --- bce --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES, ids=str)
def test_bce_matches_torch(shape: tuple, reduction: str, dtype) -> None:
    """Soft targets in [0, 1] as well as hard ones."""
    rng = np.random.default_rng(21)
    p = rng.uniform(0.001, 0.999, shape).astype(dtype)
    t = np.where(rng.uniform(size=shape) < 0.5, rng.uniform(size=shape), 1.0).astype(dtype)
    actual = run_loss("bce", p, t, reduction)
    expected = F.binary_cross_entropy(to_torch(p), to_torch(t), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_clamps_each_log_at_minus_100(dtype) -> None:
    """PyTorch clamps log(x) and log(1 - x) at -100: a confident wrong answer costs 100, a
    confident right one 0, and 0 * log(0) is 0, not nan. A tiny input whose log is above -100
    is not clamped (1e-40: log = -92.1, a float32 subnormal); 1e-45 is (log = -103.3 in
    float32, -103.6 in float64)."""
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1e-40, 1e-45, 1.0 - 1e-7, 0.5], dtype)
    t = np.array([0.0, 1.0, 1.0, 0.0, 0.25, 1.0, 1.0, 0.0, 0.5], dtype)
    actual = run_loss("bce", p, t, "none")
    expected = F.binary_cross_entropy(to_torch(p), to_torch(t), reduction="none")
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    np.testing.assert_array_equal(actual[:5], [0.0, 0.0, 100.0, 100.0, 25.0])
    np.testing.assert_allclose(actual[5], -np.log(np.float64(p[5])), rtol=tolerance(dtype))
    assert actual[6] == 100.0
    mean = run_loss("bce", p, t, "mean")
    assert_close(
        mean, F.binary_cross_entropy(to_torch(p), to_torch(t)), rtol=tolerance(dtype), atol=0
    )


@pytest.mark.parametrize("operand", ["input", "target"])
@pytest.mark.parametrize("bad", [1.5, -0.25, np.nan])
def test_bce_outside_0_1_is_an_error(operand: str, bad: float) -> None:
    """PyTorch raises "all elements of input should be between 0 and 1" (nan included)."""
    p = np.array([[0.5, 0.5], [0.5, 0.5]], np.float32)
    t = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    (p if operand == "input" else t)[1, 0] = bad
    with pytest.raises(
        ValueError, match=rf"adir\.bce: {operand}\[1, 0\] = {bad} is not a probability in \[0, 1\]"
    ):
        run_loss("bce", p, t, "mean")
    with pytest.raises(RuntimeError, match=f"all elements of {operand} should be between 0 and 1"):
        F.binary_cross_entropy(to_torch(p), to_torch(t))


# --- bce_with_logits --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES, ids=str)
def test_bce_with_logits_matches_torch(shape: tuple, reduction: str, dtype) -> None:
    rng = np.random.default_rng(31)
    z = (4 * rng.standard_normal(shape)).astype(dtype)
    t = rng.uniform(size=shape).astype(dtype)
    actual = run_loss("bce_with_logits", z, t, reduction)
    expected = F.binary_cross_entropy_with_logits(to_torch(z), to_torch(t), reduction=reduction)
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_with_logits_is_stable_for_large_logits(dtype) -> None:
    """No overflow in exp for any finite logit: x = 1e4 with t = 0.3 costs (1 - t) x = 7000,
    x = -1e4 with t = 0.3 costs t |x| = 3000, a right answer at +-1e4 costs exactly 0, and
    x = 0 costs log 2 whatever t is. An infinite logit gives 0 * inf = nan, as in PyTorch."""
    z = np.array([1e4, -1e4, 1e4, -1e4, 0.0, 0.0, 100.0, -30.0, np.inf], dtype)
    t = np.array([0.3, 0.3, 1.0, 0.0, 0.0, 1.0, 1.0 - 1e-7, 0.0, 1.0], dtype)
    actual = run_loss("bce_with_logits", z, t, "none")
    expected = F.binary_cross_entropy_with_logits(to_torch(z), to_torch(t), reduction="none")
    assert_close(actual, expected, rtol=tolerance(dtype), atol=0)
    np.testing.assert_allclose(
        actual[:6], [7000.0, 3000.0, 0.0, 0.0, np.log(2), np.log(2)], rtol=tolerance(dtype)
    )
    assert np.isnan(actual[8])


@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_with_logits_equals_bce_of_sigmoid(dtype) -> None:
    rng = np.random.default_rng(41)
    z = rng.standard_normal((6, 2)).astype(dtype)
    t = rng.uniform(size=(6, 2)).astype(dtype)
    with_logits = run_loss("bce_with_logits", z, t, "none")
    of_sigmoid = run_loss("bce", torch.sigmoid(to_torch(z)).numpy(), t, "none")
    np.testing.assert_allclose(with_logits, of_sigmoid, rtol=1e-5 if dtype == np.float32 else 1e-12)


# --- reductions of no terms -------------------------------------------------------------------


@pytest.mark.parametrize(
    "op, x, t, t_elem",
    [
        ("mse", np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32), "f32"),
        ("nll", np.zeros((0, 4), np.float32), np.zeros(0, np.int32), "i32"),
        ("cross_entropy", np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32), "f32"),
        ("bce_with_logits", np.zeros(0, np.float32), np.zeros(0, np.float32), "f32"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_empty_batch_mean_is_nan_and_sum_is_zero(op: str, x, t, t_elem: str) -> None:
    """As in PyTorch: the mean of no losses is 0/0 = nan, their sum 0, "none" is empty."""
    assert np.isnan(run_loss(op, x, t, "mean", t_elem))
    assert run_loss(op, x, t, "sum", t_elem) == 0.0
    assert run_loss(op, x, t, "none", t_elem).size == 0


# --- building ops from Python -----------------------------------------------------------------


def test_constructors_infer_the_result_type_from_the_reduction() -> None:
    logits, labels = test_dialect.TestOp(
        result_types=[TensorType(f32, [8, 10]), TensorType(i32, [8])]
    ).results
    assert CrossEntropyOp(logits, labels).result.type == TensorType(f32, [])
    assert NllOp(logits, labels, "none").result.type == TensorType(f32, [8])
    assert MseOp(logits, logits, "none").result.type == TensorType(f32, [8, 10])
    assert MseOp(logits, logits, "sum").reduction.data == "sum"
