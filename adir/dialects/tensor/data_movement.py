"""The ops that only move data: transpose, reshape, broadcast_to, constant, flatten, pad,
concat, slice (and slice_grad, its adjoint).

    %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
    %r = adir.reshape %x {shape = array<i64: -1, 784>} : tensor<1x28x28xf32> -> tensor<1x784xf32>
    %b = adir.broadcast_to %v {shape = array<i64: 4, 3>} : tensor<3xf32> -> tensor<4x3xf32>
    %c = adir.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %f = adir.flatten %x {start_dim = 1 : i64} : tensor<8x4x5x5xf32> -> tensor<8x100xf32>
    %p = adir.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>}
           : tensor<2x3xf32> -> tensor<2x6xf32>
    %k = adir.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
    %s = adir.slice %x {start = array<i64: 0, 1>, stop = array<i64: 2, 6>, step = array<i64: 1, 2>}
           : tensor<2x7xf32> -> tensor<2x3xf32>

Each op's docstring gives its semantics, as the PyTorch function it equals where there is one.
Permutations and shapes are `array<i64: ...>` properties, as in `linalg.transpose`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self

from xdsl.dialects.builtin import (
    I64,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
    i8,
    i32,
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
    var_operand_def,
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
    IntTensor,
    format_shape,
    is_compatible,
    normalize_axis,
    num_elements,
    shape_of,
    tensor_type,
)
from adir.dialects.tensor.traits import (
    BatchChange,
    HasBatchInProperties,
    NoKernel,
    NotDifferentiable,
    Recomputable,
    ResultsOutsideArena,
)


def _values(array: DenseArrayBase) -> list[int]:
    return [int(v) for v in array.get_values()]


@irdl_op_definition
class TransposeOp(TensorOp):
    """`torch.permute(input, permutation)`: result dim i is input dim `permutation[i]`."""

    name = "adir.transpose"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    permutation = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure(), Recomputable())

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
class ReshapeOp(TensorOp, HasBatchInProperties):
    """`torch.reshape(input, shape)`: the same elements in row-major order, in a new shape.

    One entry of `shape` may be -1: it is inferred so that the element counts agree.
    """

    name = "adir.reshape"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    shape = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure(), Recomputable())

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

    def properties_at_batch(self, change: BatchChange) -> dict[str, Attribute]:
        """The batch is the target dim that keeps the same elements before and after it: the
        product of the dims before it is that of the operand's dims before the batch (a
        flatten, `x.view(8, -1)`, an unsqueeze after the batch). Where several dims could be
        (runs of 1s at batch 1), the one written -1 is; else the reshape is refused."""
        before = math.prod(change.operand[: change.dim])
        target = _values(self.shape)
        result = change.result
        candidates = [
            d
            for d in range(len(result))
            if result[d] == change.old and math.prod(result[:d]) == before
        ]
        if len(candidates) > 1:
            candidates = [d for d in candidates if target[d] == -1] or candidates
        if not candidates:
            raise ValueError(
                f"it reshapes {format_shape(change.operand)} to {format_shape(result)}, "
                f"merging the batch of {change.old} with other dims"
            )
        if len(candidates) > 1:
            raise ValueError(
                f"it reshapes {format_shape(change.operand)} to {format_shape(result)}: any of "
                f"dims {candidates} could be the batch of {change.old} (write the batch as -1, "
                "or train at a batch other than 1)"
            )
        if target[candidates[0]] != -1:
            target[candidates[0]] = change.new
        return {"shape": DenseArrayBase.from_list(i64, target)}


@irdl_op_definition
class BroadcastToOp(TensorOp, HasBatchInProperties):
    """`torch.broadcast_to(input, shape)`: numpy broadcasting of the input to exactly `shape`.

    Aligned from the right, each input dim must be 1 (repeated) or equal to the target dim;
    the target may have more leading dims.
    """

    name = "adir.broadcast_to"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    shape = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure(), Recomputable())

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

    def properties_at_batch(self, change: BatchChange) -> dict[str, Attribute]:
        """The batch stays in its dim, aligned from the right; a batch of 1 broadcast to a
        larger dim is refused (that repeats one sample)."""
        target = _values(self.shape)
        dim = change.dim + len(target) - len(change.operand)
        if target[dim] != change.old:
            raise ValueError(
                f"it repeats the batch of {change.old} {target[dim]} times "
                f"({format_shape(change.operand)} to {target})"
            )
        target[dim] = change.new
        return {"shape": DenseArrayBase.from_list(i64, target)}


@irdl_op_definition
class ConstantOp(TensorOp):
    """A tensor of the given data: `%c = adir.constant dense<[1.0, 2.0]> : tensor<2xf32>`.

    A splat (`dense<0.5> : tensor<4x4xf32>`) fills the whole tensor with its one value. The
    result has the type of the data (written `-> type` after it only if it says less). The
    data is f32, or i8 / i32 for the quantized family's weights, biases and tables.
    """

    name = "adir.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(FloatTensor | IntTensor)
    traits = traits_def(
        Pure(),
        ResultsOutsideArena(),
        NoKernel("bufferize makes it a read-only memref.global: a static const table in C"),
        NotDifferentiable("no operands"),
    )

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__([], {"value": value})

    @classmethod
    def splat(cls, value: float, shape: Sequence[int]) -> ConstantOp:
        """A tensor of `shape` with every element `value`, kept as one element's bytes (as the
        parser keeps `dense<value>`: adir/dense_literals.py)."""
        data = f32.pack([value]) if math.prod(shape) else b""
        return cls(DenseIntOrFPElementsAttr(TensorType(f32, shape), BytesAttr(data)))

    def infer_result_types(self) -> Sequence[Attribute]:
        type_ = self.value.type
        if not isinstance(type_, TensorType) or type_.element_type not in (f32, i8, i32):
            raise VerifyException(
                f"{self.name}: value must be a tensor of f32, i8 or i32, got {type_}"
            )
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


@irdl_op_definition
class FlattenOp(TensorOp):
    """`torch.flatten(input, start_dim, end_dim)`: dims start_dim..end_dim (inclusive; negative
    counts from the end) merged into one, in row-major order. Defaults 0 and -1, as PyTorch's:
    everything into one dim. A rank-0 input counts as rank 1 and gives `[1]`."""

    name = "adir.flatten"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    start_dim = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    end_dim = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    traits = traits_def(Pure(), Recomputable())

    def __init__(self, input: SSAValue, start_dim: int = 0, end_dim: int = -1):
        properties = {
            "start_dim": IntegerAttr(start_dim, i64),
            "end_dim": IntegerAttr(end_dim, i64),
        }
        super().__init__([input], properties)

    def merged_dims(self, rank: int) -> tuple[int, int]:
        """(start, end) in 0..rank-1 (for rank 0, of the one dim PyTorch sees)."""
        rank = max(rank, 1)
        start = normalize_axis(self.name, self.start_dim.value.data, rank)
        end = normalize_axis(self.name, self.end_dim.value.data, rank)
        if start > end:
            raise VerifyException(
                f"{self.name}: start_dim {self.start_dim.value.data} comes after end_dim "
                f"{self.end_dim.value.data} (rank {rank})"
            )
        return start, end

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = self.operand_shape(0)
        if shape is None:  # only flattening everything says the rank: 1
            whole = (self.start_dim.value.data, self.end_dim.value.data) == (0, -1)
            return [tensor_type(f32, (None,) if whole else None)]
        start, end = self.merged_dims(len(shape))
        if not shape:
            return [tensor_type(f32, (1,))]
        merged = num_elements(shape[start : end + 1])
        return [tensor_type(f32, (*shape[:start], merged, *shape[end + 1 :]))]


def _per_dim(
    op_name: str, what: str, values: Sequence[int], rank: int, of: str = "operand input"
) -> None:
    """Check that a per-dimension array has one entry per dim of the tensor it describes."""
    if len(values) != rank:
        raise VerifyException(
            f"{op_name}: {what} {values} has {len(values)} entries but {of} has rank {rank}"
        )


@irdl_op_definition
class PadOp(TensorOp):
    """Constant padding: `low[i]` elements of `value` before and `high[i]` after the input
    along each dim i, as `torch.nn.functional.pad(input, pad, value=value)` (mode "constant",
    whose `pad` lists the same numbers last dim first). Entries are non-negative (slice to
    crop); `value` defaults to 0.0."""

    name = "adir.pad"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    low = prop_def(DenseArrayBase[I64])
    high = prop_def(DenseArrayBase[I64])
    value = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.0, f32))
    traits = traits_def(Pure(), Recomputable())

    def __init__(
        self, input: SSAValue, low: Sequence[int], high: Sequence[int], value: float = 0.0
    ):
        properties = {
            "low": DenseArrayBase.from_list(i64, low),
            "high": DenseArrayBase.from_list(i64, high),
            "value": FloatAttr(value, f32),
        }
        super().__init__([input], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        low, high = _values(self.low), _values(self.high)
        if len(low) != len(high):
            raise VerifyException(f"{self.name}: low {low} and high {high} have different lengths")
        shape = self.operand_shape(0)
        if shape is not None:
            _per_dim(self.name, "low", low, len(shape))
        if any(v < 0 for v in low + high):
            raise VerifyException(
                f"{self.name}: low {low} and high {high} must not be negative (adir.slice crops)"
            )
        dims = (None,) * len(low) if shape is None else shape
        sides = zip(dims, low, high, strict=True)
        return [tensor_type(f32, tuple(None if d is None else lo + d + hi for d, lo, hi in sides))]


@irdl_op_definition
class ConcatOp(TensorOp):
    """`torch.cat(inputs, dim=axis)`: the inputs joined along `axis` (default 0, negative
    counts from the end), in operand order. At least one input; all have the same rank, at
    least 1, and the same dims except along `axis`."""

    name = "adir.concat"
    inputs = var_operand_def(FloatTensor)
    result = result_def(FloatTensor)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    traits = traits_def(Pure(), Recomputable())

    def __init__(self, inputs: Sequence[SSAValue], axis: int = 0):
        super().__init__([list(inputs)], {"axis": IntegerAttr(axis, i64)})  # type: ignore[list-item]

    def normalized_axis(self, rank: int) -> int:
        return normalize_axis(self.name, self.axis.value.data, rank)

    def infer_result_types(self) -> Sequence[Attribute]:
        if not self.inputs:
            raise VerifyException(f"{self.name}: needs at least one input")
        shapes = [shape_of(v.type) for v in self.inputs]
        ranked = [(i, s) for i, s in enumerate(shapes) if s is not None]
        if not ranked:
            return [tensor_type(f32, None)]
        first, reference = ranked[0]
        for index, shape in ranked[1:]:
            if len(shape) != len(reference):
                raise VerifyException(
                    f"{self.name}: inputs #{first} ({format_shape(reference)}) and #{index} "
                    f"({format_shape(shape)}) have ranks {len(reference)} and {len(shape)}"
                )
        if not reference:
            raise VerifyException(f"{self.name}: inputs must have rank 1 or more, got rank 0")
        axis = self.normalized_axis(len(reference))
        dims: list[Dim] = list(reference)
        for index, shape in ranked[1:]:
            for d in range(len(shape)):
                if d == axis:
                    continue
                if dims[d] is not None and shape[d] is not None and dims[d] != shape[d]:
                    raise VerifyException(
                        f"{self.name}: inputs #{first} ({format_shape(reference)}) and #{index} "
                        f"({format_shape(shape)}) differ in dimension {d} ({dims[d]} and "
                        f"{shape[d]}); only axis {axis} may differ"
                    )
                dims[d] = dims[d] if dims[d] is not None else shape[d]
        along = [None if s is None else s[axis] for s in shapes]
        dims[axis] = None if None in along else sum(along)  # type: ignore[arg-type]
        return [tensor_type(f32, tuple(dims))]


def slice_indices(dim: int, start: int, stop: int, step: int) -> range:
    """The indices `[start:stop:step]` reads from a dim of size `dim`, as Python slicing."""
    return range(*slice(start, stop, step).indices(dim))


class SlicingOp(TensorOp):
    """The per-dim `start`, `stop`, `step` of a Python slice `[start:stop:step, ...]`, one
    entry per dim of the sliced tensor; `step` may be left out (all 1)."""

    start = prop_def(DenseArrayBase[I64])
    stop = prop_def(DenseArrayBase[I64])
    step = opt_prop_def(DenseArrayBase[I64])

    @staticmethod
    def slicing_properties(
        start: Sequence[int], stop: Sequence[int], step: Sequence[int] | None
    ) -> dict[str, Attribute]:
        properties: dict[str, Attribute] = {
            "start": DenseArrayBase.from_list(i64, start),
            "stop": DenseArrayBase.from_list(i64, stop),
        }
        if step is not None and any(s != 1 for s in step):
            properties["step"] = DenseArrayBase.from_list(i64, step)
        return properties

    def bounds(self, rank: int | None, of: str = "operand input") -> list[tuple[int, int, int]]:
        """(start, stop, step) per dim, checked against the rank of the sliced tensor (if
        known, else against each other)."""
        start, stop = _values(self.start), _values(self.stop)
        step = [1] * len(start) if self.step is None else _values(self.step)
        if rank is not None:
            for what, values in (("start", start), ("stop", stop), ("step", step)):
                _per_dim(self.name, what, values, rank, of)
        elif not len(start) == len(stop) == len(step):
            raise VerifyException(
                f"{self.name}: start {start}, stop {stop} and step {step} have different lengths"
            )
        if bad := [s for s in step if s < 1]:
            raise VerifyException(
                f"{self.name}: step {step} has entry {bad[0]}; steps must be positive"
            )
        return list(zip(start, stop, step, strict=True))

    def sliced_shape(self, shape: Dims | None, of: str = "operand input") -> Dims:
        """The shape of the slice of a tensor of `shape` (unknown dims stay unknown)."""
        bounds = self.bounds(None if shape is None else len(shape), of)
        dims = (None,) * len(bounds) if shape is None else shape
        return tuple(
            None if d is None else len(slice_indices(d, *b))
            for d, b in zip(dims, bounds, strict=True)
        )


@irdl_op_definition
class SliceOp(SlicingOp, HasBatchInProperties):
    """`input[start[0]:stop[0]:step[0], ...]`, Python slicing per dim: negative start and stop
    count from the end, out-of-range ones are clamped (a stop of at least the dim, e.g. the dim
    itself, reads to the end), and steps are positive. One entry per dim of the input."""

    name = "adir.slice"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure(), Recomputable())

    def __init__(
        self,
        input: SSAValue,
        start: Sequence[int],
        stop: Sequence[int],
        step: Sequence[int] | None = None,
    ):
        super().__init__([input], self.slicing_properties(start, stop, step))

    def infer_result_types(self) -> Sequence[Attribute]:
        return [tensor_type(f32, self.sliced_shape(self.operand_shape(0)))]

    def properties_at_batch(self, change: BatchChange) -> dict[str, Attribute]:
        """A slice that reads the whole batch (the importer writes the batch as the stop of a
        slice along another dim) reads the whole new batch; one that slices it is refused."""
        start, stop, step = zip(*self.bounds(len(change.operand)), strict=True)
        if slice_indices(change.old, start[change.dim], stop[change.dim], step[change.dim]) != (
            range(change.old)
        ):
            raise ValueError(
                f"it slices the batch of {change.old} "
                f"([{start[change.dim]}:{stop[change.dim]}:{step[change.dim]}])"
            )
        starts, stops, steps = list(start), list(stop), list(step)
        starts[change.dim], stops[change.dim], steps[change.dim] = 0, change.new, 1
        properties = self.slicing_properties(starts, stops, steps)
        if self.step is not None:  # the op keeps a property it has
            properties["step"] = DenseArrayBase.from_list(i64, steps)
        return properties


@irdl_op_definition
class SliceGradOp(SlicingOp):
    """The adjoint of `adir.slice` with steps other than 1 (PyTorch's `slice_backward`): a
    tensor of `shape`, zero except at the elements `[start:stop:step, ...]` selects, which
    hold `grad` (whose shape is that slice's)."""

    name = "adir.slice_grad"
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    shape = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure())

    def __init__(
        self,
        grad: SSAValue,
        shape: Sequence[int],
        start: Sequence[int],
        stop: Sequence[int],
        step: Sequence[int] | None = None,
    ):
        properties = self.slicing_properties(start, stop, step)
        properties["shape"] = DenseArrayBase.from_list(i64, shape)
        super().__init__([grad], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = tuple(_values(self.shape))
        if any(d < 0 for d in shape):
            raise VerifyException(f"{self.name}: shape {list(shape)} has a negative entry")
        sliced = tensor_type(f32, self.sliced_shape(shape, f"shape {list(shape)}"))
        if not is_compatible(sliced, self.grad.type):
            raise VerifyException(
                f"{self.name}: operand grad ({format_shape(self.operand_shape(0))}) is not the "
                f"shape {format_shape(shape_of(sliced))} of the slice of shape {list(shape)}"
            )
        return [tensor_type(f32, shape)]


DATA_MOVEMENT_OPS = [
    TransposeOp,
    ReshapeOp,
    BroadcastToOp,
    ConstantOp,
    FlattenOp,
    PadOp,
    ConcatOp,
    SliceOp,
    SliceGradOp,
]
