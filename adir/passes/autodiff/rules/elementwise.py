"""VJP rules of the elementwise family. Adjoints of broadcast operands are summed back to the
operand's shape (`unbroadcast`). Ties and special values follow PyTorch's derivatives."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import elementwise as ew
from adir.passes.autodiff.builder import BackwardBuilder
from adir.passes.autodiff.rules.registry import Adjoints, vjp


@vjp(ew.AddOp)
def add(b: BackwardBuilder, op: ew.AddOp, dy: SSAValue) -> Adjoints:
    return [b.unbroadcast(dy, op.lhs), b.unbroadcast(dy, op.rhs)]


@vjp(ew.SubOp)
def sub(b: BackwardBuilder, op: ew.SubOp, dy: SSAValue) -> Adjoints:
    return [b.unbroadcast(dy, op.lhs), b.unbroadcast(b.neg(dy), op.rhs)]


@vjp(ew.MulOp)
def mul(b: BackwardBuilder, op: ew.MulOp, dy: SSAValue) -> Adjoints:
    return [b.unbroadcast(b.mul(dy, op.rhs), op.lhs), b.unbroadcast(b.mul(dy, op.lhs), op.rhs)]


@vjp(ew.DivOp)
def div(b: BackwardBuilder, op: ew.DivOp, dy: SSAValue) -> Adjoints:
    # z = x / y: dx = dy / y; dy_ = -dy * x / y^2 = -(dx * z)
    dx = b.div(dy, op.rhs)
    return [b.unbroadcast(dx, op.lhs), b.unbroadcast(b.neg(b.mul(dx, op.result)), op.rhs)]


@vjp(ew.PowOp)
def pow_(b: BackwardBuilder, op: ew.PowOp, dy: SSAValue) -> Adjoints:
    # z = x ** p: dx = dy * p * x ** (p - 1), 0 where p == 0 (PyTorch's choice: no nan at x=0);
    # dp = dy * z * log(x), 0 where x == 0 and p >= 0.
    x, p, z = op.lhs, op.rhs, op.result
    zero, one = b.constant(0.0), b.constant(1.0)
    dx = b.mul(b.mul(dy, p), b.emit(ew.PowOp(x, b.sub(p, one))))
    dx = b.select(b.cmp("eq", p, zero), zero, dx)
    z_log_x = b.mul(z, b.emit(ew.LogOp(x)))
    z_log_x = b.select(b.cmp("eq", x, zero), b.select(b.cmp("ge", p, zero), zero, z_log_x), z_log_x)
    return [b.unbroadcast(dx, x), b.unbroadcast(b.mul(dy, z_log_x), p)]


def _split_ties(
    b: BackwardBuilder, dy: SSAValue, lhs: SSAValue, rhs: SSAValue, loser: str
) -> Adjoints:
    """max/min backward as PyTorch: the winner gets dy, a tie gives each half, and the loser
    (where `lhs <loser> rhs`) nothing; nan compares false everywhere, so both sides get dy."""
    zero, half_dy = b.constant(0.0), b.mul(dy, b.constant(0.5))
    winner = {"lt": "gt", "gt": "lt"}[loser]
    shared = b.select(b.cmp("eq", lhs, rhs), half_dy, dy)
    d_lhs = b.select(b.cmp(loser, lhs, rhs), zero, shared)
    d_rhs = b.select(b.cmp(winner, lhs, rhs), zero, shared)
    return [b.unbroadcast(d_lhs, lhs), b.unbroadcast(d_rhs, rhs)]


@vjp(ew.MaximumOp)
def maximum(b: BackwardBuilder, op: ew.MaximumOp, dy: SSAValue) -> Adjoints:
    return _split_ties(b, dy, op.lhs, op.rhs, loser="lt")


@vjp(ew.MinimumOp)
def minimum(b: BackwardBuilder, op: ew.MinimumOp, dy: SSAValue) -> Adjoints:
    return _split_ties(b, dy, op.lhs, op.rhs, loser="gt")


@vjp(ew.NegOp)
def neg(b: BackwardBuilder, op: ew.NegOp, dy: SSAValue) -> Adjoints:
    return [b.neg(dy)]


@vjp(ew.ExpOp)
def exp(b: BackwardBuilder, op: ew.ExpOp, dy: SSAValue) -> Adjoints:
    return [b.mul(dy, op.result)]


@vjp(ew.LogOp)
def log(b: BackwardBuilder, op: ew.LogOp, dy: SSAValue) -> Adjoints:
    return [b.div(dy, op.input)]


@vjp(ew.SqrtOp)
def sqrt(b: BackwardBuilder, op: ew.SqrtOp, dy: SSAValue) -> Adjoints:
    return [b.div(dy, b.mul(op.result, b.constant(2.0)))]


@vjp(ew.SelectOp)
def select(b: BackwardBuilder, op: ew.SelectOp, dy: SSAValue) -> Adjoints:
    zero = b.constant(0.0)
    return [
        None,
        b.unbroadcast(b.select(op.condition, dy, zero), op.on_true),
        b.unbroadcast(b.select(op.condition, zero, dy), op.on_false),
    ]
