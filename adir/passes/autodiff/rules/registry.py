"""The VJP rule registry: one rule per op, looked up by the op's class.

A rule receives the `BackwardBuilder`, the forward op and the adjoint `dy` of its result, and
returns one adjoint per operand (None where the operand is not differentiable, e.g. labels):

    @vjp(ew.MulOp)
    def mul(b: BackwardBuilder, op: ew.MulOp, dy: SSAValue) -> Adjoints:
        return [b.unbroadcast(b.mul(dy, op.rhs), op.lhs), b.unbroadcast(b.mul(dy, op.lhs), op.rhs)]

Rules may compute adjoints for operands that need none; the pass drops those, and what they
computed is dead code it removes. For an op with several results, `dy` is the adjoint of the
first result that has one, and `b.adjoints` has the others (see the batchnorm rule). Rules for
one op family live in the file of that family's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from xdsl.ir import Operation, SSAValue

if TYPE_CHECKING:
    from adir.passes.autodiff.builder import BackwardBuilder

Adjoints = Sequence[SSAValue | None]
Rule = Callable[["BackwardBuilder", Any, SSAValue], Adjoints]

VJP_RULES: dict[type[Operation], Rule] = {}

_OpT = TypeVar("_OpT", bound=Operation)


def vjp(*op_types: type[Operation]) -> Callable[[Rule], Rule]:
    """Register the decorated function as the VJP rule of `op_types`."""

    def register(rule: Rule) -> Rule:
        for op_type in op_types:
            assert op_type not in VJP_RULES, f"two VJP rules for {op_type.name}"
            VJP_RULES[op_type] = rule
        return rule

    return register
