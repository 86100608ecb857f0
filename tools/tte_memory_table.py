#!/usr/bin/env python3
"""MobileNetV2-w0.35's fine-tuning memory beside TTE's, issue 21's table.

    .venv/bin/python tools/tte_memory_table.py                # docs/quantized_training.md's table
    .venv/bin/python tools/tte_memory_table.py --rows int8-2  # one row

For `examples/mobilenet_v2.mlir` (MobileNetV2-w0.35 at 128x128, TTE's resolution, batch 1, a
10-class head), SGD at lr 0.01, the host's kernels, each row is what a user runs,

    adir-opt examples/mobilenet_v2.mlir --optimizer=sgd --lr=0.01 ROW'S FLAGS \\
        --plan-memory --memory-json=plan.json

and its figures are the plan's (`--memory-report`'s): SRAM is the planned arena (every
activation, gradient and kernel scratch buffer the training step uses, the int8 ones at one
byte) plus the trainable parameters and the optimizer state in RAM (int8 weights and int32
biases at their sizes at level 2); flash is the frozen parameters, the initial values `init`
copies and the constants. This is what TTE's figure counts as far as its paper says (the
training graph's peak memory on an STM32F746, its frozen weights in flash): not counted here
are the caller's input image (`x`, outside the arena: 49,152 bytes as int8, 196,608 as f32),
the stack and the code. The rows:

- fp32 full update: `--train=all` (the batch norms in training mode);
- fp32, suggested: `--train=suggested --sram=FP32_SRAM` (no float scheme fits 141 KB: the
  float classifier's step alone needs over 1 MB);
- int8 level 1: `--train=last:1 --quantize-frozen` (the int8 backbone, the float classifier,
  the three int8 lowerings);
- int8 level 2, suggested: `--train=suggested --sram=SRAM --quantize-frozen --quantize-level=2`
  (the suggester measures each candidate as its int8 step).

TTE (Lin et al., "On-Device Training Under 256KB Memory", NeurIPS 2022): 2.9 MB for its fp32
full update, 141 KB with its int8 graph, sparse update and operator reordering.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

from adir.limits import parse_size
from adir.tools.adir_opt import main as adir_opt

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples" / "mobilenet_v2.mlir"
OPTIMIZER = ["--optimizer=sgd", "--lr=0.01"]
SUGGESTED = re.compile(r"suggest-update-scheme: --train=(\S+)")
TTE = {"fp32": "2.9 MB", "int8": "141 KB"}


def rows(sram: str, fp32_sram: str) -> dict[str, tuple[str, list[str]]]:
    """Row key -> (label, adir-opt flags)."""
    int8 = ["--quantize-frozen"]
    return {
        "fp32-full": ("fp32, full update (`all`)", ["--train=all"]),
        "fp32-suggested": (
            f"fp32, suggested for {fp32_sram}",
            ["--train=suggested", f"--sram={fp32_sram}"],
        ),
        "int8-1": ("int8 level 1, last layer (`last:1`)", ["--train=last:1", *int8]),
        "int8-2": (
            f"int8 level 2, suggested for {sram}",
            ["--train=suggested", f"--sram={sram}", *int8, "--quantize-level=2"],
        ),
    }


def measure(model: Path, flags: list[str]) -> tuple[dict, str | None]:
    """The plan's JSON of `model` compiled with `flags`, and the scheme a suggestion picked."""
    with tempfile.TemporaryDirectory(prefix="adir-tte-") as directory:
        plan = Path(directory) / "plan.json"
        arguments = [*OPTIMIZER, *flags, "--plan-memory", f"--memory-json={plan}"]
        stderr = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
            status = adir_opt([*arguments, str(model), "-o", str(Path(directory) / "out")])
        if status != 0:
            raise SystemExit(
                f"tte_memory_table: adir-opt {' '.join(arguments)} failed:\n{stderr.getvalue()}"
            )
        scheme = SUGGESTED.search(stderr.getvalue())
        return json.loads(plan.read_text()), scheme.group(1) if scheme else None


def table(model: Path, keys: list[str], sram: str, fp32_sram: str) -> list[str]:
    chosen = rows(sram, fp32_sram)
    lines = [
        "| training | scheme | arena | SRAM | flash | TTE |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for key in keys:
        label, flags = chosen[key]
        plan, scheme = measure(model, flags)
        if scheme is None:
            scheme = next(f for f in flags if f.startswith("--train=")).removeprefix("--train=")
        tte = TTE["fp32"] if key == "fp32-full" else TTE["int8"] if key == "int8-2" else ""
        ram = plan["ram"]
        lines.append(
            f"| {label} | `{scheme}` | {ram['arena']:,} | {ram['total']:,} | "
            f"{plan['flash']['total']:,} | {tte} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--sram", default="141K", help="the int8 level-2 suggestion's budget")
    parser.add_argument("--fp32-sram", default="1536K", help="the fp32 suggestion's budget")
    parser.add_argument("--rows", nargs="+", choices=list(rows("", "")), default=list(rows("", "")))
    args = parser.parse_args(argv)
    for size in (args.sram, args.fp32_sram):
        try:
            parse_size(size)
        except ValueError as error:
            parser.error(f"{size}: {error}")
    print("\n".join(table(args.model, args.rows, args.sram, args.fp32_sram)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
