"""The generated training programs learn real handwritten digits, with no Python at run time:
scikit-learn's 8x8 digits upsampled to 28x28 (tools/digits.py, 1,437 to train on, 360 to test),
each model compiled by `adir-opt --predict --optimizer=... --emit-c --c-main`, built with
`cc -std=c99 -O2 -Werror` and run for a few epochs; the test accuracy it prints after the last
epoch must reach the target.

- LeNet-5 (examples/lenet5.mlir), SGD lr 0.01, 5 epochs: >= 95%. Measured: 53.9, 89.4, 94.4,
  97.2 and 98.9% after epochs 1 to 5 (at lr 0.05 it diverges in epoch 4; Adam at lr 1e-3
  reaches 96.9% after 5 epochs, at 1.7 times the time per step).
- The seed MLP (examples/mnist_mlp.mlir), SGD lr 0.1 as tools/demo.sh trains it, 5 epochs:
  >= 90%, issue 6's demo criterion. Measured: 88.6, 90.3, 90.3, 90.0 and 93.1%.

Both runs are deterministic (initial weights from seed 0, batches in file order). scikit-learn
is required, not optional: without it these tests fail.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from adir.tools.adir_opt import main as adir_opt

ROOT = Path(__file__).parents[2]
EPOCH = re.compile(r"^epoch +\d+ +loss +[\d.]+ +test accuracy +([\d.]+)%$", re.MULTILINE)
C_FLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]


def digits_tool() -> ModuleType:
    """tools/digits.py (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("digits", ROOT / "tools" / "digits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def digits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the digits' train.bin and test.bin (ADIRDATA)."""
    directory = tmp_path_factory.mktemp("digits")
    digits_tool().main(str(directory))
    return directory


def trained_accuracies(
    example: str, optimizer: str, lr: float, epochs: int, digits: Path, build: Path
) -> list[float]:
    """Compile, build and train `example`; the test accuracy (%) after each epoch."""
    c_dir = build / "c"
    assert (
        adir_opt(
            [
                "--predict",
                f"--optimizer={optimizer}",
                f"--lr={lr}",
                f"--emit-c={c_dir}",
                "--c-prefix=p_",
                "--c-main",
                str(ROOT / "examples" / f"{example}.mlir"),
                "-o",
                str(build / "model.mlir"),
            ]
        )
        == 0
    )
    program = build / "train"
    sources = sorted(str(path) for path in c_dir.glob("*.c"))
    compiled = subprocess.run(
        ["cc", *C_FLAGS, *sources, "-o", str(program), "-lm"], capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run(
        [str(program), str(digits / "train.bin"), str(digits / "test.bin"), str(epochs)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    accuracies = [float(accuracy) for accuracy in EPOCH.findall(ran.stdout)]
    assert len(accuracies) == epochs, ran.stdout
    return accuracies


@pytest.mark.slow
def test_lenet5_learns_the_digits_to_95_percent(digits: Path, tmp_path: Path) -> None:
    accuracies = trained_accuracies("lenet5", "sgd", 0.01, 5, digits, tmp_path)
    assert accuracies[-1] >= 95.0, f"test accuracy per epoch: {accuracies}"


@pytest.mark.slow
def test_mnist_mlp_learns_the_digits_to_90_percent_in_5_epochs(
    digits: Path, tmp_path: Path
) -> None:
    accuracies = trained_accuracies("mnist_mlp", "sgd", 0.1, 5, digits, tmp_path)
    assert accuracies[-1] >= 90.0, f"test accuracy per epoch: {accuracies}"
