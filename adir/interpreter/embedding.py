"""numpy semantics of the embedding family (adir/dialects/tensor/embedding.py).

The lookup is exact; the backward's scatter-add adds the rows of `grad` into a zeroed table
one position at a time, in the row-major order of the indices (`np.add.at` is unbuffered and
goes in that order), as the C kernel does, so both round alike and agree bit for bit. An index
outside [0, num_weights) is a fault in the data (PyTorch raises too): `ValueError` naming the
element, which `adir-run` reports as a diagnostic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import embedding as emb
from adir.interpreter.family import FamilyFunctions


def check_indices(op_name: str, indices: np.ndarray, num_weights: int) -> None:
    outside = (indices < 0) | (indices >= num_weights)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        where = ", ".join(str(i) for i in np.unravel_index(first, indices.shape))
        element = f"indices[{where}]" if indices.ndim else "indices"
        raise ValueError(
            f"{op_name}: {element} = {indices.flat[first]} is not a row of the table, in "
            f"[0, {num_weights})"
        )


def embedding(op_name: str, weight: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """`weight[indices]`: a row of the table for each index."""
    check_indices(op_name, indices, weight.shape[0])
    return weight[indices.astype(np.intp)]


def embedding_grad(
    op_name: str, grad: np.ndarray, indices: np.ndarray, num_weights: int, padding_idx: int | None
) -> np.ndarray:
    """The scatter-add of `grad`'s rows into a zeroed `[num_weights, dim]` table, in index
    order, skipping `padding_idx`."""
    check_indices(op_name, indices, num_weights)
    flat = indices.reshape(-1).astype(np.intp)
    rows = grad.reshape(flat.size, grad.shape[-1])
    if padding_idx is not None:
        kept = flat != padding_idx
        flat, rows = flat[kept], rows[kept]
    table = np.zeros((num_weights, grad.shape[-1]), grad.dtype)
    np.add.at(table, flat, rows)
    return table


def _padding_idx(op: emb.EmbeddingGradOp) -> int | None:
    return None if op.padding_idx is None else op.padding_idx.value.data


@register_impls
class EmbeddingFunctions(FamilyFunctions):
    @impl(emb.EmbeddingOp)
    def run_embedding(self, interpreter: Interpreter, op: emb.EmbeddingOp, args: tuple[Any, ...]):
        return (embedding(op.name, *args),)

    @impl(emb.EmbeddingGradOp)
    def run_embedding_grad(
        self, interpreter: Interpreter, op: emb.EmbeddingGradOp, args: tuple[Any, ...]
    ):
        num_weights = op.num_weights.value.data
        return (embedding_grad(op.name, *args, num_weights, _padding_idx(op)),)
