"""Building tensor-level ops in a pass: append them at the end of a block, located at the op
they come from, with the arithmetic and shape helpers the autodiff rules and the optimizer
updates both need."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import Float32Type, TensorType, f32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from adir.dense_literals import splat, splat_value
from adir.dialects.tensor import data_movement as dm
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import reductions as red


def static_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def is_float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, Float32Type)


def name_value(value: SSAValue, name: str, replace: bool = False) -> SSAValue:
    """Give `value` the name hint `name` (so the IR, the C and the memory reports read `w1_grad`
    instead of `%12` and `t_3`) unless it already has one (and not `replace`), or `name` is not
    a valid SSA name (parameter names may be any string: `@"my weight"`)."""
    if (replace or value.name_hint is None) and SSAValue.is_valid_name(name):
        value.name_hint = name
    return value


class TensorBuilder:
    """Appends ops to the end of `block`; each new op gets `location` (set it to the location
    of the op being transformed, so diagnostics about new ops point at the user's source)."""

    def __init__(self, block: Block, location: Attribute | None = None):
        self.block = block
        self.location = location
        # Each f32 constant is made once: later ops of the block reuse it, and the splat
        # constants the block already has.
        self._constants: dict[tuple[float, tuple[int, ...]], SSAValue] = {}
        for op in block.ops:
            if not isinstance(op, dm.ConstantOp) or op.value.get_element_type() != f32:
                continue
            # By bits, not by value (-0.0 is not 0.0), and without unpacking every element.
            if (value := splat_value(op.value)) is not None:
                self._constants.setdefault((float(value), static_shape(op.result)), op.result)

    # --- building --------------------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        """Append `op` and return its (single) result."""
        if self.location is not None:
            op.location = self.location
        Rewriter.insert_op(op, InsertPoint.at_end(self.block))
        return op.results[0]

    def constant(self, value: float, shape: Sequence[int] = ()) -> SSAValue:
        """An f32 constant (a splat when `shape` is not scalar)."""
        key = (float(np.float32(value)), tuple(shape))
        if key not in self._constants:
            self._constants[key] = self.emit(dm.ConstantOp(splat(TensorType(f32, shape), value)))
        return self._constants[key]

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
        return self.emit(dm.ReshapeOp(a, shape))

    def broadcast_to(self, a: SSAValue, shape: Sequence[int]) -> SSAValue:
        if static_shape(a) == tuple(shape):
            return a
        return self.emit(dm.BroadcastToOp(a, shape))
