"""`infer-shapes`: fill in result types written as `tensor<*xf32>` or with `?` dims.

Each adir op's shape rule (`TensorOp.infer_result_types`) gives its result types from its
operands; the walker runs them in order through whole functions, refines function result types
from what `func.return` returns, and call results from the callee's signature, repeating until
nothing changes. A contradiction that only shows once a shape is known (e.g. a matmul whose
inner dimensions turn out to differ) is an error at that op's location.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from adir.diagnostics import OpError
from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.params import lookup_symbol
from adir.dialects.tensor.shapes import is_compatible, refine


def refine_values(
    op: Operation,
    values: Sequence[SSAValue],
    inferred: Sequence[Attribute],
    rewriter: PatternRewriter,
) -> None:
    for index, (value, new_type) in enumerate(zip(values, inferred, strict=True)):
        if not is_compatible(value.type, new_type):
            raise OpError(
                op,
                f"{op.name}: result #{index} is declared {value.type} but the operands give "
                f"{new_type}",
            )
        refined = refine(value.type, new_type)
        if refined != value.type:
            rewriter.replace_value_with_new_type(value, refined)


class InferTensorOpResults(RewritePattern):
    """Apply an adir op's shape rule to its results."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, TensorOp):
            return
        try:
            inferred = op.infer_result_types()
        except VerifyException as error:
            raise OpError(op, str(error)) from error
        refine_values(op, op.results, inferred, rewriter)


class InferCallResults(RewritePattern):
    """A call returns what its callee's signature says."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        callee = lookup_symbol(op, op.callee)
        if isinstance(callee, func.FuncOp):
            refine_values(op, op.results, callee.function_type.outputs.data, rewriter)


class RefineFunctionResults(RewritePattern):
    """A function's result types are those of the values it returns."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        function = op.parent_op()
        if not isinstance(function, func.FuncOp):
            return
        declared = function.function_type.outputs.data
        returned = [value.type for value in op.arguments]
        if len(declared) != len(returned):
            return  # the verifier reports this
        refined = [
            refine(d, r) if is_compatible(d, r) else d
            for d, r in zip(declared, returned, strict=True)
        ]
        if list(declared) != refined:
            function.function_type = FunctionType.from_lists(
                function.function_type.inputs.data, refined
            )
            rewriter.notify_op_modified(function)


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Fill in unknown result shapes from the operands, through whole functions."""

    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [InferTensorOpResults(), InferCallResults(), RefineFunctionResults()],
                dce_enabled=False,  # inferring shapes never deletes code
            )
        ).rewrite_module(op)
