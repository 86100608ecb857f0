"""ATen's batch norm, layer norm and dropout: the normalization family.

In training mode, torch.export gives `_native_batch_norm_legit_functional`, whose results are
`adir.batchnorm`'s: (output, mean, invstd, new running mean, new running var); the importer
stores the last two into the running-statistics params, as PyTorch updates its buffers. In eval
mode it gives `_native_batch_norm_legit_no_training`, which is `adir.batchnorm_eval`.

`aten.layer_norm` (nn.LayerNorm, F.layer_norm) and `aten.native_layer_norm` are
`adir.layer_norm`; native_layer_norm's mean and rstd are PyTorch's `[*, 1, ...]` shape, the
rows' statistics reshaped. A bias without a weight gets a weight of ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import fx

from adir.frontends.aten.registry import Args, Lowering, Unsupported, aten, aten_, require


def _affine(lo: Lowering, a: Args) -> tuple[Any, Any]:
    """gamma and beta; ones and zeros for a batch norm without them (`affine=False`)."""
    channels = Lowering.shape(a["input"])[1]
    gamma, beta = lo.value(a["weight"]), lo.value(a["bias"])
    if gamma is None:
        gamma = lo.b.constant(np.ones(channels, np.float32))
    if beta is None:
        beta = lo.b.constant(np.zeros(channels, np.float32))
    return gamma, beta


@aten(aten_._native_batch_norm_legit_functional.default)
def batch_norm(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require(isinstance(a["momentum"], float), "momentum=None (a cumulative average)")
    x = lo.value(a["input"])
    running_mean, running_var = lo.value(a["running_mean"]), lo.value(a["running_var"])
    gamma, beta = _affine(lo, a)
    if not a["training"]:
        y = lo.b.batchnorm_eval(x, gamma, beta, running_mean, running_var, eps=a["eps"])
        return (y, None, None, running_mean, running_var)
    return lo.b.batchnorm(
        x, gamma, beta, running_mean, running_var, momentum=a["momentum"], eps=a["eps"]
    )


@aten(aten_._native_batch_norm_legit_no_training.default)
def batch_norm_eval(lo: Lowering, node: fx.Node, a: Args) -> Any:
    gamma, beta = _affine(lo, a)
    running_mean, running_var = lo.value(a["running_mean"]), lo.value(a["running_var"])
    y = lo.b.batchnorm_eval(
        lo.value(a["input"]), gamma, beta, running_mean, running_var, eps=a["eps"]
    )
    return (y, None, None)


@aten(aten_.native_dropout.default)
def dropout(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """The identity when not training (or p = 0). In training, adir's dropout draws its masks
    from a step counter the model does not have, with other bits than torch's: import the
    model in eval mode (`model.eval()`, `adir-import --eval`) and add dropout with the builder."""
    if a["train"] is False or a["p"] == 0:
        return (lo.value(a["input"]), None)
    raise Unsupported("training-mode dropout; import the model in eval mode")


def _layer_norm(lo: Lowering, a: Args) -> Any:
    """`adir.layer_norm`'s three results for a layer norm's arguments."""
    normalized_shape = [int(d) for d in a["normalized_shape"]]
    weight, bias = lo.value(a["weight"]), lo.value(a["bias"])
    if weight is None and bias is not None:
        weight = lo.b.constant(np.ones(normalized_shape, np.float32))
    return lo.b.layer_norm(
        lo.value(a["input"]), normalized_shape, weight, bias, eps=float(a["eps"])
    )


@aten(aten_.layer_norm.default)
def layer_norm(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return _layer_norm(lo, a)[0]


@aten(aten_.native_layer_norm.default)
def native_layer_norm(lo: Lowering, node: fx.Node, a: Args) -> Any:
    y, mean, rstd = _layer_norm(lo, a)
    statistics = Lowering.shape(node.args[0])[: -len(a["normalized_shape"])]
    torch_shape = (*statistics, *[1] * len(a["normalized_shape"]))
    return (y, lo.b.reshape(mean, torch_shape), lo.b.reshape(rstd, torch_shape))
