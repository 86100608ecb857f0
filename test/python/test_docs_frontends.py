"""docs/frontends.md: every Python block runs as it is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "frontends.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_guide_has_an_example_for_each_front_end() -> None:
    assert len(BLOCKS) == 4
    assert "ModelBuilder" in BLOCKS[0] and "import_module" in BLOCKS[1]
    assert "nn.Dropout" in BLOCKS[2] and "DerivePredictPass" in BLOCKS[2]
    assert "load_state_dict" in BLOCKS[3] and "write_param_blob" in BLOCKS[3]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_block_runs(index: int, capsys) -> None:
    exec(compile(BLOCKS[index], f"{DOC}:block{index}", "exec"), {})
    assert "func.func @loss" in capsys.readouterr().out
