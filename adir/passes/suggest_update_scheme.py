"""`suggest-update-scheme{sram=256K kind=sgd lr=0.01 target=cortex-m4f}`: choose what trains.

    adir-opt --train=suggested --sram=256K --optimizer=sgd --lr=0.01 --plan-memory model.mlir
    adir-opt --suggest-update-scheme --sram=256K --optimizer=adam --c-target=cortex-m4f ...

picks a sparse update scheme whose training step fits `sram` bytes of SRAM (arena, trainable
parameters, optimizer state, other mutable state: what `plan-memory{sram=...}` checks), as
`adir/update_scheme_suggestion.py` says (greedy by trained values per byte, from the output
back), applies it as `apply-update-scheme` would, records it on the module as
`adir.update_scheme = "..."` and prints it to stderr with its SRAM and the steps that led to it,
so that it can be pasted into `--train=` (the same scheme gives the same step: the search
compiles each candidate with the passes `adir-opt` runs after it). The options say how the step
is compiled: the optimizer (`kind`, `lr`), the kernels (`target`, `kernels`, as select-kernels
takes them: the scratch of a target's kernels is part of the arena), and whether batchnorms of
frozen layers stay in training mode (`train_frozen_batchnorm`) or activations are recomputed
(`recompute`). A budget that not even a fraction of the last layer fits is an error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from adir.diagnostics import PassOptionError
from adir.limits import parse_size
from adir.update_scheme import SchemeError, apply_scheme
from adir.update_scheme_suggestion import BudgetTooSmall, Suggestion, suggest_scheme

SUGGESTED = "adir.update_scheme"


def report(suggestion: Suggestion, sram: int) -> str:
    cost = suggestion.cost
    lines = [
        f"suggest-update-scheme: --train={suggestion.scheme}",
        f"  SRAM {cost.sram:,} bytes of sram={sram:,} (arena {cost.arena:,}, trainable "
        f"parameters {cost.trainable:,}, optimizer state {cost.state:,}); flash {cost.flash:,}; "
        f"{suggestion.tried} schemes compiled",
        "  steps (trained values, SRAM bytes):",
    ]
    lines += [f"    {s.cost.values:>9,} {s.cost.sram:>11,}  {s.scheme}" for s in suggestion.steps]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SuggestUpdateSchemePass(ModulePass):
    """Train what fits `sram` (module docstring)."""

    name = "suggest-update-scheme"

    sram: str | int = "256K"
    kind: str = "sgd"
    lr: float = 0.01
    target: str = "host"
    kernels: str = "tuned"
    train_frozen_batchnorm: bool = False
    recompute: bool = False

    def sram_bytes(self) -> int:
        try:
            return parse_size(str(self.sram))
        except ValueError as error:
            raise PassOptionError(self.name, "sram", f"sram: {error}") from error

    def pipeline(self) -> str:
        """The passes that compile each candidate, as `adir-opt` runs them after the scheme."""
        passes = [] if self.train_frozen_batchnorm else ["freeze-batchnorm"]
        passes += ["autodiff", f"insert-optimizer{{kind={self.kind} lr={self.lr!r}}}"]
        if self.recompute:
            passes.append("recompute-activations")
        passes += [
            "fuse-weight-updates",
            "reorder-updates",
            "bufferize",
            f"select-kernels{{kernels={self.kernels} target={self.target}}}",
            "plan-memory",
        ]
        return ",".join(passes)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sram = self.sram_bytes()
        try:
            suggestion = suggest_scheme(op, sram, self.pipeline())
            apply_scheme(op, suggestion.scheme)
        except BudgetTooSmall as error:
            raise PassFailedException(
                f"suggest-update-scheme: no scheme fits sram={sram}: {error}"
            ) from None
        except SchemeError as error:
            raise PassFailedException(f"suggest-update-scheme: {error}") from None
        op.attributes[SUGGESTED] = StringAttr(suggestion.scheme)
        sys.stderr.write(report(suggestion, sram))
