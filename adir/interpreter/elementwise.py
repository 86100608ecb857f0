"""numpy semantics of the elementwise family (adir/dialects/tensor/elementwise.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import elementwise as ew
from adir.interpreter.family import FamilyFunctions

_COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@register_impls
class ElementwiseFunctions(FamilyFunctions):
    @impl(ew.AddOp)
    def run_add(self, interpreter: Interpreter, op: ew.AddOp, args: tuple[Any, ...]):
        return (np.add(*args),)

    @impl(ew.SubOp)
    def run_sub(self, interpreter: Interpreter, op: ew.SubOp, args: tuple[Any, ...]):
        return (np.subtract(*args),)

    @impl(ew.MulOp)
    def run_mul(self, interpreter: Interpreter, op: ew.MulOp, args: tuple[Any, ...]):
        return (np.multiply(*args),)

    @impl(ew.DivOp)
    def run_div(self, interpreter: Interpreter, op: ew.DivOp, args: tuple[Any, ...]):
        return (np.divide(*args),)

    @impl(ew.PowOp)
    def run_pow(self, interpreter: Interpreter, op: ew.PowOp, args: tuple[Any, ...]):
        return (np.power(*args),)

    @impl(ew.MaximumOp)
    def run_maximum(self, interpreter: Interpreter, op: ew.MaximumOp, args: tuple[Any, ...]):
        return (np.maximum(*args),)

    @impl(ew.MinimumOp)
    def run_minimum(self, interpreter: Interpreter, op: ew.MinimumOp, args: tuple[Any, ...]):
        return (np.minimum(*args),)

    @impl(ew.NegOp)
    def run_neg(self, interpreter: Interpreter, op: ew.NegOp, args: tuple[Any, ...]):
        return (np.negative(args[0]),)

    @impl(ew.ExpOp)
    def run_exp(self, interpreter: Interpreter, op: ew.ExpOp, args: tuple[Any, ...]):
        return (np.exp(args[0]),)

    @impl(ew.LogOp)
    def run_log(self, interpreter: Interpreter, op: ew.LogOp, args: tuple[Any, ...]):
        return (np.log(args[0]),)

    @impl(ew.SqrtOp)
    def run_sqrt(self, interpreter: Interpreter, op: ew.SqrtOp, args: tuple[Any, ...]):
        return (np.sqrt(args[0]),)

    @impl(ew.CmpOp)
    def run_cmp(self, interpreter: Interpreter, op: ew.CmpOp, args: tuple[Any, ...]):
        return (_COMPARE[op.predicate.data](*args),)

    @impl(ew.SelectOp)
    def run_select(self, interpreter: Interpreter, op: ew.SelectOp, args: tuple[Any, ...]):
        condition, on_true, on_false = args
        return (np.where(condition, on_true, on_false),)
