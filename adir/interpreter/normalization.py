"""numpy semantics of the normalization family (adir/dialects/tensor/normalization.py).

Everything is computed in the dtype of the input (float32, or float64 for precise checks), in
the order of PyTorch's CPU kernels: the batch statistics by two passes (the mean, then the sum
of squared deviations from it). The output is `(x - mean) * scale + beta` with per-channel
`scale = gamma * invstd`, not PyTorch's `x * scale + shift`, whose two products nearly cancel
where the output is near 0 and decide by their rounding which side of a following relu's 0 it
falls on (`adir_channel_affine` in the C reference says more). A channel's sums add each
sample's row in the C reference's order (`row_sums`), then the samples' sums in sample order,
as the C does. Layer norm per row likewise, and its backward with the formula of PyTorch's
`layer_norm_backward_frame` (rearranged to sum over `x - mean`, see `adir.layer_norm_grad`).
test/python/test_interpreter_normalization.py derives the agreement with PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import normalization as norm
from adir.dialects.tensor.shapes import element_type
from adir.interpreter import prng
from adir.interpreter.family import FamilyFunctions
from adir.interpreter.row_sum import row_sums


def _count(x: np.ndarray) -> int:
    """The number of values M each channel's statistics are over."""
    return math.prod(d for axis, d in enumerate(x.shape) if axis != 1)


def _channel_sums(terms: np.ndarray) -> np.ndarray:
    """The sum of `[N, C, ...]` terms over each channel: each sample's row (its spatial values)
    in `row_sums`' order, then the rows' sums from 0 in sample order (`adir_channel_sum`)."""
    per_sample = row_sums(terms.reshape(terms.shape[0], terms.shape[1], -1))
    total = np.zeros(terms.shape[1], terms.dtype)
    for sample in per_sample:
        total = total + sample
    return total


def _broadcastable(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A per-channel `[C]` vector as `[1, C, 1, ...]`, to broadcast against `x`."""
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _affine(x: np.ndarray, gamma, beta, mean, invstd) -> np.ndarray:
    """`(x - mean) * scale + beta`, `scale = gamma * invstd` (the module docstring says why)."""
    scale = gamma * invstd
    return (x - _broadcastable(mean, x)) * _broadcastable(scale, x) + _broadcastable(beta, x)


def batchnorm(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    running_mean: np.ndarray,
    running_var: np.ndarray,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, ...]:
    """(output, batch mean, batch invstd, new running mean, new running variance)."""
    one, momentum_, eps_ = x.dtype.type(1), x.dtype.type(momentum), x.dtype.type(eps)
    count = _count(x)
    mean = _channel_sums(x) / x.dtype.type(count)
    squares = _channel_sums(np.square(x - _broadcastable(mean, x)))
    invstd = one / np.sqrt(squares / x.dtype.type(count) + eps_)
    unbiased = squares / x.dtype.type(count - 1)
    new_mean = momentum_ * mean + (one - momentum_) * running_mean
    new_var = momentum_ * unbiased + (one - momentum_) * running_var
    return _affine(x, gamma, beta, mean, invstd), mean, invstd, new_mean, new_var


def batchnorm_eval(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    running_mean: np.ndarray,
    running_var: np.ndarray,
    eps: float,
) -> np.ndarray:
    invstd = x.dtype.type(1) / np.sqrt(running_var + x.dtype.type(eps))
    return _affine(x, gamma, beta, running_mean, invstd)


def batchnorm_grad(
    x: np.ndarray, gamma: np.ndarray, mean: np.ndarray, invstd: np.ndarray, dy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input_grad, gamma_grad, beta_grad), as PyTorch's batch_norm_backward_cpu in training:
    with `d = x - mean` and M values per channel, `dot = sum(dy * d)`,
    `dx = (dy - sum(dy) / M - d * invstd^2 * dot / M) * gamma * invstd`."""
    count = x.dtype.type(_count(x))
    centred = x - _broadcastable(mean, x)
    dbeta = _channel_sums(dy)
    dot = _channel_sums(dy * centred)
    projection = dot * invstd * invstd / count
    dx = (dy - _broadcastable(dbeta / count, x) - centred * _broadcastable(projection, x)) * (
        _broadcastable(gamma * invstd, x)
    )
    return dx, dot * invstd, dbeta


def batchnorm_relu(*args: Any) -> tuple[np.ndarray, ...]:
    """`adir.batchnorm` with `adir.relu` (`x < 0 ? 0 : x`) of its output."""
    output, *statistics = batchnorm(*args)
    return (np.where(output < 0, output.dtype.type(0), output), *statistics)


def batchnorm_relu_grad(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    mean: np.ndarray,
    invstd: np.ndarray,
    dy: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`batchnorm_grad` of `y <= 0 ? 0 : dy`, y the forward's affine value recomputed by the
    forward's expression (`_affine`), as `relu_grad` of the relu's output gives it."""
    masked = np.where(_affine(x, gamma, beta, mean, invstd) <= 0, dy.dtype.type(0), dy)
    return batchnorm_grad(x, gamma, mean, invstd, masked)


def _rows(x: np.ndarray, normalized_rank: int) -> np.ndarray:
    """A `[*, *normalized_shape]` array as `[rows, D]`: one row per normalised group."""
    lead = x.shape[: x.ndim - normalized_rank]
    return x.reshape(math.prod(lead), -1)


def layer_norm(
    x: np.ndarray,
    affine: tuple[np.ndarray, ...],
    normalized_rank: int,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output, mean, rstd) as PyTorch's LayerNormKernelImpl: per row, the mean and the
    biased variance (two passes here; PyTorch's Welford-style moments agree to rounding),
    `rstd = 1 / sqrt(var + eps)`, `output = (x * rstd + (-mean * rstd)) * weight + bias`."""
    lead = x.shape[: x.ndim - normalized_rank]
    rows = _rows(x, normalized_rank)
    mean = rows.mean(axis=1)
    var = np.square(rows - mean[:, None]).mean(axis=1)
    rstd = x.dtype.type(1) / np.sqrt(var + x.dtype.type(eps))
    y = rows * rstd[:, None] + (-mean * rstd)[:, None]
    if len(affine) > 0:
        y = y * affine[0].reshape(-1)
    if len(affine) > 1:
        y = y + affine[1].reshape(-1)
    return y.reshape(x.shape), mean.reshape(lead), rstd.reshape(lead)


def layer_norm_grad(
    x: np.ndarray,
    mean: np.ndarray,
    rstd: np.ndarray,
    dy: np.ndarray,
    weight: np.ndarray | None,
    normalized_rank: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input_grad, weight_grad, bias_grad): PyTorch's layer_norm_backward_frame, rearranged
    as the op's docstring says. Per row, with g the weight (ones without one), d = x - mean,
    `dot = sum(dy * g * d)`, `db = sum(dy * g)`, `b = -dot * rstd^3 / D`,
    `dx = rstd * dy * g + b * d - db * rstd / D`; `dweight = sum over rows of
    dy * (x * rstd - mean * rstd)`, `dbias = sum over rows of dy`."""
    rows, dys = _rows(x, normalized_rank), _rows(dy, normalized_rank)
    affine_shape = x.shape[x.ndim - normalized_rank :]
    scale = x.dtype.type(1) / x.dtype.type(rows.shape[1])
    a, centre = rstd.reshape(-1), mean.reshape(-1)
    dyg = dys if weight is None else dys * weight.reshape(-1)
    centred = rows - centre[:, None]
    dot = (dyg * centred).sum(axis=1)
    db = dyg.sum(axis=1)
    b = -dot * a * a * a * scale
    c = db * a * scale
    scaled = a[:, None] * dys  # rstd * dy * g, in PyTorch's order
    if weight is not None:
        scaled = scaled * weight.reshape(-1)
    dx = scaled + b[:, None] * centred - c[:, None]
    dweight = (dys * (rows * a[:, None] + (-a * centre)[:, None])).sum(axis=0)
    dbias = dys.sum(axis=0)
    return dx.reshape(x.shape), dweight.reshape(affine_shape), dbias.reshape(affine_shape)


def dropout_counter(step: np.ndarray, float_step: bool) -> int:
    """The 64-bit counter of a step operand: an f32 step's IEEE bits, an integer's value
    modulo 2^64 (two's complement)."""
    if float_step:
        return int(np.asarray(step, np.float32).view(np.uint32))
    return int(np.asarray(step).astype(np.int64)) % 2**64


def dropout_multiplier(
    shape: tuple[int, ...], dtype: np.dtype, seed: int, counter: int, p: float
) -> np.ndarray:
    """The mask `m` of `adir.dropout`: `1 / (1 - p)` where uniform(raw(seed, counter), i) >= p,
    else 0 (everywhere 0 for p = 1), element i in row-major order."""
    if p >= 1:
        return np.zeros(shape, dtype)
    stream = int(prng.raw(seed, counter))
    size = int(np.prod(shape, dtype=np.int64))
    kept = prng.uniform(stream, np.arange(size, dtype=np.uint64)).reshape(shape) >= np.float32(p)
    scale = dtype.type(1) / (dtype.type(1) - dtype.type(p))
    return np.where(kept, scale, dtype.type(0))


def dropout(op: norm.DropoutMaskOp, values: np.ndarray, step: np.ndarray) -> np.ndarray:
    """`values * m` with the mask of the op's seed, p and step (forward and backward alike)."""
    float_step = isinstance(element_type(op.operands[1].type), Float32Type)
    counter = dropout_counter(step, float_step)
    mask = dropout_multiplier(
        values.shape, values.dtype, op.seed.value.data, counter, op.p.value.data
    )
    return values * mask


@register_impls
class NormalizationFunctions(FamilyFunctions):
    @impl(norm.BatchnormOp)
    def run_batchnorm(self, interpreter: Interpreter, op: norm.BatchnormOp, args: tuple[Any, ...]):
        return batchnorm(*args, op.momentum.value.data, op.eps.value.data)

    @impl(norm.BatchnormEvalOp)
    def run_batchnorm_eval(
        self, interpreter: Interpreter, op: norm.BatchnormEvalOp, args: tuple[Any, ...]
    ):
        return (batchnorm_eval(*args, op.eps.value.data),)

    @impl(norm.BatchnormGradOp)
    def run_batchnorm_grad(
        self, interpreter: Interpreter, op: norm.BatchnormGradOp, args: tuple[Any, ...]
    ):
        return batchnorm_grad(*args)

    @impl(norm.BatchnormReluOp)
    def run_batchnorm_relu(
        self, interpreter: Interpreter, op: norm.BatchnormReluOp, args: tuple[Any, ...]
    ):
        return batchnorm_relu(*args, op.momentum.value.data, op.eps.value.data)

    @impl(norm.BatchnormReluGradOp)
    def run_batchnorm_relu_grad(
        self, interpreter: Interpreter, op: norm.BatchnormReluGradOp, args: tuple[Any, ...]
    ):
        return batchnorm_relu_grad(*args)

    @impl(norm.LayerNormOp)
    def run_layer_norm(self, interpreter: Interpreter, op: norm.LayerNormOp, args: tuple[Any, ...]):
        rank = len(op.normalized_shape.get_values())
        return layer_norm(args[0], tuple(args[1:]), rank, op.eps.value.data)

    @impl(norm.LayerNormGradOp)
    def run_layer_norm_grad(
        self, interpreter: Interpreter, op: norm.LayerNormGradOp, args: tuple[Any, ...]
    ):
        weight = args[4] if len(args) > 4 else None
        return layer_norm_grad(*args[:4], weight, len(op.normalized_shape.get_values()))

    @impl(norm.DropoutOp)
    def run_dropout(self, interpreter: Interpreter, op: norm.DropoutOp, args: tuple[Any, ...]):
        return (dropout(op, *args),)

    @impl(norm.DropoutGradOp)
    def run_dropout_grad(
        self, interpreter: Interpreter, op: norm.DropoutGradOp, args: tuple[Any, ...]
    ):
        return (dropout(op, *args),)
