"""Row sums in the order of the C reference's `adir_row_sum` (runtime/reference/adir_row_sum.h).

Where a sum decides a value that later rounding can flip (a batchnorm output next to a relu's
zero), the interpreter and the C must add in the same order, or they train apart: each row of
n values in eight interleaved partial sums, added pairwise, then the row's last n mod 8 values
in order (a row under 8 values: one running sum from 0). For rows of up to 128 this is numpy's
pairwise sum; numpy splits longer rows in halves, the C does not, so the order is written out
here rather than left to `np.sum`.
"""

from __future__ import annotations

import numpy as np


def row_sums(rows: np.ndarray) -> np.ndarray:
    """The sum of each row of `rows` (its last axis), in `adir_row_sum`'s order."""
    n = rows.shape[-1]
    whole = n // 8 * 8
    total = np.zeros(rows.shape[:-1], rows.dtype)
    if whole:
        blocks = rows[..., :whole].reshape(*rows.shape[:-1], whole // 8, 8)
        partial = np.add.accumulate(blocks, axis=-2)[..., -1, :]  # in order, block by block
        r = [partial[..., k] for k in range(8)]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for k in range(whole, n):
        total = total + rows[..., k]
    return total
