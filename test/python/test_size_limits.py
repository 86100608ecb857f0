"""Size limits (adir/limits.py) where a lit test cannot show them: memory, and C that runs.

The lit tests (test/filecheck/c/int32_sizes.mlir, static_data_limit.mlir, splat.mlir,
plan-memory/arena_limit.mlir, adir-opt/huge_dense_literal.mlir) show the diagnostics and the
printed C; these run the tools under an address-space limit, and compile the C of splats.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
from c_testing import check_c_against_interpreter

from adir.context import parse_module
from adir.dense_literals import splat_value
from adir.interpreter.arrays import dense_to_numpy

ROOT = Path(__file__).parents[2]

# 1 GiB of address space: Python, xDSL and numpy start in about 300 MB here. Parsing the
# 4000x4000 splat below used to peak at 1.4 GB of resident memory (a list of 16 million floats)
# and printing its C at 1.7 GB; both now stay under 50 MB.
ADDRESS_SPACE = 1 << 30


def limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_limited(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    main = {"adir-opt": "adir.tools.adir_opt", "adir-run": "adir.tools.adir_run"}[tool]
    return subprocess.run(
        [sys.executable, "-m", main, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        preexec_fn=limit_address_space,
        # One BLAS thread: each would reserve address space of its own.
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    )


SPLAT_4000 = """\
adir.param @w : tensor<4000x4000xf32> = dense<1.0> : tensor<4000x4000xf32>
func.func @f(%x: tensor<1x4000xf32>) -> tensor<1x4000xf32> {
  %w = adir.load @w : tensor<4000x4000xf32>
  %y = adir.matmul %x, %w : tensor<1x4000xf32>, tensor<4000x4000xf32> -> tensor<1x4000xf32>
  func.return %y : tensor<1x4000xf32>
}
func.func @set_w(%w: tensor<4000x4000xf32>) {
  adir.store %w, @w : tensor<4000x4000xf32>
  func.return
}
"""


def test_a_16m_element_splat_parses_and_prints_as_c_in_1_gib(tmp_path: Path) -> None:
    """Before: MemoryError under this limit (exit code 2). Now the IR prints the splat back as
    a splat and the C fills the parameter: no 16M-element table in either. (@set_w writes @w,
    so it is in RAM; a frozen one would be a constant table in flash, 64 MB of it.)"""
    model = tmp_path / "splat.mlir"
    model.write_text(SPLAT_4000)
    ir = run_limited("adir-opt", str(model))
    assert ir.returncode == 0, ir.stderr
    assert "= dense<1.000000e+00> : tensor<4000x4000xf32>" in ir.stdout
    c = run_limited("adir-opt", "--plan-memory", "-t", "c", str(model))
    assert c.returncode == 0, c.stderr
    assert "adir_init_fill(w, 16000000u, 1.0f);" in c.stdout
    assert "w_initial" not in c.stdout
    assert len(c.stdout) < 10_000  # the table was 104 MB of text


def test_adir_run_refuses_a_parameter_larger_than_memory(tmp_path: Path) -> None:
    """A parameter of 2^42 elements (16 TiB) was a MemoryError, exit code 2; now an error at
    the parameter, exit code 1 (the address-space limit makes numpy refuse it on any host,
    whatever its overcommit policy)."""
    model = tmp_path / "huge.mlir"
    model.write_text(
        "adir.param @w : tensor<4398046511104xf32> = #adir.zeros\n"
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  func.return %x : tensor<4xf32>\n"
        "}\n"
    )
    completed = run_limited("adir-run", str(model), "--random-inputs", "0")
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.startswith(
        f"{model}:1:1: error: the interpreter cannot hold @w: 4398046511104 elements of 4 bytes"
    ), completed.stderr


def test_a_splat_is_kept_as_one_element() -> None:
    """The parser keeps a splat's one element (4 bytes, not 64); the interpreter's arrays and
    `splat_value` read it as the whole tensor, and a list literal of equal values is a splat to
    `splat_value` too (compared by bits: -0.0 is not 0.0)."""
    module = parse_module(
        "adir.param @a : tensor<4x4xf32> = dense<2.5> : tensor<4x4xf32>\n"
        "adir.param @b : tensor<2xf32> = dense<[3.0, 3.0]> : tensor<2xf32>\n"
        "adir.param @c : tensor<2xf32> = dense<[0.0, -0.0]> : tensor<2xf32>\n"
        "adir.param @d : tensor<0xf32> = dense<2.5> : tensor<0xf32>\n"
    )
    a, b, c, d = (op.initial_value for op in module.ops)  # type: ignore[attr-defined]
    assert len(a.data.data) == 4
    np.testing.assert_array_equal(dense_to_numpy(a, np.dtype(np.float32)), np.full((4, 4), 2.5))
    assert [splat_value(x) for x in (a, b, c, d)] == [2.5, 3.0, None, None]
    assert dense_to_numpy(d, np.dtype(np.float32)).shape == (0,)


SPLATS = """
adir.param @w : tensor<3x4xf32> = dense<0.75> : tensor<3x4xf32>
adir.param @n : tensor<4xf32> = dense<-2.0> : tensor<4xf32>
func.func @f(%x: tensor<3x3xf32>) -> tensor<3x4xf32> {
  %w = adir.load @w : tensor<3x4xf32>
  %n = adir.load @n : tensor<4xf32>
  %y = adir.matmul %x, %w : tensor<3x3xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %z = adir.constant dense<0.0> : tensor<3x4xf32>
  %h = adir.constant dense<0.5> : tensor<3x4xf32>
  %s = adir.add %y, %z : tensor<3x4xf32>
  %t = adir.mul %s, %h : tensor<3x4xf32>
  %u = adir.add %t, %n : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  func.return %u : tensor<3x4xf32>
}
"""


def test_splat_parameters_and_constants_compute_as_in_the_interpreter() -> None:
    """The fills and the `{0}` / repeated-line tables (12 elements: past one line) give the
    interpreter's exact results ((x @ 0.75 + 0) * 0.5 - 2, and the parameters after the call)."""
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    results = check_c_against_interpreter(SPLATS, "f", [[x]], rtol=0, atol=0)
    # Rows of x sum to 3, 12 and 21: (3 * 0.75) * 0.5 - 2 = -0.875, then 2.5 and 5.875.
    np.testing.assert_array_equal(results[0], [[-0.875] * 4, [2.5] * 4, [5.875] * 4])
