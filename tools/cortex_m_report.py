#!/usr/bin/env python3
"""The seed MLP and LeNet-5 on the boards QEMU emulates (a Cortex-M4F, mps2-an386, by default):
sizes, instructions per training step, and the losses against the host.

    python tools/cortex_m_report.py                    both models on mps2-an386, three kernel sets
    python tools/cortex_m_report.py --steps 20 --examples mnist_mlp
    python tools/cortex_m_report.py --board all --kernels tuned --steps 10     every board

Each model is trained with SGD (lr 0.01; `--optimizer adam`: Adam, lr 0.001) on random batches
compiled into the program (`adir.backends.c.embedded_training`), planned as `adir-opt --emit-c
--c-board=<board> --c-kernels=<kernels>` plans it (select-kernels for the board's CPU), built
with the generated Makefile (gcc -O2 for the board, newlib-nano or picolibc, a 256 KB RAM
budget, `--ram`) and run under QEMU with -icount shift=0; the same program is built for the
host with gcc -O2. The table has the image's text/data/bss (bss holds the 16 KB stack, and on
Arm the 4 KB heap, that the linker script reserves), the part of it that is the model and its
kernels (the generated model, the runtime, CMSIS-DSP; not the embedded batches, the startup
code or the C library), the mean instructions per step, the stack's high-water mark, and the
largest relative difference between the device's and the host's losses (and how many are
bit-equal).

Needs what the tests need (`bash tools/setup.sh test` installs the toolchains and QEMU) and for
CMSIS-DSP `bash tools/fetch_cmsis_dsp.sh`. It uses the test helpers in test/python.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from adir.backends.c.cortex_m import BOARDS, parse_size
from adir.passes import PLANNING_PIPELINE

sys.path.insert(0, str(Path(__file__).parents[1] / "test" / "python"))

from adir_testing import parse_example
from c_testing import run_pipeline
from cortex_m_testing import BoardBuild, host_run
from test_c_examples import training_steps

OPTIMIZERS = {
    "sgd": "autodiff,insert-optimizer{kind=sgd lr=0.01}",
    "adam": "autodiff,insert-optimizer{kind=adam lr=0.001}",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="+", default=["mnist_mlp", "lenet5"])
    parser.add_argument(
        "--board", nargs="+", default=["mps2-an386"], choices=[*BOARDS, "all"],
        help="the boards (QEMU's machines; all: every one --c-board takes)",
    )  # fmt: skip
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--ram", default="256K", help="the board's RAM budget (Adam: 512K)")
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="sgd")
    parser.add_argument(
        "--kernels", nargs="+", default=["reference", "tuned", "cmsis-dsp"],
        choices=["reference", "tuned", "cmsis-dsp"],
    )  # fmt: skip
    args = parser.parse_args()
    boards = list(BOARDS) if "all" in args.board else args.board
    header = (
        f"{'board':<15} {'model':<10} {'kernels':<10} {'image text/data/bss':>22} "
        f"{'model+kernels t/d/b':>22} {'instr/step':>11} {'stack':>6} {'host diff':>10} "
        f"{'bit-equal':>9}"
    )
    print(header)
    print("-" * len(header))
    for board in (BOARDS[name] for name in boards):
        for example in args.examples:
            batches = training_steps(example, args.steps)
            for kernels in args.kernels:
                selection = f"select-kernels{{kernels={kernels} target={board.kernel_target}}}"
                planning = PLANNING_PIPELINE.replace("select-kernels", selection)
                planned = run_pipeline(
                    parse_example(example),
                    f"infer-shapes,{OPTIMIZERS[args.optimizer]},{planning}",
                )
                with tempfile.TemporaryDirectory(prefix="adir-board-") as directory:
                    build = BoardBuild.write(
                        planned, Path(directory) / "board", batches, None,
                        parse_size(args.ram), board,
                    )  # fmt: skip
                    build.build()
                    device = build.run()
                    host = host_run(planned, Path(directory) / "host", batches, None)
                    image, model = build.image_sizes(), build.model_sizes()
                difference = np.max(np.abs(device.losses / host.losses - 1))
                equal = sum(d.bits == h.bits for d, h in zip(device.steps, host.steps, strict=True))
                print(
                    f"{board.name:<15} {example:<10} {kernels:<10} "
                    f"{f'{image.text}/{image.data}/{image.bss}':>22} "
                    f"{f'{model.text}/{model.data}/{model.bss}':>22} "
                    f"{device.instructions_per_step:>11.0f} {device.stack_bytes:>6} "
                    f"{difference:>10.1e} {f'{equal}/{len(device.steps)}':>9}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
