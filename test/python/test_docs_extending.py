"""docs/extending.md stays true: every code block it quotes from a file is in that file, and
the names it walks through exist (the op, its interpreter, the registered pass)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from adir_testing import interpret

from adir.dialects.tensor import ADIR_OPS
from adir.passes import ADIR_PASSES

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "extending.md"
QUOTE = re.compile(r"<!-- from: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def quotes() -> list[tuple[str, str]]:
    return QUOTE.findall(GUIDE.read_text())


def test_the_guide_quotes_something() -> None:
    assert len(quotes()) >= 10


@pytest.mark.parametrize(("path", "block"), quotes(), ids=lambda v: v[:40])
def test_quoted_block_is_verbatim_in_its_file(path: str, block: str) -> None:
    assert block in (ROOT / path).read_text(), f"docs/extending.md quotes {path} out of date"


def test_walkthrough_op_and_pass_exist() -> None:
    """The op is in the dialect and the interpreter runs it: softplus(0) = ln 2, and with
    beta = 2 above the threshold 5 it is the identity. The pass is registered."""
    assert "adir.softplus" in {op.name for op in ADIR_OPS}
    ir = """
func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = adir.softplus %x : tensor<2xf32>
  %1 = adir.softplus %x {beta = 2.0 : f32, threshold = 5.0 : f32} : tensor<2xf32>
  func.return %0, %1 : tensor<2xf32>, tensor<2xf32>
}"""
    plain, steep = interpret(ir, "f", np.array([0.0, 3.0], np.float32))
    assert plain[0] == pytest.approx(np.log(2.0), rel=1e-7)
    assert steep[1] == 3.0  # 2 * 3 > 5: the linear branch returns x itself
    assert "fold-transpose-into-matmul" in ADIR_PASSES
