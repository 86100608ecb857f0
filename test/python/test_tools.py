"""adir-opt and adir-run as a user runs them: exit codes, messages, outputs."""

from __future__ import annotations

import os
import stat
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


RECURSIVE = """\
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = func.call @g(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = func.call @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
"""

TWO_BLOCKS = """\
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
^bb1:
  %y = adir.relu %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
"""


def run_adir_run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """adir-run in this process (no interpreter start-up per case): code, stdout, stderr."""
    from adir.tools.adir_run import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("model", "args", "message"),
    [
        # Without a check, each of these was an internal error (exit 2) or a silent exit 0.
        (
            RECURSIVE,
            ["--func", "f", "--random-inputs", "0"],
            "model.mlir:6:3: error: recursive call @f -> @g -> @f: adir has no control flow to "
            "end a recursion",
        ),
        (
            TWO_BLOCKS,
            ["--random-inputs", "0"],
            "model.mlir:4:3: error: @f has 2 blocks; adir's functions are one block",
        ),
        (
            None,
            ["--func", "loss", "--random-inputs", "-1"],
            "adir-run: error: --random-inputs -1: must be at least 0",
        ),
        (
            None,
            ["--func", "loss", "--random-inputs", "0", "--repeat", "-3"],
            "adir-run: error: --repeat -3: must be at least 1",
        ),
        (
            None,
            ["--func", "loss", "--random-inputs", "0", "--num-classes", "0"],
            "adir-run: error: --num-classes 0: must be at least 1",
        ),
    ],
)
def test_adir_run_bad_models_and_options_are_located_errors(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model: str | None,
    args: list[str],
    message: str,
) -> None:
    path = tmp_path / "model.mlir"
    path.write_text(EXAMPLE.read_text() if model is None else model)
    code, out, err = run_adir_run(capsys, str(path), *args)
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path}/{message}" if model else message), err


def npy_file(tmp_path: Path, name: str, array: np.ndarray) -> str:
    np.save(tmp_path / name, array)
    return str(tmp_path / name)


@pytest.mark.parametrize(
    ("x", "label", "bad", "message"),
    [
        # int64 2^32 + 1 wraps to 1 in int32, 2^40 to 0; a float label 0.9 truncates to 0.
        (
            None,
            np.array([2**32 + 1]),
            "label",
            "argument #1 of @loss (tensor<1xi32>): value 4294967297 at index (0,) does not "
            "fit int32",
        ),
        (None, np.array([2**40]), "label", "value 1099511627776 at index (0,) does not fit"),
        (None, np.array([0.9]), "label", "value 0.9 at index (0,) is not an integer (int32)"),
        (None, np.array([np.nan]), "label", "value nan at index (0,) is not an integer"),
        (
            np.zeros((2, 784), np.float32),
            None,
            "x",
            "argument #0 of @loss (tensor<1x784xf32>): the array has shape (2, 784)",
        ),
        (np.array([["a"] * 784]), None, "x", "holds <U1 values, not numbers"),
    ],
)
def test_adir_run_refuses_npy_values_that_a_cast_would_change(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    x: np.ndarray | None,
    label: np.ndarray | None,
    bad: str,
    message: str,
) -> None:
    x_path = npy_file(tmp_path, "x.npy", np.zeros((1, 784)) if x is None else x)
    label_path = npy_file(tmp_path, "label.npy", np.array([3]) if label is None else label)
    code, out, err = run_adir_run(capsys, str(EXAMPLE), "--func", "loss", x_path, label_path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path}/{bad}.npy: error: "), err
    assert message in err, err


def test_adir_run_accepts_exact_and_rounding_casts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """int64 labels that fit, integral float labels and float64 inputs give the same loss as
    the model's own dtypes (float64 -> f32 rounds, which is what an f32 model means)."""
    x = np.random.default_rng(0).standard_normal((1, 784))
    losses = []
    for x_dtype, label in [
        (np.float32, np.array([3], np.int32)),
        (np.float64, np.array([3], np.int64)),
        (np.float64, np.array([3.0])),
    ]:
        x_path = npy_file(tmp_path, "x.npy", x.astype(x_dtype))
        label_path = npy_file(tmp_path, "label.npy", label)
        code, out, err = run_adir_run(capsys, str(EXAMPLE), x_path, label_path, "--func", "loss")
        assert code == 0, err
        losses.append(out)
    assert losses[0] == losses[1] == losses[2]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty, not a .npy array"),
        (b"garbage, not numpy", "not a .npy file (it does not start with NumPy's magic string)"),
        (None, "cannot read the file: Is a directory"),
    ],
)
def test_adir_run_reports_unreadable_npy_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "x.npy"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    label = npy_file(tmp_path, "label.npy", np.array([3], np.int32))
    code, out, err = run_adir_run(capsys, str(EXAMPLE), "--func", "loss", str(path), label)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}: error: cannot read a .npy array: {message}"), err


@pytest.mark.skipif(
    not stat.S_ISCHR(os.stat("/dev/null").st_mode), reason="/dev/null is not a device here"
)
def test_adir_run_reads_dev_null_as_an_empty_npy(capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/null was numpy's EOFError, an internal error (exit 2)."""
    code, _, err = run_adir_run(capsys, str(EXAMPLE), "--func", "loss", "/dev/null", "/dev/null")
    assert code == 1
    assert err.startswith("/dev/null: error: cannot read a .npy array: the file is empty"), err


def test_adir_run_draws_random_buffers_for_a_planned_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """After --plan-memory the arguments are memrefs; --random-inputs refused them ("needs
    static shapes; argument #0 is memref<1x784xf32>"). The same seed draws the same values
    (labels over the example's 10 classes either way), so the loss is the tensor level's."""
    planned = run_tool("adir-opt", "--plan-memory", str(EXAMPLE))
    assert planned.returncode == 0, planned.stderr
    (tmp_path / "planned.mlir").write_text(planned.stdout)
    planned_path = str(tmp_path / "planned.mlir")
    code, buffers, err = run_adir_run(capsys, planned_path, "--random-inputs", "0")
    assert code == 0, err
    code, tensors, err = run_adir_run(capsys, str(EXAMPLE), "--func", "loss", "--random-inputs=0")
    assert code == 0, err
    assert buffers == tensors
