#!/usr/bin/env python3
"""The seed MLP and LeNet-5 on the boards QEMU emulates (a Cortex-M4F, mps2-an386, by default;
`--board` another, or all), with the reference kernels and with CMSIS-DSP: sizes, instructions
per training step, and the losses against the host.

    python tools/cortex_m_report.py                    both models, both kernel sets
    python tools/cortex_m_report.py --steps 20 --examples mnist_mlp
    python tools/cortex_m_report.py --examples lenet5 ds_cnn --kernels tuned --per-kernel
    python tools/cortex_m_report.py --board all --kernels tuned --steps 10     every board
    python tools/cortex_m_report.py --fine-tuning --steps 10     DS-CNN fp32 and int8 level 2

`--fine-tuning` prints instead DS-CNN's fine-tuning in 256 KB of RAM on mps2-an386 (the
eval-mode model of test_cortex_m_int8_fine_tuning.py, batch 1, SGD at lr 0.01), as
`adir-opt --train=SCHEME --optimizer=sgd --lr=0.01 [--quantize-frozen --quantize-level=2]
--c-target=cortex-m4f --c-kernels=KERNELS --sram=<what 256K leave> --plan-memory` plans it:
fp32 and int8 level 2 each with the scheme suggest-update-scheme picks for it (level 2's with
its int8 forward on adir's reference kernels, `tuned`: the float backward on the tuned ones,
and on CMSIS-NN), then both training the same four layers whole (`FOUR_LAYERS`). SRAM is the
arena plus the trainable parameters, as plan-memory counts it; flash is the text and data of
the model and the kernels it calls (not the embedded batches, the startup code or newlib).

`--per-kernel` also prints each kernel call's instructions per step (the model's calls between
reads of the board's instruction counter, `test/python/cortex_m_profile.py`) from a second
build. The column "instr/MAC" is the step's instructions over its multiply-accumulates: those
of every conv2d and matmul of the forward pass, twice (forward and weight gradient), plus
once more for every layer but the first (its input gradient), as tools/bench.py counts them.

Each model is trained with SGD (lr 0.01; `--optimizer adam`: Adam, lr 0.001) on random batches
compiled into the program (`adir.backends.c.embedded_training`), built with the generated
Makefile (arm-none-eabi-gcc -O2, newlib-nano, a 256 KB RAM budget, `--ram`) and run under
qemu-system-arm with -icount shift=0; the same program is built for the host with gcc -O2.
The table has the image's text/data/bss (bss holds
the 16 KB stack and 4 KB heap the linker script reserves), the part of it that is the model and
its kernels (the generated model, the runtime, CMSIS-DSP; not the embedded batches, the startup
code or newlib), the mean instructions per step, the stack's high-water mark, and the largest
relative difference between the device's and the host's losses (and how many are bit-equal).

Needs what the tests need: `apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi
qemu-system-arm` and `bash tools/fetch_cmsis_dsp.sh`. It uses the test helpers in test/python.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from adir.backends.c.cortex_m import BOARDS, parse_size
from adir.dialects.tensor.conv_and_pool import Conv2dOp
from adir.dialects.tensor.matmul import MatmulOp
from adir.passes import PLANNING_PIPELINE

sys.path.insert(0, str(Path(__file__).parents[1] / "test" / "python"))

from adir_testing import parse_example
from c_testing import PREFIX, run_pipeline
from cortex_m_profile import parse_profile, print_profile_at_exit, profile_kernel_calls
from cortex_m_testing import BoardBuild, host_run
from test_c_examples import training_steps
from test_cortex_m_int8_fine_tuning import (
    BUDGET,
    LEVEL_2,
    SCHEME,
    compile_module,
    ds_cnn_eval,
    trained_scheme,
    training_batches,
)

from adir.param_storage import static_memory

# DS-CNN's fine-tuning rows: (forward, --train, adir-opt's flags besides the board's, kernels).
# The suggested schemes, fp32's and level 2's (SCHEME: suggest-update-scheme counting int8 at
# its sizes), then four layers both can train whole in 256 KB, for a like-for-like comparison.
FOUR_LAYERS = "all@fc,features.30,features.27,features.23"
FINE_TUNING = [
    ("fp32", "suggested", ["--optimizer=sgd", "--lr=0.01"], "tuned"),
    ("int8 level 2", SCHEME, LEVEL_2, "tuned"),
    ("int8 level 2", SCHEME, LEVEL_2, "cmsis-nn"),
    ("fp32", FOUR_LAYERS, ["--optimizer=sgd", "--lr=0.01"], "tuned"),
    ("int8 level 2", FOUR_LAYERS, LEVEL_2, "cmsis-nn"),
]

OPTIMIZERS = {
    "sgd": "autodiff,insert-optimizer{kind=sgd lr=0.01}",
    "adam": "autodiff,insert-optimizer{kind=adam lr=0.001}",
}


def forward_macs(module: ModuleOp) -> list[int]:
    """Multiply-accumulates of each conv2d and matmul of the model's @loss, in order."""
    loss = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and "adir.loss" in op.attributes
    )
    macs = []
    for op in loss.walk():
        if isinstance(op, Conv2dOp):
            weight = op.weight.type.get_shape()  # type: ignore[attr-defined]
            outputs = math.prod(op.results[0].type.get_shape())  # type: ignore[attr-defined]
            macs.append(outputs * math.prod(weight[1:]))
        elif isinstance(op, MatmulOp):
            lhs = op.lhs.type.get_shape()  # type: ignore[attr-defined]
            inner = lhs[-2] if op.transpose_a is not None else lhs[-1]
            macs.append(math.prod(op.results[0].type.get_shape()) * inner)  # type: ignore[attr-defined]
    return macs


def step_macs(module: ModuleOp) -> int:
    """The training step's: forward and weight gradient of every layer, the input gradient of
    every layer but the first."""
    macs = forward_macs(module)
    return 2 * sum(macs) + sum(macs[1:])


def profile(build: BoardBuild, steps: int) -> None:
    """Build `build` again with its kernel calls counted, run it, and print each call's
    instructions per step, the largest first."""
    model = build.directory / f"{PREFIX}model.c"
    model.write_text(profile_kernel_calls(model.read_text()))
    program = build.directory / f"{PREFIX}train_embedded.c"
    program.write_text(print_profile_at_exit(program.read_text()))
    build.build()
    completed = build.make("-s", "run")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    calls = parse_profile(completed.stdout, steps)
    total = sum(call.instructions for call in calls)
    for call in sorted(calls, key=lambda call: -call.instructions):
        print(f"    {call.instructions:>11.0f} {call.instructions / total:>6.1%}  {call.site}")
    print(f"    {total:>11.0f}         all kernel calls")


def fine_tuning(steps: int, per_kernel: bool) -> None:
    """DS-CNN's fine-tuning rows (see the module docstring) on mps2-an386 with 256 KB of RAM."""
    header = (
        f"{'forward':<13} {'scheme':<55} {'kernels':<9} {'SRAM':>7} {'arena':>7} "
        f"{'flash':>7} {'instr/step':>11} {'stack':>6} {'host diff':>10} {'bit-equal':>9}"
    )
    print(header)
    print("-" * len(header))
    batches = training_batches(steps)
    with tempfile.TemporaryDirectory(prefix="adir-cortex-m-fine-tuning-") as directory:
        model = ds_cnn_eval(Path(directory))
        for row, (forward, scheme, flags, kernels) in enumerate(FINE_TUNING):
            board = Path(directory) / f"row{row}"
            planned = compile_module(
                model, Path(directory) / f"row{row}.mlir", f"--train={scheme}", *flags,
                "--c-target=cortex-m4f", f"--c-kernels={kernels}", f"--sram={BUDGET}",
                "--plan-memory",
            )  # fmt: skip
            arena = planned.attributes["adir.arena_size"].value.data  # type: ignore[union-attr]
            sram = arena + static_memory(planned).ram_params
            build = BoardBuild.write(planned, board, batches, kernels, select=False)
            build.build()
            device = build.run()
            host = host_run(planned, board / "host", batches, kernels, select=False)
            flash = build.model_sizes()
            if per_kernel:
                print(f"{forward} {kernels}: instructions per step of each kernel call")
                profile(build, steps)
            difference = np.max(np.abs(device.losses / host.losses - 1))
            equal = sum(d.bits == h.bits for d, h in zip(device.steps, host.steps, strict=True))
            print(
                f"{forward:<13} {trained_scheme(planned, scheme):<55} {kernels:<9} {sram:>7} "
                f"{arena:>7} {flash.text + flash.data:>7} {device.instructions_per_step:>11.0f} "
                f"{device.stack_bytes:>6} {difference:>10.1e} {f'{equal}/{len(device.steps)}':>9}",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="+", default=["mnist_mlp", "lenet5"])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--ram", default="256K", help="the board's RAM budget (Adam: 512K)")
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="sgd")
    parser.add_argument(
        "--kernels", nargs="+", default=["reference", "tuned", "cmsis-dsp"],
        choices=["reference", "tuned", "cmsis-dsp"],
    )  # fmt: skip
    parser.add_argument("--per-kernel", action="store_true", help="instructions per kernel call")
    parser.add_argument(
        "--board", nargs="+", default=["mps2-an386"], choices=[*BOARDS, "all"],
        help="the boards (QEMU's machines; all: every one --c-board takes)",
    )  # fmt: skip
    parser.add_argument(
        "--fine-tuning", action="store_true",
        help="DS-CNN fine-tuned in 256 KB: fp32 and int8 level 2 (needs ADIR_CMSIS_NN)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.fine_tuning:
        fine_tuning(args.steps, args.per_kernel)
        return 0
    boards = [BOARDS[name] for name in (BOARDS if "all" in args.board else args.board)]
    header = (
        f"{'board':<15} {'model':<10} {'kernels':<10} {'image text/data/bss':>22} "
        f"{'model+kernels t/d/b':>22} {'instr/step':>11} {'instr/MAC':>9} {'stack':>6} "
        f"{'host diff':>10} {'bit-equal':>9}"
    )
    print(header)
    print("-" * len(header))
    for board in boards:
        for example in args.examples:
            batches = training_steps(example, args.steps)
            macs = step_macs(parse_example(example))
            for kernels in args.kernels:
                # As `adir-opt --c-board=<board> --c-kernels=...` plans it: the kernels selected
                # for the board's CPU before the memory plan (the scratch of the tuned convs).
                select = f"select-kernels{{kernels={kernels} target={board.kernel_target}}}"
                pipeline = PLANNING_PIPELINE.replace("select-kernels", select)
                planned = run_pipeline(
                    parse_example(example), f"infer-shapes,{OPTIMIZERS[args.optimizer]},{pipeline}"
                )
                with tempfile.TemporaryDirectory(prefix="adir-cortex-m-") as directory:
                    build = BoardBuild.write(
                        planned,
                        Path(directory) / "board",
                        batches,
                        kernels,
                        parse_size(args.ram),
                        board,
                        select=False,
                    )
                    made = build.make()
                    overflow = re.search(r"region `RAM' overflowed by (\d+) bytes", made.stderr)
                    if overflow:
                        print(
                            f"{board.name:<15} {example:<10} {kernels:<10} does not fit in "
                            f"--ram {args.ram}: {int(overflow.group(1)):,} bytes over",
                            flush=True,
                        )
                        continue
                    build.build()
                    device = build.run()
                    host = host_run(
                        planned, Path(directory) / "host", batches, kernels, select=False
                    )
                    image, model = build.image_sizes(), build.model_sizes()
                    if args.per_kernel:
                        print(f"{example} {kernels}: instructions per step of each kernel call")
                        profile(build, args.steps)
                difference = np.max(np.abs(device.losses / host.losses - 1))
                equal = sum(d.bits == h.bits for d, h in zip(device.steps, host.steps, strict=True))
                print(
                    f"{board.name:<15} {example:<10} {kernels:<10} "
                    f"{f'{image.text}/{image.data}/{image.bss}':>22} "
                    f"{f'{model.text}/{model.data}/{model.bss}':>22} "
                    f"{device.instructions_per_step:>11.0f} "
                    f"{device.instructions_per_step / macs:>9.2f} {device.stack_bytes:>6} "
                    f"{difference:>10.1e} {f'{equal}/{len(device.steps)}':>9}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
