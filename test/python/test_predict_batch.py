"""`derive-predict{batch=N}`: @predict at another batch computes, sample by sample, what it
computes at the training batch (the interpreter, float32, equal to 1e-6: the same ops on the
same rows). The examples cover what the importer writes with the batch in it: flatten
(reshape to [B, features]), Conv1d's unsqueeze and squeeze around the 2-D conv (har_cnn),
the folded padding and the average pool of DS-CNN, and a model trained at batch 2 (autoencoder).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from c_testing import run_pipeline

from adir.context import parse_module
from adir.interpreter import Session

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("example", ["har_cnn", "ds_cnn_torch", "autoencoder", "lenet5"])
def test_predict_at_batch_3_is_three_predictions_at_batch_1(example: str) -> None:
    text = (ROOT / "examples" / f"{example}.mlir").read_text()
    module = run_pipeline(parse_module(text, f"{example}.mlir"), "infer-shapes")
    one = Session(run_pipeline(module, "derive-predict{batch=1}"), np.float32)
    three = Session(run_pipeline(module, "derive-predict{batch=3}"), np.float32)
    x_type = next(op for op in module.ops if op.name == "func.func").function_type.inputs.data[0]
    shape = tuple(x_type.get_shape()[1:])
    x = np.random.default_rng(3).standard_normal((3, *shape)).astype(np.float32)
    (together,) = three.call("predict", x)
    assert together.shape[0] == 3
    for row in range(3):
        (alone,) = one.call("predict", x[row : row + 1])
        np.testing.assert_allclose(alone[0], together[row], rtol=1e-6, atol=1e-6)
