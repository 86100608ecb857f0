"""tools/memory_table.py, the one command behind docs/frontends.md's memory table: it runs, its
rows for two examples are the docs' rows (so the docs are the tool's current figures), and
their Adam columns are the SGD ones plus Adam's state (m and v, a float each per trainable float,
and the step count, 4 bytes), the arena 32 bytes more (Adam's two bias corrections, scalars live at
the peak, 16 bytes each at the arena's alignment)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_memory_table_rows_are_the_docs_rows() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "memory_table.py"), "mnist_mlp", "gru"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    header, rule, *rows = result.stdout.splitlines()
    assert header.startswith("| example | batch | arena SGD | persistent SGD | flash SGD |")
    assert [row.split(" | ")[0] for row in rows] == ["| `mnist_mlp`", "| `gru`"]
    docs = (ROOT / "docs" / "frontends.md").read_text()
    for row in [header, rule, *rows]:
        assert row in docs.splitlines(), row
    for row in rows:
        cells = [int(cell.replace(",", "")) for cell in row.strip("| ").split(" | ")[1:]]
        batch, arena, persistent, flash, adam_arena, adam_persistent, adam_flash = cells
        # No batch norm in either: the persistent RAM is the trainable parameters alone.
        assert batch == 1 and adam_persistent == 3 * persistent + 4
        assert adam_arena == arena + 32 and adam_flash == flash
