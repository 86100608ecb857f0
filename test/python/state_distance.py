"""How far a whole trained state is from the float64 reference, for the ill-conditioned runs of
issue 19's matrix (test_mlperf_tiny_ic_vww.py, test_mlperf_tiny_examples.py).

Where PyTorch's own float32 run strays from its float64 run by more than 1e-4 (a ReLU input
within float32 rounding of its kink switches a gradient element, and the next steps spread it),
the entry-by-entry comparison fails PyTorch itself, and which entry or tensor strays most is a
draw that differs from one float32 program to the next. What both float32 programs share is
how far the training as a whole moved from float64: that is what is compared, the C's distance
from float64 against PyTorch float32's.

The distance (`state_distance`) is the root mean square, over the tensors, of each tensor's
relative L2 distance ||a - e|| / ||e||:

- relative per tensor, so that a tensor's scale does not weigh: a concatenated L2 norm would be
  MobileNet's running variances and largest pointwise weights, and a batch norm's shift (16
  entries), where a switched ReLU gradient shows first, would not count;
- L2 within a tensor, so that one stray entry (a draw) does not decide it, as it would a
  per-tensor maximum;
- a mean over the tensors, so that every tensor counts once; the root of the mean square, so
  that a few tensors far off are not averaged away by the many that stay close.

`largest_tensor_distance` names the tensor farthest off, for the report.
"""

from __future__ import annotations

import numpy as np


def tensor_distance(actual: np.ndarray, expected: np.ndarray) -> float:
    """||actual - expected|| / ||expected|| (L2 over the entries)."""
    norm = float(np.linalg.norm(expected))
    assert norm > 0, "a tensor of zeros has no relative distance"
    return float(np.linalg.norm(np.asarray(actual, np.float64) - expected)) / norm


def state_distance(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> float:
    """The root mean square over `expected`'s tensors of their `tensor_distance`."""
    assert len(expected) > 0 and expected.keys() <= actual.keys()
    squares = [tensor_distance(actual[s], e) ** 2 for s, e in expected.items()]
    return float(np.sqrt(np.mean(squares)))


def largest_tensor_distance(
    actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]
) -> tuple[str, float]:
    """The tensor of `expected` farthest from `actual`, and its `tensor_distance`."""
    distances = {s: tensor_distance(actual[s], e) for s, e in expected.items()}
    symbol = max(distances, key=distances.__getitem__)
    return symbol, distances[symbol]
