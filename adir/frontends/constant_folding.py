"""Import-time folding of what a model computes from constants alone, in PyTorch itself.

Attention's masks are built that way: `is_causal=True` writes a boolean lower-triangular mask
from `arange`s, a comparison and a boolean `full`, and `torch.where` turns it (or a boolean
`attn_mask` buffer) into the additive float mask of 0.0 and -inf that the scores get. adir
computes in float32 and has no boolean tensors, so the importer evaluates such a chain with
the ATen ops themselves (`fold`) and gives the float32 result, the mask, to the model as one
`adir.constant`: the same numbers PyTorch adds, computed once, at import.

A node folds when every tensor it reads is a folded constant (ops that read none, such as
`full` and `arange`, included) and it is not random; a boolean buffer that the model does not
write is such a constant too. The importer then lowers folded float results that read a
non-float constant as `adir.constant`, and leaves float-only chains (a `scalar_tensor`, a
`full`) to their own handlers, which give the same constants.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx


def fold(node: fx.Node, folded: dict[fx.Node, torch.Tensor]) -> torch.Tensor | None:
    """The value of `node` computed by PyTorch from `folded` constants, or None if it reads
    something else, is random, or is not a tensor-valued ATen call."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return None
    if torch.Tag.nondeterministic_seeded in node.target.tags:
        return None
    if any(arg not in folded for arg in node.all_input_nodes):
        return None
    args = fx.node.map_arg(node.args, folded.__getitem__)
    kwargs = fx.node.map_arg(node.kwargs, folded.__getitem__)
    try:
        result: Any = node.target(*args, **kwargs)
    except (RuntimeError, TypeError, ValueError):
        return None
    return result if isinstance(result, torch.Tensor) else None


def reads_non_float_constant(node: fx.Node, folded: dict[fx.Node, torch.Tensor]) -> bool:
    """Whether `node` reads a folded constant that is not float32 (a boolean mask)."""
    return any(arg in folded and folded[arg].dtype != torch.float32 for arg in node.all_input_nodes)
