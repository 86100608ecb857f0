"""VJP rules, one file per op family (the same names as the dialect's and the interpreter's).
Importing this package registers every rule in `VJP_RULES`."""

from adir.passes.autodiff.rules import (  # noqa: F401  (importing registers the rules)
    activations,
    conv_and_pool,
    data_movement,
    elementwise,
    embedding,
    losses,
    matmul,
    normalization,
    quantized,
    reductions,
)
from adir.passes.autodiff.rules.registry import VJP_RULES, Adjoints, vjp

__all__ = ["VJP_RULES", "Adjoints", "vjp"]
