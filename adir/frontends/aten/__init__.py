"""ATen ops to adir ops: one handler per supported ATen overload, one file per op family (the
same names as the dialect's, the interpreter's and the VJP rules'). Importing this package
registers every handler in `ATEN_OPS`; `registry.py` says what a handler is.

The importer lowers core ATen (what `torch.export` gives after `run_decompositions`), except
that every op with a handler here is kept whole rather than decomposed: `aten.linear` stays a
transpose-flagged matmul, `aten.cross_entropy_loss` stays `adir.cross_entropy` instead of
log_softmax, gather and where.
"""

from adir.frontends.aten import (  # noqa: F401  (importing registers the handlers)
    activations,
    conv_and_pool,
    data_movement,
    elementwise,
    embedding,
    losses,
    matmul,
    normalization,
    reductions,
)
from adir.frontends.aten.registry import (
    ATEN_OPS,
    Args,
    Lowering,
    Unsupported,
    arguments,
    static_shape,
)

__all__ = ["ATEN_OPS", "Args", "Lowering", "Unsupported", "arguments", "static_shape"]
