"""ATen's matrix products and linear layers: the matmul family."""

from __future__ import annotations

from typing import Any

from torch import fx

from adir.frontends.aten.registry import Args, Lowering, aten, aten_, scaled


def _matrix(lo: Lowering, arg: Any) -> tuple[Any, bool]:
    """A 2-D operand and whether to read it transposed: a `permute [1, 0]` (or `t`) of a
    matrix is read through the matmul's transpose flag, never materialised (the unused
    transpose is removed after lowering)."""
    if isinstance(arg, fx.Node) and arg.target in (aten_.permute.default, aten_.t.default):
        source = arg.args[0]
        dims = list(arg.args[1]) if arg.target == aten_.permute.default else [1, 0]
        if isinstance(source, fx.Node) and len(Lowering.shape(source)) == 2 and dims == [1, 0]:
            return lo.value(source), True
    return lo.value(arg), False


@aten(aten_.mm.default)
def mm(lo: Lowering, node: fx.Node, a: Args) -> Any:
    lhs, transpose_a = _matrix(lo, a["self"])
    rhs, transpose_b = _matrix(lo, a["mat2"])
    return lo.b.matmul(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)


@aten(aten_.addmm.default)
def addmm(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`beta * self + alpha * (mat1 @ mat2)` (nn.Linear's bias plus product, decomposed)."""
    lhs, transpose_a = _matrix(lo, a["mat1"])
    rhs, transpose_b = _matrix(lo, a["mat2"])
    product = lo.b.matmul(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)
    return lo.b.add(scaled(lo, lo.value(a["self"]), a["beta"]), scaled(lo, product, a["alpha"]))


@aten(aten_.bmm.default)
def bmm(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.matmul(lo.value(a["self"]), lo.value(a["mat2"]))


@aten(aten_.linear.default)
def linear(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`x @ weight^T + bias`, weight [out, in] read through transpose_b. adir's matmul takes a
    2-D or 3-D input; other ranks are reshaped to 2-D and back."""
    x, weight, bias = lo.value(a["input"]), lo.value(a["weight"]), lo.value(a["bias"])
    x_shape, out_shape = Lowering.shape(a["input"]), Lowering.shape(node)
    if len(x_shape) in (2, 3):
        return lo.b.linear(x, weight, bias)
    flat = lo.b.reshape(x, [-1, x_shape[-1]])
    return lo.b.reshape(lo.b.linear(flat, weight, bias), list(out_shape))
