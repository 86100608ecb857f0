"""numpy semantics of the reductions family (adir/dialects/tensor/reductions.py)."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class ReductionsFunctions(InterpreterFunctions):
    pass
