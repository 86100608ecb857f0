"""`adir-run` and `adir-import` survive bad inputs and options: `.npy` files of the wrong dtype or
shape, garbage, empty or truncated files, labels out of range, negative counts; bad shapes,
losses and model specs. Each exits 0 or 1 (a diagnostic), never 2 (an internal error), never
with a traceback and never hangs (fuzzing.Outcome.problem); what is plainly wrong exits 1.

Integer and boolean arrays as float inputs are not errors: adir-run converts what keeps its
value (README, `adir-run --help`). A longer random run of `.npy` inputs:

    ADIR_FUZZ_EXAMPLES=5000 python -m pytest -q test/python/test_fuzz_run_import.py
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fuzzing import Outcome, run_tool
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from adir.tools import adir_import, adir_run

MAX_EXAMPLES = int(os.environ.get("ADIR_FUZZ_EXAMPLES", "60"))

# @loss(x: 2x4 f32, label: 2 i32 class indices of 3 classes).
MODEL = """adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.0, seed = 1>
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32>
    attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %logits = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""
GOOD_X = np.zeros((2, 4), np.float32)
GOOD_LABEL = np.array([0, 2], np.int32)


def check(outcome: Outcome, expect_error: bool) -> None:
    assert outcome.problem() is None, f"{outcome.problem()}\n{outcome.output}"
    if expect_error:
        assert outcome.code == 1, f"accepted:\n{outcome.output[:800]}"
        assert "error:" in outcome.stderr, outcome.stderr


def run_model(tmp_path: Path, inputs: list[object], options: list[str] = ()) -> Outcome:
    """`adir-run MODEL` on `inputs`: arrays (saved as .npy) or raw bytes (a file as is)."""
    model = tmp_path / "model.mlir"
    model.write_text(MODEL)
    paths = []
    for index, value in enumerate(inputs):
        path = tmp_path / f"input{index}.npy"
        if isinstance(value, bytes):
            path.write_bytes(value)
        else:
            np.save(path, value, allow_pickle=False)
        paths.append(str(path))
    return run_tool(adir_run.main, [str(model), *paths, *options])


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


# (x, label, expect an error) by name: each is wrong, so exit 1 with a diagnostic.
BAD_INPUTS = {
    "x-complex": (GOOD_X.astype(np.complex64), GOOD_LABEL),
    "x-float64-past-f32": (np.full((2, 4), 1e300), GOOD_LABEL),  # inf in f32: not a rounding
    "x-strings": (np.full((2, 4), "a"), GOOD_LABEL),
    "x-shape-4x2": (GOOD_X.reshape(4, 2), GOOD_LABEL),
    "x-shape-2x4x1": (GOOD_X.reshape(2, 4, 1), GOOD_LABEL),
    "x-scalar": (np.float32(1.0), GOOD_LABEL),
    "x-empty-array": (np.zeros((0, 4), np.float32), GOOD_LABEL),
    "x-empty-file": (b"", GOOD_LABEL),
    "x-garbage": (b"\x93NUMPY garbage \xff\x00" * 7, GOOD_LABEL),
    "x-truncated": (_npy_bytes(GOOD_X)[:-5], GOOD_LABEL),
    "x-text": (b"1 2 3 4\n5 6 7 8\n", GOOD_LABEL),
    "label-3": (GOOD_X, np.array([0, 3], np.int32)),
    "label-negative": (GOOD_X, np.array([0, -1], np.int32)),
    "label-2^32+1": (GOOD_X, np.array([0, 2**32 + 1], np.int64)),
    "label-2^40": (GOOD_X, np.array([0, 2**40], np.int64)),
    "label-float-0.9": (GOOD_X, np.array([0.0, 0.9], np.float32)),
    "label-float-2.7": (GOOD_X, np.array([0.0, 2.7], np.float64)),
    "label-shape-3": (GOOD_X, np.array([0, 1, 2], np.int32)),
}


@pytest.mark.parametrize(
    ("x", "label"),
    [pytest.param(*values, id=name) for name, values in BAD_INPUTS.items()],
)
def test_bad_npy_input_is_an_error(x: object, label: object, tmp_path: Path) -> None:
    check(run_model(tmp_path, [x, label]), expect_error=True)


BAD_RUN_OPTIONS = {
    "one-input": ([GOOD_X], []),
    "three-inputs": ([GOOD_X, GOOD_LABEL, GOOD_LABEL], []),
    "random-inputs-negative": ([], ["--random-inputs", "-1"]),
    "random-and-files": ([GOOD_X, GOOD_LABEL], ["--random-inputs", "0"]),
    "repeat-negative": ([GOOD_X, GOOD_LABEL], ["--repeat", "-3"]),
    "repeat-zero": ([GOOD_X, GOOD_LABEL], ["--repeat", "0"]),
    "repeat-word": ([GOOD_X, GOOD_LABEL], ["--repeat", "many"]),
    "no-such-func": ([GOOD_X, GOOD_LABEL], ["--func", "nope"]),
    "save-to-directory": ([GOOD_X, GOOD_LABEL], ["--save", "."]),
}


@pytest.mark.parametrize(
    ("inputs", "options"),
    [pytest.param(*values, id=name) for name, values in BAD_RUN_OPTIONS.items()],
)
def test_bad_run_option_is_an_error(
    inputs: list[object], options: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each is wrong: too few or too many inputs, a negative seed or count, zero classes..."""
    monkeypatch.chdir(tmp_path)
    check(run_model(tmp_path, inputs, options), expect_error=True)


DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.int8, np.uint64, np.bool_]


def _arrays() -> st.SearchStrategy[np.ndarray]:
    shapes = st.sampled_from([(2, 4), (2,), (4, 2), (2, 4, 1), (), (0,), (1, 4), (2, 3)])
    return st.one_of(
        st.tuples(st.sampled_from(DTYPES), shapes).flatmap(
            lambda ds: hnp.arrays(ds[0], ds[1], elements=None)
        ),
    )


def test_random_npy_inputs_get_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    """Random arrays of any dtype, shape and values (NaN, huge, negative) for both arguments:
    exit 0 or 1, never a crash. Labels are cast (item 7), so a wrong value may still exit 0."""

    @settings(
        derandomize=True,
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(x=_arrays(), label=_arrays())
    def run_one(x: np.ndarray, label: np.ndarray) -> None:
        check(run_model(tmp_path, [x, label]), expect_error=False)

    run_one()


# ---- adir-import ----

# Imported here, outside the address-space limit of fuzzing.limits() (adir-import imports it).
torch = pytest.importorskip("torch")

MODEL_FILE = """import torch


def linear():
    return torch.nn.Linear(4, 3)


def raises():
    raise RuntimeError("no model today")


def not_a_module():
    return 42
"""

BAD_IMPORTS = {
    "input-shape-words": ["model.py:linear", "--input-shape", "a,b"],
    "input-shape-negative": ["model.py:linear", "--input-shape", "-1,4"],
    "input-shape-dtype": ["model.py:linear", "--input-shape", "2,4:f16"],
    "input-shape-wrong": ["model.py:linear", "--input-shape", "2,5"],
    "input-shape-none": ["model.py:linear"],
    "input-shape-two": ["model.py:linear", "--input-shape", "2,4", "--input-shape", "2,4"],
    "input-shape-huge": ["model.py:linear", "--input-shape", "99999999999,4"],
    "label-shape-words": [
        "model.py:linear",
        "--input-shape",
        "2,4",
        "--loss",
        "mse",
        "--label-shape",
        "x",
    ],
    "label-shape-no-loss": ["model.py:linear", "--input-shape", "2,4", "--label-shape", "2,3"],
    "label-shape-wrong": [
        "model.py:linear",
        "--input-shape",
        "2,4",
        "--loss",
        "mse",
        "--label-shape",
        "7,7",
    ],
    "loss-unknown": ["model.py:linear", "--input-shape", "2,4", "--loss", "hinge"],
    "missing-file": ["nope.py:linear", "--input-shape", "2,4"],
    "missing-function": ["model.py:nope", "--input-shape", "2,4"],
    "no-colon": ["model.py", "--input-shape", "2,4"],
    "factory-raises": ["model.py:raises", "--input-shape", "2,4"],
    "not-a-module": ["model.py:not_a_module", "--input-shape", "2,4"],
    "directory": [".:linear", "--input-shape", "2,4"],
    "output-directory": ["model.py:linear", "--input-shape", "2,4", "-o", "."],
}


@pytest.mark.parametrize(
    "argv",
    [pytest.param(argv, id=name) for name, argv in BAD_IMPORTS.items()],
)
def test_bad_import_option_is_an_error(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model.py").write_text(MODEL_FILE)
    monkeypatch.chdir(tmp_path)
    check(run_tool(adir_import.main, argv), expect_error=True)


def test_wrong_input_shape_prints_no_traceback_in_a_process(tmp_path: Path) -> None:
    """torch logs its traceback to the process's own stderr, which the in-process runs above
    do not capture: one case in a separate process."""
    (tmp_path / "model.py").write_text(MODEL_FILE)
    completed = subprocess.run(
        [sys.executable, "-m", "adir.tools.adir_import", "model.py:linear", "--input-shape", "2,5"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    check(Outcome(completed.returncode, completed.stdout, completed.stderr), expect_error=True)
