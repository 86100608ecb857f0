#!/usr/bin/env python3
"""The memory of every example at its batch, with SGD and with Adam, as a Markdown table.

    python tools/memory_table.py                   every examples/*.mlir
    python tools/memory_table.py gru har_cnn       those only

For each `examples/<name>.mlir` (the hand-written ones and those tools/generate_examples.py
imports from examples/torch/) and each optimizer, it runs what a user would,

    adir-opt --optimizer=sgd --lr=0.01 --plan-memory --memory-json=plan.json examples/<name>.mlir

(`--optimizer=adam --lr=0.001` for Adam), the figures `--memory-report` prints, read from the
plan's JSON: the arena (the largest function's, which the C allocates), the persistent RAM
(trainable parameters, optimizer state, other mutable state such as batch norms' running
statistics) and the flash (frozen parameters, initial values, constants). Every example is at
batch 1 except the autoencoder, at 2: PyTorch refuses its BatchNorm1d in training mode at
batch 1. docs/frontends.md holds the table; test/python/test_memory_table.py runs the tool on
every example and checks each row against the docs and the example's IR.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path

from adir.tools.adir_opt import main as adir_opt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
OPTIMIZERS = {"SGD": "--optimizer=sgd --lr=0.01", "Adam": "--optimizer=adam --lr=0.001"}
BATCH = re.compile(r"func\.func @loss\(%\w+: tensor<(\d+)x")


def memory(example: Path, optimizer: str) -> dict:
    """The plan's JSON document of `example` compiled with `optimizer` (OPTIMIZERS' options)."""
    with tempfile.TemporaryDirectory(prefix="adir-memory-") as directory:
        plan = Path(directory) / "plan.json"
        arguments = [*optimizer.split(), "--plan-memory", f"--memory-json={plan}"]
        with contextlib.redirect_stdout(io.StringIO()):
            status = adir_opt([*arguments, str(example), "-o", str(Path(directory) / "out")])
        if status != 0:
            raise SystemExit(f"memory_table: adir-opt failed on {example}")
        return json.loads(plan.read_text())


def rows(names: list[str]) -> list[str]:
    header = ["example", "batch"]
    for optimizer in OPTIMIZERS:
        header += [f"arena {optimizer}", f"persistent {optimizer}", f"flash {optimizer}"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        example = EXAMPLES / f"{name}.mlir"
        if not example.is_file():
            raise SystemExit(f"memory_table: no examples/{name}.mlir")
        batch = BATCH.search(example.read_text())
        cells = [f"`{name}`", batch.group(1) if batch else "?"]
        for options in OPTIMIZERS.values():
            plan = memory(example, options)
            arena = plan["ram"]["arena"]
            cells += [f"{arena:,}", f"{plan['ram']['total'] - arena:,}"]
            cells.append(f"{plan['flash']['total']:,}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="examples/<name>.mlir (default: every one)")
    args = parser.parse_args(argv)
    names = args.names or sorted(path.stem for path in EXAMPLES.glob("*.mlir"))
    print("\n".join(rows(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
