"""VJP rules of the conv_and_pool family: conv2d's input and weight adjoints and the pools'
are dedicated gradient ops (PyTorch's backward kernels, see
adir/dialects/tensor/conv_and_pool.py) with the forward op's properties, plus the forward
shape they cannot recover (`input_size`, `kernel_size`); conv2d's bias and
global_avgpool2d's input take compositions."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import conv_and_pool as cp
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


@vjp(cp.Conv2dOp)
def conv2d(b: BackwardBuilder, op: cp.Conv2dOp, dy: SSAValue) -> Adjoints:
    params = op.conv_parameters()
    input_size = static_shape(op.input)[2:]
    kernel_size = static_shape(op.weight)[2:]
    dx = b.emit(cp.Conv2dGradInputOp(dy, op.weight, input_size, **params))
    dw = b.emit(cp.Conv2dGradWeightOp(op.input, dy, kernel_size, **params))
    if op.bias is None:
        return [dx, dw]
    # y[n, o, h, w] = ... + bias[o]: the bias's adjoint sums dy over all but the channels.
    return [dx, dw, b.sum(dy, [0, 2, 3])]


@vjp(cp.Conv1dOp)
def conv1d(b: BackwardBuilder, op: cp.Conv1dOp, dy: SSAValue) -> Adjoints:
    params = op.conv1d_parameters()
    dx = b.emit(cp.Conv1dGradInputOp(dy, op.weight, static_shape(op.input)[2:], **params))
    dw = b.emit(cp.Conv1dGradWeightOp(op.input, dy, static_shape(op.weight)[2:], **params))
    if op.bias is None:
        return [dx, dw]
    return [dx, dw, b.sum(dy, [0, 2])]


@vjp(cp.Maxpool2dOp)
def maxpool2d(b: BackwardBuilder, op: cp.Maxpool2dOp, dy: SSAValue) -> Adjoints:
    # The argmax is recomputed from the input; no indices are saved.
    return [b.emit(cp.Maxpool2dGradOp(op.input, dy, **op.pool_parameters()))]


@vjp(cp.Avgpool2dOp)
def avgpool2d(b: BackwardBuilder, op: cp.Avgpool2dOp, dy: SSAValue) -> Adjoints:
    input_size = static_shape(op.input)[2:]
    include = bool(op.count_include_pad.value.data)
    params = op.pool_parameters()
    return [b.emit(cp.Avgpool2dGradOp(dy, input_size, count_include_pad=include, **params))]


@vjp(cp.GlobalAvgpool2dOp)
def global_avgpool2d(b: BackwardBuilder, op: cp.GlobalAvgpool2dOp, dy: SSAValue) -> Adjoints:
    # The mean over H * W pixels: each pixel gets dy / (H * W).
    shape = static_shape(op.input)
    share = b.div(dy, b.constant(float(shape[2] * shape[3])))
    return [b.broadcast_to(share, shape)]
