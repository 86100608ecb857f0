"""VJP rules of the reductions family against torch.autograd and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gradient_testing import check_op_gradients

TORCH = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax}
CASES = [
    ((5,), None, False),
    ((2, 3), (1,), False),
    ((2, 3, 4), (0, 2), True),
    ((2, 3, 4), (-1,), False),
    ((3, 4), None, True),
]


@pytest.mark.parametrize(("shape", "axes", "keepdims"), CASES, ids=str)
@pytest.mark.parametrize("op", sorted(TORCH))
def test_reduction(op: str, shape, axes, keepdims: bool) -> None:
    props = []
    if axes is not None:
        props.append(f"axes = array<i64: {', '.join(map(str, axes))}>")
    if keepdims:
        props.append("keepdims")
    attr = f" {{{', '.join(props)}}}" if props else ""
    dims = tuple(range(len(shape))) if axes is None else axes
    check_op_gradients(
        f"adir.{op} OPERANDS{attr}", [shape], lambda x: TORCH[op](x, dim=dims, keepdim=keepdims)
    )


def test_max_shares_the_adjoint_among_ties_like_torch_amax() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    check_op_gradients(
        "adir.max OPERANDS {axes = array<i64: 1>}",
        [(2, 3)],
        lambda t: torch.amax(t, dim=1),
        inputs=[x],
        finite_differences=False,
    )
