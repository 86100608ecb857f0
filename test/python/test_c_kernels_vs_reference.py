"""Every tuned kernel of the C runtime (runtime/tuned/) against its reference kernel
(runtime/reference/), in C, built the way users build: `-O2` (host-generic settings),
`-O3` and `-O2 -mavx2 -mfma` (x86 AVX2), `-O3` and `-O2 -march=native` (AVX-512 where the CPU
has it), the AVX2 and AVX-512 versions of a portable -O2 build (test_c_multiversion.py), with gcc
and clang, and for the Cortex-M4F under QEMU.

One C driver (kernels_vs_reference.c) runs every kernel on shapes at every tile edge of the
target it is compiled for (sizes 1, t - 1, t, t + 1, 2t + 3 for each tile size t of the target's
settings header) and prints one line per kernel; see its comment for the data and the bound.
What each kernel promises is in docs/numerics.md ("Tuned kernels and their references").
"""

from __future__ import annotations

import importlib.resources
import re
import subprocess
from pathlib import Path

import pytest
from c_testing import SANITIZERS, WARNINGS, c_compilers, runtime_objects
from cortex_m_testing import require_arm_tools

from adir.backends.c.cortex_m import MPS2_AN386, board_files
from adir.backends.c.files import runtime_files
from adir.output_files import write_directory

DRIVER = Path(__file__).parent / "kernels_vs_reference.c"
KERNEL_LINE = re.compile(r"kernel (\w+) cases (\d+) failures (\d+) random_identical ([01])")
TARGET_LINE = re.compile(r"target (\S+) fma ([01])")

# Every tuned kernel the driver compares with its reference.
KERNELS = {
    "matmul",
    "conv2d",
    "conv2d_grad_input",
    "conv2d_grad_weight",
    "conv1d",
    "conv1d_grad_input",
    "conv1d_grad_weight",
    "conv2d_gemm",
    "conv2d_grad_input_gemm",
    "conv2d_grad_weight_gemm",
    "conv2d_depthwise",
    "conv2d_grad_input_depthwise",
    "conv2d_grad_weight_depthwise",
    "conv2d_depthwise_3x3",
    "conv2d_grad_input_depthwise_3x3",
    "conv2d_grad_weight_depthwise_3x3",
    "maxpool2d",
    "maxpool2d_grad",
    "batchnorm",
    "batchnorm_grad",
    "batchnorm_relu",
    "batchnorm_relu_grad",
    "batchnorm_channels",
    "batchnorm_grad_channels",
    "batchnorm_relu_channels",
    "batchnorm_relu_grad_channels",
    "sgd_update",
    "momentum_update",
    "adam_update",
    "matmul_sgd_update",
    "matmul_sgd_update_general",
    "matmul_momentum_update",
    "matmul_adam_update",
}
# Bit for bit the reference's on any data, on every target: they pick or compute elementwise
# with the same operations in the same order (batchnorm's sums too, in the reference's order; its
# driver cases fail on any difference).
ALWAYS_IDENTICAL = {
    "maxpool2d",
    "maxpool2d_grad",
    "batchnorm",
    "batchnorm_grad",
    "batchnorm_relu",
    "batchnorm_relu_grad",
    "batchnorm_channels",
    "batchnorm_grad_channels",
    "batchnorm_relu_channels",
    "batchnorm_relu_grad_channels",
    "sgd_update",
    "momentum_update",
    "adam_update",
}
# Bit for bit the reference's on any data without a fast fused multiply-add: their sums run in
# the reference's order (with fmaf each step rounds once, so only within the bound). The GEMM
# convolution's forward pass sums over (c, i, j) from 0 as the reference does (a tap in the
# padding adds a product of 0), its weight gradient over (n, p, q), each panel continuing the
# last one's sums; the depthwise kernels (flat rows, and register-blocked 3x3) keep the
# reference's order in all three. The GEMM
# input gradient (sums over the outputs, then col2im over the taps) is within the bound.
IDENTICAL_WITHOUT_FMA = {
    "conv2d",
    "conv1d",
    "conv2d_gemm",
    "conv2d_grad_weight_gemm",
    "conv2d_depthwise",
    "conv2d_grad_input_depthwise",
    "conv2d_grad_weight_depthwise",
    "conv2d_depthwise_3x3",
    "conv2d_grad_input_depthwise_3x3",
    "conv2d_grad_weight_depthwise_3x3",
    "matmul_sgd_update",
    "matmul_sgd_update_general",
    "matmul_momentum_update",
    "matmul_adam_update",
}


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(match[1].split()) if match else set()


def parse(stdout: str) -> tuple[str, bool, dict[str, tuple[int, int, bool]]]:
    assert "FAIL" not in stdout, stdout
    target = TARGET_LINE.search(stdout)
    assert target, stdout
    kernels = {
        match[1]: (int(match[2]), int(match[3]), match[4] == "1")
        for match in KERNEL_LINE.finditer(stdout)
    }
    return target[1], target[2] == "1", kernels


def check(stdout: str, expected_target: str) -> None:
    target, fma, kernels = parse(stdout)
    assert target == expected_target
    assert set(kernels) == KERNELS, stdout
    for name, (cases, failures, identical) in kernels.items():
        assert cases >= 20, f"{name}: only {cases} cases"
        assert failures == 0, f"{name}: {failures} of {cases} cases failed:\n{stdout}"
        if name in ALWAYS_IDENTICAL or (name in IDENTICAL_WITHOUT_FMA and not fma):
            assert identical, f"{name} differs from its reference on random data:\n{stdout}"


def host_builds() -> list[object]:
    """(compiler, flags, the settings header they select) for this machine."""
    flags = cpu_flags()
    builds = []
    for compiler in c_compilers():
        builds.append((compiler, ("-O2",), "host-generic"))
        # The vector targets at -O2 too: gcc unrolls the tiles there only by pragma
        # (ADIR_TILE_UNROLL), a code path of its own.
        if {"avx2", "fma"} <= flags:
            builds.append((compiler, ("-O3", "-mavx2", "-mfma"), "x86-avx2"))
            builds.append((compiler, ("-O2", "-mavx2", "-mfma"), "x86-avx2"))
        if "avx512f" in flags:
            builds.append((compiler, ("-O3", "-march=native"), "x86-avx512"))
            builds.append((compiler, ("-O2", "-march=native"), "x86-avx512"))
        # A portable build's AVX2 and AVX-512 versions of the kernels, which it binds the
        # kernels' names to on such CPUs (runtime/targets/adir_multiversion.h): the driver
        # calls the version itself, at its tile sizes (the plain -O2 build above: _generic).
        if {"avx2", "fma"} <= flags:
            builds.append((compiler, ("-O2", "-DVERSION_UNDER_TEST=avx2"), "x86-avx2"))
        if {"avx512f", "avx512vl", "avx512bw", "avx512dq", "avx2", "fma"} <= flags:
            builds.append((compiler, ("-O2", "-DVERSION_UNDER_TEST=avx512"), "x86-avx512"))
    # Every kernel under AddressSanitizer (a tile's overlapping last block, a scratch panel
    # read past its end), UndefinedBehaviorSanitizer and LeakSanitizer (the driver's own
    # cases: a leak once ran the Cortex-M4F's heap out), with the host's vector target.
    # (About 1.5 minutes of one core: slow.)
    if {"avx512f", "avx512vl", "avx512bw", "avx512dq", "avx2", "fma"} <= flags:
        sanitized = (c_compilers()[0], ("-O1", "-DVERSION_UNDER_TEST=avx512", *SANITIZERS),
                     "x86-avx512")  # fmt: skip
    else:
        sanitized = (c_compilers()[0], ("-O1", *SANITIZERS), "host-generic")
    builds.append(pytest.param(*sanitized, marks=pytest.mark.slow))
    return builds


def build_id(value: object) -> str:
    return " ".join(value) if isinstance(value, tuple) else str(value)


@pytest.mark.parametrize("compiler,flags,target", host_builds(), ids=build_id)
def test_tuned_kernels_match_their_references(
    compiler: str, flags: tuple[str, ...], target: str, tmp_path: Path
) -> None:
    # The runtime compiled once a test run for each compiler and flags: a version under
    # test is the driver's choice alone, so the portable -O2 build's three cases (and
    # test_c_multiversion.py's portable builds) link one compilation of the runtime, whose
    # AVX2 and AVX-512 versions are most of its compile time.
    runtime_flags = [flag for flag in flags if not flag.startswith("-DVERSION_UNDER_TEST=")]
    objects = runtime_objects(compiler, (*WARNINGS, *runtime_flags))
    executable = tmp_path / "driver"
    completed = subprocess.run(
        [compiler, *WARNINGS, *flags, f"-I{Path(objects[0]).parent}", str(DRIVER), *objects,
         "-o", str(executable), "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    completed = subprocess.run([str(executable)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    check(completed.stdout, target)


def test_tuned_kernels_match_their_references_on_cortex_m4f(tmp_path: Path) -> None:
    """The same driver for the Cortex-M4F (its settings header, its VFMA), under QEMU."""
    require_arm_tools()
    files = runtime_files()
    # The driver allocates its operands from newlib's heap and frees them after each case
    # (LeakSanitizer finds no leak: the sanitized host build above). 1 MB runs out at a case of
    # 37,125 floats after the night's cases (newlib's heap fragments; 2 MB once ran out too,
    # when the update cases leaked their second moments' drafts).
    files.update(board_files(MPS2_AN386, MPS2_AN386.ram_bytes, heap_bytes=2 * 1024 * 1024))
    files["kernels_vs_reference.c"] = DRIVER.read_text()
    write_directory(str(tmp_path), files)
    completed = subprocess.run(
        ["make", "-s", "-C", str(tmp_path), "run"], capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    check(completed.stdout, "cortex-m4f")


def test_runtime_file_names_are_unique_across_its_folders() -> None:
    """A build gets the runtime's files side by side (`cc DIR/*.c`): two files of one name in
    reference/, tuned/ or targets/ would overwrite each other."""
    root = Path(str(importlib.resources.files("adir.backends.c") / "runtime"))
    on_disk = [path.name for path in root.rglob("*") if path.suffix in (".h", ".c")]
    assert len(on_disk) == len(set(on_disk))
    assert set(runtime_files(frozenset({"cmsis-dsp"}))) == set(on_disk)
    # The folders the runtime is read in (every kernel family has its reference source).
    assert {path.parent.name for path in root.rglob("*.c")} == {"runtime", "reference", "tuned"}
