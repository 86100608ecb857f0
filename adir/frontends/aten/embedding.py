"""ATen's embedding: the embedding family.

`aten.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)` is `adir.embedding`.
The indices are a model input, which the importer makes i32 as it does labels (PyTorch's are
int64). ATen's padding_idx is -1 for none (`nn.Embedding` has already turned a negative
padding_idx into its row). `sparse=True` only changes how PyTorch stores the gradient: adir's
is dense, with the same values. `scale_grad_by_freq=True` is refused.
"""

from __future__ import annotations

from typing import Any

from torch import fx

from adir.frontends.aten.registry import Args, Lowering, aten, aten_, require


@aten(aten_.embedding.default)
def embedding(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require(
        not a["scale_grad_by_freq"],
        "scale_grad_by_freq=True (gradients divided by each index's count in the batch); use "
        "nn.Embedding(..., scale_grad_by_freq=False)",
    )
    padding_idx = a["padding_idx"]
    return lo.b.embedding(
        lo.value(a["weight"]),
        lo.value(a["indices"]),
        padding_idx=None if padding_idx is None or padding_idx < 0 else int(padding_idx),
    )
