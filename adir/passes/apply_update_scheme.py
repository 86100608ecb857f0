"""`apply-update-scheme{scheme="bias+last:1"}`: mark which parameters train, from a sparse
update scheme (`adir/update_scheme.py` says the syntax; `docs/sparse_updates.md` the schemes).

The parameters a scheme leaves out get `{trainable = false}`; the weights it trains in part get
`update_fraction` or `update_channels`, which `split-partial-updates` then splits. The layers
are the ones the front-end recorded (`adir.layer`, `adir.bias` on the parameters).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from adir.update_scheme import SchemeError, apply_scheme


@dataclass(frozen=True)
class ApplyUpdateSchemePass(ModulePass):
    """Freeze or partly train each parameter as `scheme` says (module docstring)."""

    name = "apply-update-scheme"

    scheme: str = "all"
    """The scheme: `all`, `bias`, `last:K`, `bias+last:1`, `channels:0.25@last:2`, ..."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            apply_scheme(op, self.scheme)
        except SchemeError as error:
            raise PassFailedException(f"apply-update-scheme: {error}") from None
