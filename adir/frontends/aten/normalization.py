"""ATen's batch norm and dropout: the normalization family.

In training mode, torch.export gives `_native_batch_norm_legit_functional`, whose results are
`adir.batchnorm`'s: (output, mean, invstd, new running mean, new running var); the importer
stores the last two into the running-statistics params, as PyTorch updates its buffers. In eval
mode it gives `_native_batch_norm_legit_no_training`, which is `adir.batchnorm_eval`.
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
