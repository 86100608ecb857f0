"""`fuse-weight-updates`: a weight gradient that is a matmul and feeds only its parameter's
update is computed inside the update, so it never needs a buffer of its own.

    %g = adir.matmul %dy, %x {transpose_a} : ...            (the weight gradient)
    %w1, %m1, %v1 = adir.adam_update %w, %m, %v, %g, %lr, %bc1, %bc2 {...} : ...
becomes
    %w1, %m1, %v1 = adir.matmul_adam_update %w, %m, %v, %dy, %x, %lr, %bc1, %bc2
                    {transpose_a, ...} : ...

and likewise `adir.sgd_update` -> `adir.matmul_sgd_update` and `adir.momentum_update` ->
`adir.matmul_momentum_update`, with every property kept (weight decay, clip_value, nesterov,
decoupled weight decay). Bufferization then writes the parameter and its state in place: for
the seed MLP with Adam, the 25,088-float gradient of w1 and the update's temporaries vanish
from the arena. The plain SGD update written out, `sub(p, mul(lr, matmul(a, b)))` with `p` a
loaded parameter, is fused into `adir.matmul_sgd_update` too.

Not fused: a gradient with another use (e.g. under `clip_norm`, which reads every gradient
before any update, or one that is returned), a gradient that is not a single 2-D matmul (a
convolution's, a bias's reduction, a weight read twice whose gradient is a sum), and the
other elementwise arithmetic of `insert-optimizer{update_ops=false}`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor.matmul import MatmulOp
from adir.dialects.tensor.optimizers import (
    MATMUL_FORMS,
    ElementwiseUpdateOp,
    MatmulSgdUpdateOp,
    MatmulUpdateOp,
)
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


class FuseMatmulIntoUpdate(RewritePattern):
    """update(..., matmul(a, b), ...) -> matmul_update(..., a, b, ...), for a matmul of 2-D
    operands with no other use, updating a 2-D parameter."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ElementwiseUpdateOp, rewriter: PatternRewriter, /):
        product = op.grad.owner
        if not (
            isinstance(product, MatmulOp)
            and op.grad.has_one_use()
            and all(len(shape_of(v.type) or ()) == 2 for v in (op.param, product.lhs, product.rhs))
        ):
            return
        index = op.operands.index(op.grad)
        operands = [*op.operands[:index], product.lhs, product.rhs, *op.operands[index + 1 :]]
        flags = MatmulUpdateOp.flags(
            product.transpose_a is not None, product.transpose_b is not None
        )
        fused = MATMUL_FORMS[type(op)].create(
            operands=operands,
            result_types=[result.type for result in op.results],
            properties=flags | dict(op.properties),
        )
        fused.location = product.location
        rewriter.replace(op, fused)
        rewriter.erase(product)


@dataclass(frozen=True)
class FuseWeightUpdatesPass(ModulePass):
    """Fuse each weight update with the matmul that computes its gradient."""

    name = "fuse-weight-updates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([FuseMatmulIntoUpdate(), FuseMatmulSgdUpdate()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
