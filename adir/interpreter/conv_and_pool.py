"""numpy semantics of the conv_and_pool family (adir/dialects/tensor/conv_and_pool.py)."""

from xdsl.interpreter import register_impls

from adir.interpreter.family import FamilyFunctions


@register_impls
class ConvAndPoolFunctions(FamilyFunctions):
    pass
