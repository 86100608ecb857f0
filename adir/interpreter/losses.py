"""numpy semantics of the losses family (adir/dialects/tensor/losses.py)."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class LossesFunctions(InterpreterFunctions):
    pass
