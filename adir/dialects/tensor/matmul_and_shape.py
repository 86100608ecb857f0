"""Matrix products and the ops that only move data: transpose, reshape, broadcast_to, constant.

    %y = adir.matmul %x, %w {transpose_b} : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
    %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
    %r = adir.reshape %x {shape = array<i64: -1, 784>} : tensor<1x28x28xf32> -> tensor<1x784xf32>
    %b = adir.broadcast_to %v {shape = array<i64: 4, 3>} : tensor<3xf32> -> tensor<4x3xf32>
    %c = adir.constant dense<[1.0, 2.0]> : tensor<2xf32>

Each op's docstring gives its semantics, as the PyTorch function it equals where there is one.
Permutations and shapes are `array<i64: ...>` properties, as in `linalg.transpose`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    TensorType,
    UnitAttr,
    f32,
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
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    Dim,
    Dims,
    FloatTensor,
    format_shape,
    num_elements,
    require_equal_dims,
    require_rank,
    tensor_type,
)


def _known(a: Dim, b: Dim) -> Dim:
    """The known one of two dims already checked to agree."""
    return a if a is not None else b


def _matrix(shape: Dims, transposed: bool) -> tuple[Dim, Dim]:
    """(rows, cols) of the matrices in the last two dims, swapped if `transposed`."""
    rows, cols = shape[-2], shape[-1]
    return (cols, rows) if transposed else (rows, cols)


@irdl_op_definition
class MatmulOp(TensorOp):
    """`torch.matmul(A, B)` where A is `lhs` and B is `rhs`, each with its last two dims swapped
    when `transpose_a` / `transpose_b` is set (the flags replace a materialised transpose).

    Shapes, after the flags: (M, K) x (K, N) -> (M, N); batched (B, M, K) x (B, K, N) ->
    (B, M, N); and (B, M, K) x (K, N) -> (B, M, N), one rhs shared by the whole batch. Batch
    dims must be equal: a batch of 1 does not broadcast (write a shared rhs 2-D), so a kernel
    is a loop of plain matrix products, and only a 2-D rhs has its gradient summed over the
    batch.
    """

    name = "adir.matmul"
    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        transpose_a: bool = False,
        transpose_b: bool = False,
        result_type: Attribute | None = None,
    ):
        """Without `result_type`, the result gets the type the shape rule infers."""
        flags = {"transpose_a": transpose_a, "transpose_b": transpose_b}
        super().__init__(
            [lhs, rhs],
            {name: UnitAttr() for name, on in flags.items() if on},
            None if result_type is None else [result_type],
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        lhs, rhs = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "lhs", lhs, (2, 3))
        require_rank(self.name, "rhs", rhs, (2, 3))
        if lhs is None or rhs is None:
            return [tensor_type(f32, None)]
        if len(rhs) > len(lhs):
            raise VerifyException(
                f"{self.name}: operand rhs of rank 3 ({format_shape(rhs)}) needs an lhs of "
                f"rank 3, got rank 2 ({format_shape(lhs)})"
            )
        m, k = _matrix(lhs, self.transpose_a is not None)
        k_rhs, n = _matrix(rhs, self.transpose_b is not None)
        require_equal_dims(self.name, "inner dimensions", k, k_rhs)
        batch = lhs[:-2]
        if len(rhs) == 3:
            require_equal_dims(self.name, "batch dimensions", lhs[0], rhs[0])
            batch = (_known(lhs[0], rhs[0]),)
        return [tensor_type(f32, (*batch, m, n))]


def _values(array: DenseArrayBase) -> list[int]:
    return [int(v) for v in array.get_values()]


@irdl_op_definition
class TransposeOp(TensorOp):
    """`torch.permute(input, permutation)`: result dim i is input dim `permutation[i]`."""

    name = "adir.transpose"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    permutation = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, permutation: Sequence[int]):
        super().__init__([input], {"permutation": DenseArrayBase.from_list(i64, permutation)})

    def infer_result_types(self) -> Sequence[Attribute]:
        perm = _values(self.permutation)
        shape = self.operand_shape(0)
        if shape is not None and len(shape) != len(perm):
            raise VerifyException(
                f"{self.name}: permutation {perm} has {len(perm)} entries but operand input "
                f"has rank {len(shape)} ({format_shape(shape)})"
            )
        if sorted(perm) != list(range(len(perm))):
            raise VerifyException(
                f"{self.name}: permutation {perm} is not a permutation of {list(range(len(perm)))}"
            )
        dims: Dims = (None,) * len(perm) if shape is None else tuple(shape[p] for p in perm)
        return [tensor_type(f32, dims)]


@irdl_op_definition
class ReshapeOp(TensorOp):
    """`torch.reshape(input, shape)`: the same elements in row-major order, in a new shape.

    One entry of `shape` may be -1: it is inferred so that the element counts agree.
    """

    name = "adir.reshape"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    shape = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__([input], {"shape": DenseArrayBase.from_list(i64, shape)})

    def infer_result_types(self) -> Sequence[Attribute]:
        target = _values(self.shape)
        if bad := [d for d in target if d < -1]:
            raise VerifyException(
                f"{self.name}: shape {target} has entry {bad[0]}; entries must be non-negative, "
                "or -1 for the one inferred"
            )
        if target.count(-1) > 1:
            raise VerifyException(f"{self.name}: shape {target} has more than one -1")
        source = self.operand_shape(0)
        count = None if source is None else num_elements(source)
        known = math.prod(d for d in target if d != -1)
        what = f"operand input ({format_shape(source)}) has {count} elements"
        if -1 not in target:
            if count is not None and count != known:
                raise VerifyException(f"{self.name}: {what} but shape {target} has {known}")
            return [tensor_type(f32, tuple(target))]
        if known == 0:
            raise VerifyException(
                f"{self.name}: shape {target} has a 0 entry, so its -1 could be any size"
            )
        if count is not None and count % known:
            raise VerifyException(
                f"{self.name}: {what}, not a multiple of the {known} that shape {target} fixes"
            )
        inferred = None if count is None else count // known
        return [tensor_type(f32, tuple(inferred if d == -1 else d for d in target))]


@irdl_op_definition
class BroadcastToOp(TensorOp):
    """`torch.broadcast_to(input, shape)`: numpy broadcasting of the input to exactly `shape`.

    Aligned from the right, each input dim must be 1 (repeated) or equal to the target dim;
    the target may have more leading dims.
    """

    name = "adir.broadcast_to"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    shape = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__([input], {"shape": DenseArrayBase.from_list(i64, shape)})

    def infer_result_types(self) -> Sequence[Attribute]:
        target = _values(self.shape)
        if any(d < 0 for d in target):
            raise VerifyException(f"{self.name}: shape {target} has a negative entry")
        source = self.operand_shape(0)
        if source is not None:
            cannot = (
                f"{self.name}: cannot broadcast operand input ({format_shape(source)}) "
                f"to shape {target}"
            )
            if len(source) > len(target):
                raise VerifyException(f"{cannot}: rank {len(source)} exceeds {len(target)}")
            for have, want in zip(source, target[len(target) - len(source) :], strict=True):
                if have not in (None, 1, want):
                    raise VerifyException(f"{cannot}: dimension {have} is neither 1 nor {want}")
        return [tensor_type(f32, tuple(target))]


@irdl_op_definition
class ConstantOp(TensorOp):
    """A tensor of the given data: `%c = adir.constant dense<[1.0, 2.0]> : tensor<2xf32>`.

    A splat (`dense<0.5> : tensor<4x4xf32>`) fills the whole tensor with its one value. The
    result has the type of the data (written `-> type` after it only if it says less).
    """

    name = "adir.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(FloatTensor)
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__([], {"value": value})

    @classmethod
    def splat(cls, value: float, shape: Sequence[int]) -> ConstantOp:
        """A tensor of `shape` with every element `value`."""
        return cls(DenseIntOrFPElementsAttr.from_list(TensorType(f32, shape), [value]))

    def infer_result_types(self) -> Sequence[Attribute]:
        type_ = self.value.type
        if not isinstance(type_, TensorType) or type_.element_type != f32:
            raise VerifyException(f"{self.name}: value must be a tensor of f32, got {type_}")
        return [type_]

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        attributes = parser.parse_optional_attr_dict()
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(
                f"{cls.name}: expected dense data such as dense<[1.0, 2.0]> : tensor<2xf32>",
                pos,
                parser.pos,
            )
        result_type = value.type
        if parser.parse_optional_punctuation("->") is not None:
            result_type = parser.parse_type()
        return cls.create(
            properties={"value": value}, attributes=attributes, result_types=[result_type]
        )

    def print(self, printer: Printer) -> None:
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)
        if self.result.type != self.value.type:
            printer.print_string(" -> ")
            printer.print_attribute(self.result.type)


MATMUL_AND_SHAPE_OPS = [MatmulOp, TransposeOp, ReshapeOp, BroadcastToOp, ConstantOp]
