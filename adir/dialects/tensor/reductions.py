"""Reductions over axes: sum, mean and max, with the semantics of `torch.sum`, `torch.mean` and
`torch.amax` given `dim` and `keepdim`.

    %s = adir.sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
    %m = adir.mean %x {axes = array<i64: 0, -1>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
    %t = adir.max %x : tensor<2x3xf32> -> tensor<f32>

`axes` lists the reduced axes; a negative axis counts from the end (-1 is the last). Leaving
`axes` out reduces over all axes, as `torch.sum(x)` does. An empty `axes` is rejected rather
than given a meaning, because numpy (reduce nothing) and PyTorch (reduce everything) disagree on
it. With `keepdims` the reduced axes stay as dims of size 1 (the result broadcasts against the
input); without it they are dropped.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerType,
    UnitAttr,
    UnrankedTensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import Dims, FloatTensor, normalize_axis, tensor_type


class ReductionOp(TensorOp):
    """`y = reduce(x)` over `axes` (all axes if left out), keeping them as size 1 if `keepdims`."""

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    axes = opt_prop_def(DenseArrayBase[IntegerType].constr(i64))
    keepdims = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, axes: Sequence[int] | None = None, keepdims: bool = False):
        properties: dict[str, Attribute] = {}
        if axes is not None:
            properties["axes"] = DenseArrayBase.from_list(i64, list(axes))
        if keepdims:
            properties["keepdims"] = UnitAttr()
        super().__init__([input], properties)

    @property
    def keeps_dims(self) -> bool:
        return self.keepdims is not None

    def given_axes(self) -> tuple[int, ...] | None:
        """The axes as written (`None` if left out); an empty or repeated list is an error."""
        if self.axes is None:
            return None
        axes = self.axes.get_values()
        if not axes:
            raise VerifyException(
                f"{self.name}: axes is empty; leave it out to reduce over all axes"
            )
        self._check_distinct(axes, axes)
        return axes

    def reduced_axes(self, rank: int) -> tuple[int, ...]:
        """The reduced axes of an input of this rank, in 0..rank-1 and ascending."""
        axes = self.given_axes()
        if axes is None:
            return tuple(range(rank))
        normalized = tuple(normalize_axis(self.name, axis, rank) for axis in axes)
        self._check_distinct(axes, normalized)
        return tuple(sorted(normalized))

    def _check_distinct(self, given: Sequence[int], normalized: Sequence[int]) -> None:
        seen: set[int] = set()
        for axis in normalized:
            if axis in seen:
                raise VerifyException(f"{self.name}: axes {list(given)} name axis {axis} twice")
            seen.add(axis)

    def check_reduced_dims(self, shape: Dims, reduced: Sequence[int]) -> None:
        """A hook for ops that cannot reduce some dims (e.g. max over size 0)."""

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = self.operand_shape(0)
        if shape is None:
            # Reducing over all axes without keepdims gives a scalar whatever the rank.
            if self.given_axes() is None and not self.keeps_dims:
                return [tensor_type(f32, ())]
            return [UnrankedTensorType(f32)]
        reduced = self.reduced_axes(len(shape))
        self.check_reduced_dims(shape, reduced)
        if self.keeps_dims:
            result = tuple(1 if i in reduced else d for i, d in enumerate(shape))
        else:
            result = tuple(d for i, d in enumerate(shape) if i not in reduced)
        return [tensor_type(f32, result)]


@irdl_op_definition
class SumOp(ReductionOp):
    """`y = sum_{i in axes} x_i` (`torch.sum`; a sum of no elements is 0)."""

    name = "adir.sum"


@irdl_op_definition
class MeanOp(ReductionOp):
    """`y = (sum_{i in axes} x_i) / n`, n the number of elements reduced (`torch.mean`; a mean
    of no elements is 0/0 = nan)."""

    name = "adir.mean"


@irdl_op_definition
class MaxOp(ReductionOp):
    """`y = max_{i in axes} x_i`, nan if any reduced element is nan (`torch.amax`).

    A max of no elements is undefined (PyTorch raises), so a known reduced dim of size 0 is a
    verifier error. Which zero the max of -0.0 and +0.0 is, is unspecified, as in PyTorch.
    """

    name = "adir.max"

    def check_reduced_dims(self, shape: Dims, reduced: Sequence[int]) -> None:
        for axis in reduced:
            if shape[axis] == 0:
                raise VerifyException(
                    f"{self.name}: axis {axis} has size 0, and the max of no elements is undefined"
                )


REDUCTIONS_OPS = [SumOp, MeanOp, MaxOp]


def reduced_axis_set(axes: DenseArrayBase | None, rank: int) -> set[int] | None:
    """The axes that `axes` (a reduction's property, on the tensor or the kernel level) reduces
    in an input of `rank`: negative ones from the end, all if left out; None if one is not an
    axis of the input or the list is empty (which the tensor op's verifier refuses)."""
    if axes is None:
        return set(range(rank))
    values = axes.get_values()
    if not values or any(not -rank <= axis < rank for axis in values):
        return None
    return {int(axis) % rank for axis in values}


def reduction_runs(shape: Sequence[int], reduced: Collection[int]) -> list[tuple[int, bool]]:
    """(size, reduced?) of the runs of `shape`'s dims once size-1 dims are dropped and
    neighbours that are both reduced or both kept are merged: the loops a reduction kernel
    needs."""
    groups: list[tuple[int, bool]] = []
    for axis, size in enumerate(shape):
        if size == 1:
            continue
        is_reduced = axis in reduced
        if groups and groups[-1][1] == is_reduced:
            groups[-1] = (groups[-1][0] * size, is_reduced)
        else:
            groups.append((size, is_reduced))
    return groups
