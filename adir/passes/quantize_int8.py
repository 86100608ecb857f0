"""`quantize-int8`: post-training int8 quantization of an inference function.

    adir-opt model.mlir -p 'derive-predict,quantize-int8{samples=32 seed=0}'
    adir-opt model.mlir -p 'derive-predict,quantize-int8{calibration="inputs.npy"}'

adds `@predict_int8`, the function `@predict` computed on int8 tensors with the quantized family
(`adir/dialects/tensor/quantized.py`), taking and returning what `@predict` does (f32): its
input is quantized on entry, its outputs dequantized on exit.

- Calibration: `@predict` runs in the interpreter on each calibration input (a .npy array of
  inputs stacked on a leading axis, or `samples` inputs drawn from a standard normal with
  `seed`); each f32 value's range [min(0, lo), max(0, hi)] over all of them gives its
  per-tensor scale = range / 255 and zero point (TFLite's asymmetric int8 activations).
- Weights are the parameters' values as written in the IR (initializer draws or dense data),
  symmetric: per output channel for convolutions, per tensor for fully-connected layers
  (TFLite's defaults; CMSIS-NN's arm_fully_connected_s8 takes one multiplier). Biases are int32
  at scale input_scale * weight_scale, and each output channel's rescale
  input_scale * weight_scale / output_scale is a fixed-point multiplier and shift
  (TFLite's QuantizeMultiplier).
- Folding, as TFLite's converter does: an eval-mode batchnorm after a conv goes into the conv's
  weights and bias, a bias `add` after a matmul into the fully-connected bias, and a ReLU or a
  clamp from 0 (ReLU6) after either into its clamp (act_min = the output's zero point, act_max
  = zero point + round(6 / scale) for ReLU6); the output is then calibrated at the end of the
  chain.
- conv2d (groups 1, or depthwise) -> qconv2d in NHWC; matmul by a parameter (2-D) ->
  qfully_connected; maxpool2d, avgpool2d without padding, global_avgpool2d -> the NHWC pools
  (output scale = input scale, as TFLite requires); reshape/flatten -> qreshape; an add of
  two int8 values of one shape -> qadd (TFLite's int8 ADD) (`INT8_RULES`); an op with the
  `Int8Lookup` trait (sigmoid, tanh, relu, clamp, hardswish, hardsigmoid) -> qlookup on a
  256-entry table of its function, to the output range the trait fixes (sigmoid to scale
  1/256, zero point -128, tanh to 1/128, 0, TFLite's fixed output quantization) or
  calibration gives; softmax over the last axis -> qsoftmax (beta 1, to scale
  1/256, zero point -128, TFLite's int8 SOFTMAX). Images enter NHWC through a qtranspose (a
  qreshape when the move only involves a dim of size 1) and leave it the same way.
- Any other op stays f32, fed by dequantize and feeding quantize (e.g. the MLP's final
  log_softmax): the function is int8 where the family can express it, and says where not.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i8,
    i32,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adir.diagnostics import OpError
from adir.dialects.tensor import activations as act
from adir.dialects.tensor import conv_and_pool as cp
from adir.dialects.tensor import data_movement as dm
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import matmul as mm
from adir.dialects.tensor import quantized as q
from adir.dialects.tensor.normalization import BatchnormEvalOp
from adir.dialects.tensor.params import LoadOp
from adir.dialects.tensor.traits import Int8Lookup
from adir.interpreter import Session
from adir.interpreter.arrays import exact_cast
from adir.interpreter.npy_files import read_npy
from adir.interpreter.params import initial_params
from adir.interpreter.quantized import (
    dequantize,
    quantize,
    quantize_multiplier,
    round_half_away,
    softmax_parameters,
)

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
ADD_LEFT_SHIFT = 20  # TFLite's int8 ADD: op_params.left_shift
TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def activation_params(lo: float, hi: float) -> tuple[float, int]:
    """Per-tensor asymmetric (scale, zero point) of a real range, widened to hold 0."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        return 1.0, 0  # a constant 0: any scale represents it
    scale = float(np.float32((hi - lo) / 255.0))
    zero_point = int(round_half_away(np.float64(-128 - lo / scale)))
    return scale, max(-128, min(127, zero_point))


def symmetric_weights(w: np.ndarray, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """int8 weights in [-127, 127] and their float32 scales, per slice along `axis` (None:
    one scale)."""
    if axis is None:
        peak = np.array([np.abs(w).max(initial=0.0)])
        scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        quantized = round_half_away(w / scales[0].astype(np.float64))
    else:
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        peak = np.abs(moved).max(axis=1, initial=0.0)
        scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        quantized = round_half_away(w / scales.astype(np.float64).reshape(shape))
    return np.clip(quantized, -127, 127).astype(np.int8), scales


def activation_range(activation: float | None, scale: float, zero_point: int) -> tuple[int, int]:
    """[act_min, act_max] of a fused relu (upper bound inf) or ReLU6 (6), TFLite's
    CalculateActivationRangeQuantized: from the zero point (the value 0) to zero point +
    round(upper / scale) (f32 division), within [-128, 127]; without one the whole range."""
    if activation is None:
        return -128, 127
    act_max = 127
    if math.isfinite(activation):
        top = round_half_away(np.float32(activation) / np.float32(scale))
        act_max = int(min(127, zero_point + top))
    return max(-128, zero_point), act_max


@dataclass
class QValue:
    """An int8 value of the new function: its scale, zero point and whether it is NHWC."""

    value: SSAValue
    scale: float
    zero_point: int
    nhwc: bool = False


@dataclass
class Quantizer:
    """Builds the int8 function op by op from the float one."""

    source: func.FuncOp
    params: dict[str, np.ndarray]
    ranges: dict[SSAValue, tuple[float, float]]
    # The ops that may become int8 (None: every op). quantize-frozen-prefix gives the frozen
    # prefix of a training step, so that nothing a trainable parameter reaches is quantized.
    int8_ops: set[Operation] | None = None
    block: Block = field(init=False)
    floats: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    ints: dict[SSAValue, QValue] = field(default_factory=dict[SSAValue, QValue])
    done: set[Operation] = field(default_factory=set[Operation])

    def __post_init__(self) -> None:
        types = self.source.function_type.inputs.data
        self.block = Block(arg_types=types)
        for old, new in zip(self.source.body.block.args, self.block.args, strict=True):
            new.name_hint = old.name_hint
            self.floats[old] = new

    def emit(self, op: Operation, origin: Operation, hint: SSAValue | None = None) -> Operation:
        op.location = origin.location
        if hint is not None and op.results:
            op.results[0].name_hint = hint.name_hint
        Rewriter.insert_op(op, InsertPoint.at_end(self.block))
        return op

    def constant(self, data: np.ndarray, element: object, origin: Operation) -> SSAValue:
        type_ = TensorType(element, data.shape)  # type: ignore[arg-type]
        attr = DenseIntOrFPElementsAttr.from_list(type_, data.reshape(-1).tolist())
        return self.emit(dm.ConstantOp(attr), origin).results[0]

    # -- values in either form ---------------------------------------------------------

    def param(self, value: SSAValue) -> np.ndarray | None:
        """The data of a loaded parameter, None for an activation."""
        owner = value.owner
        if isinstance(owner, LoadOp):
            return self.params[owner.param.root_reference.data]
        return None

    def float_of(self, value: SSAValue, origin: Operation) -> SSAValue:
        if value in self.floats:
            return self.floats[value]
        if isinstance(value.owner, LoadOp):
            load = value.owner.clone()
            self.emit(load, value.owner)
            self.floats[value] = load.results[0]
            return load.results[0]
        qv = self.plain(self.ints[value], origin)
        dq = self.emit(q.DequantizeOp(qv.value, qv.scale, qv.zero_point), origin, value)
        self.floats[value] = dq.results[0]
        return dq.results[0]

    def int_of(self, value: SSAValue, origin: Operation, nhwc: bool = False) -> QValue:
        if value not in self.ints:
            scale, zero_point = activation_params(*self.ranges[value])
            quantized = self.emit(
                q.QuantizeOp(self.float_of(value, origin), scale, zero_point), origin, value
            )
            self.ints[value] = QValue(quantized.results[0], scale, zero_point)
        qv = self.ints[value]
        if nhwc and not qv.nhwc:
            qv = QValue(self.relayout(qv.value, TO_NHWC, origin), qv.scale, qv.zero_point, True)
            self.ints[value] = qv
        return qv

    def plain(self, qv: QValue, origin: Operation) -> QValue:
        if not qv.nhwc:
            return qv
        return QValue(self.relayout(qv.value, TO_NCHW, origin), qv.scale, qv.zero_point)

    def relayout(
        self, value: SSAValue, permutation: tuple[int, ...], origin: Operation
    ) -> SSAValue:
        """A transpose, or a reshape when only dims of size 1 move (the same bytes)."""
        shape = value.type.get_shape()  # type: ignore[attr-defined]
        moved = [shape[p] for p in permutation]
        kept = [p for p in permutation if shape[p] != 1]
        if kept == sorted(kept):  # the dims of size > 1 keep their order
            op: Operation = q.QReshapeOp(value, moved)
        else:
            op = q.QTransposeOp(value, permutation)
        return self.emit(op, origin).results[0]

    def output_params(self, value: SSAValue) -> tuple[float, int]:
        return activation_params(*self.ranges[value])

    # -- fusion ------------------------------------------------------------------------

    def may_quantize(self, op: Operation) -> bool:
        return self.int8_ops is None or op in self.int8_ops

    def single_user(self, value: SSAValue, kind: type[Operation]) -> Operation | None:
        uses = list(value.uses)
        if len(uses) == 1 and isinstance(uses[0].operation, kind):
            return uses[0].operation if self.may_quantize(uses[0].operation) else None
        return None

    def fuse_activation(
        self, value: SSAValue, chain: list[Operation]
    ) -> tuple[SSAValue, float | None]:
        """A relu, or a clamp from 0 (ReLU6, ReLU-N), that alone reads `value`: fused into the
        layer's clamp as TFLite fuses RELU and RELU6. Returns the value the layer's int8 result
        stands for and the activation's upper bound (inf for a relu), None without one."""
        if (relu := self.single_user(value, act.ReluOp)) is not None:
            chain.append(relu)
            return relu.results[0], math.inf
        clamp = self.single_user(value, act.ClampOp)
        if clamp is not None and clamp.min.value.data == 0.0 and clamp.max.value.data > 0.0:
            chain.append(clamp)
            return clamp.results[0], clamp.max.value.data
        return value, None

    def requantize(
        self,
        in_scale: float,
        w_scales: np.ndarray,
        out: SSAValue,
        activation: float | None,
        in_zp: int,
    ) -> tuple[dict, float, int]:
        """The requantization properties; a fused activation clamps at TFLite's
        CalculateActivationRangeQuantized: from the zero point (the value 0) to
        zero point + round(upper / scale) (f32 division), within [-128, 127]."""
        scale, zero_point = self.output_params(out)
        pairs = [quantize_multiplier(float(in_scale) * float(ws) / float(scale)) for ws in w_scales]
        act_min, act_max = activation_range(activation, scale, zero_point)
        properties = q.RequantizingOp.requantize_properties(
            in_zp,
            zero_point,
            [m for m, _ in pairs],
            [s for _, s in pairs],
            act_min=act_min,
            act_max=act_max,
        )
        return properties, scale, zero_point

    def add(self, op: ew.AddOp) -> bool:
        """A sum of two int8 values of one shape: TFLite's int8 ADD (left shift 20, each input
        to the unit 2 max(s1, s2), the sum to the output's scale), a relu or ReLU6 after it
        fused into its clamp. An f32 operand, a broadcast, or an output scale below
        2 max(s1, s2) / 2^20 (a multiplier above 1, which TFLite's ADD refuses) stays f32."""
        lhs, rhs = op.lhs, op.rhs
        if lhs not in self.ints or rhs not in self.ints or lhs.type != rhs.type:
            return False
        nhwc = self.ints[lhs].nhwc or self.ints[rhs].nhwc
        a = self.int_of(lhs, op, nhwc) if nhwc else self.plain(self.ints[lhs], op)
        b = self.int_of(rhs, op, nhwc) if nhwc else self.plain(self.ints[rhs], op)
        chain: list[Operation] = []
        out, activation = self.fuse_activation(op.result, chain)
        scale, zero_point = self.output_params(out)
        twice_max = 2 * max(float(a.scale), float(b.scale))
        output = quantize_multiplier(twice_max / (2**ADD_LEFT_SHIFT * float(scale)))
        if output[1] > 0:
            return False
        lhs_m, lhs_s = quantize_multiplier(float(a.scale) / twice_max)
        rhs_m, rhs_s = quantize_multiplier(float(b.scale) / twice_max)
        act_min, act_max = activation_range(activation, scale, zero_point)
        properties = {
            "lhs_zero_point": a.zero_point,
            "rhs_zero_point": b.zero_point,
            "output_zero_point": zero_point,
            "lhs_multiplier": lhs_m,
            "lhs_shift": lhs_s,
            "rhs_multiplier": rhs_m,
            "rhs_shift": rhs_s,
            "multiplier": output[0],
            "shift": output[1],
            "left_shift": ADD_LEFT_SHIFT,
            "act_min": act_min,
            "act_max": act_max,
        }
        added = self.emit(q.QAddOp(a.value, b.value, properties), op, out)
        self.ints[out] = QValue(added.results[0], scale, zero_point, nhwc)
        self.done.update(chain)
        return True

    def bias(self, b: np.ndarray, in_scale: float, w_scales: np.ndarray) -> np.ndarray:
        scaled = b.astype(np.float64) / (float(in_scale) * w_scales.astype(np.float64))
        return np.clip(round_half_away(scaled), INT32_MIN, INT32_MAX).astype(np.int32)

    def layer_params(
        self,
        op: Operation,
        w_q: np.ndarray,
        b_q: np.ndarray,
        in_scale: float,
        w_scales: np.ndarray,
        axis: int,
    ) -> tuple[SSAValue, SSAValue]:
        """The int8 weight and int32 bias of a conv or fully-connected layer: constants here;
        level 2 of quantized training makes a trainable layer's integer parameters instead
        (`w_scales` per output channel, the channel along `axis` of `w_q`)."""
        return self.constant(w_q, i8, op), self.constant(b_q, i32, op)

    # -- the ops -----------------------------------------------------------------------

    def conv2d(self, op: cp.Conv2dOp) -> bool:
        w = self.param(op.weight)
        b = None if op.bias is None else self.param(op.bias)
        if w is None or (op.bias is not None and b is None):
            return False
        groups = op.groups.value.data
        channels = op.operand_shape(0)[1]  # type: ignore[index]
        depthwise = groups != 1 and groups == channels and w.shape[1] == 1
        if groups != 1 and not depthwise:
            return False
        b = np.zeros(w.shape[0], np.float32) if b is None else b
        chain: list[Operation] = []
        out = op.result
        if (bn := self.single_user(out, BatchnormEvalOp)) is not None:
            stats = [self.param(v) for v in bn.operands[1:]]
            if all(s is not None for s in stats):
                gamma, beta, mean, var = stats  # type: ignore[misc]
                factor = gamma / np.sqrt(var + np.float32(bn.eps.value.data))  # type: ignore[attr-defined]
                w = w * factor.reshape(-1, 1, 1, 1)
                b = (b - mean) * factor + beta
                chain.append(bn)
                out = bn.results[0]
        out, activation = self.fuse_activation(out, chain)
        x = self.int_of(op.input, op, nhwc=True)
        # OIHW -> OHWI, or for depthwise [O, 1, KH, KW] -> [1, KH, KW, O].
        w_q, w_scales = symmetric_weights(w, 0)
        w_q = w_q.transpose(1, 2, 3, 0) if depthwise else w_q.transpose(0, 2, 3, 1)
        props, scale, zero_point = self.requantize(x.scale, w_scales, out, activation, x.zero_point)
        props.update(
            {name: op.properties[name] for name in ("stride", "padding", "dilation", "groups")}
        )
        weight, bias = self.layer_params(
            op, w_q, self.bias(b, x.scale, w_scales), x.scale, w_scales, 3 if depthwise else 0
        )
        conv = q.QConv2dOp(x.value, weight, bias, props)
        self.emit(conv, op, out)
        self.ints[out] = QValue(conv.results[0], scale, zero_point, nhwc=True)
        self.done.update(chain)
        return True

    def matmul(self, op: mm.MatmulOp) -> bool:
        w = self.param(op.rhs)
        if w is None or op.transpose_a is not None or w.ndim != 2 or op.operand_shape(0) is None:
            return False
        if len(op.operand_shape(0)) != 2:  # type: ignore[arg-type]
            return False
        w = w if op.transpose_b is not None else w.T
        b = np.zeros(w.shape[0], np.float32)
        chain: list[Operation] = []
        out = op.result
        add = self.single_user(out, ew.AddOp)
        if add is not None and add.operands[0] is out:
            bias = self.param(add.operands[1])
            if bias is not None and bias.shape == (w.shape[0],):
                b = bias
                chain.append(add)
                out = add.results[0]
        out, activation = self.fuse_activation(out, chain)
        x = self.int_of(op.lhs, op)
        x = self.plain(x, op)
        w_q, w_scales = symmetric_weights(w, None)
        props, scale, zero_point = self.requantize(x.scale, w_scales, out, activation, x.zero_point)
        channel_scales = np.repeat(w_scales, w.shape[0])
        weight, bias = self.layer_params(
            op, w_q, self.bias(b, x.scale, channel_scales), x.scale, channel_scales, 0
        )
        fc = q.QFullyConnectedOp(x.value, weight, bias, props)
        self.emit(fc, op, out)
        self.ints[out] = QValue(fc.results[0], scale, zero_point)
        self.done.update(chain)
        return True

    def maxpool(self, op: cp.Maxpool2dOp) -> bool:
        window = op.window()
        return self.pool(op, q.QMaxpool2dOp, window.kernel, window.stride, window.padding)

    def avgpool(self, op: cp.Avgpool2dOp) -> bool:
        window = op.window()
        if any(window.padding) and op.count_include_pad.value.data:
            return False  # the int8 pool divides by the in-bounds taps only
        return self.pool(op, q.QAvgpool2dOp, window.kernel, window.stride, window.padding)

    def global_avgpool(self, op: cp.GlobalAvgpool2dOp) -> bool:
        x_shape = op.operands[0].type.get_shape()  # type: ignore[attr-defined]
        return self.pool(op, q.QAvgpool2dOp, x_shape[2:], (1, 1), (0, 0, 0, 0))

    def pool(
        self,
        op: Operation,
        kind: type[q.QMaxpool2dOp | q.QAvgpool2dOp],
        kernel: Any,
        stride: Any,
        padding: Any,
    ) -> bool:
        x = self.int_of(op.operands[0], op, nhwc=True)
        pooled = self.emit(kind(x.value, kernel, stride, padding), op, op.results[0])
        self.ints[op.results[0]] = QValue(pooled.results[0], x.scale, x.zero_point, nhwc=True)
        return True

    def reshape(self, op: dm.ReshapeOp | dm.FlattenOp) -> bool:
        if op.operands[0] not in self.ints:
            return False  # an f32 value stays f32 through a reshape
        x = self.plain(self.ints[op.operands[0]], op)
        shape = op.results[0].type.get_shape()  # type: ignore[attr-defined]
        reshaped = self.emit(q.QReshapeOp(x.value, shape), op, op.results[0])
        self.ints[op.results[0]] = QValue(reshaped.results[0], x.scale, x.zero_point)
        return True

    def lookup(self, op: Operation, lookup: Int8Lookup) -> bool:
        """An `Int8Lookup` op of an int8 value: a table of its function on the 256 levels."""
        if op.operands[0] not in self.ints:
            return False  # an f32 value stays f32
        x = self.int_of(op.operands[0], op)
        if lookup.output is not None:
            scale, zero_point = lookup.output
        else:
            scale, zero_point = self.output_params(op.results[0])
        levels = dequantize(np.arange(-128, 128, dtype=np.int8), x.scale, x.zero_point)
        table = quantize(lookup.values(op, levels.astype(np.float64)), scale, zero_point)
        table_value = self.constant(table, i8, op)
        looked = self.emit(q.QLookupOp(x.value, table_value), op, op.results[0])
        self.ints[op.results[0]] = QValue(looked.results[0], scale, zero_point, x.nhwc)
        return True

    def softmax(self, op: act.SoftmaxOp) -> bool:
        """Over the last axis only (TFLite's SOFTMAX and arm_softmax_s8 take rows), beta 1, to
        TFLite's fixed output quantization (scale 1/256, zero point -128)."""
        if op.input not in self.ints:
            return False  # a softmax of an f32 value stays f32
        shape = op.operand_shape(0)
        if shape is None or None in shape or op.normalized_axis(len(shape)) != len(shape) - 1:
            return False
        if shape[-1] > q.SOFTMAX_MAX_ROW:  # type: ignore[operator]
            return False
        x = self.plain(self.int_of(op.input, op), op)
        try:
            multiplier, shift, diff_min = softmax_parameters(x.scale)
        except ValueError:
            return False  # an input scale not above 2^-26 (TFLite refuses it too)
        softmax = q.QSoftmaxOp(x.value, multiplier, shift, diff_min)
        self.emit(softmax, op, op.results[0])
        self.ints[op.results[0]] = QValue(softmax.results[0], q.SOFTMAX_SCALE, q.SOFTMAX_ZERO_POINT)
        return True

    def in_float(self, op: Operation) -> None:
        """The op as it is, on f32 operands."""
        clone = op.clone()
        for index, operand in enumerate(op.operands):
            clone.operands[index] = self.float_of(operand, op)
        self.emit(clone, op)
        for old, new in zip(op.results, clone.results, strict=True):
            new.name_hint = old.name_hint
            self.floats[old] = new

    def run(self) -> Block:
        for op in self.source.body.block.ops:
            if op in self.done or isinstance(op, LoadOp):
                continue
            if isinstance(op, func.ReturnOp):
                results = [self.float_of(v, op) for v in op.operands]
                self.emit(func.ReturnOp(*results), op)
                continue
            handled = False
            if not self.may_quantize(op):
                pass
            elif (rule := INT8_RULES.get(type(op))) is not None:
                handled = rule(self, op)
            elif (lookup := op.get_trait(Int8Lookup)) is not None:
                handled = self.lookup(op, lookup)
            if not handled:
                self.in_float(op)
        return self.block


# The int8 form of each op that has one (an op with the `Int8Lookup` trait needs none): a
# registry keyed by op class, like the VJP rules. A rule returns False where the op stays f32.
INT8_RULES: dict[type[Operation], Callable[[Quantizer, Any], bool]] = {
    cp.Conv2dOp: Quantizer.conv2d,
    mm.MatmulOp: Quantizer.matmul,
    cp.Maxpool2dOp: Quantizer.maxpool,
    cp.Avgpool2dOp: Quantizer.avgpool,
    cp.GlobalAvgpool2dOp: Quantizer.global_avgpool,
    ew.AddOp: Quantizer.add,
    dm.ReshapeOp: Quantizer.reshape,
    dm.FlattenOp: Quantizer.reshape,
    act.SoftmaxOp: Quantizer.softmax,
}


def calibration_ranges(
    module: ModuleOp, source: func.FuncOp, inputs: np.ndarray
) -> dict[SSAValue, tuple[float, float]]:
    """(min, max) of every f32 tensor value of `source` over the calibration inputs: the
    interpreter runs a copy of the module whose copy of `source` returns them all."""
    values = [
        r
        for op in source.body.block.ops
        for r in op.results
        if isinstance(r.type, TensorType) and r.type.element_type == f32
    ]
    values = list(source.body.block.args) + values
    copy = module.clone()
    index = list(module.ops).index(source)
    probe = list(copy.ops)[index]
    assert isinstance(probe, func.FuncOp)
    block = probe.body.block
    mapped = list(block.args) + [
        r
        for op in block.ops
        for r in op.results
        if isinstance(r.type, TensorType) and r.type.element_type == f32
    ]
    Rewriter.replace_op(block.last_op, func.ReturnOp(*mapped))  # type: ignore[arg-type]
    probe.function_type = FunctionType.from_lists(
        probe.function_type.inputs.data, [v.type for v in mapped]
    )
    return observed_ranges(Session(copy), probe.sym_name.data, inputs, values)


def observed_ranges(
    session: Session,
    probe: str,
    inputs: np.ndarray,
    values: list[SSAValue],
    other_args: Sequence[np.ndarray] = (),
) -> dict[SSAValue, tuple[float, float]]:
    """(min, max) of each of `values` over the calibration `inputs`, read from the results of
    `probe` (a copy of their function that returns them, in order), called with each input and
    `other_args`; (0, 0) for a value that is always empty."""
    lows = [math.inf] * len(values)
    highs = [-math.inf] * len(values)
    for sample in inputs:
        for i, result in enumerate(session.call(probe, sample, *other_args)):
            if result.size:
                lows[i] = min(lows[i], float(np.nanmin(result)))
                highs[i] = max(highs[i], float(np.nanmax(result)))
    return {
        v: (lo if lo <= hi else 0.0, hi if lo <= hi else 0.0)
        for v, lo, hi in zip(values, lows, highs, strict=True)
    }


@dataclass(frozen=True)
class QuantizeInt8Pass(ModulePass):
    """Add the int8 version of an inference function (see the module docstring)."""

    name = "quantize-int8"

    func: str = "predict"  # the f32 inference function (derive-predict's @predict)
    output: str = "predict_int8"  # the name of the new function
    calibration: str = ""  # a .npy of calibration inputs stacked on axis 0
    samples: int = 32  # without a file: this many standard-normal inputs
    seed: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        if self.output in functions:
            raise OpError(functions[self.output], f"quantize-int8: @{self.output} exists already")
        source = functions.get(self.func)
        if source is None:
            raise OpError(op, f"quantize-int8: no function @{self.func} (run derive-predict first)")
        inputs = self.calibration_inputs(source)
        ranges = calibration_ranges(op, source, inputs)
        params = initial_params(op, np.dtype(np.float32))
        block = Quantizer(source, params, ranges).run()
        returned = block.last_op
        assert returned is not None
        quantized = func.FuncOp(
            self.output,
            FunctionType.from_lists(
                source.function_type.inputs.data, [v.type for v in returned.operands]
            ),
        )
        quantized.body.detach_block(quantized.body.block)
        quantized.body.add_block(block)
        quantized.location = source.location
        quantized.attributes["adir.quantized"] = StringAttr("int8")
        op.body.block.insert_op_after(quantized, source)

    def calibration_inputs(self, source: func.FuncOp) -> np.ndarray:
        inputs = source.function_type.inputs.data
        if len(inputs) != 1 or not (
            isinstance(inputs[0], TensorType)
            and inputs[0].element_type == f32
            and inputs[0].has_static_shape()
        ):
            raise OpError(
                source,
                f"quantize-int8: @{self.func} must take one f32 tensor of static shape to "
                "calibrate on",
            )
        shape = tuple(inputs[0].get_shape())
        return calibration_inputs(
            self.name, source, shape, self.calibration, self.samples, self.seed
        )


def calibration_inputs(
    pass_name: str,
    where: Operation,
    shape: tuple[int, ...],
    calibration: str,
    samples: int,
    seed: int,
) -> np.ndarray:
    """The calibration inputs of shape `shape`: the file `calibration` (a stack of them), or
    without one `samples` standard-normal draws from `seed`; errors are located at `where`."""
    if not calibration:
        if samples < 1:
            raise OpError(where, f"{pass_name}: samples must be positive, got {samples}")
        if seed < 0:  # numpy's seeds are non-negative
            raise OpError(where, f"{pass_name}: seed must not be negative, got {seed}")
        try:
            rng = np.random.default_rng(seed)
            return rng.standard_normal((samples, *shape)).astype(np.float32)
        except (ValueError, MemoryError) as error:  # more samples than memory holds
            raise OpError(
                where,
                f"{pass_name}: cannot draw {samples} samples of shape {shape}: "
                f"{str(error) or type(error).__name__}",
            ) from error
    try:
        data = exact_cast(read_npy(calibration), np.dtype(np.float32))
    except ValueError as error:
        raise OpError(
            where, f"{pass_name}: cannot read calibration file {calibration}: {error}"
        ) from error
    size = math.prod(shape)
    if data.size == 0 or data.size % size:
        raise OpError(
            where,
            f"{pass_name}: calibration data of shape {data.shape} is not a stack of "
            f"inputs of shape {shape}",
        )
    return data.reshape(-1, *shape)
