"""ATen's sum, mean and amax: the reductions family."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import fx

from adir.frontends.aten.registry import Args, Handler, Lowering, aten, aten_


def _axes(dims: Sequence[int] | int | None) -> list[int] | None:
    """ATen's reduction dims: None or [] mean every axis (adir: leave `axes` out)."""
    if dims is None:
        return None
    dims = [dims] if isinstance(dims, int) else list(dims)
    return dims or None


def _reduction(adir_name: str) -> Handler:
    def lower(lo: Lowering, node: fx.Node, a: Args) -> Any:
        keepdim = bool(a.get("keepdim") or False)
        return getattr(lo.b, adir_name)(lo.value(a["self"]), _axes(a.get("dim")), keepdim)

    return lower


aten(aten_.sum.dim_IntList, aten_.sum.default)(_reduction("sum"))
aten(aten_.mean.dim, aten_.mean.default)(_reduction("mean"))
aten(aten_.amax.default)(_reduction("max"))
