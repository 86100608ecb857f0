"""Reverse-mode differentiation of one loss function into its gradient function.

`differentiate(module, loss)` appends `@<loss>_grad`: a copy of the forward computation followed
by the backward sweep, returning the loss, one gradient per trainable parameter the function
reads (in the order the parameters are declared) and, if asked, the gradients of chosen
arguments. Everything is ordinary adir ops.

1. Activity analysis. A value is *varied* if it depends on a trainable parameter (or a chosen
   argument) and *useful* if the loss depends on it; only values that are both get adjoints.
   Integer and boolean values are never varied, except the results of an op marked
   `IntegerAdjoints` (the quantized ops of level 2 of quantized training: their adjoints are
   f32, in integer units).
2. The sweep visits the forward ops in reverse. For each op whose result has an adjoint, its
   VJP rule (`rules/`) gives the adjoints of its operands; an operand used several times sums
   the adjoints of its uses (fan-out).
3. A parameter's gradient is the adjoint of its loads; one the loss does not depend on is zero.
4. What no gradient needs, forward or backward, is removed: the forward values that remain are
   exactly those some rule saved.
5. A forward op marked `{adir.rematerialize}` (the concat that joins a partly trained weight's
   blocks, `split-partial-updates`) is computed again, with its loads, right before each
   backward op that reads it, instead of being kept alive across the sweep: it reads only
   parameters, and it is as large as the weight.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from adir.diagnostics import OpError, warn
from adir.dialects.tensor import LOSS_MARKER
from adir.dialects.tensor.params import LoadOp, ParamOp
from adir.dialects.tensor.traits import IntegerAdjoints, ResultsOutsideArena
from adir.passes.autodiff.builder import BackwardBuilder, is_float, name_value, static_shape
from adir.passes.autodiff.rules import VJP_RULES
from adir.passes.split_partial_updates import REMATERIALIZE


def is_trainable(param: ParamOp) -> bool:
    """Parameters train unless marked `{trainable = false}`."""
    flag = param.attributes.get("trainable")
    if isinstance(flag, IntegerAttr):
        return bool(flag.value.data)
    return True


def activity(forward: Sequence[Operation], seeds: set[SSAValue], loss: SSAValue) -> set[SSAValue]:
    """The values that both depend on a seed and reach the loss."""
    varied = set(seeds)
    for op in forward:
        if any(operand in varied for operand in op.operands):
            integers = op.has_trait(IntegerAdjoints)  # f32 adjoints of int8 values
            varied.update(result for result in op.results if integers or is_float(result))
    useful = {loss}
    for op in reversed(forward):
        if any(result in useful for result in op.results):
            useful.update(op.operands)
    return varied & useful


def gradient_function_name(module: ModuleOp, loss: func.FuncOp) -> str:
    name = f"{loss.sym_name.data}_grad"
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            raise OpError(loss, f"autodiff: @{name} already exists")
    return name


def check_differentiable(loss: func.FuncOp) -> None:
    if len(loss.body.blocks) != 1:
        raise OpError(loss, "autodiff: the loss function must have a single block")
    ret = loss.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    returned = [v.type for v in ret.arguments]
    if len(returned) != 1 or returned[0] != TensorType(f32, []):
        types = ", ".join(str(t) for t in returned) or "nothing"
        raise OpError(
            loss, f"autodiff: @{loss.sym_name.data} must return one tensor<f32> loss, not {types}"
        )
    for op in loss.body.block.ops:
        for value in op.results:
            if not (isinstance(value.type, TensorType) and value.type.has_static_shape()):
                raise OpError(
                    op,
                    f"autodiff needs static shapes, {op.name} gives {value.type} "
                    "(run infer-shapes first)",
                )


def differentiate(module: ModuleOp, loss: func.FuncOp, wrt_args: Sequence[int] = ()) -> func.FuncOp:
    """Append and return the gradient function of `loss` (see the module docstring)."""
    check_differentiable(loss)
    warn_unused_arguments(loss)
    name = gradient_function_name(module, loss)
    for index in wrt_args:
        if not 0 <= index < len(loss.body.block.args):
            raise OpError(loss, f"autodiff: @{loss.sym_name.data} has no argument #{index}")
    params = [op for op in module.ops if isinstance(op, ParamOp) and is_trainable(op)]
    grad_func = loss.clone()
    grad_func.sym_name = StringAttr(name)
    grad_func.attributes.pop(LOSS_MARKER, None)
    Rewriter.insert_op(grad_func, InsertPoint.after(loss))

    block = grad_func.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    loss_value = ret.arguments[0]
    forward = [op for op in block.ops if op is not ret]
    loads: dict[str, list[LoadOp]] = {}
    for op in forward:
        if isinstance(op, LoadOp):
            loads.setdefault(op.param.root_reference.data, []).append(op)
    seeds = {load.result for p in params for load in loads.get(p.sym_name.data, [])}
    seeds |= {block.args[i] for i in wrt_args if is_float(block.args[i])}
    backward = BackwardBuilder(block, activity(forward, seeds, loss_value), frozenset(forward))
    Rewriter.erase_op(ret)

    backward.adjoints[loss_value] = backward.constant(1.0)
    for op in reversed(forward):
        dy = next((backward.adjoints[r] for r in op.results if r in backward.adjoints), None)
        if dy is None or isinstance(op, LoadOp):
            continue
        rule = VJP_RULES.get(type(op))
        if rule is None:
            raise OpError(
                op, f"autodiff: {op.name} has no VJP rule, so it cannot be differentiated"
            )
        backward.location = op.location
        grads = rule(backward, op, dy)
        for operand, grad in zip(op.operands, grads, strict=True):
            if grad is not None:
                backward.add_adjoint(operand, grad)
    backward.location = loss.location

    results: list[SSAValue] = [loss_value]
    for param in params:
        grads = [
            backward.adjoints[ld.result]
            for ld in loads.get(param.sym_name.data, [])
            if ld.result in backward.adjoints
        ]
        if not grads:
            warn_no_gradient(loss, param)
        grad = sum_all(backward, grads) or backward.constant(0.0, param.type.get_shape())
        name_value(grad, f"{param.sym_name.data}_grad", replace=True)
        results.append(grad)
    for index in wrt_args:
        arg = block.args[index]
        grad = backward.adjoints.get(arg)
        results.append(grad or backward.constant(0.0, static_shape(arg)))

    Rewriter.insert_op(func.ReturnOp(*results), InsertPoint.at_end(block))
    grad_func.function_type = FunctionType.from_lists(
        grad_func.function_type.inputs.data, [r.type for r in results]
    )
    grad_func.attributes["adir.gradient_of"] = SymbolRefAttr(loss.sym_name.data)
    grad_func.attributes["adir.gradients"] = ArrayAttr(
        [SymbolRefAttr(p.sym_name.data) for p in params]
    )
    if wrt_args:
        grad_func.attributes["adir.arg_gradients"] = DenseArrayBase.from_list(i64, wrt_args)
    rematerialize(forward)
    remove_dead_code(block)
    return grad_func


def rematerialize(forward: Sequence[Operation]) -> None:
    """Step 5 of the module docstring: a copy of each marked op, and of its operands' ops whose
    results live outside the arena (the parameter loads), before each backward use."""
    in_forward = set(forward)
    for op in forward:
        if REMATERIALIZE not in op.attributes:
            continue
        for use in list(op.results[0].uses):
            user = use.operation
            if user in in_forward:
                continue
            operands = []
            for operand in op.operands:
                source = operand.owner
                if isinstance(source, Operation) and source.has_trait(ResultsOutsideArena):
                    copy = source.clone()
                    Rewriter.insert_op(copy, InsertPoint.before(user))
                    operand = copy.results[0]
                operands.append(operand)
            again = op.clone()
            for index, operand in enumerate(operands):
                again.operands[index] = operand
            again.attributes.pop(REMATERIALIZE)
            Rewriter.insert_op(again, InsertPoint.before(user))
            user.operands[use.index] = again.results[0]


def warn_no_gradient(loss: func.FuncOp, param: ParamOp) -> None:
    """A trainable parameter whose gradient is zero by construction: legal, but likely a slip."""
    name = param.sym_name.data
    load = next(
        (
            op
            for op in loss.walk()
            if isinstance(op, LoadOp) and op.param.root_reference.data == name
        ),
        None,
    )
    if load is None:
        warn(
            param,
            f"autodiff: parameter @{name} is not used by @{loss.sym_name.data}, so its gradient "
            "is zero (mark it {trainable = false} if that is intended)",
        )
    else:
        warn(
            load,
            f"autodiff: parameter @{name} does not reach the loss of @{loss.sym_name.data}, so "
            "its gradient is zero",
        )


def warn_unused_arguments(loss: func.FuncOp) -> None:
    for arg in loss.body.block.args:
        if not arg.uses:
            name = f"%{arg.name_hint}" if arg.name_hint else f"#{arg.index}"
            warn(loss, f"autodiff: argument {name} of @{loss.sym_name.data} is not used")


def sum_all(backward: BackwardBuilder, values: list[SSAValue]) -> SSAValue | None:
    total = values[0] if values else None
    for value in values[1:]:
        total = backward.add(total, value)  # type: ignore[arg-type]
    return total


def remove_dead_code(block: Block) -> None:
    """Erase, last to first, every op whose results nobody uses and that has no side effect."""
    for op in reversed(list(block.ops)):
        if is_trivially_dead(op):
            Rewriter.erase_op(op)
