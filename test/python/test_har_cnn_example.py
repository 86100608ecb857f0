"""examples/torch/har_cnn.py, the 1-D CNN for activity recognition, as it is written: it imports
with no edits, compiles with SGD and with Adam to C (built with -Wall -Wextra -Wpedantic
-Werror, run under ASan and UBSan), and 20 training steps of the C, at batch 1 and at batch 8,
give the loss of every step and every parameter and batch-norm running statistic after them to
1e-4 relative, against `torch.optim.SGD` / `torch.optim.Adam` on the same module and data.

Both sides compute in float32 and sum in their own orders, so they differ by rounding: about
sqrt(k) float32 ulps for a sum of k terms (Higham's rule of thumb), k at most 32 x 3 = 96 in a
convolution and 8 x 128 in a batch norm's statistics, carried through 20 steps. The largest
differences measured (`ADIR_HAR_REPORT=1` prints them): see docs/frontends.md. Parameters are
compared elementwise and, as in test_c_torch_import.py, with an absolute floor of 1e-4 of the
tensor's largest magnitude, for entries that a step carries through zero.
"""

from __future__ import annotations

import os
from types import ModuleType

import pytest
from examples_testing import check_trains_in_c_like_pytorch, load_example, training_matrix

from adir.frontends.torch_import import import_module

LR = {"sgd": 0.01, "adam": 0.001}


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_example("har_cnn")


def test_imports_with_no_edits(example: ModuleType) -> None:
    """Three conv1d blocks on the parameters as PyTorch shapes them, three training-mode batch
    norms whose running statistics are stored, a global average pool, the loss."""
    from adir.frontends.builder import module_to_text

    module = import_module(example.model(), example.example_input(1))
    module.verify()
    text = module_to_text(module)
    assert "func.func @loss(%x: tensor<1x3x128xf32>, %label: tensor<1xi32>)" in text
    assert text.count("adir.conv1d ") == 3
    assert "adir.param @features_0_0_weight : tensor<16x3x7xf32>" in text
    assert text.count("adir.batchnorm ") == 3
    assert text.count("adir.store ") == 6
    assert "adir.global_avgpool2d" in text and "adir.cross_entropy" in text


# CI: SGD at batch 1 (gcc and clang); ADIR_EXAMPLES_MATRIX=1: SGD and Adam at batch 1 and 8.
RUNS = training_matrix([("sgd", 1)], [("sgd", 8), ("adam", 1), ("adam", 8)])


@pytest.mark.slow
@pytest.mark.parametrize(("optimizer", "batch"), RUNS)
def test_trains_in_c_like_pytorch(optimizer: str, batch: int) -> None:
    check_trains_in_c_like_pytorch(
        "har_cnn", optimizer, batch, LR[optimizer], report=bool(os.environ.get("ADIR_HAR_REPORT"))
    )
