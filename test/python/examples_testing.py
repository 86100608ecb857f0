"""The PyTorch models of examples/torch/ as the tests load and train them.

- `load_example(name)`: the file, executed afresh (tests cannot share a model's state through
  it), registered in `sys.modules` under a name of its own so that `copy.deepcopy` and pickle
  find its classes.
- `batches` and `torch_training`: 20 steps of data and PyTorch's training on them, for the
  models whose `forward(x, label)` returns the loss (har_cnn, gru, lstm, transformer).
- `training_matrix(ci, rest)`: issue 19 asks for every model at batch 1 and 8 with SGD and with
  Adam; CI runs the `ci` cases (each model at one batch and one optimizer at least), the
  documented longer run (`ADIR_EXAMPLES_MATRIX=1`, docs/frontends.md) all of them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import torch
from torch import nn

from adir.frontends.torch_import import symbol_names

MODELS = Path(__file__).resolve().parents[2] / "examples" / "torch"
STEPS = 20
FULL_MATRIX = bool(os.environ.get("ADIR_EXAMPLES_MATRIX"))


def example_names() -> list[str]:
    """Every model file of examples/torch/ (as tools/generate_examples.py finds them)."""
    return sorted(path.stem for path in MODELS.glob("*.py") if not path.name.startswith("_"))


def load_example(name: str) -> ModuleType:
    """examples/torch/<name>.py, executed afresh."""
    spec = importlib.util.spec_from_file_location(f"examples_torch_{name}", MODELS / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example
    spec.loader.exec_module(example)
    return example


def training_matrix(ci: list, rest: list) -> list:
    """The cases CI runs, and with `ADIR_EXAMPLES_MATRIX=1` the rest of the matrix too."""
    return ci + rest if FULL_MATRIX else ci


def batches(example: ModuleType, batch: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The example's own batch first, then random inputs and labels."""
    x, label = example_input = example.example_input(batch)
    assert len(example_input) == 2
    rng = np.random.default_rng(batch)
    data = [(x.numpy(), label.numpy())]
    for _ in range(STEPS - 1):
        window = rng.standard_normal(x.shape).astype(np.float32)
        data.append((window, rng.integers(0, example.CLASSES, label.shape)))
    return data


def torch_training(
    model: nn.Module, optimizer: torch.optim.Optimizer, data
) -> tuple[list[float], dict[str, np.ndarray]]:
    """The loss of each step, and every float parameter and buffer after them by adir symbol."""
    losses = []
    for x, label in data:
        optimizer.zero_grad()
        loss = model(torch.from_numpy(x), torch.from_numpy(label))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    state = {k: v for k, v in model.state_dict().items() if v.dtype == torch.float32}
    symbols = symbol_names(list(state))
    return losses, {symbols[name]: tensor.numpy() for name, tensor in state.items()}
