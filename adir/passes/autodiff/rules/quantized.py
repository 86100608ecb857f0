"""VJP rules of the quantized family (level 2 of quantized training,
docs/quantized_training.md). The adjoints of int8 values are f32 in integer units: the gradient
with respect to the integer q, so that for `x = s (q - z)`, `dL/dq = s dL/dx`.

- `dequantize`: dq = s dx.
- `quantize`: straight through the rounding, dx = dq / s where the clamp to [-128, 127] is not
  active (round(x / s) + z within it: x / s in (-128.5 - z, 127.5 - z)), else 0.
- `qconv2d`, `qfully_connected`: the accumulator's adjoint `qrequantize_grad` (the real
  multiplier where the output lies strictly inside its clamp), then the input's adjoint by
  `qgrad_input` on the int8 weight itself (W_bar, no float copy of it; a conv whose weight
  trains uses the float conv gradient from the weight dequantized at scale 1, sharing the NCHW
  adjoint with the weight's gradient), the weight's by the float convolution or matmul
  gradient from the int8 input dequantized at scale 1 where it is read (x - z_x): nothing but
  the int8 input and output is kept for them.
- `qreshape`, `qtranspose`: the adjoint reshaped, transposed back.

A broadcast adjoint (a global average pool's) stays a broadcast through `dequantize` and
`qtranspose`: they scale and transpose the small tensor, then spread it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import SSAValue

from adir.dialects.tensor import conv_and_pool as cp
from adir.dialects.tensor import data_movement as dm
from adir.dialects.tensor import matmul as mm
from adir.dialects.tensor import quantized as q
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp

TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)
OHWI_TO_OIHW, DEPTHWISE_TO_OIHW = (0, 3, 1, 2), (3, 0, 1, 2)  # [1, KH, KW, O] -> [O, 1, KH, KW]
OIHW_TO_OHWI, OIHW_TO_DEPTHWISE = (0, 2, 3, 1), (1, 2, 3, 0)


def broadcast_source(value: SSAValue) -> SSAValue | None:
    """What `value` broadcasts, if it is an `adir.broadcast_to` of a tensor of its rank (a
    global average pool's adjoint: one value per channel, spread over the image)."""
    owner = value.owner
    if isinstance(owner, dm.BroadcastToOp) and len(static_shape(owner.input)) == len(
        static_shape(value)
    ):
        return owner.input
    return None


@vjp(q.DequantizeOp)
def dequantize(b: BackwardBuilder, op: q.DequantizeOp, dy: SSAValue) -> Adjoints:
    # A broadcast adjoint is scaled before it is spread: the same products, and no second
    # image-sized buffer for the scaled copy.
    scale = b.constant(op.scale.value.data)
    if (source := broadcast_source(dy)) is not None:
        return [b.broadcast_to(b.mul(source, scale), static_shape(dy))]
    return [b.mul(dy, scale)]


@vjp(q.QuantizeOp)
def quantize(b: BackwardBuilder, op: q.QuantizeOp, dy: SSAValue) -> Adjoints:
    scale, zero_point = op.scale.value.data, op.zero_point.value.data
    scaled = b.div(op.input, b.constant(scale))
    low = b.cmp("gt", scaled, b.constant(-128.5 - zero_point))
    high = b.cmp("lt", scaled, b.constant(127.5 - zero_point))
    zeros = b.constant(0.0, static_shape(op.input))
    through = b.div(dy, b.constant(scale))
    return [b.select(low, b.select(high, through, zeros), zeros)]


def accumulator_adjoint(b: BackwardBuilder, op: q.RequantizingOp, dy: SSAValue) -> SSAValue:
    return b.emit(
        q.QRequantizeGradOp(
            op.results[0],
            dy,
            q.int_values(op.multiplier),
            q.int_values(op.shift),
            op.act_min.value.data,
            op.act_max.value.data,
        )
    )


def at_scale_one(b: BackwardBuilder, value: SSAValue, zero_point: int) -> SSAValue:
    """The int8 `value` less its zero point, as f32 (exact)."""
    return b.emit(q.DequantizeOp(value, 1.0, zero_point))


def relayout(b: BackwardBuilder, value: SSAValue, permutation: tuple[int, ...]) -> SSAValue:
    return b.emit(q.QTransposeOp(value, permutation))


@vjp(q.QConv2dOp)
def qconv2d(b: BackwardBuilder, op: q.QConv2dOp, dy: SSAValue) -> Adjoints:
    stride, padding, dilation = op.window()
    groups = op.groups.value.data
    params = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    acc_nhwc = accumulator_adjoint(b, op, dy)
    # The bias's gradient sums the NHWC adjoint over all but its channel axis. A frozen weight
    # (int8, in flash) is read as it is by the input's gradient (qgrad_input, NHWC): no float
    # copy of it or of the adjoint. A trained weight's float gradient reads the adjoint NCHW,
    # and the input's gradient then shares that copy (one adjoint-sized buffer, not two).
    db = b.sum(acc_nhwc, [0, 1, 2]) if b.wants(op.bias) else None
    if not b.wants(op.weight):
        dx = None
        if b.wants(op.input):
            size = static_shape(op.input)[1:3]
            properties = {
                name: op.properties[name] for name in ("stride", "padding", "dilation", "groups")
            }
            properties["input_size"] = DenseArrayBase.from_list(i64, size)
            dx = b.emit(q.QGradInputOp(acc_nhwc, op.weight, properties))
        return [dx, None, db]
    # A trained weight: both float gradients read the adjoint NCHW (one copy of it).
    acc = b.emit(dm.TransposeOp(acc_nhwc, TO_NCHW))
    to_oihw = DEPTHWISE_TO_OIHW if op.is_depthwise else OHWI_TO_OIHW
    from_oihw = OIHW_TO_DEPTHWISE if op.is_depthwise else OIHW_TO_OHWI
    dx = None
    if b.wants(op.input):
        weight = at_scale_one(b, relayout(b, op.weight, to_oihw), 0)
        size = static_shape(op.input)[1:3]
        dx = b.emit(
            dm.TransposeOp(b.emit(cp.Conv2dGradInputOp(acc, weight, size, **params)), TO_NHWC)
        )
    image = at_scale_one(b, relayout(b, op.input, TO_NCHW), op.input_zero_point.value.data)
    kernel = static_shape(op.weight)[1:3]
    dw = b.emit(
        dm.TransposeOp(b.emit(cp.Conv2dGradWeightOp(image, acc, kernel, **params)), from_oihw)
    )
    return [dx, dw, db]


@vjp(q.QFullyConnectedOp)
def qfully_connected(b: BackwardBuilder, op: q.QFullyConnectedOp, dy: SSAValue) -> Adjoints:
    acc = accumulator_adjoint(b, op, dy)
    dx = dw = db = None
    if b.wants(op.input):
        dx = b.emit(q.QGradInputOp(acc, op.weight))
    if b.wants(op.weight):
        image = at_scale_one(b, op.input, op.input_zero_point.value.data)
        dw = b.emit(mm.MatmulOp(acc, image, transpose_a=True))
    if b.wants(op.bias):
        db = b.sum(acc, [0])
    return [dx, dw, db]


@vjp(q.QReshapeOp)
def qreshape(b: BackwardBuilder, op: q.QReshapeOp, dy: SSAValue) -> Adjoints:
    return [b.reshape(dy, static_shape(op.input))]


@vjp(q.QTransposeOp)
def qtranspose(b: BackwardBuilder, op: q.QTransposeOp, dy: SSAValue) -> Adjoints:
    permutation = q.int_values(op.permutation)
    inverse = tuple(permutation.index(axis) for axis in range(len(permutation)))
    # The transpose of a broadcast is the broadcast of the small tensor transposed: the same
    # values, without the image-sized adjoint and its transposed copy live at once (the NCHW
    # float pool after an NHWC int8 layer, whose adjoint is a broadcast).
    if (source := broadcast_source(dy)) is not None:
        shape = static_shape(op.input)
        return [b.broadcast_to(b.emit(dm.TransposeOp(source, inverse)), shape)]
    return [b.emit(dm.TransposeOp(dy, inverse))]
