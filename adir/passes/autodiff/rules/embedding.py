"""VJP rules of the embedding family.

embedding is a gather, so its adjoint is the scatter-add `adir.embedding_grad` of `dy` into a
zeroed table (rows looked up several times accumulate; the padding row gets none). The indices
are integers: no adjoint.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import embedding as emb
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


@vjp(emb.EmbeddingOp)
def embedding(b: BackwardBuilder, op: emb.EmbeddingOp, dy: SSAValue) -> Adjoints:
    num_weights = static_shape(op.weight)[0]
    padding_idx = None if op.padding_idx is None else op.padding_idx.value.data
    return [b.emit(emb.EmbeddingGradOp(dy, op.indices, num_weights, padding_idx)), None]
