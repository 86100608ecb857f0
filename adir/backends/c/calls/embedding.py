"""C calls of the embedding family's kernels (runtime: adir_embedding.c)."""

from __future__ import annotations

import math

from adir.backends.c.calls import CallSite, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import embedding as emb


@emits(emb.EmbeddingOp)
def embedding(op: KernelOp, site: CallSite) -> str:
    num_weights, dim = site.in_shape(0)
    count = f"{math.prod(site.in_shape(1))}u"
    return site.call("embedding", *site.buffers(), count, num_weights, dim)


@emits(emb.EmbeddingGradOp)
def embedding_grad(op: KernelOp, site: CallSite) -> str:
    """padding_idx -1: none."""
    num_weights, dim = site.out_shape()
    count = f"{math.prod(site.in_shape(1))}u"
    padding = -1 if op.padding_idx is None else op.padding_idx.value.data
    return site.call("embedding_grad", *site.buffers(), count, num_weights, dim, padding)
