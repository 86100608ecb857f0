"""numpy semantics of the activations family (adir/dialects/tensor/activations.py)."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class ActivationsFunctions(InterpreterFunctions):
    pass
