"""How far float32 rounding of the gradients can move Adam's parameters, entry by entry.

Adam moves an entry by lr * m_hat / (sqrt(v_hat) + eps), a step of about lr whatever the
gradient's size, so its sensitivity to a gradient entry g grows as g nears 0: at the first
step g / (|g| + eps) changes by eps / (|g| + eps)^2 per unit of g. ResNet-8's
stacks.2.conv2.weight[61, 24, 1, 0] at batch 1 has a float64 gradient of -7.1e-8 at the first
step, where float32 PyTorch's gradient of that tensor is up to 4.9e-8 off: a sensitivity of
1.5e6, so float32 rounding alone can move that step by 7.5e-5 (lr 1e-3), and the C, summing in
another order than PyTorch, ends 1.2e-5 from float64 there (1.5e-3 of the entry), 2.2 times
the 1e-4 comparison of its tensor.

`rounding_allowance` is that effect to first order, for each entry: with delta_t float32
PyTorch's largest gradient error on the tensor at step t (measured) and d step_s / d g_t
Adam's derivative (from the float64 gradients), each step s can move by
sum_t |d step_s / d g_t| delta_t, at most lr B_s (`adam_step_bound`) whatever the gradient;
two float32 programs can each move so, hence twice the sum over the steps. Entries far from a
zero gradient get little (their step is lr g / |g|, flat in g), entries near one up to 2 lr B_s
a step.
"""

from __future__ import annotations

import numpy as np
from cancelled_biases import adam_step_bound


def rounding_allowance(
    gradients64: list[np.ndarray],
    gradients32: list[np.ndarray],
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
) -> np.ndarray:
    """The first-order allowance of each entry of one parameter, given its float64 and float32
    gradients at every step."""
    beta1, beta2 = betas
    g = np.stack(gradients64)
    delta = np.array([np.abs(r - e).max() for r, e in zip(gradients32, gradients64, strict=True)])
    total = np.zeros_like(g[0])
    m = np.zeros_like(g[0])
    v = np.zeros_like(g[0])
    for s in range(len(g)):
        m = beta1 * m + (1 - beta1) * g[s]
        v = beta2 * v + (1 - beta2) * g[s] ** 2
        m_hat, v_hat = m / (1 - beta1 ** (s + 1)), v / (1 - beta2 ** (s + 1))
        root = np.sqrt(v_hat)
        denominator = root + eps
        # d m_hat / d g_t = a_t, d v_hat / d g_t = 2 c_t g_t, d sqrt(v_hat) = c_t g_t / root.
        safe_root = np.where(root > 0, root, 1.0)
        moved = np.zeros_like(g[0])
        for t in range(s + 1):
            a = (1 - beta1) * beta1 ** (s - t) / (1 - beta1 ** (s + 1))
            c = (1 - beta2) * beta2 ** (s - t) / (1 - beta2 ** (s + 1))
            derivative = a / denominator - m_hat * c * g[t] / (safe_root * denominator**2)
            moved += np.abs(derivative) * delta[t]
        total += 2 * lr * np.minimum(moved, adam_step_bound(s + 1))
    return total
