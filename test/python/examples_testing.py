"""The PyTorch models of examples/torch/ as the tests load and train them.

- `load_example(name)`: the file, executed afresh (tests cannot share a model's state through
  it), registered in `sys.modules` under a name of its own so that `copy.deepcopy` and pickle
  find its classes.
- `batches` and `torch_training`: 20 steps of data and PyTorch's training on them, for the
  models whose `forward(x, label)` returns the loss (har_cnn, gru, lstm, transformer), and
  `check_trains_in_c_like_pytorch`, their training test (C against PyTorch float32).
- `training_matrix(ci, rest)`: issue 19 asks for every model at batch 1 and 8 with SGD and with
  Adam; CI runs the `ci` cases (each model at one batch and one optimizer at least), the
  documented longer run (`ADIR_EXAMPLES_MATRIX=1`, docs/frontends.md) all of them.
- `float32_draws(data)`: the data and FLOAT32_DRAWS copies moved by one float32 ulp, for the
  ill-conditioned runs, where one PyTorch float32 run is one draw of a chaotic spread;
  `float32_runs(data)`: each of them on 1 and on 2 threads, the referee's runs.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import torch
from c_testing import build_c, c_compilers, run_pipeline
from torch import nn

from adir.frontends.torch_import import import_module, symbol_names
from adir.passes import PLANNING_PIPELINE

MODELS = Path(__file__).resolve().parents[2] / "examples" / "torch"
STEPS = 20
RTOL = 1e-4
FULL_MATRIX = bool(os.environ.get("ADIR_EXAMPLES_MATRIX"))
FLOAT32_DRAWS = 8
"""PyTorch float32 runs besides the one on the C's data, on data moved by one ulp
(`float32_draws`), whose largest state distance is the spread the C is held to
(the autoencoder's and DS-CNN's tests, and the ill-conditioned runs of
test_mlperf_tiny_ic_vww.py)."""


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


def torch_optimizer(kind: str, lr: float) -> Callable[..., torch.optim.Optimizer]:
    """PyTorch's optimizer that adir's `insert-optimizer{kind=<kind> lr=<lr>}` is."""
    return {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[kind]


def check_trains_in_c_like_pytorch(
    name: str,
    optimizer: str,
    batch: int,
    lr: float,
    noise_driven: dict[str, slice] | None = None,
    report: bool = False,
) -> None:
    """The training test of the models whose forward returns the loss (har_cnn, gru, lstm,
    transformer): 20 steps of the C (-Werror, ASan and UBSan; gcc and clang for SGD at batch 1,
    the first compiler otherwise) against PyTorch float32 on the same module and data, the
    loss of every step and every float parameter and buffer after them to 1e-4 relative (with
    an absolute floor of 1e-4 of the tensor's largest magnitude, for entries a step carries
    through zero). `noise_driven`: the parts of parameters whose gradient is 0 in real
    arithmetic, which Adam moves by up to lr a step on rounding noise (the callers say why),
    compared under Adam within STEPS * lr. The model is compiled once for all compilers."""
    example = load_example(name)
    model = example.model()
    reference = copy.deepcopy(model)
    data = batches(example, batch)
    module = import_module(model, tuple(torch.from_numpy(a) for a in data[0]))
    options = f"kind={optimizer} lr={lr}"
    planned = run_pipeline(
        module, f"infer-shapes,autodiff,insert-optimizer{{{options}}},{PLANNING_PIPELINE}"
    )
    torch_losses, torch_state = torch_training(
        reference, torch_optimizer(optimizer, lr)(reference.parameters(), lr=lr), data
    )
    params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]
    compilers = c_compilers() if (optimizer, batch) == ("sgd", 1) else c_compilers()[:1]
    noise_driven = (noise_driven or {}) if optimizer == "adam" else {}
    for compiler in compilers:
        with tempfile.TemporaryDirectory(prefix=f"adir-{name}-") as directory:
            build = build_c(planned, "train_step", STEPS, Path(directory), compiler, sanitize=True)
            outputs = build.run(0, data)
        assert len(outputs) == STEPS + len(params)
        c_losses = np.array([float(v) for v in outputs[:STEPS]])
        c_state = dict(zip(params, outputs[STEPS:], strict=True))
        assert set(torch_state) <= set(c_state)
        np.testing.assert_allclose(c_losses, np.array(torch_losses), rtol=RTOL, err_msg=compiler)
        worst = {"loss": float(np.max(np.abs(c_losses / np.array(torch_losses) - 1)))}
        for symbol, expected in torch_state.items():
            actual, scale = c_state[symbol].copy(), float(np.abs(expected).max())
            if symbol in noise_driven:
                part = noise_driven[symbol]
                np.testing.assert_allclose(
                    actual[part], expected[part], rtol=0, atol=STEPS * lr, err_msg=symbol
                )
                actual[part] = expected[part]
            worst[symbol] = float(np.max(np.abs(actual - expected)) / scale)
            np.testing.assert_allclose(
                actual, expected, rtol=RTOL, atol=RTOL * scale, err_msg=symbol
            )
        if report:
            print(
                f"\n{name} {optimizer} batch {batch} ({compiler}): the largest difference "
                f"relative to the tensor's largest magnitude: {max(worst.values()):.2e} "
                f"({max(worst, key=worst.get)})"
            )


def float32_draws(data: list[tuple[np.ndarray, ...]]) -> list[list[tuple[np.ndarray, ...]]]:
    """The data, then FLOAT32_DRAWS copies of it with a random half of each input's entries
    moved up by one float32 ulp (seeds 0, 1, ...): PyTorch float32 runs that part from each
    other as rounding makes two float32 programs part (the labels, here the input itself,
    stay)."""
    draws = [data]
    for seed in range(FLOAT32_DRAWS):
        rng = np.random.default_rng(seed)
        moved = []
        for x, *rest in data:
            up = np.nextafter(x, np.float32(np.inf)).astype(np.float32)
            moved.append((np.where(rng.random(x.shape) < 0.5, up, x), *rest))
        draws.append(moved)
    return draws


def float32_runs(
    data: list[tuple[np.ndarray, ...]],
) -> Iterator[tuple[int, int, list[tuple[np.ndarray, ...]]]]:
    """PyTorch float32's runs for the referee of an ill-conditioned test: each of
    `float32_draws(data)` on 1 and on 2 threads, as `(threads, draw, draw_data)`, with torch's
    thread count set while the caller runs it and restored after. Two threads' kernels sum in
    other orders than one thread's, as the C's do, and decide a kink differently
    (test_mlperf_tiny_ic_vww.py's `test_resnet8_adam_batch_1_puts_a_relu_on_its_kink`)."""
    threads = torch.get_num_threads()
    for count in (1, 2):
        for draw, draw_data in enumerate(float32_draws(data)):
            torch.set_num_threads(count)
            try:
                yield count, draw, draw_data
            finally:
                torch.set_num_threads(threads)
