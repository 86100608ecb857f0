"""The batch of an inference function, changed: `derive-predict{batch=N}`'s second half.

    func.func @predict(%x: tensor<8x1x28x28xf32>) -> tensor<8x10xf32>
becomes, at batch 1,
    func.func @predict(%x: tensor<1x1x28x28xf32>) -> tensor<1x10xf32>

Every input of rank >= 1 has the batch as its dim 0 (the inputs must agree on it); each gets
the new batch there, and every op that reads them, directly or not, gets its result types again
from its shape rule, in order. Ops whose properties spell out the batch (the importer writes a
reshape's, a broadcast's and a slice's sizes as it traced them) give their properties at the
new batch themselves (`HasBatchInProperties`), or refuse: a reshape that merges the batch with
another dim, a slice of the batch.

What is checked, so that a prediction never mixes samples: every value computed from the inputs
has the shape it had with exactly one dim changed, from the old batch to the new. A value that
lost its batch dim (a sum over the batch) or kept the old one (a constant of the traced batch's
size, broadcast against a batch of 1) is an error at its op, never a silent wrong shape.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from adir.diagnostics import OpError
from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import format_shape
from adir.dialects.tensor.traits import BatchChange, HasBatchInProperties

KEEP_BATCH = "; derive-predict{batch=0} (adir-opt --predict-batch=0) keeps the training batch"


def static_shape(value: SSAValue) -> tuple[int, ...] | None:
    type_ = value.type
    if isinstance(type_, TensorType) and type_.has_static_shape():
        return tuple(type_.get_shape())
    return None


def batch_of(function: func.FuncOp, what: str) -> int:
    """The batch of `function`: dim 0 of each input of rank >= 1 (all the same)."""
    shapes = [static_shape(arg) for arg in function.body.block.args]
    if any(shape is None for shape in shapes):
        raise OpError(
            function, f"{what}: the inputs of @{function.sym_name.data} need known shapes"
        )
    dims = sorted({shape[0] for shape in shapes if shape})
    if not dims:
        raise OpError(function, f"{what}: @{function.sym_name.data} has no input with a batch dim")
    if len(dims) > 1:
        listed = ", ".join(format_shape(shape) for shape in shapes if shape)
        raise OpError(
            function,
            f"{what}: the inputs of @{function.sym_name.data} ({listed}) differ in dim 0, so "
            "it is no batch",
        )
    return dims[0]


def changed_dim(old: tuple[int, ...], new: tuple[int, ...]) -> int:
    return next(d for d, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)


def with_batch(type_: Attribute, batch: int) -> Attribute:
    assert isinstance(type_, TensorType)
    shape = type_.get_shape()
    return TensorType(type_.element_type, (batch, *shape[1:])) if shape else type_


def change_batch(function: func.FuncOp, batch: int, what: str) -> None:
    """Re-type `function` (single block, known shapes) for inputs of batch `batch`; `what` is
    the pass as the user named it, for the diagnostics."""
    old_batch = batch_of(function, what)
    if batch == old_batch:
        return
    old_shapes: dict[SSAValue, tuple[int, ...]] = {}  # per-sample value -> its old shape
    block = function.body.block
    for arg in list(block.args):
        shape = static_shape(arg)
        assert shape is not None
        if shape:
            old_shapes[Rewriter.replace_value_with_new_type(arg, with_batch(arg.type, batch))] = (
                shape
            )
    for op in list(block.ops):
        changed = [operand for operand in op.operands if operand in old_shapes]
        if not changed or isinstance(op, func.ReturnOp):
            continue
        if not isinstance(op, TensorOp):
            raise OpError(op, f"{what}: cannot change the batch through {op.name}")
        old_results = [static_shape(result) for result in op.results]
        if isinstance(op, HasBatchInProperties) and op.operands[0] in old_shapes:
            operand = old_shapes[op.operands[0]]
            result = old_results[0]
            if result is None:
                raise OpError(op, f"{what}: {op.name} needs a known result shape")
            dim = changed_dim(operand, static_shape(op.operands[0]) or ())
            change = BatchChange(dim, old_batch, batch, operand, result)
            try:
                op.properties.update(op.properties_at_batch(change))
            except ValueError as why:
                raise OpError(
                    op,
                    f"{what}: {op.name} has the batch of {old_batch} in its properties: {why}"
                    f"{KEEP_BATCH}",
                ) from why
        try:
            inferred = op.infer_result_types()
        except VerifyException as error:
            raise OpError(op, f"{what}: at batch {batch}, {error}") from error
        for index, (result, old, new) in enumerate(
            zip(op.results, old_results, inferred, strict=True)
        ):
            new_shape = tuple(new.get_shape()) if isinstance(new, TensorType) else None
            differ = (
                []
                if old is None or new_shape is None or len(old) != len(new_shape)
                else [(a, b) for a, b in zip(old, new_shape, strict=True) if a != b]
            )
            if differ != [(old_batch, batch)]:
                raise OpError(
                    op,
                    f"{what}: result #{index} of {op.name} is {new} at batch {batch}, "
                    f"{result.type} at batch {old_batch}: it does not keep the batch in a dim "
                    "of its own (is a constant or a parameter as large as the training batch?)"
                    f"{KEEP_BATCH}",
                )
            old_shapes[Rewriter.replace_value_with_new_type(result, new)] = old
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    function.function_type = FunctionType.from_lists(
        [arg.type for arg in block.args], [value.type for value in returned.arguments]
    )
