"""The C kernel of the matmul family against the interpreter (gcc, ASan, UBSan)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from c_testing import check_c_against_interpreter

RNG = np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    ("lhs", "rhs", "flags", "out"),
    [
        ("2x3", "3x5", "", "2x5"),
        ("3x2", "3x5", "{transpose_a}", "2x5"),
        ("2x3", "5x3", "{transpose_b}", "2x5"),
        ("3x2", "5x3", "{transpose_a, transpose_b}", "2x5"),
        ("4x2x3", "4x3x5", "", "4x2x5"),  # batched
        ("4x3x2", "3x5", "{transpose_a}", "4x2x5"),  # batched lhs, one shared rhs
        ("1x7", "7x1", "", "1x1"),
    ],
)
def test_matmul(lhs: str, rhs: str, flags: str, out: str) -> None:
    text = f"""
    func.func @f(%a: tensor<{lhs}xf32>, %b: tensor<{rhs}xf32>) -> tensor<{out}xf32> {{
      %c = adir.matmul %a, %b {flags} : tensor<{lhs}xf32>, tensor<{rhs}xf32> -> tensor<{out}xf32>
      func.return %c : tensor<{out}xf32>
    }}"""
    shape = [tuple(int(d) for d in s.split("x")) for s in (lhs, rhs)]
    check_c_against_interpreter(text, "f", [[normal(*shape[0]), normal(*shape[1])]])


def array(values: Sequence[int]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"
