"""Quantized fine-tuning converges like float with QAS and not without (tools/qas_convergence.py).

The transfer task of tools/transfer_demo.py (a small CNN pretrained in PyTorch on the digits
0-4, batch norms folded, fine-tuned in C on the digits 5-9 with `--train=last:2`: the last conv
and the classifier), reduced to 2 epochs, three runs at the same learning rate (0.05): fp32,
int8 level 2 with QAS, int8 level 2 without QAS. Measured (docs/quantized_training.md,
"Convergence"), test accuracy on the digits 5-9 after epochs 1 and 2:

    fp32                  79.0%  89.8%
    level 2, QAS          79.6%  88.0%
    level 2, no QAS        0.0%   0.0%

With QAS the integer step is the float step in integer units (lr g_W / s_W), and the runs stay
within the issue's 2 points of each other (0.6 and 1.8 measured; the test set has 167 digits
5-9, one digit is 0.6 points). Without QAS the integer step is lr s_W g_W (s_W about 3e-3
for the conv, 7.6e-3 for the classifier): below one half, so every update rounds to 0 and the
model stays as pretrained, right on none of the new digits; the test asks for at least 50
points below the QAS run (79.6 and 88.0 measured).

The figures are those of PyTorch's pretraining on a 2-core Sapphire Rapids (torch's default 2
threads); with `OMP_NUM_THREADS=1` the pretrained model differs (93.3% on the test digits 0-4,
not 97.4%), and so it does on another CPU (Zen 4: 99.0%), and so do the curves.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("sklearn")  # the digits: bash tools/setup.sh demo


def curves(stdout: str) -> dict[str, list[float]]:
    """The accuracy per epoch of each run, from the script's table."""
    rows = {}
    for line in stdout.splitlines():
        if line.startswith("| fp32") or line.startswith("| int8"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = [float(cell.rstrip("%")) for cell in cells[3:]]
    return rows


@pytest.mark.slow
def test_level_2_with_qas_fine_tunes_like_fp32_and_without_qas_does_not(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "qas_convergence.py"),
            "--epochs",
            "2",
            "--runs",
            "fp32",
            "int8 level 2, QAS",
            "int8 level 2, no QAS",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    # PyTorch's pretraining rounds its float sums in the CPU's kernels' order: 97.4% of the
    # digits 0-4 on Sapphire Rapids, 99.0% on Zen 4; right on none of 5-9 on both.
    pretrained = re.search(r"test accuracy ([0-9.]+)% on 0-4, 0.0% on 5-9", result.stdout)
    assert pretrained is not None and float(pretrained.group(1)) > 95.0, result.stdout
    runs = curves(result.stdout)
    fp32, qas, no_qas = (runs[k] for k in ("fp32", "int8 level 2, QAS", "int8 level 2, no QAS"))
    assert len(fp32) == len(qas) == len(no_qas) == 2
    assert fp32[0] > 70.0  # it learns the new digits in one epoch (79.0% measured)
    for epoch in range(2):
        assert abs(qas[epoch] - fp32[epoch]) <= 2.0, (epoch, fp32, qas)
        assert no_qas[epoch] <= qas[epoch] - 50.0, (epoch, qas, no_qas)
