"""tools/memory_table.py, the one command behind docs/frontends.md's memory table: it runs on
every example (about 13 s of CPU), and each row it prints is a row of the docs (so the docs are
the tool's current figures) and agrees with a recomputation from the example's IR:

- the persistent RAM with SGD is the trainable parameters (every `adir.param` without
  `trainable = false`) plus the mutable state (the parameters an `adir.store` writes: batch
  norms' running statistics), at their element sizes; with Adam, that plus Adam's state (m and
  v, a float each per trainable float) and its step count (4 bytes);
- Adam's arena is SGD's, or at most 32 bytes more (its two bias corrections, scalars live at the
  peak, 16 bytes each at the arena's alignment; the autoencoder's peak is elsewhere: equal);
- Adam adds nothing to flash;
- the batch is 1, the autoencoder's 2 (PyTorch refuses its BatchNorm1d at batch 1)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PARAM = re.compile(r"adir\.param @(\w+) : tensor<([^>]*)>(.*)$", re.MULTILINE)
STORE = re.compile(r"adir\.store [^\n]*@(\w+)")
ELEMENT_BYTES = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "i8": 1}


def trainable_and_state_bytes(example: Path) -> tuple[int, int]:
    """The bytes of the example's trainable parameters, and of the other parameters it stores to."""
    text = example.read_text()
    stored = set(STORE.findall(text))
    trainable = state = 0
    for name, type_, rest in PARAM.findall(text):
        *dims, element = type_.split("x")
        size = int(np.prod([int(d) for d in dims])) * ELEMENT_BYTES[element]
        if "trainable = false" not in rest:
            trainable += size
        elif name in stored:
            state += size
    return trainable, state


def test_memory_table_rows_are_the_docs_rows_and_the_irs_sizes() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "memory_table.py")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    header, rule, *rows = result.stdout.splitlines()
    assert header.startswith("| example | batch | arena SGD | persistent SGD | flash SGD |")
    names = [row.split(" | ")[0].strip("| `") for row in rows]
    assert names == sorted(path.stem for path in (ROOT / "examples").glob("*.mlir"))
    docs = (ROOT / "docs" / "frontends.md").read_text().splitlines()
    for row in [header, rule, *rows]:
        assert row in docs, row
    for name, row in zip(names, rows, strict=True):
        cells = [int(cell.replace(",", "")) for cell in row.strip("| ").split(" | ")[1:]]
        batch, arena, persistent, flash, adam_arena, adam_persistent, adam_flash = cells
        trainable, state = trainable_and_state_bytes(ROOT / "examples" / f"{name}.mlir")
        assert batch == (2 if name == "autoencoder" else 1), name
        assert persistent == trainable + state, name
        assert adam_persistent == persistent + 2 * trainable + 4, name
        assert arena <= adam_arena <= arena + 32, name
        assert adam_flash == flash, name
