"""The generated C's API and storage: initial values, the arena options, kernel overrides,
the header's sizes, and what the backend refuses (a module without a plan)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from c_testing import PREFIX, WARNINGS, build_c, check_c_against_interpreter, run_pipeline

from adir.backends.c.files import c_files
from adir.backends.c.model import print_model
from adir.context import parse_module
from adir.diagnostics import OpError
from adir.output_files import write_directory

ONLY_PARAMS = """
adir.param @k : tensor<3x5xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 11>
adir.param @x : tensor<4x6xf32> = #adir.xavier_uniform<gain = 1.0, seed = 12>
adir.param @u : tensor<7xf32> = #adir.uniform<low = -2.0, high = 3.0, seed = 13>
adir.param @n : tensor<2x3xf32> = #adir.normal<mean = 0.5, std = 2.0, seed = 14>
adir.param @fill : tensor<2xf32> = #adir.fill<value = 0.25>
adir.param @z : tensor<3xf32> = #adir.zeros
adir.param @d : tensor<2x2xf32> = dense<[[1.5, -0.1], [3.0e-7, 65504.0]]> : tensor<2x2xf32>
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %f = adir.load @fill : tensor<2xf32>
  func.return %f : tensor<2xf32>
}
"""

MATMUL = """
adir.param @w : tensor<5x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 7>
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %w = adir.load @w : tensor<5x3xf32>
  %y = adir.matmul %x, %w {transpose_b} : tensor<2x3xf32>, tensor<5x3xf32> -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
"""


@pytest.mark.parametrize("seed", [0, 1, 4000000000])
def test_init_is_bit_identical_to_the_interpreter(seed: int) -> None:
    """Every initializer, and dense data, give the interpreter's exact bits for any seed (seed 0:
    the IR's streams; others shift each stream by seed * SEED_STEP, in both)."""
    x = np.array([1.0, 2.0], np.float32)
    check_c_against_interpreter(ONLY_PARAMS, "f", [[x]], seed=seed, rtol=0, atol=0)


def planned(text: str) -> object:
    return run_pipeline(parse_module(text, "test.mlir"), "infer-shapes,bufferize,plan-memory")


def test_header_states_sizes_and_api() -> None:
    """The header #defines the arena and persistent bytes the plan computed, each parameter's
    index and size, each argument's size, and declares the API."""
    module = planned(MATMUL)
    header = print_model(module, "net_").header
    arena = module.attributes["adir.arena_size"].value.data
    assert f"#define NET_ARENA_BYTES {arena}\n" in header
    assert "#define NET_PERSISTENT_BYTES 60\n" in header  # 15 floats
    assert "#define NET_PARAM_W 0\n#define NET_W_SIZE 15\n" in header
    assert "#define NET_F_X_SIZE 6\n" in header
    assert "void net_init(uint32_t seed);" in header
    assert "void net_f(const float *x, float *out);" in header


def test_caller_arena_and_section(tmp_path: Path) -> None:
    """With -D<PREFIX>CALLER_ARENA the model runs in the caller's buffer, and
    <PREFIX>ARENA_SECTION places the static arena; both compile -Werror and give the same
    result as the interpreter (the driver sets no arena, so the caller-arena build is linked
    with a main of its own here)."""
    module = planned(MATMUL)
    write_directory(str(tmp_path), c_files(print_model(module, PREFIX)))
    (tmp_path / "main.c").write_text(
        f'#include <stdio.h>\n#include "{PREFIX}model.h"\n'
        "static double arena[64];\n"
        "int main(void) {\n"
        "    const float x[6] = {1, 2, 3, 4, 5, 6}; float y[10]; int i;\n"
        f"    {PREFIX}set_arena(arena); {PREFIX}init(0); {PREFIX}f(x, y);\n"
        '    for (i = 0; i < 10; ++i) printf("%.9g\\n", y[i]);\n'
        "    return 0;\n}\n"
    )
    sources = [str(p) for p in sorted(tmp_path.glob("*.c"))]
    exe = tmp_path / "caller"
    subprocess.run(
        ["cc", *WARNINGS, f"-D{PREFIX.upper()}CALLER_ARENA", "-I", str(tmp_path), *sources,
         "-o", str(exe), "-lm"],
        check=True,
    )  # fmt: skip
    values = np.array(subprocess.run([str(exe)], capture_output=True, text=True).stdout.split())
    from adir.interpreter import Session

    expected = Session(parse_module(MATMUL, "t.mlir")).call(
        "f", np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    )[0]
    np.testing.assert_allclose(values.astype(np.float32).reshape(2, 5), expected, rtol=1e-6)
    (tmp_path / "main.c").unlink()
    subprocess.run(
        ["cc", *WARNINGS, "-c", f"-D{PREFIX.upper()}ARENA_SECTION={SRAM2}",
         "-I", str(tmp_path), str(tmp_path / f"{PREFIX}model.c"), "-o", str(tmp_path / "m.o")],
        check=True,
    )  # fmt: skip
    sections = subprocess.run(
        ["objdump", "-h", str(tmp_path / "m.o")], capture_output=True, text=True
    )
    assert ".sram2" in sections.stdout


SRAM2 = '__attribute__((section(".sram2")))'


def test_user_kernel_replaces_the_reference(tmp_path: Path) -> None:
    """ADIR_USER_KERNELS names a header that redefines ADIR_MATMUL: the generated code then calls
    the user's kernel, without any edit to it (this one scales the reference result by 2)."""
    module = planned(MATMUL)
    signature = (
        "void my_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m,\n"
        "               int32_t n, int32_t k, int ta, int tb, int sb)"
    )
    (tmp_path / "mine.h").write_text(
        f"#include <stdint.h>\n{signature};\n#define ADIR_MATMUL my_matmul\n"
    )
    (tmp_path / "mine.c").write_text(
        '#include "adir_kernels.h"\n'
        f"{signature}\n{{\n"
        "    int32_t i;\n"
        "    adir_matmul(a, b, c, batch, m, n, k, ta, tb, sb);\n"
        "    for (i = 0; i < batch * m * n; ++i) c[i] *= 2.0f;\n"
        "}\n"
    )
    build = build_c(
        module, "f", 1, tmp_path, extra_flags=['-DADIR_USER_KERNELS="mine.h"', f"-I{tmp_path}"]
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got, _w) = build.run(0, [[x]])
    from adir.interpreter import Session

    expected = Session(parse_module(MATMUL, "t.mlir")).call("f", x)[0]
    np.testing.assert_allclose(got, 2 * expected, rtol=1e-6)


def test_module_without_a_plan_is_refused() -> None:
    module = run_pipeline(parse_module(MATMUL, "test.mlir"), "infer-shapes,bufferize")
    with pytest.raises(OpError, match="the module has no memory plan; run the C target after"):
        print_model(module)


def test_empty_prefix_compiles(tmp_path: Path) -> None:
    """Without a prefix, the C names (the arena's storage among them) still do not collide with
    the functions' locals (`arena`)."""
    write_directory(str(tmp_path), c_files(print_model(planned(MATMUL), "")))
    subprocess.run(
        ["cc", *WARNINGS, "-c", "-I", str(tmp_path), str(tmp_path / "model.c"), "-o",
         str(tmp_path / "model.o")],
        check=True,
    )  # fmt: skip
