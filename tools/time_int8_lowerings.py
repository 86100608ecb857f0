"""What the int8 lowerings of MobileNetV2's blocks cost in time and save in memory, on the host.

    .venv/bin/python tools/time_int8_lowerings.py [--model examples/mobilenet_v2.mlir]
        [--steps 5] [--compiler gcc]

For each lowering of the frozen int8 prefix (`quantize-frozen-prefix` alone; then
`fuse-expand-depthwise`; then `in-place-depthwise` as well; then `fuse-quantize-conv` too),
with `--train=last:1`, SGD, batch 1 and the reference kernels: the planned arena of
`@train_step`, the C's time per step (built with -O2, the mean of `--steps` calls after one
warm-up call, clock_gettime), and the interpreter's time for one call. A step is the int8
prefix and the float classifier's forward, backward and update, which is a few thousand
multiply-adds of the ~25 million.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from adir.backends.c.files import c_files, runtime_files
from adir.backends.c.model import print_model
from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.output_files import write_directory

FRONT = (
    'infer-shapes,apply-update-scheme{scheme="last:1"},freeze-batchnorm,autodiff,'
    "insert-optimizer{kind=sgd lr=0.01},quantize-frozen-prefix"
)
BACK = "fuse-weight-updates,reorder-updates,bufferize,select-kernels{kernels=reference},plan-memory"
LOWERINGS = {
    "unfused": "",
    "fuse-expand-depthwise": "fuse-expand-depthwise",
    "+ in-place-depthwise": "fuse-expand-depthwise,in-place-depthwise",
    "+ fuse-quantize-conv": "fuse-expand-depthwise,in-place-depthwise,fuse-quantize-conv",
}

DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
#include "model.h"

static float x[INPUT_SIZE];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void)
{
    const int32_t label[1] = {3};
    double start;
    int k;
    for (k = 0; k < INPUT_SIZE; ++k) {
        x[k] = (float)((k * 7919) % 2001 - 1000) / 400.0f;
    }
    init(0);
    train_step(x, label);
    start = now();
    for (k = 0; k < STEPS; ++k) {
        train_step(x, label);
    }
    printf("%.3f\n", 1e3 * (now() - start) / STEPS);
    return 0;
}
"""


def run_pipeline(module, spec: str):
    from xdsl.passes import PassPipeline

    from adir.universe import available_passes

    result = module.clone()
    PassPipeline.parse_spec(available_passes(), spec).apply(adir_context(), result)
    return result


def c_milliseconds(planned, input_size: int, steps: int, compiler: str) -> float:
    with tempfile.TemporaryDirectory(prefix="adir-time-") as name:
        directory = Path(name)
        write_directory(str(directory), c_files(print_model(planned, "")))
        write_directory(str(directory), runtime_files())
        (directory / "driver.c").write_text(DRIVER)
        sources = sorted(str(p) for p in directory.glob("*.c"))
        executable = directory / "driver"
        flags = ["-O2", "-std=c99", f"-DINPUT_SIZE={input_size}", f"-DSTEPS={steps}"]
        subprocess.run(
            [compiler, *flags, "-I", str(directory), *sources, "-o", str(executable), "-lm"],
            check=True,
        )
        completed = subprocess.run([str(executable)], capture_output=True, text=True, check=True)
        return float(completed.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="examples/mobilenet_v2.mlir")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--compiler", default="gcc")
    args = parser.parse_args()
    model = parse_module(Path(args.model).read_text(), args.model)
    quantized = run_pipeline(model, FRONT)
    shape = next(
        f.function_type.inputs.data[0].get_shape()
        for f in quantized.ops
        if getattr(f, "sym_name", None) is not None and f.sym_name.data == "train_step"
    )
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    label = np.array([3], np.int32)
    print(f"{'lowering':<24} {'arena (bytes)':>14} {'C (ms/step)':>12} {'interpreter (s)':>16}")
    for title, lowering in LOWERINGS.items():
        lowered = run_pipeline(quantized, lowering) if lowering else quantized
        planned = run_pipeline(lowered, BACK)
        arena = planned.attributes["adir.arena_size"].value.data  # type: ignore[attr-defined]
        session = Session(lowered)
        start = time.perf_counter()
        session.call("train_step", x, label)
        interpreted = time.perf_counter() - start
        milliseconds = c_milliseconds(planned, int(np.prod(shape)), args.steps, args.compiler)
        print(f"{title:<24} {arena:>14,} {milliseconds:>12.1f} {interpreted:>16.2f}")


if __name__ == "__main__":
    main()
