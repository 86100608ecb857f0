"""`fuse-batchnorm-relu`: a training-mode batchnorm whose output only a relu reads becomes one
`adir.batchnorm_relu`, and the batchnorm's gradient of that relu's gradient one
`adir.batchnorm_relu_grad`, so neither the normalised tensor nor the relu's gradient is ever
written: one pass over the activations less forward and one less backward.

    %n, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %gamma, %beta, %m0, %v0
    %a = adir.relu %n
    ...
    %dn = adir.relu_grad %a, %da                 (or adir.mask_grad (adir.relu_mask %a), %da)
    %dx, %dgamma, %dbeta = adir.batchnorm_grad %x, %gamma, %mean, %invstd, %dn
becomes
    %a, %mean, %invstd, %rm, %rv = adir.batchnorm_relu %x, %gamma, %beta, %m0, %v0
    ...
    %dx, %dgamma, %dbeta = adir.batchnorm_relu_grad %x, %gamma, %beta, %mean, %invstd, %da

The relu's gradient is 0 where the relu's output is <= 0, which is where the batchnorm's
output y = (x - mean) * scale + beta is <= 0: the fused gradient recomputes y from the
forward's input and statistics by the forward's own expression (`adir.batchnorm_relu_grad`),
so the same bits as the two ops, and the relu's output (or its packed mask) is not read
again; a `relu_mask` left with no reader goes too. DS-CNN (examples/ds_cnn.mlir) has nine
such pairs: its batch-16 step loses 9 relu passes, 8 relu_grad and 2 mask_grad passes
(docs/benchmarks.md).

Fused only where the intermediate is dead otherwise: the batchnorm's output has the relu as its
only use (a tensor with one use has no other reader, so bufferization gives it no buffer that
anything else reads), the relu's gradient has the batchnorm gradient as its only use, and that
gradient reads the fused forward's own input, gamma, mean and invstd. Anything else stays as it
is: a relu of an eval-mode batchnorm, a batchnorm whose output a residual sum also reads, a
relu gradient summed with another path's. Run it after `autodiff` and `insert-optimizer` (and
`recompute-activations`, whose recomputations are of the unfused ops), before `bufferize`; on
by default there in the shortcut pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from adir.dialects.tensor.activations import MaskGradOp, ReluGradOp, ReluMaskOp, ReluOp
from adir.dialects.tensor.normalization import (
    BatchnormGradOp,
    BatchnormOp,
    BatchnormReluGradOp,
    BatchnormReluOp,
)


class FuseBatchnormRelu(RewritePattern):
    """relu(batchnorm(...).output) -> batchnorm_relu(...), the batchnorm's output read by the
    relu alone. The fused op takes the batchnorm's place (its statistics' stores may come
    before the relu)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, relu: ReluOp, rewriter: PatternRewriter, /):
        batchnorm = relu.input.owner
        if not (
            isinstance(batchnorm, BatchnormOp)
            and relu.input == batchnorm.output
            and batchnorm.output.has_one_use()
        ):
            return
        fused = BatchnormReluOp(
            *batchnorm.operands, batchnorm.momentum.value.data, batchnorm.eps.value.data
        )
        fused.location = batchnorm.location
        fused.attributes.update(batchnorm.attributes)  # e.g. recompute-activations' mark
        for old, new in zip(batchnorm.results, fused.results, strict=True):
            new.name_hint = old.name_hint
        fused.output.name_hint = relu.result.name_hint
        rewriter.insert(fused, InsertPoint.before(batchnorm))
        rewriter.replace_all_uses_with(relu.result, fused.output)
        for old, new in zip(batchnorm.results[1:], fused.results[1:], strict=True):
            rewriter.replace_all_uses_with(old, new)
        rewriter.erase(relu)
        rewriter.erase(batchnorm)


def fused_forward_of(output: SSAValue) -> BatchnormReluOp | None:
    """The `adir.batchnorm_relu` whose relu output `output` is, if it is one."""
    forward = output.owner
    if isinstance(forward, BatchnormReluOp) and output == forward.output:
        return forward
    return None


def reads_the_forward(grad: BatchnormGradOp, forward: BatchnormReluOp) -> bool:
    """Whether the batchnorm gradient is the one of `forward`: its input, gamma and statistics."""
    return (
        grad.input == forward.input
        and grad.gamma == forward.gamma
        and grad.batch_mean == forward.batch_mean
        and grad.batch_invstd == forward.batch_invstd
    )


def relu_grad_output(relu_gradient: SSAValue) -> SSAValue | None:
    """The relu output `a` that relu_grad(a, da) reads, if `relu_gradient` is one."""
    op = relu_gradient.owner
    return op.output if isinstance(op, ReluGradOp) else None


def mask_grad_output(relu_gradient: SSAValue) -> SSAValue | None:
    """The relu output `a` behind mask_grad(relu_mask(a), da), if `relu_gradient` is one."""
    op = relu_gradient.owner
    mask = op.mask.owner if isinstance(op, MaskGradOp) else None
    return mask.saved if isinstance(mask, ReluMaskOp) else None


class FuseReluGradIntoBatchnormGrad(RewritePattern):
    """batchnorm_grad(x, gamma, mean, invstd, relu_grad(a, da)) -> batchnorm_relu_grad(x,
    gamma, beta, mean, invstd, da), for `a` the output of the batchnorm_relu of x, gamma, beta
    and those statistics, the relu's gradient read by the batchnorm gradient alone (the same for
    mask_grad of a's relu_mask, which goes when nothing else reads it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, grad: BatchnormGradOp, rewriter: PatternRewriter, /):
        relu_gradient = grad.grad.owner
        output = relu_grad_output(grad.grad)
        if output is None:
            output = mask_grad_output(grad.grad)
        forward = None if output is None else fused_forward_of(output)
        if forward is None or not (grad.grad.has_one_use() and reads_the_forward(grad, forward)):
            return
        da = relu_gradient.operands[1]  # type: ignore[union-attr] (relu_grad's or mask_grad's grad)
        fused = BatchnormReluGradOp(
            grad.input, grad.gamma, forward.beta, grad.batch_mean, grad.batch_invstd, da
        )
        fused.location = grad.location
        fused.attributes.update(grad.attributes)
        for old, new in zip(grad.results, fused.results, strict=True):
            new.name_hint = old.name_hint
        rewriter.replace(grad, fused)
        mask = relu_gradient.operands[0].owner  # type: ignore[union-attr]
        rewriter.erase(relu_gradient)  # type: ignore[arg-type]
        if isinstance(mask, ReluMaskOp) and not mask.result.uses:
            rewriter.erase(mask)


@dataclass(frozen=True)
class FuseBatchnormReluPass(ModulePass):
    """Fuse each training batchnorm with the relu after it, and their gradients (see the
    module docstring)."""

    name = "fuse-batchnorm-relu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # The forward pairs first: the gradients match the fused forward op.
        for pattern in (FuseBatchnormRelu(), FuseReluGradIntoBatchnormGrad()):
            PatternRewriteWalker(
                GreedyRewritePatternApplier([pattern]), apply_recursively=False
            ).rewrite_module(op)
