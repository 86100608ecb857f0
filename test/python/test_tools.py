"""adir-opt and adir-run as a user runs them: exit codes, messages, outputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "mnist_mlp.mlir"


def run_tool(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    main = {"adir-opt": "adir.tools.adir_opt", "adir-run": "adir.tools.adir_run"}[tool]
    return subprocess.run(
        [sys.executable, "-m", main, *args], capture_output=True, text=True, cwd=ROOT, check=False
    )


def test_example_round_trips_through_the_printer() -> None:
    """Printing the example and parsing the print gives the same text (a fixpoint)."""
    first = run_tool("adir-opt", str(EXAMPLE))
    assert first.returncode == 0, first.stderr
    again = subprocess.run(
        [sys.executable, "-m", "adir.tools.adir_opt"],
        input=first.stdout,
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout


def test_output_is_byte_identical_across_processes() -> None:
    """Determinism: two separate processes print the same bytes."""
    runs = [run_tool("adir-opt", "--infer-shapes", str(EXAMPLE)) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


def test_adir_run_prints_the_loss_of_the_example() -> None:
    result = run_tool("adir-run", str(EXAMPLE), "--func", "loss", "--random-inputs", "0")
    assert result.returncode == 0, result.stderr
    loss = float(result.stdout.split("result #0:")[1])
    assert 0 < loss < 20  # a finite negative log-likelihood of one of ten classes


def test_adir_run_reads_npy_inputs_and_saves_npz(tmp_path: Path) -> None:
    x = np.zeros((1, 784), np.float32)
    label = np.array([3], np.int32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "label.npy", label)
    out = tmp_path / "out.npz"
    result = run_tool(
        "adir-run",
        str(EXAMPLE),
        str(tmp_path / "x.npy"),
        str(tmp_path / "label.npy"),
        "--save",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    saved = np.load(out)
    # A zero input makes every hidden unit sigmoid(0) = 0.5; the loss is then
    # logsumexp(logits) - logits[3] with logits = 0.5 * w2.sum(axis=1).
    logits = 0.5 * saved["param_w2"].astype(np.float64).sum(axis=1)
    expected = np.log(np.exp(logits).sum()) - logits[3]
    assert saved["result0"].item() == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--func", "nope", "--random-inputs", "0"], "adir-run: error: no function @nope"),
        (["--func", "loss"], "adir-run: error: @loss takes 2 arguments, got 0"),
        (["--frobnicate"], "adir-run: error: unrecognized arguments: --frobnicate"),
    ],
)
def test_adir_run_errors_are_one_line_and_exit_1(args: list[str], message: str) -> None:
    result = run_tool("adir-run", str(EXAMPLE), *args)
    assert result.returncode == 1
    assert result.stderr.startswith(message), result.stderr
    assert "Traceback" not in result.stderr


def test_adir_run_reports_a_missing_model() -> None:
    result = run_tool("adir-run", "no/such/model.mlir")
    assert result.returncode == 1
    assert result.stderr.startswith("no/such/model.mlir: error: cannot read the input")
