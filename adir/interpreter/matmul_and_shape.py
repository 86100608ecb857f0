"""numpy semantics of the matmul_and_shape family (adir/dialects/tensor/matmul_and_shape.py)."""

from xdsl.interpreter import InterpreterFunctions, register_impls


@register_impls
class MatmulAndShapeFunctions(InterpreterFunctions):
    pass
