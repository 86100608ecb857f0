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
(`recompute`), and quantized training (`quantize_level`: 0 float; 1 the frozen prefix on int8
kernels, `quantize-frozen-prefix` after the optimizer; 2 the trained conv and linear layers int8
too, `quantize-frozen-prefix{level=2}` before `autodiff`; with `calibration` and `qas` as that
pass takes them, and the three int8 lowerings after the optimizer, as `--quantize-frozen` runs
them): each candidate is then measured as the int8 step it compiles to, its int8 weights and
int32 biases at their byte sizes and its int8 activations at one byte. A budget that not even a
fraction of the last layer fits is an error.
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
from adir.passes import PLANNING_PASSES
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
    quantize_level: int = 0  # 0: float; 1 or 2: quantize-frozen-prefix{level=...}
    calibration: str = ""  # quantize-frozen-prefix's calibration inputs (.npy)
    qas: bool = True  # level 2: quantization-aware scaling

    def sram_bytes(self) -> int:
        try:
            return parse_size(str(self.sram))
        except ValueError as error:
            raise PassOptionError(self.name, "sram", f"sram: {error}") from error

    def pipeline(self) -> str:
        """The passes that compile each candidate, as `adir-opt` runs them after the scheme."""
        if self.quantize_level not in (0, 1, 2):
            raise PassOptionError(
                self.name, "quantize_level", f"quantize_level={self.quantize_level}: 0, 1 or 2"
            )
        quantize = ["level=2"] if self.quantize_level == 2 else []
        if self.quantize_level == 2 and not self.qas:
            quantize.append("qas=false")
        if self.calibration:
            escaped = self.calibration.replace("\\", "\\\\").replace('"', '\\"')
            quantize.append(f'calibration="{escaped}"')
        quantize_pass = "quantize-frozen-prefix" + (f"{{{' '.join(quantize)}}}" if quantize else "")
        passes = [] if self.train_frozen_batchnorm else ["freeze-batchnorm"]
        if self.quantize_level == 2:  # before autodiff, which differentiates the int8 layers
            passes.append(quantize_pass)
        passes += ["autodiff", f"insert-optimizer{{kind={self.kind} lr={self.lr!r}}}"]
        if self.quantize_level == 1:  # after insert-optimizer, whose stores say what trains
            passes.append(quantize_pass)
        if self.quantize_level:
            passes += ["fuse-expand-depthwise", "in-place-depthwise", "fuse-quantize-conv"]
        # adir-opt's own planning passes, in its order, so that a candidate's arena is the one
        # `adir-opt --train=SCHEME` plans (fuse-batchnorm-relu's masks included).
        for name in PLANNING_PASSES:
            if name == "select-kernels":
                name = f"select-kernels{{kernels={self.kernels} target={self.target}}}"
            passes.append(name)
            if name == "fuse-weight-updates" and self.recompute:
                passes.append("recompute-activations")
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
