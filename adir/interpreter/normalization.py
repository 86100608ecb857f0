"""numpy semantics of the normalization family (adir/dialects/tensor/normalization.py)."""

from xdsl.interpreter import register_impls

from adir.interpreter.family import FamilyFunctions


@register_impls
class NormalizationFunctions(FamilyFunctions):
    pass
