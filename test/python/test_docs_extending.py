"""docs/extending.md stays true: every code block it quotes from a file is in that file, the
names it walks through exist (the op, its interpreter, the registered pass), adding the op
touches no pass, and its table of traits lists every trait adir defines."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest
from adir_testing import interpret
from xdsl.traits import OpTrait

from adir.dialects.tensor import ADIR_OPS, traits
from adir.dialects.tensor.activations import SoftplusGradOp, SoftplusOp
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


def op_walkthrough() -> str:
    text = GUIDE.read_text()
    return text[text.index("## Adding an op") : text.index("## Adding a pass")]


def test_adding_the_op_touches_no_pass() -> None:
    """The walkthrough's files are family files and tests: of adir/passes, only the autodiff
    rules of the op's family (a registry keyed by op, not a pass)."""
    paths = [path for path, _ in QUOTE.findall(op_walkthrough())]
    assert len(paths) >= 12
    passes = [p for p in paths if p.startswith("adir/passes/")]
    assert passes == ["adir/passes/autodiff/rules/activations.py"]
    assert not [p for p in paths if p.startswith("adir/tools/")]


def test_trait_table_lists_every_trait() -> None:
    """Each trait class of adir/dialects/tensor/traits.py (and the HasEvalForm and
    HasBatchInProperties interfaces) has a row in the guide's table, whose first cell names it."""
    interfaces = (traits.HasEvalForm, traits.HasBatchInProperties)
    defined = {
        name
        for name, value in inspect.getmembers(traits, inspect.isclass)
        if value.__module__ == traits.__name__
        and (issubclass(value, OpTrait) or value in interfaces)
    }
    rows = re.findall(r"^\| `(\w+)", op_walkthrough(), re.MULTILINE)
    # the ten of issue 18, LayerWeight, HasBatchInProperties, and issue 21's ReferenceScratch,
    # InPlaceWhenMarked and IntegerAdjoints (level 2 of quantized training)
    assert len(defined) == 15
    assert defined <= set(rows), f"not in docs/extending.md: {sorted(defined - set(rows))}"


def test_walkthrough_op_has_the_traits_the_guide_says() -> None:
    """softplus: elementwise and recomputable through its base, with a VJP rule; softplus_grad:
    elementwise, and not differentiated."""
    assert SoftplusOp.has_trait(traits.ElementwiseMappable)
    assert SoftplusOp.has_trait(traits.Recomputable)
    assert not SoftplusOp.has_trait(traits.NotDifferentiable)
    assert SoftplusGradOp.has_trait(traits.ElementwiseMappable)
    assert SoftplusGradOp.has_trait(traits.NotDifferentiable)
    assert not SoftplusGradOp.has_trait(traits.Recomputable)
