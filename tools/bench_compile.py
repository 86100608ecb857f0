#!/usr/bin/env python3
"""How long the compiler takes, pass by pass, on a generated model, and how that grows with it.

    python tools/bench_compile.py                      10,000 ops, then 20,000 (~1 minute)
    python tools/bench_compile.py --ops 2000 --optimizer adam
    python tools/bench_compile.py --ops 100 --json out.json     (what CI runs)

The model is a deep MLP written as text: `--ops / 5` layers of 16x16 weights with biases,
each layer `load w, matmul, load b, add, tanh` (five ops in the loss function, and two
`adir.param`s), then a cross-entropy loss; batch 4. For the model and for one twice its size it
runs the whole pipeline as a user would, `adir-opt --optimizer=sgd --plan-memory -t c` (parse,
infer-shapes, autodiff, insert-optimizer, fuse-weight-updates, reorder-updates, bufferize,
plan-memory, the C), in its own process with `--time-passes`, and prints every stage's CPU
seconds at both sizes and their ratio (a linear compiler doubles), then the process's wall and
CPU time, its start-up included. CPU time is the figure to compare: the wall time of a run on a
busy machine includes other processes' turns. Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WIDTH, BATCH = 16, 4
OPS_PER_LAYER = 5


def deep_mlp(layers: int) -> str:
    """A `layers`-deep tanh MLP with biases and a cross-entropy loss, as adir IR."""
    x, w, b = f"tensor<{BATCH}x{WIDTH}xf32>", f"tensor<{WIDTH}x{WIDTH}xf32>", f"tensor<{WIDTH}xf32>"
    lines = []
    for i in range(layers):
        lines.append(f"adir.param @w{i} : {w} = #adir.kaiming_uniform<a = 2.0, seed = {i + 1}>")
        lines.append(f"adir.param @b{i} : {b} = #adir.zeros")
    lines.append(
        f"func.func @loss(%x: {x}, %label: tensor<{BATCH}xi32>) -> tensor<f32> "
        "attributes {adir.loss} {"
    )
    h = "%x"
    for i in range(layers):
        lines += [
            f"  %w{i} = adir.load @w{i} : {w}",
            f"  %m{i} = adir.matmul {h}, %w{i} {{transpose_b}} : {x}, {w} -> {x}",
            f"  %b{i} = adir.load @b{i} : {b}",
            f"  %z{i} = adir.add %m{i}, %b{i} : {x}, {b} -> {x}",
            f"  %h{i} = adir.tanh %z{i} : {x}",
        ]
        h = f"%h{i}"
    lines.append(
        f"  %loss = adir.cross_entropy {h}, %label : {x}, tensor<{BATCH}xi32> -> tensor<f32>"
    )
    lines += ["  func.return %loss : tensor<f32>", "}"]
    return "\n".join(lines) + "\n"


STAGE_ROW = re.compile(r"^\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\S.*)$")


def compile_once(model: Path, optimizer: str) -> dict[str, object]:
    """Run adir-opt on `model`; the CPU seconds of each stage, and the process's totals."""
    command = [sys.executable, "-m", "adir.tools.adir_opt", f"--optimizer={optimizer}"]
    # The C goes beside the model, in the temporary directory: never `-o /dev/null`, which the
    # -o of an older adir-opt replaced by a regular file (issue 17).
    command += ["--plan-memory", "-t", "c", "--time-passes", str(model)]
    command += ["-o", str(model.with_suffix(".c"))]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"bench_compile: adir-opt failed on {model}:\n{run.stderr}")
    stages = {}
    for line in run.stderr.splitlines():
        if match := STAGE_ROW.match(line):
            stages[match[5]] = float(match[3])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"stages": stages, "wall": wall, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000, help="ops in the loss function")
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    layers = max(1, args.ops // OPS_PER_LAYER)
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        for size in (layers, 2 * layers):
            model = Path(directory) / f"deep_mlp_{size}.mlir"
            model.write_text(deep_mlp(size))
            results[size] = compile_once(model, args.optimizer)
    small, large = results[layers], results[2 * layers]
    print(
        f"adir-opt --optimizer={args.optimizer} --plan-memory -t c on a deep MLP: "
        f"{layers} layers ({OPS_PER_LAYER * layers + 2} ops in @loss, {2 * layers} params), "
        f"then {2 * layers} layers"
    )
    print(f"| stage | CPU s, {layers} layers | CPU s, {2 * layers} layers | ratio |")
    print("|---|---:|---:|---:|")
    for stage, seconds in small["stages"].items():  # type: ignore[union-attr]
        doubled = large["stages"].get(stage, 0.0)  # type: ignore[union-attr]
        ratio = f"{doubled / seconds:.2f}" if seconds >= 0.005 else "-"
        print(f"| {stage} | {seconds:.3f} | {doubled:.3f} | {ratio} |")
    for what in ("cpu", "wall"):
        a, b = small[what], large[what]
        label = "process CPU (with start-up)" if what == "cpu" else "process wall"
        print(f"| **{label}** | **{a:.2f}** | **{b:.2f}** | **{b / a:.2f}** |")  # type: ignore[operator]
    if args.json:
        Path(args.json).write_text(json.dumps({"optimizer": args.optimizer, "runs": results}))


if __name__ == "__main__":
    main()
