"""`fold-transpose-into-matmul`: a transpose feeding a matmul becomes a flag of the matmul.

    %t = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<784x32xf32> -> ...
    %y = adir.matmul %x, %t : ...          ==>     %y = adir.matmul %x, %w {transpose_b} : ...

A transpose that swaps the last two dims ([1, 0], or [0, 2, 1] for a batch) is exactly what a
matmul flag does, so the matmul reads the untransposed value and toggles its flag; a transpose
left without uses is erased. Chains fold too: two transposes toggle the flag back.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from adir.dialects.tensor.data_movement import TransposeOp
from adir.dialects.tensor.matmul import MatmulOp


def swaps_last_two(value: SSAValue) -> TransposeOp | None:
    """The transpose that defines `value`, if all it does is swap the last two dims."""
    op = value.owner
    if not isinstance(op, TransposeOp):
        return None
    rank = len(op.permutation)
    swap = [*range(rank - 2), rank - 1, rank - 2]
    return op if list(op.permutation.get_values()) == swap else None


class FoldTransposeIntoMatmul(RewritePattern):
    """matmul(transpose(a), b) -> matmul(a, b) with transpose_a toggled; likewise for b."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter, /):
        lhs_t, rhs_t = swaps_last_two(op.lhs), swaps_last_two(op.rhs)
        if lhs_t is None and rhs_t is None:
            return
        # Reading through a transpose toggles the operand's flag: (x^T)^T = x.
        folded = MatmulOp(
            op.lhs if lhs_t is None else lhs_t.input,
            op.rhs if rhs_t is None else rhs_t.input,
            transpose_a=(op.transpose_a is not None) != (lhs_t is not None),
            transpose_b=(op.transpose_b is not None) != (rhs_t is not None),
            result_type=op.result.type,
        )
        folded.attributes.update(op.attributes)
        folded.location = op.location
        rewriter.replace(op, folded)
        for transpose in dict.fromkeys(t for t in (lhs_t, rhs_t) if t is not None):
            if not transpose.result.uses:
                rewriter.erase(transpose)


@dataclass(frozen=True)
class FoldTransposeIntoMatmulPass(ModulePass):
    """Fold every last-two-dims transpose that feeds a matmul into the matmul's flags."""

    name = "fold-transpose-into-matmul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldTransposeIntoMatmul()).rewrite_module(op)
