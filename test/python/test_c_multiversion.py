"""A portable x86-64 build (`cc -O2`, no -march) carries AVX2 and AVX-512 versions of the tuned
kernels and binds each kernel's name to the widest version the CPU runs, when the program is
loaded (runtime/targets/adir_multiversion.h): the versions are in the binary, the names are
indirect functions, the version bound is the CPU's, and a model trained by that build agrees
with the interpreter as closely as the other builds do (test_c_examples.py's 1e-5). Each version
against the reference kernels: test_c_kernels_vs_reference.py.
"""

from __future__ import annotations

import functools
import importlib.resources
import platform
import re
import subprocess
from pathlib import Path

import pytest
from adir_testing import parse_example
from c_testing import (
    PORTABLE_FLAGS,
    WARNINGS,
    build_c,
    c_compilers,
    check_c_against_interpreter,
    function_body,
    runtime_objects,
)
from test_c_examples import OPTIMIZERS, training_steps
from test_c_kernels_vs_reference import cpu_flags

from adir.backends.c.files import runtime_files
from adir.output_files import write_directory

RUNTIME = Path(str(importlib.resources.files("adir.backends.c") / "runtime"))
VERSIONS = ("generic", "avx2", "avx512")
AVX512 = {"avx512f", "avx512vl", "avx512bw", "avx512dq"}


def public_functions() -> set[str]:
    """The functions that the tuned kernels' sources define for other files (not static)."""
    names = set()
    for source in (RUNTIME / "tuned").glob("adir_tuned_*.c"):
        text = source.read_text()
        names |= set(re.findall(r"^(?:void|int32_t|size_t|float) +(adir_\w+)\(", text, re.M))
    return names


def test_every_tuned_kernel_has_versions() -> None:
    """adir_tuned_variants.h lists (and renames) every public function of tuned/, and every
    kernel source is in each version (adir_tuned_sources.h): a kernel missing from either
    would link to nothing, or keep its SSE2 code, in a multiversioned build."""
    variants = (RUNTIME / "tuned" / "adir_tuned_variants.h").read_text()
    listed = set(re.findall(r"X\((adir_\w+)\)", variants))
    renamed = set(re.findall(r"#define (adir_\w+) ADIR_VARIANT_NAME\(\1\)", variants))
    assert len(public_functions()) >= 33  # the kernels of 2026-11-26, the host batchnorms included
    assert listed == public_functions()
    assert renamed == public_functions()
    versions = {"adir_tuned_x86_avx2.c", "adir_tuned_x86_avx512.c", "adir_tuned_dispatch.c"}
    kernel_sources = {
        path.name
        for path in (RUNTIME / "tuned").glob("adir_tuned_*.c")
        if path.name not in versions
    }
    included = re.findall(
        r'#include "(adir_tuned_\w+\.c)"', (RUNTIME / "tuned" / "adir_tuned_sources.h").read_text()
    )
    assert len(kernel_sources) == 13  # adir_tuned_depthwise_same.c the thirteenth
    assert sorted(included) == sorted(kernel_sources)


def x86_64_with_avx2() -> None:
    if platform.machine() != "x86_64" or platform.system() != "Linux":
        pytest.skip(f"multiversioning is for x86-64 Linux; this is {platform.machine()}")
    if not {"avx2", "fma"} <= cpu_flags():
        pytest.skip("this CPU has no AVX2 and FMA: its build binds every kernel to SSE2")


def expected_version() -> str:
    return "avx512" if AVX512 <= cpu_flags() else "avx2"


# Which version the loader bound adir_tuned_matmul to: dlsym of an indirect function gives the
# address its resolver chose (a function's address taken in C may be a stub that jumps there).
WHICH_VERSION = """\
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "adir_kernels.h"

extern __typeof__(adir_tuned_matmul) adir_tuned_matmul_generic, adir_tuned_matmul_avx2,
    adir_tuned_matmul_avx512;

int main(void)
{
    void *program = dlopen(NULL, RTLD_NOW);
    void *symbol = program ? dlsym(program, "adir_tuned_matmul") : NULL;
    __typeof__(&adir_tuned_matmul) bound;
    if (!symbol) {
        puts("not found");
        return 1;
    }
    memcpy(&bound, &symbol, sizeof bound);
    puts(bound == adir_tuned_matmul_avx512 ? "avx512"
         : bound == adir_tuned_matmul_avx2 ? "avx2"
         : bound == adir_tuned_matmul_generic ? "generic" : "none");
    return 0;
}
"""


def portable_build(compiler: str, directory: Path, version_max: int | None = None) -> Path:
    """`cc -O2` of the runtime and WHICH_VERSION, with -DADIR_X86_VERSION_MAX=`version_max`
    if given. The runtime is compiled once a test run (c_testing.runtime_objects, shared
    with test_c_kernels_vs_reference.py's -O2 builds); the cap is adir_tuned_dispatch.c's
    alone, so only that file is compiled again for it."""
    objects = runtime_objects(compiler, PORTABLE_FLAGS)
    runtime = Path(objects[0]).parent
    sources = [str(directory / "which_version.c")]
    (directory / "which_version.c").write_text(WHICH_VERSION)
    if version_max is not None:
        dispatch = str(runtime / "adir_tuned_dispatch.o")
        objects = [path for path in objects if path != dispatch]
        sources.append(str(runtime / "adir_tuned_dispatch.c"))
    flags = [] if version_max is None else [f"-DADIR_X86_VERSION_MAX={version_max}"]
    executable = directory / "which_version"
    completed = subprocess.run(
        [compiler, *PORTABLE_FLAGS, "-rdynamic", *flags, f"-I{runtime}", *sources, *objects,
         "-o", str(executable), "-lm", "-ldl"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    return executable


def symbols(executable: Path) -> dict[str, str]:
    """nm's type letter of each symbol."""
    listing = subprocess.run(["nm", str(executable)], capture_output=True, text=True, check=True)
    return {
        fields[2]: fields[1]
        for fields in (line.split() for line in listing.stdout.splitlines())
        if len(fields) == 3
    }


@pytest.mark.parametrize("compiler", c_compilers())
def test_portable_build_binds_the_widest_version(compiler: str, tmp_path: Path) -> None:
    x86_64_with_avx2()
    executable = portable_build(compiler, tmp_path)
    table = symbols(executable)
    for name in public_functions():
        assert table.get(name) == "i", f"{name} is not an indirect function: {table.get(name)}"
        for version in VERSIONS:
            assert table.get(f"{name}_{version}") == "T", f"{name}_{version} missing"
    bound = subprocess.run([str(executable)], capture_output=True, text=True, check=True)
    assert bound.stdout.strip() == expected_version()


@pytest.mark.parametrize("compiler", c_compilers())
@pytest.mark.parametrize("cap, version", [(1, "avx2"), (0, "generic")])
def test_version_cap_binds_a_narrower_version(
    compiler: str, cap: int, version: str, tmp_path: Path
) -> None:
    """-DADIR_X86_VERSION_MAX=N: at most version N, whatever wider one the CPU runs (how the
    AVX2 kernels are timed on an AVX-512 core)."""
    x86_64_with_avx2()
    executable = portable_build(compiler, tmp_path, cap)
    bound = subprocess.run([str(executable)], capture_output=True, text=True, check=True)
    assert bound.stdout.strip() == version


@pytest.mark.parametrize("compiler", c_compilers())
def test_opting_out_builds_one_version(compiler: str, tmp_path: Path) -> None:
    """-DADIR_NO_MULTIVERSION: the kernels under their own names, SSE2 only, as before; the
    versions' and the dispatcher's translation units are empty."""
    x86_64_with_avx2()
    write_directory(str(tmp_path), runtime_files())
    for source, defined in [
        ("adir_tuned_matmul.c", "adir_tuned_matmul"),
        ("adir_tuned_x86_avx2.c", None),
        ("adir_tuned_x86_avx512.c", None),
        ("adir_tuned_dispatch.c", None),
    ]:
        target = tmp_path / source.replace(".c", ".o")
        subprocess.run(
            [compiler, *WARNINGS, "-O2", "-DADIR_NO_MULTIVERSION", "-c", str(tmp_path / source),
             "-o", str(target)],
            check=True,
        )  # fmt: skip
        table = symbols(target)
        if defined:
            assert table.get(defined) == "T"
            assert not any(name.endswith(("_generic", "_avx2", "_avx512")) for name in table)
        else:
            assert not any(kind in "Ti" for kind in table.values()), table


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_portable_build_trains_like_the_interpreter(compiler: str) -> None:
    """LeNet-5 with SGD, 5 steps, each from the C's state, at test_c_examples.py's tolerance;
    its convolutions, matmuls and fused updates run the version the CPU was bound to above."""
    x86_64_with_avx2()
    check_c_against_interpreter(
        parse_example("lenet5"),
        "train_step",
        training_steps("lenet5", 5),
        differentiate=f"autodiff,{OPTIMIZERS['sgd']}",
        rtol=1e-5,
        sanitize=False,
        compiler=compiler,
        each_step_from_c_state=True,
        build=functools.partial(build_c, optimize="-O2", multiversion=True),
    )


@pytest.mark.parametrize("flags", [["-O2", "-mavx2", "-mfma"], ["-O2", "-march=x86-64-v4"]])
def test_an_avx_build_at_O2_gets_the_tiles_of_O3(flags: list[str], tmp_path: Path) -> None:
    """With the compiler's own AVX (`-O2 -march=native`) there are no versions, and gcc at -O2
    would leave the AVX targets' tiles rolled, their sums in memory: LeNet b16's step took 21
    times as long as at -O3 (10.9 against 0.52 ms on Zen 4). adir_tuned.h asks gcc for -O3's
    optimizations there: the conv weight-gradient tile then multiply-adds whole vectors (24
    packed FMAs at -mavx2, none without). Compiled only, so any x86-64 host checks it."""
    if platform.machine() != "x86_64":
        pytest.skip(f"x86-64 targets; this is {platform.machine()}")
    write_directory(str(tmp_path), runtime_files())
    target = tmp_path / "adir_tuned_conv.o"
    subprocess.run(
        ["gcc", *WARNINGS, *flags, "-c", str(tmp_path / "adir_tuned_conv.c"), "-o", str(target)],
        check=True,
    )
    tile = function_body(target, "adir_conv_weight_tile")
    packed = [line for line in tile if re.search(r"vfmadd\d+ps\s.*%[yz]mm", line)]
    assert len(packed) >= 8, "\n".join(tile)
