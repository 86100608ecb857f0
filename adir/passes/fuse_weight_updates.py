"""`fuse-weight-updates`: a weight gradient that only feeds its SGD update is computed inside
the update, so it never needs a buffer of its own.

    %g = adir.matmul %dy, %x {transpose_a} : ...            (the weight gradient)
    %s = adir.mul %lr, %g : tensor<f32>, tensor<32x784xf32> -> ...
    %w_new = adir.sub %w, %s : tensor<32x784xf32>
becomes
    %w_new = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a} : ...

which bufferization writes straight into the parameter. For the seed MLP this is the
difference between a 25,088-float gradient buffer and none. Updates with weight decay or
momentum (whose gradient is also read by other ops) are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor.matmul_and_shape import MatmulOp
from adir.dialects.tensor.optimizers import MatmulSgdUpdateOp
from adir.dialects.tensor.params import LoadOp
from adir.dialects.tensor.shapes import shape_of


class FuseMatmulSgdUpdate(RewritePattern):
    """sub(p, mul(lr, matmul(a, b))) -> matmul_sgd_update(p, a, b, lr), for a loaded 2-D
    parameter `p`, a scalar `lr`, and a matmul and mul with no other use."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.SubOp, rewriter: PatternRewriter, /):
        step = op.rhs.owner
        if not (isinstance(op.lhs.owner, LoadOp) and isinstance(step, ew.MulOp)):
            return
        lr, gradient = step.lhs, step.rhs
        product = gradient.owner
        if not (
            isinstance(product, MatmulOp)
            and shape_of(lr.type) == ()
            and len(shape_of(op.lhs.type) or ()) == 2
            and len(shape_of(product.lhs.type) or ()) == 2
            and len(shape_of(product.rhs.type) or ()) == 2
            and step.result.has_one_use()
            and product.result.has_one_use()
        ):
            return
        fused = MatmulSgdUpdateOp(
            op.lhs,
            product.lhs,
            product.rhs,
            lr,
            transpose_a=product.transpose_a is not None,
            transpose_b=product.transpose_b is not None,
        )
        fused.location = product.location
        rewriter.replace(op, fused)
        rewriter.erase(step)
        rewriter.erase(product)


@dataclass(frozen=True)
class FuseWeightUpdatesPass(ModulePass):
    """Fuse each SGD weight update with the matmul that computes its gradient."""

    name = "fuse-weight-updates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseMatmulSgdUpdate(), apply_recursively=False).rewrite_module(op)
