"""Normalization and regularisation layers: batch and layer normalisation, and dropout.

    %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %gamma, %beta, %running_mean, %running_var
        : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
        -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    %y = adir.batchnorm_eval %x, %gamma, %beta, %running_mean, %running_var
        : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
        -> tensor<8x4x5x5xf32>
    %y = adir.dropout %x, %step {p = 2.500000e-01 : f32, seed = 7 : i64}
        : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
    %y, %mean, %rstd = adir.layer_norm %x, %w, %b {normalized_shape = array<i64: 16>}
        : tensor<4x7x16xf32>, tensor<16xf32>, tensor<16xf32>
        -> (tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>)

Every op is pure: state that persists across training steps is never written by an op. The
running statistics of a batchnorm are `adir.param`s marked `{trainable = false}`; the training
function loads them, passes them to `adir.batchnorm`, which returns their updated values as
results, and stores those:

    adir.param @bn_mean : tensor<4xf32> = #adir.zeros {trainable = false}
    adir.param @bn_var : tensor<4xf32> = #adir.fill<value = 1.0> {trainable = false}
    ...
    %rm = adir.load @bn_mean : tensor<4xf32>
    %rv = adir.load @bn_var : tensor<4xf32>
    %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %x, %gamma, %beta, %rm, %rv : ...
    adir.store %rm2, @bn_mean : tensor<4xf32>
    adir.store %rv2, @bn_var : tensor<4xf32>

so the update is visible in the IR, a function that does not store (an evaluation of the
training-mode loss) leaves the statistics alone, and autodiff keeps the stores in the gradient
function as it keeps every side effect. The inference function uses `adir.batchnorm_eval`,
which normalises with the running statistics.

Dropout draws its mask from adir's counter-based generator (`adir.interpreter.prng`, which the
C backend implements bit for bit), so the backward pass recomputes the mask from the same seed
and step instead of saving it; see `DropoutOp`. Dropout in eval mode is the identity, so an
inference function simply has no dropout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    AnyTensor,
    Dim,
    Dims,
    FloatTensor,
    Shape,
    element_type,
    format_shape,
    is_compatible,
    refine,
    require_rank,
    shape_of,
    tensor_type,
)
from adir.dialects.tensor.traits import (
    EvalForm,
    HasEvalForm,
    NotDifferentiable,
    Recomputable,
    WritesResultOver,
)

BATCHNORM_MOMENTUM = 0.1
BATCHNORM_EPS = 1e-5


def channels(op_name: str, shape: Shape) -> Dim:
    """The channel count C of an `[N, C, ...]` input (None if unknown)."""
    if shape is None:
        return None
    if len(shape) < 2:
        raise VerifyException(
            f"{op_name}: operand input must have rank 2 or more ([N, C, ...]), got rank "
            f"{len(shape)} ({format_shape(shape)})"
        )
    return shape[1]


def per_channel(op_name: str, operand: str, shape: Shape, count: Dim, source: str) -> Dim:
    """Check that a per-channel operand is `[C]`, where `source` says who fixed C (if known);
    returns C if either side knows it."""
    require_rank(op_name, operand, shape, (1,))
    if shape is None:
        return count
    if shape[0] is not None and count is not None and shape[0] != count:
        raise VerifyException(f"{op_name}: operand {operand} has {shape[0]} entries but {source}")
    return count if count is not None else shape[0]


def values_per_channel(shape: Shape) -> int | None:
    """How many values each channel's statistics are over: N times the spatial size (None if
    unknown)."""
    if shape is None or any(d is None for d in shape):
        return None
    return math.prod(d for i, d in enumerate(shape) if i != 1)  # type: ignore[misc]


class ChannelStatsOp(TensorOp):
    """Shared shape rule: operand 0 is an `[N, C, ...]` input, the operands named in
    `PER_CHANNEL` are `[C]`; returns (input type, `[C]` type)."""

    PER_CHANNEL: ClassVar[tuple[str, ...]] = ()

    def input_and_channel_types(self) -> tuple[Attribute, Attribute]:
        count = channels(self.name, self.operand_shape(0))
        source = f"input has {count} channels"
        operand_names = [name for name, _ in self.get_irdl_definition().operands]
        for name in self.PER_CHANNEL:
            shape = self.operand_shape(operand_names.index(name))
            known = count is not None
            count = per_channel(self.name, name, shape, count, source)
            if not known and count is not None:
                source = f"operand {name} has {count} entries"
        # A per-channel operand may know C where the input does not.
        input_type = self.operands[0].type
        input_shape = shape_of(input_type)
        if input_shape is not None and input_shape[1] is None and count is not None:
            input_type = tensor_type(f32, (input_shape[0], count, *input_shape[2:]))
        return input_type, tensor_type(f32, (count,))


def _eps_ok(op: TensorOp, eps: FloatAttr) -> None:
    if not eps.value.data >= 0:
        raise VerifyException(f"{op.name}: eps must not be negative, got {eps.value.data}")


class TrainingBatchnormOp(ChannelStatsOp):
    """The operands, results, properties, constructor and shape rule of a training-mode
    batchnorm (`adir.batchnorm` below), shared by `adir.batchnorm_relu`, which computes the
    same and passes its output through a relu."""

    input = operand_def(FloatTensor)
    gamma = operand_def(FloatTensor)
    beta = operand_def(FloatTensor)
    running_mean = operand_def(FloatTensor)
    running_var = operand_def(FloatTensor)
    output = result_def(FloatTensor)
    batch_mean = result_def(FloatTensor)
    batch_invstd = result_def(FloatTensor)
    new_running_mean = result_def(FloatTensor)
    new_running_var = result_def(FloatTensor)
    momentum = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(BATCHNORM_MOMENTUM, f32))
    eps = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(BATCHNORM_EPS, f32))

    PER_CHANNEL: ClassVar[tuple[str, ...]] = ("gamma", "beta", "running_mean", "running_var")

    def __init__(
        self,
        input: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        running_mean: SSAValue,
        running_var: SSAValue,
        momentum: float = BATCHNORM_MOMENTUM,
        eps: float = BATCHNORM_EPS,
    ):
        properties = {"momentum": FloatAttr(momentum, f32), "eps": FloatAttr(eps, f32)}
        super().__init__([input, gamma, beta, running_mean, running_var], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        momentum = self.momentum.value.data
        if not 0 <= momentum <= 1:
            raise VerifyException(f"{self.name}: momentum must be in [0, 1], got {momentum}")
        _eps_ok(self, self.eps)
        input_type, channel_type = self.input_and_channel_types()
        shape = shape_of(input_type)
        if (count := values_per_channel(shape)) is not None and count < 2:
            raise VerifyException(
                f"{self.name}: input ({format_shape(shape)}) has {count} value per channel; "
                "training needs at least 2 (the running variance is unbiased, a sum over M - 1)"
            )
        return [input_type, *[channel_type] * 4]


@irdl_op_definition
class BatchnormOp(TrainingBatchnormOp, HasEvalForm):
    """Batch normalisation in training mode, `torch.nn.functional.batch_norm(input,
    running_mean, running_var, gamma, beta, training=True, momentum, eps)` (Ioffe & Szegedy,
    2015), made pure: the running statistics are operands and their updates are results, as in
    PyTorch's functional `_native_batch_norm_legit_functional`, whose results this op has.

    The input is `[N, C]` or `[N, C, *]` (NCHW for images); per channel c, over the
    `M = N * H * W` values x of that channel:

        mean = sum(x) / M                            var = sum((x - mean)^2) / M   (biased)
        invstd = 1 / sqrt(var + eps)
        output = (x - mean) * scale + beta,  scale = gamma * invstd
        new_running_mean = (1 - momentum) * running_mean + momentum * mean
        new_running_var = (1 - momentum) * running_var + momentum * sum((x - mean)^2) / (M - 1)

    The running variance is updated with the unbiased variance, as PyTorch does, so M must be
    at least 2. Results: output (the input's type), the batch mean and invstd that
    `adir.batchnorm_grad` reads (PyTorch's `save_mean` and `save_invstd`: saving 2C values
    spares the backward pass a reduction over the input), and the new running mean and
    variance, which the IR stores back into their `adir.param`s. Defaults momentum 0.1 and
    eps 1e-5, as PyTorch's; momentum is in [0, 1] (PyTorch's cumulative average, momentum =
    None, is not supported). For a batchnorm without affine parameters pass gamma = 1 and
    beta = 0 constants.
    """

    name = "adir.batchnorm"
    traits = traits_def(
        Pure(),
        Recomputable(("running_mean", "new_running_mean"), ("running_var", "new_running_var")),
        WritesResultOver(("new_running_mean", "running_mean"), ("new_running_var", "running_var")),
    )

    def eval_form(self) -> EvalForm:
        """Normalised with the running statistics, which stay as they are."""
        affine = (self.gamma, self.beta)
        statistics = (self.running_mean, self.running_var)
        evaluated = BatchnormEvalOp(self.input, *affine, *statistics, self.eps.value.data)
        evaluated.result.name_hint = self.output.name_hint
        return EvalForm(ops=[evaluated], results=[evaluated.result])


@irdl_op_definition
class BatchnormEvalOp(ChannelStatsOp):
    """Batch normalisation in eval mode, `torch.nn.functional.batch_norm(..., training=False)`:
    each channel is normalised with the running statistics,

        output = (x - running_mean) * scale + beta,  scale = gamma / sqrt(running_var + eps)

    on an `[N, C]` or `[N, C, *]` input; the result has the input's type. Default eps 1e-5.
    """

    name = "adir.batchnorm_eval"
    input = operand_def(FloatTensor)
    gamma = operand_def(FloatTensor)
    beta = operand_def(FloatTensor)
    running_mean = operand_def(FloatTensor)
    running_var = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    eps = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(BATCHNORM_EPS, f32))
    # A per-channel affine, element by element: the result may overwrite its input when
    # nothing reads the input later (its own backward pass reads only the scale).
    traits = traits_def(Pure(), WritesResultOver(("result", "input")))

    PER_CHANNEL: ClassVar[tuple[str, ...]] = ("gamma", "beta", "running_mean", "running_var")

    def __init__(
        self,
        input: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        running_mean: SSAValue,
        running_var: SSAValue,
        eps: float = BATCHNORM_EPS,
    ):
        properties = {"eps": FloatAttr(eps, f32)}
        super().__init__([input, gamma, beta, running_mean, running_var], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        _eps_ok(self, self.eps)
        return [self.input_and_channel_types()[0]]


@irdl_op_definition
class BatchnormGradOp(ChannelStatsOp):
    """The backward of `adir.batchnorm` (training mode), PyTorch's
    `native_batch_norm_backward(grad, input, gamma, ..., save_mean, save_invstd, train=True)`.
    Per channel, over its M values, with `xhat = (x - mean) * invstd`:

        beta_grad = sum(grad)                 gamma_grad = sum(grad * (x - mean)) * invstd
        input_grad = (grad - beta_grad / M - (x - mean) * invstd^2 * sum(grad * (x - mean)) / M)
                     * gamma * invstd

    Operands: the forward input, gamma, the batch mean and invstd the forward op returned, and
    the adjoint of its output; results: the adjoints of input, gamma and beta.
    """

    name = "adir.batchnorm_grad"
    input = operand_def(FloatTensor)
    gamma = operand_def(FloatTensor)
    batch_mean = operand_def(FloatTensor)
    batch_invstd = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    input_grad = result_def(FloatTensor)
    gamma_grad = result_def(FloatTensor)
    beta_grad = result_def(FloatTensor)
    traits = traits_def(Pure(), NotDifferentiable("a gradient op: autodiff emits it"))

    PER_CHANNEL: ClassVar[tuple[str, ...]] = ("gamma", "batch_mean", "batch_invstd")

    def __init__(
        self,
        input: SSAValue,
        gamma: SSAValue,
        batch_mean: SSAValue,
        batch_invstd: SSAValue,
        grad: SSAValue,
    ):
        super().__init__([input, gamma, batch_mean, batch_invstd, grad])

    def infer_result_types(self) -> Sequence[Attribute]:
        input_type, channel_type = self.input_and_channel_types()
        if not is_compatible(input_type, self.grad.type):
            raise VerifyException(
                f"{self.name}: operands input ({format_shape(shape_of(input_type))}) and grad "
                f"({format_shape(self.operand_shape(4))}) must have the same shape"
            )
        return [refine(input_type, self.grad.type), channel_type, channel_type]


# --- batchnorm fused with the relu after it (fuse-batchnorm-relu) ---------------------------


@irdl_op_definition
class BatchnormReluOp(TrainingBatchnormOp):
    """`adir.batchnorm` (training mode) whose output goes through `adir.relu`, in one op:

        output = relu((x - mean) * scale + beta)   (scale, the statistics: adir.batchnorm)

    with the batchnorm's other four results (batch mean and invstd, new running statistics)
    as they are. `fuse-batchnorm-relu` makes it where the batchnorm's output has no other use,
    so the normalised tensor is never written (one pass over the activations instead of two).
    The relu is `x < 0 ? 0 : x` of the affine value, as `adir.relu`.
    """

    name = "adir.batchnorm_relu"
    traits = traits_def(
        Pure(),
        NotDifferentiable("a fusion that fuse-batchnorm-relu makes after autodiff"),
        WritesResultOver(("new_running_mean", "running_mean"), ("new_running_var", "running_var")),
    )


@irdl_op_definition
class BatchnormReluGradOp(ChannelStatsOp):
    """`adir.batchnorm_grad` of a `adir.batchnorm_relu`, with the relu's gradient in it:

        g = y <= 0 ? 0 : grad,   y = (x - mean) * scale + beta,   scale = gamma * invstd
        (input_grad, gamma_grad, beta_grad) = batchnorm_grad(x, gamma, mean, invstd, g)

    y is the forward's affine value, recomputed from the forward's own input, gamma, beta and
    its batch mean and invstd by the forward's expression (so bit for bit the value the relu
    saw): `y <= 0` is where `adir.relu_grad` of the relu's output, or `adir.mask_grad` of its
    `adir.relu_mask`, gives 0 (relu(y) <= 0 exactly where y <= 0, a nan passing grad in
    both). `fuse-batchnorm-relu` makes it where the relu's gradient has no other use, so that
    gradient is never written and the relu's output is not read again.
    """

    name = "adir.batchnorm_relu_grad"
    input = operand_def(FloatTensor)
    gamma = operand_def(FloatTensor)
    beta = operand_def(FloatTensor)
    batch_mean = operand_def(FloatTensor)
    batch_invstd = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    input_grad = result_def(FloatTensor)
    gamma_grad = result_def(FloatTensor)
    beta_grad = result_def(FloatTensor)
    traits = traits_def(Pure(), NotDifferentiable("a gradient op: fuse-batchnorm-relu makes it"))

    PER_CHANNEL: ClassVar[tuple[str, ...]] = ("gamma", "beta", "batch_mean", "batch_invstd")

    def __init__(
        self,
        input: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        batch_mean: SSAValue,
        batch_invstd: SSAValue,
        grad: SSAValue,
    ):
        super().__init__([input, gamma, beta, batch_mean, batch_invstd, grad])

    def infer_result_types(self) -> Sequence[Attribute]:
        input_type, channel_type = self.input_and_channel_types()
        if not is_compatible(input_type, self.grad.type):
            raise VerifyException(
                f"{self.name}: operands input ({format_shape(shape_of(input_type))}) and grad "
                f"({format_shape(self.operand_shape(5))}) must have the same shape"
            )
        return [refine(input_type, self.grad.type), channel_type, channel_type]


# --- dropout -------------------------------------------------------------------------------

STEP_TYPES = (f32, i32, i64)


class DropoutMaskOp(TensorOp):
    """`result = values * m`, elementwise, with the dropout mask `m` of (seed, step, p): see
    `DropoutOp`. Subclasses name the two operands."""

    result = result_def(FloatTensor)
    p = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.5, f32))
    seed = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())

    def __init__(self, values: SSAValue, step: SSAValue, seed: int, p: float = 0.5):
        super().__init__([values, step], {"p": FloatAttr(p, f32), "seed": IntegerAttr(seed, i64)})

    def infer_result_types(self) -> Sequence[Attribute]:
        p, seed = self.p.value.data, self.seed.value.data
        if not 0 <= p <= 1:
            raise VerifyException(f"{self.name}: p must be in [0, 1], got {p}")
        if seed < 0:
            raise VerifyException(f"{self.name}: seed must not be negative, got {seed}")
        step_type = self.operands[1].type
        step_shape = shape_of(step_type)
        if element_type(step_type) not in STEP_TYPES or step_shape not in ((), None):
            raise VerifyException(
                f"{self.name}: operand step must be a tensor<i32>, tensor<i64> or tensor<f32> "
                f"scalar, got {step_type}"
            )
        return [self.operands[0].type]


@irdl_op_definition
class DropoutOp(DropoutMaskOp, HasEvalForm):
    """Dropout in training mode, `torch.nn.functional.dropout(input, p, training=True)` with
    adir's random numbers: `output = input * m`, elementwise, where element i (row-major) has

        m_i = 1 / (1 - p)  if uniform(s, i) >= p,  else 0       (p = 1: m = 0 everywhere)
        s = raw(seed, c)

    `uniform` and `raw` are adir's counter-based generator (`adir.interpreter.prng`), and c is
    the 64-bit counter of the operand `step`, a scalar the caller passes for each training step
    (a loop counter, or an `adir.param` it increments): for an i32 or i64 step its value
    (two's complement, so -1 is 2^64 - 1), for an f32 step its IEEE bit pattern (an f32 counter
    incremented by 1 stops changing at 2^24). So a mask is a function of (seed, step) alone:
    each step draws a new mask, the same step draws the same one (the backward op recomputes
    it, nothing is saved), and two dropouts with different seeds draw unrelated ones. Element
    i is kept with probability 1 - p (to within 2^-24), as in PyTorch, though with other bits.
    `p` defaults to 0.5, as PyTorch's; p = 0 is the identity. `seed` is required (two dropouts
    with one seed would drop the same elements) and non-negative. Multiplying by m, like
    PyTorch, propagates nan and inf through dropped elements too. In eval mode dropout is the
    identity, so an inference function has no `adir.dropout`.
    """

    name = "adir.dropout"
    traits = traits_def(Recomputable())
    input = operand_def(FloatTensor)
    step = operand_def(AnyTensor)

    def eval_form(self) -> EvalForm:
        return EvalForm(results=[self.input])  # the identity


@irdl_op_definition
class DropoutGradOp(DropoutMaskOp):
    """The backward of `adir.dropout`: `input_grad = grad * m`, with the mask `m` of the
    forward op recomputed from the same seed, step and p (a dropout is a diagonal linear map,
    so its adjoint applies the same mask)."""

    name = "adir.dropout_grad"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    grad = operand_def(FloatTensor)
    step = operand_def(AnyTensor)


# --- layer norm ------------------------------------------------------------------------------

LAYER_NORM_EPS = 1e-5


def _normalized_shape(op: TensorOp) -> tuple[int, ...]:
    """The op's `normalized_shape`: one or more positive dims."""
    dims = tuple(int(d) for d in op.normalized_shape.get_values())  # type: ignore[attr-defined]
    if not dims or any(d < 1 for d in dims):
        raise VerifyException(
            f"{op.name}: normalized_shape must be one or more positive dims, got "
            f"[{', '.join(str(d) for d in dims)}]"
        )
    return dims


def _split_normalized(op: TensorOp, operand: str, shape: Shape) -> Dims | None:
    """The leading (batch) dims of a `[*, *normalized_shape]` operand (None if unranked),
    checking that its trailing dims are the normalized shape."""
    dims = _normalized_shape(op)
    if shape is None:
        return None
    trailing = shape[len(shape) - len(dims) :]
    if len(shape) < len(dims) or not all(
        d is None or d == n for d, n in zip(trailing, dims, strict=True)
    ):
        raise VerifyException(
            f"{op.name}: operand {operand} ({format_shape(shape)}) does not end in the "
            f"normalized shape ({format_shape(dims)})"
        )
    return shape[: len(shape) - len(dims)]


def _affine_operand(op: TensorOp, operand: str, value: SSAValue) -> None:
    """A weight or bias (or their adjoints) has exactly the normalized shape."""
    dims, shape = _normalized_shape(op), shape_of(value.type)
    if shape is not None and (
        len(shape) != len(dims)
        or not all(d is None or d == n for d, n in zip(shape, dims, strict=True))
    ):
        raise VerifyException(
            f"{op.name}: operand {operand} ({format_shape(shape)}) must have the normalized "
            f"shape ({format_shape(dims)})"
        )


def _normalized_types(op: TensorOp, operand: str, value: SSAValue) -> tuple[Attribute, Attribute]:
    """(the full type, the type of the per-row statistics) of a `[*, *normalized_shape]`
    operand, its normalized dims filled in from the property."""
    leading = _split_normalized(op, operand, shape_of(value.type))
    if leading is None:
        return tensor_type(f32, None), tensor_type(f32, None)
    return tensor_type(f32, (*leading, *_normalized_shape(op))), tensor_type(f32, leading)


@irdl_op_definition
class LayerNormOp(TensorOp):
    """Layer normalisation (Ba, Kiros & Hinton, 2016), PyTorch's `native_layer_norm(input,
    normalized_shape, weight, bias, eps)`: each row of the input's trailing
    `normalized_shape` dims (D values) is normalised by its own statistics,

        mean = sum(x) / D          var = sum((x - mean)^2) / D   (biased)
        rstd = 1 / sqrt(var + eps)
        output = (x * rstd - mean * rstd) * weight + bias

    for an input `[*, *normalized_shape]`. The affine operands are optional and elementwise
    over the normalized dims: none (`elementwise_affine=False`), a weight (`bias=False`), or a
    weight and a bias, each of shape `normalized_shape` (a bias without a weight is a weight
    of ones). Results: output (the input's type), and the mean and rstd of each row (shape
    `*`, the input's leading dims), which `adir.layer_norm_grad` reads, as PyTorch's backward
    reads what its forward saved. Default eps 1e-5, as PyTorch's. The op is the same in
    training and in inference.
    """

    name = "adir.layer_norm"
    input = operand_def(FloatTensor)
    # 0, 1 or 2 values: the weight, then the bias. One variadic operand rather than two
    # optional ones, which IRDL tells apart only by an operandSegmentSizes property.
    affine = var_operand_def(FloatTensor)
    output = result_def(FloatTensor)
    mean = result_def(FloatTensor)
    rstd = result_def(FloatTensor)
    normalized_shape = prop_def(DenseArrayBase[I64])
    eps = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(LAYER_NORM_EPS, f32))
    # A row is read whole (its statistics) before any of it is written, and row by row, so the
    # output may be written over the input. A few passes over the data: recomputable.
    traits = traits_def(Pure(), Recomputable(), WritesResultOver(("output", "input")))

    def __init__(
        self,
        input: SSAValue,
        normalized_shape: Sequence[int],
        weight: SSAValue | None = None,
        bias: SSAValue | None = None,
        eps: float = LAYER_NORM_EPS,
    ):
        if bias is not None and weight is None:
            raise ValueError("adir.layer_norm: a bias needs a weight (pass a weight of ones)")
        affine = [v for v in (weight, bias) if v is not None]
        properties = {
            "normalized_shape": DenseArrayBase.from_list(i64, list(normalized_shape)),
            "eps": FloatAttr(eps, f32),
        }
        super().__init__([input, affine], properties)

    @property
    def weight(self) -> SSAValue | None:
        return self.affine[0] if len(self.affine) > 0 else None

    @property
    def bias(self) -> SSAValue | None:
        return self.affine[1] if len(self.affine) > 1 else None

    def infer_result_types(self) -> Sequence[Attribute]:
        _eps_ok(self, self.eps)
        if len(self.affine) > 2:
            raise VerifyException(
                f"{self.name}: expected at most 2 affine operands (weight, bias), got "
                f"{len(self.affine)}"
            )
        for operand, value in zip(("weight", "bias"), self.affine, strict=False):
            _affine_operand(self, operand, value)
        full, rows = _normalized_types(self, "input", self.input)
        return [full, rows, rows]


@irdl_op_definition
class LayerNormGradOp(TensorOp):
    """The backward of `adir.layer_norm`, PyTorch's `native_layer_norm_backward`, from the
    forward's input, the mean and rstd it returned, the output's adjoint `grad` and the weight
    (if the forward has one). Per row, over its D values, with g = weight (1 without one) and
    d = x - mean:

        dot = sum(grad * g * d)      db = sum(grad * g)
        input_grad = rstd * grad * g - (dot * rstd^3 / D) * d - db * rstd / D
        weight_grad = sum over rows of grad * (x * rstd - mean * rstd)
        bias_grad = sum over rows of grad

    This is the formula of PyTorch's CPU kernel (`layer_norm_backward_frame`: `ds = sum(grad *
    g * x)`, `b = (db * mean - ds) * rstd^3 / D`, `c = -b * mean - db * rstd / D`, `input_grad =
    rstd * grad * g + b * x + c`) with `ds - db * mean` summed as one `dot` over `x - mean`
    and `b * x + c` as `b * d - db * rstd / D`, as `adir.batchnorm_grad` does: the same
    numbers in exact arithmetic, but in float32 PyTorch's two large sums cancel when a row's
    mean is large beside its spread, and what is left of them depends on the order of
    summation (with PyTorch's form, the C's running sums and numpy's pairwise ones gave input
    adjoints 2.5e-5 apart, relative, on test_c_layer_norm.py's rows); summed over x - mean,
    they agree to rounding.

    Results: the adjoints of the input, the weight and the bias (the last two of shape
    `normalized_shape`; where the forward has no weight or bias they are those of a weight of
    ones and a bias of zeros, and unused).

    One op, not a composition of elementwise ops and sums, for memory as much as for speed:
    the backward reads only what the forward saved, the input (alive for the backward pass in
    either form) and 2 floats per row (mean and rstd), and needs no transient buffer of the
    input's size. A composition would keep the normalised input (or recompute it into a new
    buffer) and take several input-sized temporaries for `grad * g`, its products and the
    broadcast row statistics. The weight and bias adjoints are sums over rows that the same
    pass computes, so they are results of this op rather than separate reductions that would
    need the normalised input again.
    """

    name = "adir.layer_norm_grad"
    input = operand_def(FloatTensor)
    mean = operand_def(FloatTensor)
    rstd = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    weight = opt_operand_def(FloatTensor)
    input_grad = result_def(FloatTensor)
    weight_grad = result_def(FloatTensor)
    bias_grad = result_def(FloatTensor)
    normalized_shape = prop_def(DenseArrayBase[I64])
    # Row by row, the kernel reads a row of grad and input whole before it writes that row of
    # input_grad: input_grad may be written over either.
    traits = traits_def(
        Pure(),
        NotDifferentiable("a gradient op: autodiff emits it"),
        WritesResultOver(("input_grad", "grad"), ("input_grad", "input")),
    )

    def __init__(
        self,
        input: SSAValue,
        mean: SSAValue,
        rstd: SSAValue,
        grad: SSAValue,
        normalized_shape: Sequence[int],
        weight: SSAValue | None = None,
    ):
        properties = {"normalized_shape": DenseArrayBase.from_list(i64, list(normalized_shape))}
        super().__init__([input, mean, rstd, grad, weight], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        full, rows = _normalized_types(self, "input", self.input)
        grad_full, _ = _normalized_types(self, "grad", self.grad)
        for operand, value in (("mean", self.mean), ("rstd", self.rstd)):
            if not is_compatible(value.type, rows):
                raise VerifyException(
                    f"{self.name}: operand {operand} ({format_shape(shape_of(value.type))}) "
                    f"must have the input's leading dims ({format_shape(shape_of(rows))})"
                )
        if not is_compatible(full, grad_full):
            raise VerifyException(
                f"{self.name}: operands input ({format_shape(shape_of(full))}) and grad "
                f"({format_shape(shape_of(grad_full))}) must have the same shape"
            )
        if self.weight is not None:
            _affine_operand(self, "weight", self.weight)
        affine = tensor_type(f32, _normalized_shape(self))
        return [refine(full, grad_full), affine, affine]


NORMALIZATION_OPS: list[type] = [
    BatchnormOp,
    BatchnormEvalOp,
    BatchnormGradOp,
    BatchnormReluOp,
    BatchnormReluGradOp,
    DropoutOp,
    DropoutGradOp,
    LayerNormOp,
    LayerNormGradOp,
]
