"""ATen's batch norm, layer norm and dropout: the normalization family.

In training mode, torch.export gives `_native_batch_norm_legit_functional`, whose results are
`adir.batchnorm`'s: (output, mean, invstd, new running mean, new running var); the importer
stores the last two into the running-statistics params, as PyTorch updates its buffers. In eval
mode it gives `_native_batch_norm_legit_no_training`, which is `adir.batchnorm_eval`. The input
is `[N, C]` or `[N, C, *]`: BatchNorm1d, 2d and 3d are the same op.

Training-mode dropout is `adir.dropout`, reading the step counter that the importer adds as the
function's last argument. So a model imported in training mode has one training function, with
batch statistics and dropout, and `derive-predict` gives its inference function (running
statistics, no dropout).

`aten.layer_norm` (nn.LayerNorm, F.layer_norm) and `aten.native_layer_norm` are
`adir.layer_norm`; native_layer_norm's mean and rstd are PyTorch's `[*, 1, ...]` shape, the
rows' statistics reshaped. A bias without a weight gets a weight of ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import fx

from adir.frontends.aten.registry import (
    Args,
    Lowering,
    arguments,
    aten,
    aten_,
    require,
)


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


def is_training_dropout(node: fx.Node) -> bool:
    """Whether `node` is a dropout that drops anything: in training mode (ATen's `train`, which
    None means too) with p > 0. The importer gives the function a step counter for these."""
    if node.target not in (aten_.native_dropout.default, aten_.dropout.default):
        return False
    a = arguments(node)
    return a["train"] is not False and float(a["p"]) > 0


def _dropout(lo: Lowering, node: fx.Node, a: Args) -> Any:
    x = lo.value(a["input"])
    if not is_training_dropout(node):
        return x  # eval mode or p = 0: the identity, as in PyTorch, bit for bit
    assert lo.step is not None, "lower_program gives a model with dropout a step counter"
    return lo.b.dropout(x, lo.step, lo.next_seed(), float(a["p"]))


@aten(aten_.native_dropout.default)
def native_dropout(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`adir.dropout` with the function's step counter and the next seed (1, 2, ... in the
    order the model runs its dropouts): each element is kept with probability 1 - p and scaled
    by 1 / (1 - p), as in PyTorch, with adir's counter-based random bits instead of torch's
    generator's (PyTorch's stream cannot be reproduced on a device; the test replaces PyTorch's
    masks with adir's to compare). The mask (result #1) is not computed: the backward op
    recomputes it from the seed and the step."""
    return (_dropout(lo, node, a), None)


@aten(aten_.dropout.default)
def dropout(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`aten.dropout` (export keeps it whole in some modes): as `native_dropout`."""
    return _dropout(lo, node, a)


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
