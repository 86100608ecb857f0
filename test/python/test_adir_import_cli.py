"""`adir-import`: a model file to IR that `adir-opt` reads; located errors with exit code 1.

The tool runs in-process (`main(argv)`), so torch is imported once for the whole file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adir.context import parse_module
from adir.frontends.builder import module_to_text
from adir.tools.adir_import import main

ADIR_OPT = str(Path(sys.executable).parent / "adir-opt")
ADIR_IMPORT = str(Path(sys.executable).parent / "adir-import")

MODEL_FILE = """\
import torch
from torch import nn


class Lenetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, image):
        return self.fc2(torch.relu(self.fc1(image.flatten(1))))


def make_model():
    return Lenetish()


class Cumulative(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cumsum(self.fc(x), 1)


def broken():
    raise RuntimeError("no weights found")
"""


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL_FILE)
    return path


def test_writes_the_model_and_round_trips_through_adir_opt(model_file: Path, tmp_path) -> None:
    out = tmp_path / "model.mlir"
    argv = [f"{model_file}:make_model", "--input-shape", "1,1,28,28", "--label-shape", "1"]
    assert main([*argv, "--loss", "cross_entropy", "-o", str(out)]) == 0
    text = out.read_text()
    assert (
        "func.func @loss(%image: tensor<1x1x28x28xf32>, %label: tensor<1xi32>) -> tensor<f32> "
        "attributes {adir.loss}"
    ) in text
    assert "adir.param @fc1_weight : tensor<32x784xf32>" in text
    printed = subprocess.run([ADIR_OPT, str(out)], capture_output=True, text=True, check=True)
    # adir-opt ends its output with a blank line; the IR itself is the same text.
    assert printed.stdout.rstrip("\n") == text.rstrip("\n")
    assert module_to_text(parse_module(text)) == text
    grad = subprocess.run(
        [ADIR_OPT, "--autodiff", str(out)], capture_output=True, text=True, check=True
    )
    assert "func.func @loss_grad(%image: tensor<1x1x28x28xf32>, %label: tensor<1xi32>)" in (
        grad.stdout
    )


def test_without_output_prints_the_ir(model_file: Path, capsys) -> None:
    assert main([f"{model_file}:Lenetish", "--input-shape", "2,784", "--eval"]) == 0
    assert "func.func @forward(%image: tensor<2x784xf32>) -> tensor<2x10xf32> {" in (
        capsys.readouterr().out
    )


def test_unsupported_op_lists_it_at_its_line_exit_1(model_file: Path, tmp_path, capsys) -> None:
    out = tmp_path / "never.mlir"
    argv = [f"{model_file}:Cumulative", "--input-shape", "2,4", "--loss", "mse", "-o", str(out)]
    assert main(argv) == 1
    line = MODEL_FILE.splitlines().index("        return torch.cumsum(self.fc(x), 1)") + 1
    assert capsys.readouterr().err.splitlines() == [
        f"{model_file}:{line}: error: the model uses 1 ATen op that adir cannot import:",
        f"  {model_file}:{line}: aten.cumsum.default: return torch.cumsum(self.fc(x), 1)",
    ]
    assert not out.exists()


@pytest.mark.parametrize(
    ("spec", "flags", "expected"),
    [
        (":missing", [], "{file}: error: the file defines no 'missing'"),
        (
            ":broken",
            [],
            "{file}:29: error: RuntimeError while calling broken(): no weights found",
        ),
        (":make_model", ["--loss", "hinge"], "adir-import: error: argument --loss: invalid"),
        (":make_model", ["--label-shape", "1"], "adir-import: error: --label-shape needs --loss"),
        (
            ":make_model",
            ["--input-shape", "1,x"],
            "adir-import: error: --input-shape '1,x': expected comma-separated",
        ),
    ],
)
def test_bad_input_is_a_located_error_exit_1(model_file, capsys, spec, flags, expected) -> None:
    shape = [] if "--input-shape" in flags else ["--input-shape", "1,784"]
    assert main([f"{model_file}{spec}", *shape, *flags]) == 1
    err = capsys.readouterr().err
    assert err.startswith(expected.format(file=model_file))
    assert "Traceback" not in err


def test_without_torch_says_to_install_the_extra_exit_1(model_file, capsys, monkeypatch) -> None:
    """torch is not one of adir's dependencies (the `torch` extra brings it). `None` in
    sys.modules makes `import torch` raise ModuleNotFoundError, as where it is not installed."""
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main([f"{model_file}:make_model", "--input-shape", "1,784"]) == 1
    assert capsys.readouterr().err == (
        "adir-import: error: the PyTorch importer needs torch, which is not installed here: "
        "pip install 'adir[torch]'\n"
    )


def test_missing_model_file_is_an_error(tmp_path, capsys) -> None:
    assert main([f"{tmp_path}/nope.py:make_model", "--input-shape", "1"]) == 1
    assert capsys.readouterr().err == (
        f"{tmp_path}/nope.py: error: cannot read the model file: no such file\n"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        # torch.export fails; torch first logged its own "Traceback (most recent call last)".
        (
            [],
            "{file}:12: error: torch.export cannot trace the model: a and b must have same "
            "reduction dim, but got [1, 3] X [784, 32]. (importing {file}:make_model with "
            "--input-shape 1,3)",
        ),
        # The label's shape comes from running the model, outside torch.export.
        (
            ["--loss", "mse"],
            "{file}:12: error: RuntimeError while running {file}:make_model with --input-shape "
            "1,3: mat1 and mat2 shapes cannot be multiplied (1x3 and 784x32)",
        ),
    ],
)
def test_a_wrong_input_shape_is_one_diagnostic_naming_model_and_shape(
    model_file: Path, flags: list[str], message: str
) -> None:
    """A user's process, not this one: torch's log handlers write to the real stderr."""
    result = subprocess.run(
        [ADIR_IMPORT, f"{model_file}:make_model", "--input-shape", "1,3", *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines()[0] == message.format(file=model_file), result.stderr
    assert "Traceback" not in result.stderr
    assert "fake_tensor" not in result.stderr  # torch's log lines name their source file
