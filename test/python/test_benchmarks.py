"""The benchmarks run in CI in tiny versions, so that they cannot rot. No timing is asserted
(the machine is shared); what is checked is what the figures stand on."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
PIPELINE = [
    "parse",
    "verify",
    "infer-shapes",
    "freeze-batchnorm",
    "autodiff",
    "insert-optimizer",
    "fuse-weight-updates",
    "reorder-updates",
    "bufferize",
    "select-kernels",
    "plan-memory",
    "output (-t c)",
]


@pytest.mark.slow
def test_bench_compile_times_every_stage_at_both_sizes(tmp_path: Path) -> None:
    out = tmp_path / "compile.json"
    command = [sys.executable, str(TOOLS / "bench_compile.py"), "--ops", "50", "--json", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    runs = json.loads(out.read_text())["runs"]
    assert sorted(runs, key=int) == ["10", "20"]  # 50 ops / 5 per layer, then twice as deep
    for figures in runs.values():
        assert list(figures["stages"]) == PIPELINE
        assert figures["cpu"] > 0 and figures["wall"] > 0
    assert "| **process CPU (with start-up)** |" in run.stdout


@pytest.mark.slow
def test_bench_trains_the_seed_mlp_like_pytorch(tmp_path: Path) -> None:
    """One row of `tools/bench.py`, short timings: adir's C and PyTorch from the same weights
    and batch agree on the loss of step 10 (the script exits 1 otherwise), and the seed MLP's
    arena is its lower bound, 320 bytes at batch 1 with SGD, as the seed MLP's (`adir-opt
    --optimizer=sgd --plan-memory --memory-report examples/mnist_mlp.mlir`): the biases add no
    transient buffer, their updates are written in place."""
    out = tmp_path / "bench.json"
    command = [sys.executable, str(TOOLS / "bench.py"), "--quick", "--models", "mlp_s"]
    command += ["--opts", "sgd", "--batches", "1", "--json", str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (row,) = json.loads(out.read_text())["rows"]
    results = row["results"]
    assert {"adir O3-native", "adir O2", "torch eager"} <= set(results)
    reference = results["torch eager"]["loss10"]
    for system in results.values():
        assert system["median_us"] > 0
        assert abs(system["loss10"] - reference) <= 1e-3 * abs(reference)
    assert row["arena"] == row["arena_bound"] == 320


def test_the_benchmarks_left_dev_null_a_character_device() -> None:
    """After the benchmarks above (pytest runs a file's tests in order): `bench_compile.py`
    passed `-o /dev/null`, which adir-opt replaced by a regular file, for the whole machine
    when the suite ran as root (issue 17). It now writes into its temporary directory."""
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
