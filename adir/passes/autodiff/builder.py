"""The builder VJP rules use: emits backward ops at the end of the gradient function, each
located at the forward op it differentiates, and offers the idioms rules share (constants,
`unbroadcast`, adjoint accumulation)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float32Type, TensorType, f32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import matmul_and_shape as ms
from adir.dialects.tensor import reductions as red


def static_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def is_float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, Float32Type)


class BackwardBuilder:
    """Builds the backward ops at the end of the gradient function, each located at the forward
    op it differentiates; offers the few helpers rules share."""

    def __init__(self, block: Block, active: set[SSAValue]):
        self.block = block
        self.active = active
        self.adjoints: dict[SSAValue, SSAValue] = {}
        self.location: Attribute | None = None

    # --- building --------------------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        """Append `op` and return its (single) result."""
        if self.location is not None:
            op.location = self.location
        Rewriter.insert_op(op, InsertPoint.at_end(self.block))
        return op.results[0]

    def constant(self, value: float, shape: Sequence[int] = ()) -> SSAValue:
        """An f32 constant (a splat when `shape` is not scalar)."""
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(f32, shape), [value])
        return self.emit(ms.ConstantOp(attr))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(ew.AddOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(ew.SubOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(ew.MulOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(ew.DivOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.emit(ew.NegOp(a))

    def cmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(ew.CmpOp(predicate, a, b))

    def select(self, condition: SSAValue, on_true: SSAValue, on_false: SSAValue) -> SSAValue:
        return self.emit(ew.SelectOp(condition, on_true, on_false))

    def sum(self, a: SSAValue, axes: Sequence[int], keepdims: bool = False) -> SSAValue:
        return self.emit(red.SumOp(a, axes, keepdims))

    def reshape(self, a: SSAValue, shape: Sequence[int]) -> SSAValue:
        if static_shape(a) == tuple(shape):
            return a
        return self.emit(ms.ReshapeOp(a, shape))

    def broadcast_to(self, a: SSAValue, shape: Sequence[int]) -> SSAValue:
        if static_shape(a) == tuple(shape):
            return a
        return self.emit(ms.BroadcastToOp(a, shape))

    # --- shared backward idioms --------------------------------------------------------------

    def unbroadcast(self, grad: SSAValue, like: SSAValue) -> SSAValue:
        """Sum `grad` over the axes along which `like` was broadcast in the forward op (the
        leading axes it lacks, and its size-1 axes), giving `like`'s shape."""
        target, shape = static_shape(like), static_shape(grad)
        lead = len(shape) - len(target)
        axes = [*range(lead)] + [
            lead + i for i, d in enumerate(target) if d == 1 and shape[lead + i] != 1
        ]
        if axes:
            grad = self.sum(grad, axes)
        return self.reshape(grad, target)

    def wants(self, value: SSAValue) -> bool:
        """Whether `value` gets an adjoint at all (a rule may skip work for it)."""
        return value in self.active

    def add_adjoint(self, value: SSAValue, grad: SSAValue) -> None:
        """Accumulate `grad` into the adjoint of `value` (fan-out sums)."""
        if value not in self.active:
            return
        if static_shape(grad) != static_shape(value):
            raise AssertionError(
                f"a VJP rule gave an adjoint of shape {static_shape(grad)} for a value of "
                f"shape {static_shape(value)}"
            )
        previous = self.adjoints.get(value)
        self.adjoints[value] = grad if previous is None else self.add(previous, grad)
