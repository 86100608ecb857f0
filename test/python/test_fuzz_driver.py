"""The driver survives malformed input: mutated text of the examples and lit tests exits with 0
or 1 (a diagnostic), never 2 (an internal error) and never a traceback; and the same model
compiles to byte-identical output in two separate processes.

The fuzz cases are derandomized and bounded, so this file runs in CI in well under a minute.
A longer run: `ADIR_FUZZ_EXAMPLES=5000 python -m pytest -q test/python/test_fuzz_driver.py`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adir.tools.adir_opt import main

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [*ROOT.glob("examples/*.mlir"), *ROOT.glob("test/filecheck/**/*.mlir")],
    key=lambda path: str(path.relative_to(ROOT)),
)
SOURCES = [path for path in SOURCES if "Output" not in path.parts]
PIPELINES = [
    [],
    ["-p", "infer-shapes"],
    ["--autodiff"],
    ["--optimizer=sgd", "--lr=0.1", "--plan-memory"],
    ["--predict", "--optimizer=adam", "--plan-memory", "-t", "c"],
]
MAX_EXAMPLES = int(os.environ.get("ADIR_FUZZ_EXAMPLES", "150"))

# Whitespace, SSA/symbol names and words, numbers, then any single character.
_TOKEN = re.compile(rb"\s+|[%@#^!]?[\w.$-]+|.", re.DOTALL)
_NUMBER = re.compile(rb"-?\d+")
_ELEMENT_TYPE = re.compile(rb"\b(f32|f64|f16|i1|i8|i32|i64|index)\b")
ODD_NUMBERS = [b"0", b"-1", b"1", b"99999999999", b"18446744073709551616", b"1e400", b"-0"]
ODD_TYPES = [b"f32", b"i32", b"f64", b"i1", b"index", b"f16", b"none", b"tensor<f32>"]
ODD_BYTES = [b"\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80", b"\x00", b"\xf0\x9f"]


def _tokens(data: bytes) -> list[bytes]:
    return _TOKEN.findall(data)


@st.composite
def mutated_source(draw: st.DrawFn) -> tuple[str, bytes]:
    """The text of one example or lit test with one to three random mutations."""
    path = draw(st.sampled_from(SOURCES))
    data = path.read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        data = draw(_mutation(data))
    return str(path.relative_to(ROOT)), data


def _mutation(data: bytes) -> st.SearchStrategy[bytes]:
    tokens = _tokens(data) or [b""]
    lines = data.split(b"\n")
    last_token, last_line = len(tokens) - 1, len(lines) - 1

    def delete_token(i: int) -> bytes:
        return b"".join(tokens[:i] + tokens[i + 1 :])

    def swap_tokens(i: int, j: int) -> bytes:
        swapped = list(tokens)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        return b"".join(swapped)

    def duplicate_line(i: int) -> bytes:
        return b"\n".join(lines[: i + 1] + lines[i:])

    def delete_line(i: int) -> bytes:
        return b"\n".join(lines[:i] + lines[i + 1 :])

    def replace_nth(pattern: re.Pattern[bytes], n: int, new: bytes) -> bytes:
        matches = list(pattern.finditer(data))
        if not matches:
            return data
        match = matches[n % len(matches)]
        return data[: match.start()] + new + data[match.end() :]

    def insert_bytes(at: int, new: bytes) -> bytes:
        return data[:at] + new + data[at:]

    positions = st.integers(0, len(data))
    return st.one_of(
        st.integers(0, last_token).map(delete_token),
        st.tuples(st.integers(0, last_token), st.integers(0, last_token)).map(
            lambda ij: swap_tokens(*ij)
        ),
        st.integers(0, last_line).map(duplicate_line),
        st.integers(0, last_line).map(delete_line),
        st.tuples(st.integers(0, 10_000), st.sampled_from(ODD_NUMBERS)).map(
            lambda nv: replace_nth(_NUMBER, *nv)
        ),
        st.tuples(st.integers(0, 10_000), st.sampled_from(ODD_TYPES)).map(
            lambda nv: replace_nth(_ELEMENT_TYPE, *nv)
        ),
        positions.map(lambda at: data[:at]),
        st.tuples(positions, st.sampled_from(ODD_BYTES)).map(lambda ab: insert_bytes(*ab)),
    )


def run_driver(data: bytes, options: list[str]) -> tuple[int, str]:
    """Run `adir-opt` in this process on `data`; its exit code and all that it printed."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "fuzz.mlir")
        with open(path, "wb") as stream:
            stream.write(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([path, *options])
    return code, out.getvalue() + err.getvalue()


@settings(
    derandomize=True,
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(source=mutated_source(), options=st.sampled_from(PIPELINES))
def test_mutated_input_gets_a_diagnostic_not_a_crash(
    source: tuple[str, bytes], options: list[str]
) -> None:
    name, data = source
    code, output = run_driver(data, options)
    assert code in (0, 1), f"{name} mutated, {options}: exit {code}\n{output}\n{data!r}"
    # The full header: a mutation may move the word "Traceback" from a lit test into an op name.
    assert "Traceback (most recent call last)" not in output, (
        f"{name} mutated, {options}:\n{output}"
    )


@pytest.mark.parametrize("target", ["mlir", "c"])
@pytest.mark.parametrize("example", ["mnist_mlp.mlir", "lenet5.mlir", "ds_cnn.mlir"])
def test_training_step_is_byte_identical_across_processes(example: str, target: str) -> None:
    """The planned IR, and the C printed from it, do not depend on string hashing (set or
    dict order) or on anything else that changes between processes."""
    command = [
        sys.executable,
        "-m",
        "adir.tools.adir_opt",
        str(ROOT / "examples" / example),
        "--predict",
        "--optimizer=adam",
        "--lr=0.001",
        "--plan-memory",
        "-t",
        target,
    ]
    first, second = (
        subprocess.run(command, capture_output=True, check=True, env=_hash_seed(seed))
        for seed in ("1", "2")
    )
    assert first.stdout, first.stderr
    assert first.stdout == second.stdout


def _hash_seed(seed: str) -> dict[str, str]:
    """The environment with a different string-hash seed, so set order would differ."""
    return {**os.environ, "PYTHONHASHSEED": seed}
