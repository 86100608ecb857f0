"""PyTorch's dropout with adir's masks, for comparing a model with dropout to its import: PyTorch
cannot draw adir's counter-based masks, so the reference replaces each `nn.Dropout` by
multiplication with the mask that `adir.dropout` draws (computed from the specification by
test_interpreter_normalization.reference_mask, not by adir's code) for its seed and the step."""

from __future__ import annotations

import numpy as np
import torch
from test_interpreter_normalization import reference_mask
from torch import nn


class StepCounter:
    """The step the masks are drawn for, shared by all the dropouts of a model."""

    def __init__(self) -> None:
        self.step = 0


class AdirMaskDropout(nn.Module):
    """`x * m`, m the mask of `adir.dropout {p, seed}` at `counter.step`: kept elements scaled
    by 1 / (1 - p) computed in x's precision, as adir's kernel (float32) and interpreter do."""

    def __init__(self, p: float, seed: int, counter: StepCounter) -> None:
        super().__init__()
        self.p, self.seed, self.counter = p, seed, counter

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keep = reference_mask(tuple(x.shape), self.seed, self.counter.step, self.p)
        dtype = np.float64 if x.dtype == torch.float64 else np.float32
        one = dtype(1)
        scale = one / (one - dtype(np.float32(self.p)))  # p is a float32 property
        return x * torch.from_numpy(np.where(keep, scale, dtype(0)).astype(dtype))


def with_adir_masks(model: nn.Module) -> tuple[list[tuple[int, float]], StepCounter]:
    """Replace the model's `nn.Dropout`s, in module order (the order a Sequential runs them,
    which is the order the importer numbers their seeds 1, 2, ...) with `AdirMaskDropout`s;
    returns the (seed, p) of each and the counter to set the step with."""
    counter = StepCounter()
    replaced: list[tuple[int, float]] = []
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Dropout) and module.p > 0:
            seed = len(replaced) + 1
            parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
            setattr(parent, name.rpartition(".")[2], AdirMaskDropout(module.p, seed, counter))
            replaced.append((seed, module.p))
    return replaced, counter
