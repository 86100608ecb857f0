"""Embedding: a lookup of rows of a weight table by integer indices, and its gradient op.

    %e = adir.embedding %w, %tokens : tensor<50x16xf32>, tensor<4x7xi32> -> tensor<4x7x16xf32>
    %dw = adir.embedding_grad %de, %tokens {num_weights = 50 : i64}
        : tensor<4x7x16xf32>, tensor<4x7xi32> -> tensor<50x16xf32>

The indices are i32, as adir's class labels are (the importer turns PyTorch's int64 indices
into i32, as it does labels; a table has at most 2^31 - 1 rows anyway). `padding_idx` is
PyTorch's: the row is looked up as any other, but gets no gradient.

An index outside [0, num_weights) is a fault in the data (PyTorch raises): the interpreter
raises an error naming the element; the C never reads or writes out of bounds, it gives that
position a row of nan in the forward pass and skips it in the backward pass (as a class index
outside [0, C) makes a loss nan, `docs/numerics.md`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, f32, i32, i64
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
from adir.dialects.tensor.shapes import (
    FloatTensor,
    IntTensor,
    Shape,
    element_type,
    format_shape,
    require_rank,
    shape_of,
    tensor_type,
)
from adir.dialects.tensor.traits import NotDifferentiable, ReadsClassLabels, Recomputable


def _indices_shape(op: TensorOp, value: SSAValue) -> Shape:
    """The shape of an i32 indices operand."""
    if element_type(value.type) != i32:
        raise VerifyException(
            f"{op.name}: operand indices must have element type i32, got {element_type(value.type)}"
        )
    return shape_of(value.type)


def _padding_idx(op: TensorOp, num_weights: int | None) -> None:
    """`padding_idx` is a row of the table (PyTorch's negative form is normalised by the
    importer, as nn.Embedding does)."""
    if op.padding_idx is None:  # type: ignore[attr-defined]
        return
    index = op.padding_idx.value.data  # type: ignore[attr-defined]
    if index < 0 or (num_weights is not None and index >= num_weights):
        bound = "" if num_weights is None else f", num_weights = {num_weights}"
        raise VerifyException(
            f"{op.name}: padding_idx must be a row of the table, in [0, num_weights), got "
            f"{index}{bound}"
        )


def _properties(padding_idx: int | None) -> dict[str, Attribute]:
    return {} if padding_idx is None else {"padding_idx": IntegerAttr(padding_idx, i64)}


@irdl_op_definition
class EmbeddingOp(TensorOp):
    """`F.embedding(indices, weight, padding_idx)`, ATen's `embedding(weight, indices,
    padding_idx)`: `result[i..., :] = weight[indices[i...], :]` for a weight `[num_weights,
    dim]` and indices of any shape (i32); the result is `[*indices.shape, dim]`.
    `padding_idx` (optional) only changes the gradient: see `adir.embedding_grad`.
    """

    name = "adir.embedding"
    weight = operand_def(FloatTensor)
    indices = operand_def(IntTensor)
    result = result_def(FloatTensor)
    padding_idx = opt_prop_def(IntegerAttr[I64])
    # A copy of rows: cheap and deterministic to recompute from the (small, integer) indices
    # instead of keeping the looked-up rows alive for the backward pass.
    traits = traits_def(Pure(), Recomputable(), ReadsClassLabels("indices", axis=0))

    def __init__(self, weight: SSAValue, indices: SSAValue, padding_idx: int | None = None):
        super().__init__([weight, indices], _properties(padding_idx))

    def infer_result_types(self) -> Sequence[Attribute]:
        weight_shape = self.operand_shape(0)
        require_rank(self.name, "weight", weight_shape, (2,))
        indices_shape = _indices_shape(self, self.indices)
        num_weights, dim = (None, None) if weight_shape is None else weight_shape
        _padding_idx(self, num_weights)
        if indices_shape is None:
            return [tensor_type(f32, None)]
        return [tensor_type(f32, (*indices_shape, dim))]


@irdl_op_definition
class EmbeddingGradOp(TensorOp):
    """The backward of `adir.embedding`, ATen's `embedding_dense_backward(grad, indices,
    num_weights, padding_idx, scale_grad_by_freq=False)`: a scatter-add,

        result = zeros([num_weights, dim])
        result[indices[i...], :] += grad[i..., :]   for each i in row-major order of indices

    skipping the positions whose index is `padding_idx`. Rows looked up several times
    accumulate, in the row-major order of the indices (so the interpreter and the C add in the
    same order and agree bit for bit). `num_weights` is the table's row count, which the
    operands do not give.
    """

    name = "adir.embedding_grad"
    grad = operand_def(FloatTensor)
    indices = operand_def(IntTensor)
    result = result_def(FloatTensor)
    num_weights = prop_def(IntegerAttr[I64])
    padding_idx = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), NotDifferentiable("a gradient op: autodiff emits it"))

    def __init__(
        self,
        grad: SSAValue,
        indices: SSAValue,
        num_weights: int,
        padding_idx: int | None = None,
    ):
        properties = {"num_weights": IntegerAttr(num_weights, i64), **_properties(padding_idx)}
        super().__init__([grad, indices], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        num_weights = self.num_weights.value.data
        if num_weights < 0:
            raise VerifyException(
                f"{self.name}: num_weights must not be negative, got {num_weights}"
            )
        _padding_idx(self, num_weights)
        grad_shape = self.operand_shape(0)
        indices_shape = _indices_shape(self, self.indices)
        if grad_shape is None:
            return [tensor_type(f32, (num_weights, None))]
        if indices_shape is not None:
            leading = grad_shape[:-1]
            if len(grad_shape) != len(indices_shape) + 1 or not all(
                g is None or i is None or g == i
                for g, i in zip(leading, indices_shape, strict=True)
            ):
                raise VerifyException(
                    f"{self.name}: operand grad ({format_shape(grad_shape)}) must be the "
                    f"indices' shape ({format_shape(indices_shape)}) and one dim more"
                )
        if not grad_shape:
            raise VerifyException(f"{self.name}: operand grad must have rank 1 or more")
        return [tensor_type(f32, (num_weights, grad_shape[-1]))]


EMBEDDING_OPS: list[type] = [EmbeddingOp, EmbeddingGradOp]
