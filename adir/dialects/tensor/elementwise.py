"""Elementwise arithmetic with numpy broadcasting, comparison and select."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, f32, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    FloatTensor,
    IntTensor,
    broadcast,
    element_type,
    tensor_type,
)
from adir.dialects.tensor.traits import ElementwiseMappable, NotDifferentiable, Recomputable

# IRDL cannot constrain an integer width inside a tensor type parameter; the shape rules check
# that a condition is i1.
BoolTensor = IntTensor


class UnaryElementwiseOp(TensorOp):
    """`y = f(x)` elementwise on f32: the result has the operand's type."""

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure(), ElementwiseMappable(), Recomputable())

    def __init__(self, input: SSAValue, properties: Mapping[str, Attribute] | None = None):
        super().__init__([input], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.input.type]


class BinaryElementwiseOp(TensorOp):
    """`z = f(x, y)` elementwise on f32 with numpy broadcasting."""

    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure(), ElementwiseMappable(), Recomputable())

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__([lhs, rhs])

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = broadcast(self.name, [self.operand_shape(0), self.operand_shape(1)], ["lhs", "rhs"])
        return [tensor_type(f32, shape)]


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """`lhs + rhs`."""

    name = "adir.add"


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    """`lhs - rhs`."""

    name = "adir.sub"


@irdl_op_definition
class MulOp(BinaryElementwiseOp):
    """`lhs * rhs`."""

    name = "adir.mul"


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """`lhs / rhs` (IEEE: x/0 is +-inf, 0/0 is nan, as in PyTorch)."""

    name = "adir.div"


@irdl_op_definition
class PowOp(BinaryElementwiseOp):
    """`lhs ** rhs` (`torch.pow`: a negative base with a non-integer exponent is nan)."""

    name = "adir.pow"


@irdl_op_definition
class MaximumOp(BinaryElementwiseOp):
    """Elementwise `max(lhs, rhs)`, nan-propagating like `torch.maximum`."""

    name = "adir.maximum"


@irdl_op_definition
class MinimumOp(BinaryElementwiseOp):
    """Elementwise `min(lhs, rhs)`, nan-propagating like `torch.minimum`."""

    name = "adir.minimum"


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """`-x`."""

    name = "adir.neg"


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """`e ** x`."""

    name = "adir.exp"


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """Natural logarithm (`log(0) = -inf`, negative inputs give nan)."""

    name = "adir.log"


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    """Square root (negative inputs give nan)."""

    name = "adir.sqrt"


COMPARISON_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


@irdl_op_definition
class CmpOp(TensorOp):
    """`lhs <predicate> rhs` elementwise with broadcasting, giving an i1 tensor.

    `predicate` is one of eq, ne, lt, le, gt, ge (ordered comparisons: nan compares false,
    except `ne`, as in IEEE and PyTorch).
    """

    name = "adir.cmp"
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(BoolTensor)
    predicate = prop_def(StringAttr)
    traits = traits_def(
        Pure(),
        ElementwiseMappable(),
        Recomputable(),
        NotDifferentiable("a boolean result: its gradient is zero, and nothing flows through"),
    )

    PREDICATES: ClassVar[tuple[str, ...]] = COMPARISON_PREDICATES

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue):
        super().__init__([lhs, rhs], {"predicate": StringAttr(predicate)})

    def infer_result_types(self) -> Sequence[Attribute]:
        if self.predicate.data not in self.PREDICATES:
            raise VerifyException(
                f"{self.name}: unknown predicate '{self.predicate.data}', expected one of "
                + ", ".join(self.PREDICATES)
            )
        shape = broadcast(self.name, [self.operand_shape(0), self.operand_shape(1)], ["lhs", "rhs"])
        return [tensor_type(i1, shape)]


@irdl_op_definition
class SelectOp(TensorOp):
    """`condition ? on_true : on_false` elementwise, all three broadcast together."""

    name = "adir.select"
    condition = operand_def(BoolTensor)
    on_true = operand_def(FloatTensor)
    on_false = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure(), ElementwiseMappable(), Recomputable())

    def __init__(self, condition: SSAValue, on_true: SSAValue, on_false: SSAValue):
        super().__init__([condition, on_true, on_false])

    def infer_result_types(self) -> Sequence[Attribute]:
        if (condition := element_type(self.condition.type)) != i1:
            raise VerifyException(
                f"{self.name}: operand condition must have element type i1, got {condition}"
            )
        names = ["condition", "on_true", "on_false"]
        shape = broadcast(self.name, [self.operand_shape(i) for i in range(3)], names)
        return [tensor_type(f32, shape)]


ELEMENTWISE_OPS = [
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    PowOp,
    MaximumOp,
    MinimumOp,
    NegOp,
    ExpOp,
    LogOp,
    SqrtOp,
    CmpOp,
    SelectOp,
]
