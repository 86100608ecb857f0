"""C calls of the quantized family's kernels (runtime: adir_quantized.c).

The requantizing kernels get their multipliers and shifts as `static const int32_t` tables and
a flag saying whether there is one per output channel or one for all. Images are NHWC; the
window kernels take the image's sizes, the output's, the window (kernel, stride, top and left
padding; dilation for conv) and, for conv, whether it is depthwise.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IntegerAttr

from adir.backends.c.calls import CallSite, c_float, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import quantized as q


def ints(op: KernelOp, prop: str) -> list[int]:
    array = op.properties[prop]
    assert isinstance(array, DenseArrayBase)
    return [int(v) for v in array.get_values()]


def scalar(op: KernelOp, prop: str) -> int:
    attr = op.properties[prop]
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def requantization(op: KernelOp, site: CallSite) -> list[object]:
    """input and output zero points, multiplier and shift tables, per_channel, act range."""
    multiplier, shift = ints(op, "multiplier"), ints(op, "shift")
    return [
        scalar(op, "input_zero_point"),
        scalar(op, "output_zero_point"),
        site.table(multiplier),
        site.table(shift),
        int(len(multiplier) > 1),
        scalar(op, "act_min"),
        scalar(op, "act_max"),
    ]


@emits(q.QuantizeOp, q.DequantizeOp)
def scale(op: KernelOp, site: CallSite) -> str:
    scale_attr = op.properties["scale"]
    value = scale_attr.value.data  # type: ignore[attr-defined]
    size = f"{site.out_size()}u"
    return site.call(
        site.kernel, site.input(0), site.output(), size, c_float(value), scalar(op, "zero_point")
    )


@emits(q.QFullyConnectedOp)
def qfully_connected(op: KernelOp, site: CallSite) -> str:
    batch, in_features = site.in_shape(0)
    out_features = site.in_shape(1)[0]
    return site.call(
        "qfully_connected",
        *site.buffers(),
        batch,
        in_features,
        out_features,
        *requantization(op, site),
    )


@emits(q.QConv2dOp)
def qconv2d(op: KernelOp, site: CallSite) -> str:
    image, weight, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    top, _, left, _ = ints(op, "padding")
    if site.ins[0] is site.outs[0]:  # bufferize wrote it over its input (`in_place`)
        if len(site.outs) != 2:
            raise site.error("in place without its plane (a scratch buffer): run select-kernels")
        return site.call(
            "qdepthwise_in_place",
            site.input(0),
            site.input(1),
            site.input(2),
            site.output(1),
            *image,
            *weight[1:3],
            top,
            left,
            *ints(op, "dilation"),
            *requantization(op, site),
        )
    depthwise = int(scalar(op, "groups") != 1)
    return site.call(
        "qconv2d",
        *site.buffers(),
        *image,
        *out[1:],
        *weight[1:3],
        *ints(op, "stride"),
        top,
        left,
        *ints(op, "dilation"),
        depthwise,
        *requantization(op, site),
    )


@emits(q.QExpandDepthwiseOp)
def qexpand_depthwise(op: KernelOp, site: CallSite) -> str:
    """The plane is the scratch buffer that select-kernels adds (the last `outs`)."""
    if len(site.outs) != 2:
        raise site.error("its plane (a scratch buffer) is missing: run select-kernels first")
    image, weight, out = site.in_shape(0), site.in_shape(3), site.out_shape()
    top, _, left, _ = ints(op, "padding")
    expand_multiplier, expand_shift = ints(op, "expand_multiplier"), ints(op, "expand_shift")
    multiplier, shift = ints(op, "multiplier"), ints(op, "shift")
    return site.call(
        "qexpand_depthwise",
        *site.buffers(),
        *image,
        *out[1:],
        *weight[1:3],
        *ints(op, "stride"),
        top,
        left,
        *ints(op, "dilation"),
        scalar(op, "input_zero_point"),
        scalar(op, "expand_zero_point"),
        scalar(op, "output_zero_point"),
        site.table(expand_multiplier),
        site.table(expand_shift),
        int(len(expand_multiplier) > 1),
        scalar(op, "expand_act_min"),
        scalar(op, "expand_act_max"),
        site.table(multiplier),
        site.table(shift),
        int(len(multiplier) > 1),
        scalar(op, "act_min"),
        scalar(op, "act_max"),
    )


@emits(q.QuantizeQConv2dOp)
def quantize_qconv2d(op: KernelOp, site: CallSite) -> str:
    """The window is the scratch buffer that select-kernels adds (the last `outs`)."""
    if len(site.outs) != 2:
        raise site.error("its window (a scratch buffer) is missing: run select-kernels first")
    image, weight, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    top, _, left, _ = ints(op, "padding")
    scale_attr = op.properties["input_scale"]
    return site.call(
        "quantize_qconv2d",
        *site.buffers(),
        *image,
        *out[1:],
        *weight[1:3],
        *ints(op, "stride"),
        top,
        left,
        *ints(op, "dilation"),
        c_float(scale_attr.value.data),  # type: ignore[attr-defined]
        *requantization(op, site),
    )


@emits(q.QMaxpool2dOp, q.QAvgpool2dOp)
def qpool2d(op: KernelOp, site: CallSite) -> str:
    image, out = site.in_shape(0), site.out_shape()
    top, _, left, _ = ints(op, "padding")
    return site.call(
        site.kernel,
        *site.buffers(),
        *image,
        *out[1:3],
        *ints(op, "kernel_size"),
        *ints(op, "stride"),
        top,
        left,
        scalar(op, "act_min"),
        scalar(op, "act_max"),
    )


@emits(q.QAddOp)
def qadd(op: KernelOp, site: CallSite) -> str:
    names = ("lhs_zero_point", "rhs_zero_point", "output_zero_point", "lhs_multiplier")
    names += ("lhs_shift", "rhs_multiplier", "rhs_shift", "multiplier", "shift", "left_shift")
    return site.call(
        "qadd",
        *site.buffers(),
        f"{site.out_size()}u",
        *(scalar(op, name) for name in (*names, "act_min", "act_max")),
    )


@emits(q.QLookupOp)
def qlookup(op: KernelOp, site: CallSite) -> str:
    return site.call("qlookup", *site.buffers(), f"{site.out_size()}u")


@emits(q.QReshapeOp)
def qreshape(op: KernelOp, site: CallSite) -> str:
    return site.call("qreshape", *site.buffers(), f"{site.out_size()}u")


@emits(q.QTransposeOp)
def qtranspose(op: KernelOp, site: CallSite) -> str:
    shape = site.in_shape(0)
    permutation = ints(op, "permutation")
    return site.call(
        "qtranspose", *site.buffers(), len(shape), site.table(shape), site.table(permutation)
    )


@emits(q.QSoftmaxOp)
def qsoftmax(op: KernelOp, site: CallSite) -> str:
    shape = site.in_shape(0)
    row_size = shape[-1]
    rows = site.out_size() // row_size if row_size else 0
    return site.call(
        "qsoftmax",
        *site.buffers(),
        rows,
        row_size,
        scalar(op, "multiplier"),
        scalar(op, "shift"),
        scalar(op, "diff_min"),
    )


@emits(q.QRequantizeGradOp)
def qrequantize_grad(op: KernelOp, site: CallSite) -> str:
    multiplier, shift = ints(op, "multiplier"), ints(op, "shift")
    shape = site.out_shape()
    return site.call(
        "qrequantize_grad",
        *site.buffers(),
        f"{site.out_size()}u",
        shape[-1],
        site.table(multiplier),
        site.table(shift),
        int(len(multiplier) > 1),
        scalar(op, "act_min"),
        scalar(op, "act_max"),
    )


@emits(q.QGradInputOp)
def qgrad_input(op: KernelOp, site: CallSite) -> str:
    grad, weight, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    if len(out) == 2:  # fully connected: a 1x1 convolution of a 1x1 image
        shapes = [out[0], 1, 1, out[1], 1, 1, grad[1]]  # [N, 1, 1, I] from [N, 1, 1, O]
        window = [1, 1, 1, 1, 0, 0, 1, 1]  # a 1x1 kernel, stride 1, no padding, dilation 1
        return site.call("qgrad_input", *site.buffers(), *shapes, *window, 0)
    top, _, left, _ = ints(op, "padding")
    return site.call(
        "qgrad_input",
        *site.buffers(),
        *out,
        *grad[1:],
        *weight[1:3],
        *ints(op, "stride"),
        top,
        left,
        *ints(op, "dilation"),
        int(scalar(op, "groups") != 1),
    )


@emits(q.QSgdUpdateOp)
def qsgd_update(op: KernelOp, site: CallSite) -> str:
    """The step scales go as their float32 bits in an int32 table (the kernel copies them back
    into floats), so the C multiplies by exactly the scales of the IR."""
    array = op.properties["step_scale"]
    assert isinstance(array, ArrayAttr)
    scales = np.array([float(v.value.data) for v in array.data], np.float32)
    shape = site.out_shape()
    axis = scalar(op, "axis")
    inner = math.prod(shape[axis + 1 :])
    width = "s8" if site.in_c_type(0) == "int8_t" else "s32"
    return site.call(
        f"qsgd_update_{width}",
        *site.buffers(),
        f"{site.out_size()}u",
        inner,
        shape[axis] if shape else 1,
        site.table(scales.view(np.int32).tolist()),
        int(scales.size > 1),
    )
