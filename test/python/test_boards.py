"""The boards beside mps2-an386 (test_cortex_m.py): a Cortex-M7 (mps2-an500), a Cortex-M3 with
no FPU (mps2-an385), a Cortex-M55 (mps3-an547) and RV32 cores without and with the F extension
(QEMU's virt). On each, the seed MLP and LeNet-5 train 10 steps under QEMU from batches compiled
into the program, planned with select-kernels{target=<the board's CPU>}, and print the losses
of the same program built for the host (gcc -O2) to 1e-5 relative.

Why 1e-5 and not bit-equality: both builds run the same C with `-ffp-contract=off`, but
- the FPU boards' tuned kernels multiply-add with one rounding (VFMA, fmadd.s through
  ADIR_FMA), where the host (no FP_FAST_FMAF without -march) rounds twice: each such step may
  move a sum by half an ulp;
- the tiles differ (the host's settings header against the board's), so sums add in another
  order;
- expf and logf (the sigmoid, log_softmax) are glibc's on the host and newlib's or picolibc's
  on the board, which may differ in the last bit.
Ten SGD steps carry these as an ulp of the loss (measured on every board and both models: at
most 1.2e-7 relative, 8 to 10 of the 10 losses bit-equal; docs/cortex_m.md), so 1e-5 is far
from them and far below what a wrong kernel gives (a loss off by 1e-3 or more). Each run prints
its figures (`pytest -s`); `tools/cortex_m_report.py --board all` prints them as a table.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example
from c_testing import run_pipeline
from cortex_m_testing import BoardBuild, host_run, require_arm_tools
from test_c_examples import training_steps
from test_c_kernels_vs_reference import DRIVER, check

from adir.backends.c.cortex_m import (
    BOARDS,
    MPS2_AN385,
    MPS2_AN500,
    MPS3_AN547,
    VIRT_RV32IMAC,
    VIRT_RV32IMAFC,
    Board,
    board_files,
    qemu_flags,
)
from adir.backends.c.files import RUNTIME, runtime_files
from adir.output_files import write_directory
from adir.passes import PLANNING_PIPELINE
from adir.passes.select_kernels.targets import TARGETS

NEW_BOARDS = [MPS2_AN500, MPS2_AN385, MPS3_AN547, VIRT_RV32IMAC, VIRT_RV32IMAFC]
SGD = "autodiff,insert-optimizer{kind=sgd lr=0.01}"
STEPS = 10


def planned_for(example: str, board: Board):
    """`example` with SGD, planned as `adir-opt --emit-c --c-board` plans it for `board`."""
    pipeline = PLANNING_PIPELINE.replace(
        "select-kernels", f"select-kernels{{target={board.kernel_target}}}"
    )
    return run_pipeline(parse_example(example), f"infer-shapes,{SGD},{pipeline}")


@pytest.mark.slow
@pytest.mark.parametrize("example", ["mnist_mlp", "lenet5"])
@pytest.mark.parametrize("board", NEW_BOARDS, ids=lambda board: board.name)
def test_example_trains_on_the_board_like_the_host(
    board: Board, example: str, tmp_path: Path
) -> None:
    planned = planned_for(example, board)
    batches = training_steps(example, STEPS)
    build = BoardBuild.write(planned, tmp_path / "board", batches, None, board=board)
    build.build()
    device = build.run()
    host = host_run(planned, tmp_path / "host", batches, None)
    np.testing.assert_allclose(device.losses, host.losses, rtol=1e-5)
    assert all(step.instructions for step in device.steps)
    image, model = build.image_sizes(), build.model_sizes()
    assert 0 < model.text < image.text and model.bss < image.bss
    equal = sum(d.bits == h.bits for d, h in zip(device.steps, host.steps, strict=True))
    print(
        f"\n{example} on {board.name}: image text {image.text} data {image.data} bss "
        f"{image.bss}; model and kernels text {model.text} data {model.data} bss {model.bss}; "
        f"{device.instructions_per_step:.0f} instructions per step; stack "
        f"{device.stack_bytes} bytes; {equal}/{len(device.steps)} losses bit-equal to the host's"
    )


@pytest.mark.parametrize("board", NEW_BOARDS, ids=lambda board: board.name)
def test_the_compiler_picks_the_settings_header_of_the_boards_target(
    board: Board, tmp_path: Path
) -> None:
    """runtime/targets/adir_target.h chooses by the compiler's predefined macros; the header
    it chooses for the board's CPU flags is the one select-kernels' target names."""
    require_arm_tools(board)
    source = tmp_path / "which.c"
    source.write_text('#include "adir_target.h"\nconst char *name = ADIR_TARGET_NAME;\n')
    completed = subprocess.run(
        [f"{board.toolchain}-gcc", *board.cpu_flags, "-E", "-P",
         "-I", str(RUNTIME / "targets"), str(source)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    chosen = re.search(r'name = "([^"]+)"', completed.stdout)
    settings = (RUNTIME / "targets" / TARGETS[board.kernel_target].settings).read_text()
    expected = re.search(r'#define ADIR_TARGET_NAME "([^"]+)"', settings)
    assert chosen is not None and expected is not None
    assert chosen[1] == expected[1]


def test_every_board_has_a_kernel_target_and_its_memory_fits() -> None:
    for board in BOARDS.values():
        assert board.kernel_target in TARGETS
        files = board_files(board, 256 * 1024)
        assert set(files) == {
            "adir_board.h",
            f"startup_{board.file_name}.c",
            f"{board.file_name}.ld",
            "Makefile",
        }
        assert f"CC = {board.toolchain}-gcc" in files["Makefile"]


def test_the_riscv_linker_script_sets_picolibcs_memory() -> None:
    script = board_files(VIRT_RV32IMAC, 200 * 1024)["virt_rv32imac.ld"]
    assert "__ram = 0x80400000;\n__ram_size = 204800;" in script
    assert script.rstrip().endswith("INCLUDE picolibc.ld")


def test_soft_float_boards_run_on_cores_without_an_fpu() -> None:
    """The M3 has no FPU in QEMU; the RV32IMAC's QEMU core has F and D turned off, so a float
    instruction in the build would trap rather than pass unnoticed."""
    assert not MPS2_AN385.has_fpu and "-mfloat-abi=soft" in MPS2_AN385.cpu_flags
    assert "f=false" in " ".join(qemu_flags(VIRT_RV32IMAC))
    assert "CPACR |=" not in board_files(MPS2_AN385, 256 * 1024)["startup_mps2_an385.c"]
    assert "CPACR |=" in board_files(MPS2_AN500, 256 * 1024)["startup_mps2_an500.c"]


@pytest.mark.slow
def test_riscv_model_that_does_not_fit_the_budget_fails_to_link(tmp_path: Path) -> None:
    """The RAM budget is picolibc.ld's ram region: 64 KB cannot hold the seed MLP's 101,632
    bytes of parameters."""
    planned = planned_for("mnist_mlp", VIRT_RV32IMAC)
    small = BoardBuild.write(
        planned, tmp_path, training_steps("mnist_mlp", 1), None, 64 * 1024, VIRT_RV32IMAC
    )
    completed = small.make()
    assert completed.returncode != 0
    assert "region `ram' overflowed" in completed.stderr, completed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("board", [MPS2_AN385, VIRT_RV32IMAFC], ids=lambda board: board.name)
def test_tuned_kernels_match_their_references_on_the_board(board: Board, tmp_path: Path) -> None:
    """test_c_kernels_vs_reference.py's driver (every tuned kernel against its reference, at
    sizes around each tile size of the settings header) on the settings the board's compiler
    picks: soft float (the M3; the RV32IMAC has the same header) and the RV32F header with
    fmadd.s. (The M55 takes the M4F's header; its 512 KB of DTCM cannot hold the driver's 2 MB
    heap.)"""
    require_arm_tools(board)
    files = runtime_files()
    # The driver allocates its operands (up to ~200 KB at once) from the C library's heap:
    # newlib's is the linker script's, picolibc's what the RAM budget leaves.
    files.update(board_files(board, board.ram_bytes, heap_bytes=2 * 1024 * 1024))
    files["kernels_vs_reference.c"] = DRIVER.read_text()
    write_directory(str(tmp_path), files)
    completed = subprocess.run(
        ["make", "-s", "-C", str(tmp_path), "run"], capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    settings = (RUNTIME / "targets" / TARGETS[board.kernel_target].settings).read_text()
    expected = re.search(r'#define ADIR_TARGET_NAME "([^"]+)"', settings)
    assert expected is not None
    check(completed.stdout, expected[1])
