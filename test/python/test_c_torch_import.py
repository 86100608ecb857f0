"""PyTorch models, imported with `import_module` and compiled to C, train like PyTorch: from the
model's own weights and on the same data, 20 SGD steps of the C give the loss of every step and
every parameter (and batch norm running statistic) after them to 1e-4 relative, against
`torch.optim.SGD` on a deep copy of the module (float32 on both sides, different summation
orders). Every build runs under ASan and UBSan.

Parameters are compared to 1e-4 of the largest magnitude in their tensor as well as elementwise:
an element that SGD carries through zero ends near it after cancellation, and then only its
absolute error means anything. relu_mlp's layers_0_weight[45, 662] goes from 1.1e-5 up to 3.0e-4
and back to 1.9e-7; the C and PyTorch differ there by 5e-11, about two float32 ulps at 3e-4
(2.7e-4 relative). Against a float64 PyTorch run, the C's rms error over each tensor is the
same as float32 PyTorch's, and the float64 interpreter meets float64 PyTorch to 1e-9. Across
these models the C and PyTorch differ by at most 2e-7 of a tensor's largest magnitude.

Plain SGD at lr 0.01, as in test_c_examples.py: batch-1 batchnorm CNNs are chaotic in float32
with momentum or a large lr (a channel a ReLU kills reaches the next batchnorm with zero
variance, and the gradient's sign is then rounding noise). The CNN here has a single batch norm,
right after the first convolution (no ReLU before it, so no dead channel reaches it), and runs
at batch 4, so each channel's statistics are over 256 values and well conditioned. None of the
models has dropout (PyTorch's random stream is not adir's).
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import build_c, c_compilers, run_pipeline
from test_lenet5_example import LeNet5
from test_torch_import import ReluMlp, SeedMlp, SeparableCnn
from torch import nn

from adir.frontends.torch_import import import_module, symbol_names
from adir.passes import PLANNING_PIPELINE

STEPS = 20
LR = 0.01
RTOL = 1e-4


@dataclass(frozen=True)
class Case:
    """A model, the shape of its input batch, and its loss: `loss=` for `import_module` (None:
    the forward takes the label and returns the loss) and the same loss in PyTorch."""

    make: Callable[[], nn.Module]
    input_shape: tuple[int, ...]
    loss: str | None
    torch_loss: Callable[[nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]


CASES = {
    "seed_mlp": Case(SeedMlp, (1, 784), "nll", lambda m, x, y: F.nll_loss(m(x), y)),
    "relu_mlp": Case(ReluMlp, (4, 1, 28, 28), None, lambda m, x, y: m(x, y)),
    "lenet5": Case(
        LeNet5, (1, 1, 28, 28), "cross_entropy", lambda m, x, y: F.cross_entropy(m(x), y)
    ),
    "separable_cnn": Case(
        SeparableCnn, (4, 1, 8, 8), "cross_entropy", lambda m, x, y: F.cross_entropy(m(x), y)
    ),
}


def batches(case: Case, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`STEPS` batches of inputs in [0, 1) and random class labels."""
    rng = np.random.default_rng(seed)
    return [
        (rng.random(case.input_shape, dtype=np.float32), rng.integers(0, 10, case.input_shape[0]))
        for _ in range(STEPS)
    ]


def torch_training(
    case: Case, model: nn.Module, data: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[list[float], dict[str, np.ndarray]]:
    """The loss of each SGD step, and every parameter and buffer after them by adir symbol."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for x, label in data:
        optimizer.zero_grad()
        loss = case.torch_loss(model, torch.from_numpy(x), torch.from_numpy(label))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    state = model.state_dict()
    symbols = symbol_names(list(state))
    return losses, {symbols[name]: tensor.numpy() for name, tensor in state.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_imported_model_in_c_trains_like_pytorch(name: str) -> None:
    case = CASES[name]
    torch.manual_seed(0)
    model = case.make()
    reference = copy.deepcopy(model)
    data = batches(case, 1)
    example = [torch.from_numpy(data[0][0])]
    if case.loss is None:
        example.append(torch.from_numpy(data[0][1]))
    module = import_module(model, example, loss=case.loss)
    planned = run_pipeline(
        module,
        f"infer-shapes,autodiff,insert-optimizer{{kind=sgd lr={LR}}},{PLANNING_PIPELINE}",
    )
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(
            planned, "train_step", STEPS, Path(directory), c_compilers()[0], sanitize=True
        )
        outputs = build.run(0, data)
    c_losses = np.array([float(v) for v in outputs[:STEPS]])
    params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]

    torch_losses, torch_state = torch_training(case, reference, data)
    np.testing.assert_allclose(c_losses, np.array(torch_losses), rtol=RTOL)
    assert len(outputs) == STEPS + len(params)
    for symbol, value in zip(params, outputs[STEPS:], strict=True):
        expected = torch_state[symbol]
        scale = np.abs(expected).max()
        np.testing.assert_allclose(value, expected, rtol=RTOL, atol=RTOL * scale, err_msg=symbol)
