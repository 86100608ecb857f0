"""Biases a training-mode batch norm cancels, and how the training tests compare them.

A convolution (or linear layer) with a bias followed by a batch norm in training mode: the
batch norm subtracts the batch mean, bias included, so the bias's exact gradient is 0. Rounding
leaves a residue (float64: 1e-17 to 1e-15 of the step's largest gradient entry in ResNet-8;
float32: about 1e-9 of it, summed in each program's own order). SGD moves the bias by lr times
that residue, nothing; Adam divides each step by the gradient's own running magnitude (plus
eps = 1e-8), so it moves the bias by up to lr a step in directions set by the rounding: the C's
and PyTorch's biases follow different noise, and neither is more right. The loss does not see
the bias, but the batch norm's running mean does (the batch mean it tracks includes it), so
both part too.

What the network computes does not depend on that noise, and that is what the tests compare:

- which biases: those whose float64 gradient, at every step, is at most `ZERO_GRADIENT` of that
  step's largest gradient entry (`zero_gradient`), found from the float64 reference, not by
  name; their batch norm: the one whose input is the layer's output (`batchnorm_after`);
- the running mean without the bias (`bias_free_running_mean`): PyTorch's update
  r <- (1 - m) r + m mean(conv(x) + b_t) is linear in the bias, so r_T - m sum_t (1 - m)^(T-1-t)
  b_t is what the running mean would be with the bias left at 0: the momentum average of the
  convolution's own batch means, computed from each program's bias at each step;
- the bias's own steps, each at most the largest step Adam can take (`adam_step_bound`);
- the losses, as for every run.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from adir.frontends.torch_import import symbol_names

ZERO_GRADIENT = 1e-9
"""A parameter's float64 gradient counts as zero at a step if none of its entries exceeds this
fraction of the step's largest gradient entry. Measured on ResNet-8 with Adam over the 20 steps
at batch 1 and 8: the cancelled biases reach at most 1.7e-15 of it, every other parameter at
least 9.5e-3 (stacks.2.bn1.bias at batch 1), 10^6 on either side of the threshold."""


def zero_gradient(gradients: list[dict[str, np.ndarray]]) -> set[str]:
    """The symbols whose gradient was zero to rounding at every step, given each step's
    gradients (float64) by symbol."""
    zero = set(gradients[0])
    for step in gradients:
        largest = max(float(np.abs(g).max()) for g in step.values())
        zero &= {s for s, g in step.items() if np.abs(g).max() <= ZERO_GRADIENT * largest}
    return zero


def batchnorm_after(
    model: nn.Module, inputs: tuple[torch.Tensor, ...]
) -> dict[str, tuple[str, float]]:
    """For each layer with a bias whose output is a batch norm's input: the bias's adir symbol,
    and that batch norm's running mean's with its momentum (as float32 holds it, as adir's
    attribute does), found by tensor identity in a forward pass."""
    produced: dict[int, tuple[str, torch.Tensor]] = {}  # the tensor kept alive: ids stay unique
    pairs: dict[str, tuple[str, float]] = {}
    names = {module: name for name, module in model.named_modules()}
    hooks = []

    def record(module: nn.Module, args: tuple, output: object) -> None:
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and id(args[0]) in produced:
            momentum = float(np.float32(module.momentum))
            pairs[produced[id(args[0])][0]] = (f"{names[module]}.running_mean", momentum)
        elif isinstance(output, torch.Tensor) and getattr(module, "bias", None) is not None:
            produced[id(output)] = (f"{names[module]}.bias", output)

    for module in names:
        hooks.append(module.register_forward_hook(record))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for hook in hooks:
            hook.remove()
    symbols = symbol_names([*pairs, *(mean for mean, _ in pairs.values())])
    return {symbols[bias]: (symbols[mean], m) for bias, (mean, m) in pairs.items()}


def bias_free_running_mean(final: np.ndarray, biases: list[np.ndarray], momentum: float):
    """The running mean after len(biases) steps, less what the bias added: `biases[t]` is the
    bias step t ran with (before its update)."""
    steps = len(biases)
    added = sum(momentum * (1 - momentum) ** (steps - 1 - t) * b for t, b in enumerate(biases))
    return np.asarray(final, np.float64) - added


def adam_step_bound(step: int, beta1: float = 0.9, beta2: float = 0.999) -> float:
    """The largest |m_hat| / sqrt(v_hat) of Adam's `step`-th update (1-based), whatever the
    gradients: m_hat and v_hat are weighted means of g_i and g_i^2 (weights w_i and u_i, each
    summing to 1), so by Cauchy-Schwarz |m_hat| <= sqrt(sum w_i^2 / u_i) sqrt(v_hat). 1 at the
    first step, 1.156 at the 20th; the step is lr times at most this (eps only shrinks it)."""
    i = np.arange(1, step + 1)
    w = (1 - beta1) * beta1 ** (step - i) / (1 - beta1**step)
    u = (1 - beta2) * beta2 ** (step - i) / (1 - beta2**step)
    return float(np.sqrt(np.sum(w * w / u)))
