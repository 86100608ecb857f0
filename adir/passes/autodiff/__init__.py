"""`autodiff`: reverse-mode differentiation at compile time, on the tensor level.

    adir-opt --autodiff model.mlir
    adir-opt -p 'infer-shapes,autodiff{func=loss wrt_args=0}' model.mlir

The loss function is the one marked `attributes {adir.loss}` (every marked one), or the one the
`func` option names. It must return one `tensor<f32>`. For each, the pass appends
`@<name>_grad`, with the same arguments, returning the loss, then the gradient of every
trainable parameter the module declares (in declaration order; `{trainable = false}` on an
`adir.param` freezes it; a weight with `update_fraction` / `update_channels` is first split
into its trained block and a frozen rest, `split-partial-updates`), then the gradients of the
arguments listed in `wrt_args` (none by default: data needs no gradient; tests use it to check a
rule on its own). The gradient function records what it returns: `adir.gradient_of = @loss`,
`adir.gradients = [@w1, ...]`, and `adir.arg_gradients = array<i64: ...>` when `wrt_args` is
given.

The engine is `backward.py`; the VJP rules, one file per op family, are in `rules/`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from adir.passes.autodiff.backward import LOSS_MARKER, differentiate
from adir.passes.split_partial_updates import split_partial_updates


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Append the gradient function of each loss function."""

    name = "autodiff"

    func: str | None = None
    """The loss function; by default, every function marked `{adir.loss}`."""

    wrt_args: tuple[int, ...] = ()
    """Argument positions whose gradients the gradient function also returns."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        if self.func is not None:
            losses = [f for f in functions if f.sym_name.data == self.func]
            if not losses:
                names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
                raise PassFailedException(
                    f"autodiff: no function @{self.func} (the module has: {names})"
                )
        else:
            losses = [f for f in functions if LOSS_MARKER in f.attributes]
            if not losses:
                raise PassFailedException(
                    "autodiff: no loss function; mark it `attributes {adir.loss}` or name it "
                    "with autodiff{func=NAME}"
                )
        split_partial_updates(op)  # a partly trained weight: its trained block and the rest
        for loss in losses:
            differentiate(op, loss, self.wrt_args)
