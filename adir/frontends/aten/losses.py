"""ATen's losses, kept whole by the importer: the losses family."""

from __future__ import annotations

from typing import Any

from torch import fx

from adir.frontends.aten.registry import Args, Handler, Lowering, aten, aten_, require

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
"""ATen's `reduction` int -> adir's `reduction` property."""


def _loss(adir_name: str) -> Handler:
    """A loss of `self` against `target`. A class weight, label smoothing, an ignored index
    other than the default, or a pos_weight is not in adir's losses."""

    def lower(lo: Lowering, node: fx.Node, a: Args) -> Any:
        require(a.get("weight") is None, "a class weight")
        require(a.get("pos_weight") is None, "pos_weight")
        require(not a.get("label_smoothing"), f"label_smoothing={a.get('label_smoothing')}")
        require(a.get("ignore_index", -100) == -100, f"ignore_index={a.get('ignore_index')}")
        reduction = _REDUCTIONS[a["reduction"]]
        return getattr(lo.b, adir_name)(lo.value(a["self"]), lo.value(a["target"]), reduction)

    return lower


aten(aten_.cross_entropy_loss.default)(_loss("cross_entropy"))
aten(aten_.nll_loss_nd.default, aten_.nll_loss.default)(_loss("nll"))
aten(aten_.mse_loss.default)(_loss("mse"))
aten(aten_.binary_cross_entropy.default)(_loss("bce"))
aten(aten_.binary_cross_entropy_with_logits.default)(_loss("bce_with_logits"))
