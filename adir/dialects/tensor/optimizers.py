"""Ops the optimizer step needs beyond arithmetic.

Scalars of the step count that PyTorch computes in double precision on the host, here computed
the same way and rounded to f32 (`%t` counts optimizer steps as a float, exact up to 2^24):

    %lr_t = adir.lr_schedule %lr, %t {kind = "cosine", t_max = 100 : i64} : tensor<f32>
    %bc = adir.bias_correction %t {beta = 9.990000e-01 : f64} : tensor<f32>

The parameter updates of `torch.optim.SGD` (`adir.sgd_update`, `adir.momentum_update`) and
`Adam`/`AdamW` (`adir.adam_update`), each one op that returns the new parameter and state, and
their matmul forms (`adir.matmul_sgd_update`, ...), whose gradient is a matmul computed inside
the update, so it never needs a buffer of its own (`fuse-weight-updates` makes them):

    %w1, %m1, %v1 = adir.adam_update %w, %m, %v, %g, %lr, %bc1, %bc2
                    {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64,
                     eps = 1.000000e-08 : f32} : ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from xdsl.ir import Attribute, Operation, SSAValue
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
from adir.dialects.tensor.shapes import (
    Dims,
    FloatTensor,
    Shape,
    format_shape,
    require_equal_dims,
    shape_of,
)
from adir.dialects.tensor.traits import InPlaceOperands, NotDifferentiable

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
    traits = traits_def(Pure(), NotDifferentiable("a step of the optimizer, after the gradient"))

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
    traits = traits_def(Pure(), NotDifferentiable("a step of the optimizer, after the gradient"))

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
    _require_scalar_value(op, op.operands[index], name)


def _require_scalar_value(op: TensorOp, value: SSAValue, name: str) -> None:
    shape = shape_of(value.type)
    if shape is not None and shape != ():
        raise VerifyException(
            f"{op.name}: operand {name} must be a scalar tensor<f32>, got {value.type}"
        )


@dataclass(frozen=True)
class UpdatesInPlace(InPlaceOperands):
    """Every result of a parameter update may be written over the operands its class names in
    `IN_PLACE` and `STATE` (`ParamUpdateOp.in_place_operands`)."""

    def operands_for(self, op: Operation, result: int) -> Sequence[int]:
        assert isinstance(op, ParamUpdateOp)
        return op.in_place_operands()


class ParamUpdateOp(TensorOp):
    """The base of the ops that update a parameter and its optimizer state in one step:

        (param, state..., gradient, scalars...) -> (new param, new state...)

    every result of `param`'s type. The gradient is the operand `grad`, of `param`'s shape,
    or in the matmul forms the product `op_a(lhs) @ op_b(rhs)` of two 2-D operands, which the
    kernel computes a block at a time, so a weight gradient never needs a buffer of its own.

    Element i of each result depends only on element i of `param`, of the state and of the
    gradient, and a kernel reads those before it writes element i of any result: the results
    may be written over `param`, the state and `grad` (`in_place_operands`), which is how
    bufferization updates the parameter and its state in place.

    Each update first clips the gradient to [-clip_value, clip_value] when `clip_value > 0`
    (`torch.nn.utils.clip_grad_value_`), then adds `weight_decay * param` to it (L2, as
    `torch.optim` does; Adam's `decoupled_weight_decay` shrinks the parameter instead). The
    float32 operations are those of the elementwise ops `insert-optimizer{update_ops=false}`
    writes, in the same order, so the results are the same bit for bit.
    """

    STATE: ClassVar[tuple[str, ...]] = ()
    """The state operands, in the order of the results that replace them (after `param`)."""
    SCALARS: ClassVar[tuple[str, ...]] = ("lr",)
    GRADIENT: ClassVar[str] = "grad"
    """What the gradient is called in diagnostics."""
    IN_PLACE: ClassVar[tuple[str, ...]] = ("param",)
    """Beside the state: the operands that the results may be written over."""

    weight_decay = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.0, f32))
    clip_value = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.0, f32))
    traits = traits_def(
        Pure(),
        UpdatesInPlace(),
        NotDifferentiable("a step of the optimizer, after the gradient"),
    )

    def in_place_operands(self) -> list[int]:
        """The indices of the operands that the results may be written over."""
        names = [name for name, _ in self.get_irdl_definition().operands]
        return [names.index(name) for name in (*self.IN_PLACE, *self.STATE)]

    def gradient_shape(self) -> Shape:
        raise NotImplementedError

    def check_hyperparameters(self) -> None:
        for name in ("weight_decay", "clip_value"):
            if not (value := getattr(self, name).value.data) >= 0:
                raise VerifyException(f"{self.name}: {name} must not be negative, got {value}")

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_hyperparameters()
        for name in self.SCALARS:
            _require_scalar_value(self, getattr(self, name), name)
        param = shape_of(self.param.type)
        shapes = [(name, shape_of(getattr(self, name).type)) for name in self.STATE]
        for name, shape in [*shapes, (self.GRADIENT, self.gradient_shape())]:
            if param is not None and shape is not None and not _same_shape(param, shape):
                raise VerifyException(
                    f"{self.name}: {name} is {format_shape(shape)} but param is "
                    f"{format_shape(param)}"
                )
        return [self.param.type] * (1 + len(self.STATE))


class ElementwiseUpdateOp(ParamUpdateOp):
    """An update whose gradient is the operand `grad`; the results may be written over it too."""

    IN_PLACE: ClassVar[tuple[str, ...]] = ("param", "grad")

    def gradient_shape(self) -> Shape:
        return shape_of(self.grad.type)


class MatmulUpdateOp(ParamUpdateOp):
    """An update whose gradient is `op_a(lhs) @ op_b(rhs)` (2-D; `op_x` transposes when the
    flag is set), summed in the matmul's order; `param` is 2-D."""

    GRADIENT: ClassVar[str] = "the product"

    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)

    def gradient_shape(self) -> Shape:
        shapes = [shape_of(v.type) for v in (self.param, self.lhs, self.rhs)]
        for name, shape in zip(("param", "lhs", "rhs"), shapes, strict=True):
            if shape is not None and len(shape) != 2:
                raise VerifyException(
                    f"{self.name}: operand {name} must have rank 2, got {format_shape(shape)}"
                )
        _, lhs, rhs = shapes
        if lhs is None or rhs is None:
            return None
        m, k = lhs[::-1] if self.transpose_a else lhs
        k_rhs, n = rhs[::-1] if self.transpose_b else rhs
        require_equal_dims(self.name, "inner dimensions", k, k_rhs)
        return (m, n)

    @staticmethod
    def flags(transpose_a: bool, transpose_b: bool) -> dict[str, Attribute]:
        on = {"transpose_a": transpose_a, "transpose_b": transpose_b}
        return {name: UnitAttr() for name, flag in on.items() if flag}


class MomentumHyperparameters:
    """`torch.optim.SGD`'s momentum and nesterov (a mixin of the momentum updates)."""

    momentum = prop_def(FloatAttr[Float32Type])
    nesterov = opt_prop_def(UnitAttr)

    def check_hyperparameters(self) -> None:
        super().check_hyperparameters()  # type: ignore[misc]
        momentum = self.momentum.value.data
        if not momentum >= 0:
            raise VerifyException(f"{self.name}: momentum must not be negative, got {momentum}")
        if self.nesterov is not None and momentum == 0:
            raise VerifyException(f"{self.name}: nesterov needs a momentum")


class AdamHyperparameters:
    """`torch.optim.Adam`'s betas (in double, as PyTorch keeps them: `1 - beta` is taken in
    double and rounded to float once), eps and AdamW's decoupled weight decay (a mixin of the
    Adam updates)."""

    beta1 = prop_def(FloatAttr[Float64Type])
    beta2 = prop_def(FloatAttr[Float64Type])
    eps = prop_def(FloatAttr[Float32Type])
    decoupled_weight_decay = opt_prop_def(UnitAttr)

    def check_hyperparameters(self) -> None:
        super().check_hyperparameters()  # type: ignore[misc]
        for name in ("beta1", "beta2"):
            if not 0 <= (value := getattr(self, name).value.data) < 1:
                raise VerifyException(f"{self.name}: {name} must be in [0, 1), got {value}")
        if not (eps := self.eps.value.data) >= 0:
            raise VerifyException(f"{self.name}: eps must not be negative, got {eps}")


def _same_shape(a: Dims, b: Dims) -> bool:
    return len(a) == len(b) and all(
        x is None or y is None or x == y for x, y in zip(a, b, strict=True)
    )


def _update_properties(weight_decay: float, clip_value: float) -> dict[str, Attribute]:
    return {"weight_decay": FloatAttr(weight_decay, f32), "clip_value": FloatAttr(clip_value, f32)}


def _momentum_properties(momentum: float, nesterov: bool) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {"momentum": FloatAttr(momentum, f32)}
    if nesterov:
        properties["nesterov"] = UnitAttr()
    return properties


def _adam_properties(
    beta1: float, beta2: float, eps: float, decoupled: bool
) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {
        "beta1": FloatAttr(beta1, f64),
        "beta2": FloatAttr(beta2, f64),
        "eps": FloatAttr(eps, f32),
    }
    if decoupled:
        properties["decoupled_weight_decay"] = UnitAttr()
    return properties


@irdl_op_definition
class SgdUpdateOp(ElementwiseUpdateOp):
    """`torch.optim.SGD` without momentum: `g += weight_decay * param; param -= lr * g`.

    %w1 = adir.sgd_update %w, %g, %lr {weight_decay = 1.000000e-02 : f32}
          : tensor<32x784xf32>, tensor<32x784xf32>, tensor<f32> -> tensor<32x784xf32>
    """

    name = "adir.sgd_update"
    param = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    new_param = result_def(FloatTensor)

    def __init__(
        self,
        param: SSAValue,
        grad: SSAValue,
        lr: SSAValue,
        weight_decay: float = 0.0,
        clip_value: float = 0.0,
    ):
        super().__init__([param, grad, lr], _update_properties(weight_decay, clip_value))


@irdl_op_definition
class MomentumUpdateOp(MomentumHyperparameters, ElementwiseUpdateOp):
    """`torch.optim.SGD` with momentum:

        g += weight_decay * param
        buf = buf * momentum + g
        g = g + momentum * buf if nesterov else buf
        param -= lr * g

    (a zero initial buffer gives PyTorch's first step, `buf = g`).

        %w1, %buf1 = adir.momentum_update %w, %buf, %g, %lr {momentum = 9.000000e-01 : f32}
                     : ..., tensor<f32> -> (tensor<32x784xf32>, tensor<32x784xf32>)
    """

    name = "adir.momentum_update"
    STATE: ClassVar[tuple[str, ...]] = ("momentum_buffer",)
    param = operand_def(FloatTensor)
    momentum_buffer = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    new_param = result_def(FloatTensor)
    new_momentum_buffer = result_def(FloatTensor)

    def __init__(
        self,
        param: SSAValue,
        momentum_buffer: SSAValue,
        grad: SSAValue,
        lr: SSAValue,
        momentum: float,
        nesterov: bool = False,
        weight_decay: float = 0.0,
        clip_value: float = 0.0,
    ):
        properties = _momentum_properties(momentum, nesterov)
        properties |= _update_properties(weight_decay, clip_value)
        super().__init__([param, momentum_buffer, grad, lr], properties)


@irdl_op_definition
class AdamUpdateOp(AdamHyperparameters, ElementwiseUpdateOp):
    """`torch.optim.Adam` (or AdamW, with `decoupled_weight_decay`) at step t, given
    `bias_correction1 = 1 - beta1^t` and `bias_correction2_sqrt = sqrt(1 - beta2^t)`:

        param *= 1 - lr * weight_decay    (decoupled)  or  g += weight_decay * param
        exp_avg = exp_avg + (1 - beta1) * (g - exp_avg)            (PyTorch's lerp)
        exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * g * g
        param -= lr / bias_correction1
                 * (exp_avg / (sqrt(exp_avg_sq) / bias_correction2_sqrt + eps))

        %w1, %m1, %v1 = adir.adam_update %w, %m, %v, %g, %lr, %bc1, %bc2
                        {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64,
                         eps = 1.000000e-08 : f32} : ...
    """

    name = "adir.adam_update"
    STATE: ClassVar[tuple[str, ...]] = ("exp_avg", "exp_avg_sq")
    SCALARS: ClassVar[tuple[str, ...]] = ("lr", "bias_correction1", "bias_correction2_sqrt")
    param = operand_def(FloatTensor)
    exp_avg = operand_def(FloatTensor)
    exp_avg_sq = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    bias_correction1 = operand_def(FloatTensor)
    bias_correction2_sqrt = operand_def(FloatTensor)
    new_param = result_def(FloatTensor)
    new_exp_avg = result_def(FloatTensor)
    new_exp_avg_sq = result_def(FloatTensor)

    def __init__(
        self,
        state: tuple[SSAValue, SSAValue, SSAValue],
        grad: SSAValue,
        scalars: tuple[SSAValue, SSAValue, SSAValue],
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        clip_value: float = 0.0,
    ):
        """`state` is (param, exp_avg, exp_avg_sq), `scalars` (lr, bias_correction1,
        bias_correction2_sqrt)."""
        properties = _adam_properties(beta1, beta2, eps, decoupled_weight_decay)
        properties |= _update_properties(weight_decay, clip_value)
        super().__init__([*state, grad, *scalars], properties)


@irdl_op_definition
class MatmulSgdUpdateOp(MatmulUpdateOp):
    """`adir.sgd_update` of the gradient `op_a(lhs) @ op_b(rhs)`: a weight-gradient matmul
    fused with the SGD update, so the gradient never needs a buffer of its own.

        %w1 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a}
              : tensor<32x784xf32>, tensor<1x32xf32>, tensor<1x784xf32>, tensor<f32>
              -> tensor<32x784xf32>
    """

    name = "adir.matmul_sgd_update"
    param = operand_def(FloatTensor)
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    new_param = result_def(FloatTensor)

    def __init__(
        self,
        param: SSAValue,
        lhs: SSAValue,
        rhs: SSAValue,
        lr: SSAValue,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        super().__init__([param, lhs, rhs, lr], self.flags(transpose_a, transpose_b))


@irdl_op_definition
class MatmulMomentumUpdateOp(MomentumHyperparameters, MatmulUpdateOp):
    """`adir.momentum_update` of the gradient `op_a(lhs) @ op_b(rhs)`.

    %w1, %buf1 = adir.matmul_momentum_update %w, %buf, %dy, %x, %lr
                 {transpose_a, momentum = 9.000000e-01 : f32} : ...
    """

    name = "adir.matmul_momentum_update"
    STATE: ClassVar[tuple[str, ...]] = ("momentum_buffer",)
    param = operand_def(FloatTensor)
    momentum_buffer = operand_def(FloatTensor)
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    new_param = result_def(FloatTensor)
    new_momentum_buffer = result_def(FloatTensor)


@irdl_op_definition
class MatmulAdamUpdateOp(AdamHyperparameters, MatmulUpdateOp):
    """`adir.adam_update` of the gradient `op_a(lhs) @ op_b(rhs)`.

    %w1, %m1, %v1 = adir.matmul_adam_update %w, %m, %v, %dy, %x, %lr, %bc1, %bc2
                    {transpose_a, beta1 = ..., beta2 = ..., eps = ...} : ...
    """

    name = "adir.matmul_adam_update"
    STATE: ClassVar[tuple[str, ...]] = ("exp_avg", "exp_avg_sq")
    SCALARS: ClassVar[tuple[str, ...]] = ("lr", "bias_correction1", "bias_correction2_sqrt")
    param = operand_def(FloatTensor)
    exp_avg = operand_def(FloatTensor)
    exp_avg_sq = operand_def(FloatTensor)
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    bias_correction1 = operand_def(FloatTensor)
    bias_correction2_sqrt = operand_def(FloatTensor)
    new_param = result_def(FloatTensor)
    new_exp_avg = result_def(FloatTensor)
    new_exp_avg_sq = result_def(FloatTensor)


MATMUL_FORMS: dict[type[ElementwiseUpdateOp], type[MatmulUpdateOp]] = {
    SgdUpdateOp: MatmulSgdUpdateOp,
    MomentumUpdateOp: MatmulMomentumUpdateOp,
    AdamUpdateOp: MatmulAdamUpdateOp,
}
"""Each update's matmul form: the same operands and properties, with `grad` replaced by
`lhs, rhs` (and the transpose flags)."""

OPTIMIZERS_OPS = [
    LrScheduleOp,
    BiasCorrectionOp,
    SgdUpdateOp,
    MomentumUpdateOp,
    AdamUpdateOp,
    MatmulSgdUpdateOp,
    MatmulMomentumUpdateOp,
    MatmulAdamUpdateOp,
]
