"""Every `examples/<model>.mlir` generated from `examples/torch/<model>.py` is current: the tool
(`tools/generate_examples.py`) regenerates it in a temporary directory, and the bytes must be the
committed file's. A model file changed without `python tools/generate_examples.py` fails here,
naming the file. The tool never writes over a hand-written example."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_tool() -> ModuleType:
    path = ROOT / "tools" / "generate_examples.py"
    spec = importlib.util.spec_from_file_location("generate_examples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


TOOL = load_tool()


def test_every_model_file_is_found() -> None:
    """Discovery by file: at least the two MLPerf Tiny models this test was written with."""
    stems = {path.stem for path in TOOL.model_paths()}
    assert {"ds_cnn", "autoencoder"} <= stems


@pytest.mark.parametrize("path", TOOL.model_paths(), ids=lambda p: p.stem)
def test_generated_example_is_current(path: Path, tmp_path: Path) -> None:
    model_file = TOOL.load(path)
    assert TOOL.main([path.stem, "--output-dir", str(tmp_path)]) == 0
    generated = TOOL.target(model_file, tmp_path).read_bytes()
    committed = TOOL.target(model_file, TOOL.EXAMPLES)
    assert committed.exists(), f"{committed} is missing: python tools/generate_examples.py"
    assert committed.read_bytes() == generated, (
        f"{committed} is stale: python tools/generate_examples.py"
    )
    first_line = generated.decode().splitlines()[0]
    assert first_line == TOOL.GENERATED.format(source=f"examples/torch/{path.name}")


def test_a_hand_written_example_is_never_overwritten(tmp_path: Path, capsys) -> None:
    hand_written = tmp_path / "ds_cnn_torch.mlir"
    hand_written.write_text("// DS-CNN, written by hand\n")
    assert TOOL.main(["ds_cnn", "--output-dir", str(tmp_path)]) == 1
    assert hand_written.read_text() == "// DS-CNN, written by hand\n"
    assert capsys.readouterr().err == (
        f"error: {hand_written}: not generated from examples/torch/ds_cnn.py (its first line "
        "is not the marker); set EXAMPLE in examples/torch/ds_cnn.py to write another file\n"
    )


def test_the_hand_written_ds_cnn_keeps_its_name() -> None:
    """examples/ds_cnn.mlir is the DS-CNN written in adir's IR (initializers, not data); the
    one from examples/torch/ds_cnn.py is examples/ds_cnn_torch.mlir."""
    first = (ROOT / "examples" / "ds_cnn.mlir").read_text().splitlines()[0]
    assert not first.startswith("// Generated")
    assert TOOL.load(ROOT / "examples" / "torch" / "ds_cnn.py").example_name == "ds_cnn_torch"


def test_a_model_file_without_loss_whose_forward_takes_no_label_says_to_define_loss(
    tmp_path: Path,
) -> None:
    path = tmp_path / "no_loss.py"
    path.write_text(
        "import torch\n"
        "def model():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Linear(3, 2)\n"
        "def example_input(batch):\n"
        "    return torch.randn(batch, 3), torch.zeros(batch, dtype=torch.long)\n"
    )
    with pytest.raises(TOOL.GenerationError) as caught:
        TOOL.generate(TOOL.load(path))
    assert str(caught.value) == (
        f"{path.resolve()}: forward takes 1 inputs but example_input gives 2 tensors: define "
        "LOSS (the loss of the output and the last tensor, the label), or take the label in "
        "forward and return the loss"
    )
