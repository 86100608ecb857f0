"""VJP rules of the data movement family against torch.autograd and finite differences."""

from __future__ import annotations

import pytest
from gradient_testing import check_op_gradients


@pytest.mark.parametrize(
    ("shape", "permutation"), [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (0, 2, 1))]
)
def test_transpose(shape, permutation) -> None:
    check_op_gradients(
        f"adir.transpose OPERANDS {{permutation = array<i64: {', '.join(map(str, permutation))}>}}",
        [shape],
        lambda x: x.permute(*permutation),
    )


@pytest.mark.parametrize(
    ("shape", "target"), [((2, 6), (3, 4)), ((2, 3, 4), (-1,)), ((6,), (2, 1, 3))]
)
def test_reshape(shape, target) -> None:
    check_op_gradients(
        f"adir.reshape OPERANDS {{shape = array<i64: {', '.join(map(str, target))}>}}",
        [shape],
        lambda x: x.reshape(*target),
    )


@pytest.mark.parametrize(
    ("shape", "target"), [((3,), (2, 3)), ((2, 1), (2, 5)), ((1, 3, 1), (4, 2, 3, 5))]
)
def test_broadcast_to(shape, target) -> None:
    check_op_gradients(
        f"adir.broadcast_to OPERANDS {{shape = array<i64: {', '.join(map(str, target))}>}}",
        [shape],
        lambda x: x.broadcast_to(target),
    )
