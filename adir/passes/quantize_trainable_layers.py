"""Level 2 of quantized training: the trainable conv and linear layers of a loss on int8 kernels
whose int8 weights and int32 biases are parameters that the training step updates.

`quantize-frozen-prefix{level=2}` runs it before `autodiff`, on the loss (docs/
quantized_training.md, "Level 2"). The ops that the input and the parameters (frozen or
trainable) determine become int8 as level 1 makes the frozen prefix int8 (quantize-int8's
`Quantizer`, calibrated the same way); a conv2d or matmul whose weight trains becomes a
`qconv2d` or `qfully_connected` on new i8 and i32 parameters `@<weight>_q`, `@<weight>_q_bias`
(its batch norm, frozen by `freeze-batchnorm`, folded in first: TTE trains the folded weight),
with their `adir.step_scale`: QAS's s_W^-2 and (s_x s_W)^-2 per output channel, or 1.
`autodiff` then gives their gradients in integer units (the quantized ops' `IntegerAdjoints`)
and `insert-optimizer{kind=sgd}` their `qsgd_update`s.

Every other op that a trainable layer reaches runs in f32 between a dequantize and a quantize,
whose VJPs carry the gradient (the int8 pools and sums have no VJP).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
    i8,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from adir.diagnostics import OpError
from adir.dialects.tensor.params import LoadOp, ParamOp
from adir.passes.insert_optimizer import STEP_AXIS, STEP_SCALE
from adir.passes.quantize_int8 import Quantizer
from adir.update_scheme import BIAS, UPDATE_CHANNELS, UPDATE_FRACTION


def loaded_param(value: SSAValue | None) -> str | None:
    """The name of the parameter `value` is a load of, None for anything else."""
    if value is not None and isinstance(value.owner, LoadOp):
        return value.owner.param.root_reference.data
    return None


@dataclass
class TrainableLayerQuantizer(Quantizer):
    """quantize-int8's Quantizer whose trainable layers get integer parameters."""

    module: ModuleOp | None = None
    trainable: set[str] = field(default_factory=set[str])
    # The ops the input and the parameters determine: a layer may fuse any of them.
    forward: set[Operation] = field(default_factory=set[Operation])
    # The trainable parameters whose data the current layer's rule read (its weight, bias,
    # batch norm, bias add), reset by `layer_params`.
    read: list[str] = field(default_factory=list[str])
    qas: bool = True
    # The integer parameters made so far, by name: every function that computes the same
    # layer gets the same data (the same calibration), which is checked.
    created: dict[str, ParamOp] = field(default_factory=dict[str, ParamOp])

    def param(self, value: SSAValue) -> np.ndarray | None:
        if (name := loaded_param(value)) in self.trainable:
            self.read.append(name)  # type: ignore[arg-type]
        return super().param(value)

    def single_user(self, value: SSAValue, kind: type[Operation]) -> Operation | None:
        """The op of `kind` that alone reads `value`, if the input and the parameters
        determine it: a trainable layer fuses its batch norm, bias add and activation."""
        uses = list(value.uses)
        if len(uses) == 1 and isinstance(uses[0].operation, kind):
            return uses[0].operation if uses[0].operation in self.forward else None
        return None

    def layer_params(
        self,
        op: Operation,
        w_q: np.ndarray,
        b_q: np.ndarray,
        in_scale: float,
        w_scales: np.ndarray,
        axis: int,
    ) -> tuple[SSAValue, SSAValue]:
        # A conv2d's weight and a matmul's right-hand side are both operand 1.
        weight = loaded_param(op.operands[1])
        folded, self.read = self.read, []
        s_w = w_scales.astype(np.float64)
        if self.qas:
            w_step, b_step = 1.0 / s_w**2, 1.0 / (float(in_scale) * s_w) ** 2
        else:
            w_step = b_step = np.ones_like(s_w)
        if weight is None or weight not in self.trainable:
            if not folded:
                return super().layer_params(op, w_q, b_q, in_scale, w_scales, axis)
            # Only biases train (TTE's bias-only update): the int8 weight stays a constant in
            # flash and the int32 bias, into which a conv's bias, its batch norm's beta or a
            # linear layer's bias add fold, trains. Anything else (a batch norm's gamma) would
            # scale the frozen weight, which has no int8 form that trains.
            not_biases = [name for name in folded if not self.is_bias(name)]
            if weight is None or not_biases:
                raise OpError(
                    op,
                    f"quantize-frozen-prefix{{level=2}}: the trainable parameter "
                    f"@{(not_biases or folded)[0]} would fold into the int8 weight of a frozen "
                    "layer (level 2 trains a conv's or linear layer's folded weight and bias "
                    "together, or its bias alone: its biases and batch-norm betas); train the "
                    "layer's weight too, or train it in float with level=1 after "
                    "insert-optimizer",
                )
            b_param = self.integer_param(op, f"{weight}_q_bias", b_q, i32, b_step, 0)
            return self.constant(w_q, i8, op), self.emit(LoadOp(b_param), op).results[0]
        if (partial := self.partial_update(weight)) is not None:
            raise OpError(
                op,
                f"quantize-frozen-prefix{{level=2}}: @{weight} trains only some output channels "
                f"({partial}); level 2 trains an int8 layer's weight whole or not at all: train "
                "the whole layer (all@...) or its bias alone",
            )
        w_param = self.integer_param(op, f"{weight}_q", w_q, i8, w_step, axis)
        b_param = self.integer_param(op, f"{weight}_q_bias", b_q, i32, b_step, 0)
        return (
            self.emit(LoadOp(w_param), op).results[0],
            self.emit(LoadOp(b_param), op).results[0],
        )

    def param_op(self, name: str) -> ParamOp:
        assert self.module is not None
        return next(
            o for o in self.module.ops if isinstance(o, ParamOp) and o.sym_name.data == name
        )

    def is_bias(self, name: str) -> bool:
        """Whether the front-end marked the parameter a layer's bias (`adir.bias`: a conv's or
        linear layer's bias, a batch norm's beta), which folds into the int32 bias alone."""
        return BIAS in self.param_op(name).attributes

    def partial_update(self, name: str) -> str | None:
        """`update_fraction = F` or `update_channels = N` on the parameter, if it has one."""
        attributes = self.param_op(name).attributes
        for key in (UPDATE_FRACTION, UPDATE_CHANNELS):
            if key in attributes:
                return f"{key} = {attributes[key]}"
        return None

    def integer_param(
        self,
        op: Operation,
        name: str,
        data: np.ndarray,
        element: Attribute,
        step: np.ndarray,
        axis: int,
    ) -> ParamOp:
        type_ = TensorType(element, data.shape)
        init = DenseIntOrFPElementsAttr.from_list(type_, data.reshape(-1).tolist())
        if name in self.created:
            if self.created[name].initial_value != init:
                raise OpError(
                    op,
                    f"quantize-frozen-prefix: @{name} quantizes differently in two functions "
                    "(their calibration ranges differ)",
                )
            return self.created[name]
        param = ParamOp(name, type_, init)
        param.attributes[STEP_SCALE] = ArrayAttr(
            [FloatAttr(float(np.float32(v)), f32) for v in step]
        )
        if axis != 0:
            param.attributes[STEP_AXIS] = IntegerAttr(axis, 64)
        param.location = op.location
        assert self.module is not None
        first = next(o for o in self.module.ops if not isinstance(o, ParamOp))
        Rewriter.insert_op(param, InsertPoint.before(first))
        self.created[name] = param
        return param
