"""Ops the optimizer step needs beyond arithmetic: scalars of the step count that PyTorch
computes in double precision on the host, here computed the same way and rounded to f32.

    %lr_t = adir.lr_schedule %lr, %t {kind = "cosine", t_max = 100 : i64} : tensor<f32>
    %bc = adir.bias_correction %t {beta = 9.990000e-01 : f64} : tensor<f32>

`%t` counts optimizer steps as a float (exact up to 2^24 steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import FloatTensor, format_shape, require_equal_dims, shape_of

SCHEDULES = ("step", "exponential", "cosine")


@irdl_op_definition
class LrScheduleOp(TensorOp):
    """The learning rate after `t` steps, as `torch.optim.lr_scheduler` gives it:

    - `step`: `lr * gamma ** floor(t / step_size)` (StepLR);
    - `exponential`: `lr * gamma ** t` (ExponentialLR);
    - `cosine`: `eta_min + (lr - eta_min) * (1 + cos(pi * t / t_max)) / 2`
      (CosineAnnealingLR; past `t_max` it rises again, as PyTorch's does).
    """

    name = "adir.lr_schedule"
    lr = operand_def(FloatTensor)
    t = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    kind = prop_def(StringAttr)
    step_size = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    gamma = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.1, f32))
    t_max = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    eta_min = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.0, f32))
    traits = traits_def(Pure())

    KINDS: ClassVar[tuple[str, ...]] = SCHEDULES

    def __init__(
        self,
        lr: SSAValue,
        t: SSAValue,
        kind: str,
        step_size: int = 1,
        gamma: float = 0.1,
        t_max: int = 1,
        eta_min: float = 0.0,
    ):
        properties = {
            "kind": StringAttr(kind),
            "step_size": IntegerAttr(step_size, i64),
            "gamma": FloatAttr(gamma, f32),
            "t_max": IntegerAttr(t_max, i64),
            "eta_min": FloatAttr(eta_min, f32),
        }
        super().__init__([lr, t], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        if self.kind.data not in self.KINDS:
            raise VerifyException(
                f"{self.name}: unknown schedule '{self.kind.data}', expected one of "
                + ", ".join(self.KINDS)
            )
        for name in ("step_size", "t_max"):
            if (value := getattr(self, name).value.data) < 1:
                raise VerifyException(f"{self.name}: {name} must be at least 1, got {value}")
        if not self.gamma.value.data > 0:
            raise VerifyException(
                f"{self.name}: gamma must be positive, got {self.gamma.value.data}"
            )
        _require_scalar(self, 0, "lr")
        _require_scalar(self, 1, "t")
        return [TensorType(f32, [])]


@irdl_op_definition
class BiasCorrectionOp(TensorOp):
    """`1 - beta ** t` for Adam's bias correction, with `beta` kept in double precision as
    PyTorch keeps it (in f32, `1 - 0.999 ** 1` would be off by 1.3e-5 relative)."""

    name = "adir.bias_correction"
    t = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    beta = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure())

    def __init__(self, t: SSAValue, beta: float):
        super().__init__([t], {"beta": FloatAttr(beta, f64)})

    def infer_result_types(self) -> Sequence[Attribute]:
        if not 0 <= self.beta.value.data < 1:
            raise VerifyException(
                f"{self.name}: beta must be in [0, 1), got {self.beta.value.data}"
            )
        _require_scalar(self, 0, "t")
        return [TensorType(f32, [])]


def _require_scalar(op: TensorOp, index: int, name: str) -> None:
    shape = shape_of(op.operands[index].type)
    if shape is not None and shape != ():
        raise VerifyException(
            f"{op.name}: operand {name} must be a scalar tensor<f32>, got {op.operands[index].type}"
        )


@irdl_op_definition
class MatmulSgdUpdateOp(TensorOp):
    """`param - lr * (op_a(lhs) @ op_b(rhs))`: a weight-gradient matmul fused with the SGD
    update, so the gradient never needs a buffer of its own. 2-D operands; `op_x` transposes
    when the flag is set. Its kernel may write the result over `param` (each element of
    `param` is read once, just before it is written), which is how bufferization uses it.

        %w1 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a}
              : tensor<32x784xf32>, tensor<1x32xf32>, tensor<1x784xf32>, tensor<f32>
              -> tensor<32x784xf32>
    """

    name = "adir.matmul_sgd_update"
    param = operand_def(FloatTensor)
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())

    def __init__(
        self,
        param: SSAValue,
        lhs: SSAValue,
        rhs: SSAValue,
        lr: SSAValue,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        flags = {"transpose_a": transpose_a, "transpose_b": transpose_b}
        super().__init__([param, lhs, rhs, lr], {k: UnitAttr() for k, on in flags.items() if on})

    def infer_result_types(self) -> Sequence[Attribute]:
        _require_scalar(self, 3, "lr")
        shapes = [shape_of(v.type) for v in (self.param, self.lhs, self.rhs)]
        for name, shape in zip(("param", "lhs", "rhs"), shapes, strict=True):
            if shape is not None and len(shape) != 2:
                raise VerifyException(
                    f"{self.name}: operand {name} must have rank 2, got {format_shape(shape)}"
                )
        param, lhs, rhs = shapes
        if lhs is not None and rhs is not None:
            m, k = lhs[::-1] if self.transpose_a else lhs
            k_rhs, n = rhs[::-1] if self.transpose_b else rhs
            require_equal_dims(self.name, "inner dimensions", k, k_rhs)
            if param is not None and any(
                a is not None and b is not None and a != b
                for a, b in zip((m, n), param, strict=True)
            ):
                raise VerifyException(
                    f"{self.name}: the product is {format_shape((m, n))} but param is "
                    f"{format_shape(param)}"
                )
        return [self.param.type]


OPTIMIZERS_OPS = [LrScheduleOp, BiasCorrectionOp, MatmulSgdUpdateOp]
