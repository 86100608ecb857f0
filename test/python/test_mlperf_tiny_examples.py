"""MLPerf Tiny's DS-CNN and FC autoencoder (examples/torch/), imported with no edits as
tools/generate_examples.py imports them, compiled to C with SGD and with Adam, built with -Werror
under ASan and UBSan, train 20 steps like PyTorch. DS-CNN trains at batch 1; the autoencoder at
batch 8 and at batch 2 (PyTorch refuses its BatchNorm1d in training mode at batch 1).

- SGD (lr 0.01, no momentum, as in test_c_examples.py, which says why larger steps make
  batch-1 DS-CNN chaotic in float32): the loss of every step and every parameter and running
  statistic after them against `torch.optim.SGD` on the same module in float64 (DS-CNN also
  at batch 8), to 1e-4 relative (1e-4 of the tensor's largest magnitude for entries near
  zero) or as close as float32 PyTorch is where that is farther (a ReLU input within float32
  rounding of 0: `test_example_trains_in_c_like_pytorch_with_sgd` says where).
- Adam (lr 0.001): against float64 PyTorch, as close as float32 PyTorch is
  (`test_example_trains_in_c_like_pytorch_with_adam` says why).
- The autoencoder at batch 2 is ill-conditioned in PyTorch itself (float32 and float64 part by
  4% within 20 steps): the C must be as close to float64 as float32 PyTorch.

DS-CNN's two dropouts (p = 0.2 and 0.4) draw adir's masks in the C; the PyTorch reference
multiplies by the same masks, computed from the specification (adir_dropout_masks.py), for the
step counter 0, 1, ..., 19 the C is given: the gradient given the mask.

Parameters whose gradient is zero in real arithmetic move by noise-driven steps of about lr
under Adam (its step m / (sqrt(v) + eps) does not shrink with the gradient): in DS-CNN, the
gammas that feed a ReLU, a depthwise conv and a batch norm (their scale is normalised away,
test_c_examples.SCALE_INVARIANT) and the running statistics of that batch norm; in the
autoencoder, each linear layer's bias before a batch norm (which subtracts it again) and that
batch norm's running mean. Under Adam those are compared to STEPS * lr (`NOISE_DRIVEN`).
"""

from __future__ import annotations

import inspect
import itertools
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_dropout_masks import with_adir_masks
from adir_testing import parse_example
from c_testing import build_c, c_compilers, run_pipeline
from cancelled_biases import adam_step_bound, batchnorm_after, bias_free_running_mean
from examples_testing import STEPS, float32_draws, float32_runs, load_example, training_matrix
from state_distance import largest_tensor_distance, state_distance
from torch import nn

from adir.context import adir_context
from adir.frontends.torch_import import import_module, symbol_names
from adir.interpreter import Session
from adir.passes import PLANNING_PIPELINE
from adir.passes.derive_predict import DerivePredictPass
from adir.tools.adir_import import main as adir_import_main

ROOT = Path(__file__).resolve().parents[2]
RTOL = 1e-4
OPTIMIZERS = {"sgd": 0.01, "adam": 0.001}
STATE_FACTOR = 2
"""How much farther from float64 than PyTorch float32's state the C's may be at batch 2
(test_autoencoder_at_batch_2_...): issue 19's "the float32-vs-float64 spread of PyTorch
itself", as the losses' 2."""
# Parameters whose gradient is 0 in real arithmetic (see the docstring), by model.
NOISE_DRIVEN = {
    # features.N: the gamma of bn1 and of the pointwise batch norms 1-3, and the statistics
    # of the depthwise batch norm each one feeds.
    "ds_cnn": r"features_(2|10|17|24)_weight|features_(7|14|21|28)_running_(mean|var)",
    # Each linear layer's bias and the running mean of the batch norm after it.
    "autoencoder": r"layers_(0|3|6|9|12|15|18|21|24)_bias|layers_\d+_running_mean",
}


def training_data(name: str, batch: int) -> list[tuple[np.ndarray, ...]]:
    """20 batches of random inputs and their labels (class indices, or the input itself for
    the autoencoder's reconstruction)."""
    rng = np.random.default_rng(7)
    steps = []
    for step in range(STEPS):
        if name == "ds_cnn":
            x = rng.standard_normal((batch, 1, 49, 10)).astype(np.float32)
            label = rng.integers(0, 12, batch).astype(np.int32)
            steps.append((x, label, np.array(step, np.int64)))
        else:
            x = rng.standard_normal((batch, 640)).astype(np.float32)
            steps.append((x, x.copy()))
    return steps


def torch_model_in_float64(model: nn.Module) -> nn.Module:
    """The model in float64, its batch norms' momentum and eps rounded to float32 as adir's
    f32 properties hold them."""
    model = model.double()
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.momentum = float(np.float32(module.momentum))
            module.eps = float(np.float32(module.eps))
    return model


def torch_training(
    name: str,
    optimizer: str,
    data,
    dtype: torch.dtype = torch.float32,
    trace: list | None = None,
    moments: dict | None = None,
) -> tuple[list[float], dict[str, np.ndarray]]:
    """PyTorch's losses and final state (by adir symbol), its dropouts drawing adir's masks;
    in float64, with the batch norms' momentum and eps rounded to float32 as adir's are. With
    a list `trace`, each step appends every parameter before it by symbol; with a dict
    `moments`, Adam's moments after the steps go in it under the names of adir's state
    parameters (`<symbol>_exp_avg`, `<symbol>_exp_avg_sq`)."""
    torch.manual_seed(0)
    model = load_example(name).model()
    dropouts, counter = with_adir_masks(model)
    if dtype == torch.float64:
        model = torch_model_in_float64(model)
    assert dropouts == ([(1, 0.2), (2, 0.4)] if name == "ds_cnn" else [])
    kind = torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam
    step_with = kind(model.parameters(), lr=OPTIMIZERS[optimizer])
    symbols = symbol_names(list(model.state_dict()))
    losses = []
    for step, (x, label, *_) in enumerate(data):
        counter.step = step
        if trace is not None:
            named = model.named_parameters()
            trace.append({symbols[n]: p.detach().double().numpy().copy() for n, p in named})
        step_with.zero_grad()
        output = model(torch.from_numpy(x).to(dtype))
        if name == "ds_cnn":
            loss = F.cross_entropy(output, torch.from_numpy(label).long())
        else:
            loss = F.mse_loss(output, torch.from_numpy(label).to(dtype))
        loss.backward()
        step_with.step()
        losses.append(loss.item())
    if moments is not None:
        for parameter_name, parameter in model.named_parameters():
            for moment in ("exp_avg", "exp_avg_sq"):
                value = step_with.state[parameter][moment]
                moments[f"{symbols[parameter_name]}_{moment}"] = value.double().numpy()
    state = model.state_dict()
    return losses, {
        symbols[k]: v.double().numpy() for k, v in state.items() if v.is_floating_point()
    }


def c_training(
    name: str, optimizer: str, data, trace: list | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The C's loss of each step and its final parameters by symbol: the model imported as
    tools/generate_examples.py imports it (at the batch of `data`), built under ASan/UBSan.
    With a list `trace`, the C writes its parameters after every step, and `trace` gets them
    before each step by symbol, as `torch_training`'s."""
    source = load_example(name)
    x, label = data[0][0], data[0][1]
    module = import_module(
        source.model(),
        (torch.from_numpy(x),),
        loss=source.LOSS,
        label_shape=label.shape,
        label_dtype=torch.int64 if label.dtype == np.int32 else torch.float32,
    )
    lr = OPTIMIZERS[optimizer]
    pipeline = f"infer-shapes,autodiff,insert-optimizer{{kind={optimizer} lr={lr}}}"
    planned = run_pipeline(module, f"{pipeline},{PLANNING_PIPELINE}")
    with tempfile.TemporaryDirectory(prefix="adir-mlperf-") as directory:
        build = build_c(
            planned,
            "train_step",
            STEPS,
            Path(directory),
            c_compilers()[0],
            True,
            state_each_step=trace is not None,
        )
        outputs = build.run(0, data)
    params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]
    if trace is None:
        return np.array([float(v) for v in outputs[:STEPS]]), dict(
            zip(params, outputs[STEPS:], strict=True)
        )
    assert len(outputs) == STEPS * (1 + len(params))
    per_step = [outputs[i : i + 1 + len(params)] for i in range(0, len(outputs), 1 + len(params))]
    states = [dict(zip(params, step[1:], strict=True)) for step in per_step]
    initial = source.model().state_dict()
    symbols = symbol_names(list(initial))
    trace += [{symbols[n]: v.double().numpy() for n, v in initial.items()}, *states[:-1]]
    return np.array([float(step[0]) for step in per_step]), states[-1]


# CI: DS-CNN with SGD at batch 1, the autoencoder with Adam at batch 8 (and with SGD at batch 2,
# test_autoencoder_at_batch_2_...); ADIR_EXAMPLES_MATRIX=1: both with both at batch 1 (the
# autoencoder 2) and 8.
SGD_RUNS = training_matrix([("ds_cnn", 1)], [("ds_cnn", 8), ("autoencoder", 8)])
ADAM_RUNS = training_matrix([("autoencoder", 8)], [("ds_cnn", 1), ("ds_cnn", 8)])


def assert_as_close_to_float64_as_float32(
    name: str, optimizer: str, data, c_losses: np.ndarray, c_params: dict[str, np.ndarray]
) -> None:
    """The C against float64 PyTorch, the referee, held to what float32 PyTorch reaches: its
    losses within twice the largest relative distance of PyTorch float32's runs, or RTOL where
    that is larger; each parameter and running statistic entry within twice those runs' largest
    distance in its tensor, or RTOL of the tensor's largest magnitude; under Adam, the
    noise-driven ones (`NOISE_DRIVEN`) within STEPS * lr.

    The runs: the 1 + FLOAT32_DRAWS data of `float32_draws`, each on 1 and on 2 threads, as
    test_mlperf_tiny_ic_vww.py draws them: the C's sums differ from PyTorch's in their order,
    as PyTorch's on 2 threads differ from its own on 1. The autoencoder at batch 8 with Adam
    needs them: with batchnorm's output as `(x - mean) * scale + beta`, the C's layers.22
    gamma ends 1.46e-4 from float64; PyTorch's 9 runs on 1 thread reach 5.1e-5 of it, on 2
    threads 1.43e-4 (measured on Zen 4, 2026-11-27)."""
    lr = OPTIMIZERS[optimizer]
    float64_losses, float64_state = torch_training(name, optimizer, data, torch.float64)
    reference = np.array(float64_losses)
    loss_spread = 0.0
    state_spread = {symbol: 0.0 for symbol in float64_state}
    for _, _, draw_data in float32_runs(data):
        losses32, state32 = torch_training(name, optimizer, draw_data)
        loss_spread = max(loss_spread, float(np.max(np.abs(np.array(losses32) / reference - 1))))
        for symbol, expected in float64_state.items():
            distance = float(np.abs(state32[symbol] - expected).max())
            state_spread[symbol] = max(state_spread[symbol], distance)
    c_error = np.abs(c_losses / reference - 1)
    if os.environ.get("ADIR_EXAMPLES_REPORT"):
        print(
            f"\n{name} {optimizer}: the losses' largest distance from float64, the C "
            f"{c_error.max():.2e}, PyTorch float32 up to {loss_spread:.2e}"
        )
    np.testing.assert_allclose(
        c_losses, reference, rtol=max(RTOL, 2 * loss_spread), err_msg="losses"
    )
    for symbol, expected in float64_state.items():
        if optimizer == "adam" and re.fullmatch(NOISE_DRIVEN[name], symbol):
            atol = STEPS * lr
        else:
            atol = max(RTOL * np.abs(expected).max(), 2 * state_spread[symbol])
        np.testing.assert_allclose(c_params[symbol], expected, rtol=0, atol=atol, err_msg=symbol)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "batch"), SGD_RUNS)
def test_example_trains_in_c_like_pytorch_with_sgd(name: str, batch: int) -> None:
    """Losses and every parameter and running statistic as close to PyTorch's in float64, the
    referee, as PyTorch float32 is (`assert_as_close_to_float64_as_float32`), and at least to
    1e-4: float32 PyTorch is the less accurate of the two float32 runs at batch 8 (DS-CNN:
    bn1's beta 2.8e-2 and conv1's weight 4.3e-4 away from float64 after 20 steps, the C 1.0e-6
    and 3.6e-7; measured with this test's data).

    Not 1e-4 alone: DS-CNN at batch 1 is ill-conditioned with SGD too. At step 0 the last
    batch norm's output (features.31) at channel 28, pixel 13 is -6.93e-7 in float64, near
    the ReLU's 0. PyTorch's `x * scale + shift` rounds it to -1.14e-6 in float32, and the C
    with that form and its sums in eight partial sums a row to +6.0e-8: the two products
    nearly cancel there, and their rounding decides the side. adir's `(x - mean) * scale +
    beta` (the interpreter in float32: -7.04e-7, against -1.28e-6 in the other form) keeps
    it. On the side float64 is not, the losses part by 1.9e-4 within 12 steps and bn1's beta
    by 20% of its largest entry; PyTorch float32 does the same at a later step on one of its
    9 draws (2.4e-4 and 18.5%; measured 2026-11-27)."""
    data = training_data(name, batch)
    c_losses, c_params = c_training(name, "sgd", data)
    assert_as_close_to_float64_as_float32(name, "sgd", data, c_losses, c_params)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "batch"), ADAM_RUNS)
def test_example_trains_in_c_like_pytorch_with_adam(name: str, batch: int) -> None:
    """Adam amplifies rounding noise where a gradient entry is near zero: its first step is
    lr * g / (|g| + eps) whatever g's size, so two float32 computations of a gradient entry of
    2e-8 (DS-CNN's dw4 weight [63, 0, 1, 0] at step 0: -2.48e-8 in float64, -2.13e-8 in
    PyTorch float32) move it by steps 7e-5 apart, and the C and PyTorch float32 each follow
    their own noise. So each is compared with float64 PyTorch, the referee, and the C must be
    as close to it as PyTorch float32 is (`assert_as_close_to_float64_as_float32`); the
    noise-driven entries (`NOISE_DRIVEN`) within STEPS * lr.

    The draws, not one run: DS-CNN at batch 1 is ill-conditioned though one float32 run does
    not show it. At step 14 (counting from 0) the last pointwise block's ReLU (features.29)
    sees -9.8e-7 in float64 at channel 26, row 20, column 2, and the float32 state's rounding
    noise (2.5e-6 of features.9's weight) decides its side: the C and 5 of the 9 PyTorch
    float32 runs let it pass, their losses 3.8e-5 from float64 at step 18 and their states
    4.2e-3 away (state_distance.py), where the runs it stops stay within 2.0e-7 and 7.7e-6
    (measured 2026-11-26, `ADIR_EXAMPLES_REPORT=1`)."""
    data = training_data(name, batch)
    c_losses, c_params = c_training(name, "adam", data)
    assert_as_close_to_float64_as_float32(name, "adam", data, c_losses, c_params)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", training_matrix(["sgd"], ["adam"]))
def test_autoencoder_at_batch_2_is_as_close_to_float64_as_pytorch_float32(optimizer: str) -> None:
    """At batch 2, each BatchNorm1d normalises 2 values per channel to about +-1 whatever
    their distance, so the loss barely depends on the weights and float32 rounding dominates
    the gradient: PyTorch's own float32 and float64 SGD runs part by several percent within
    20 steps (measured here). The C must be as close to float64 PyTorch as float32 PyTorch
    is: its largest loss difference over the steps within twice PyTorch's, and its whole
    trained state's distance from float64 (state_distance.py: parameters, running statistics
    and Adam's moments) within STATE_FACTOR times PyTorch float32's. Not entry by entry: in so
    chaotic a run which tensor strays most differs from run to run (under Adam, a bottleneck
    batch norm's gamma: 9.9e-3 from float64 in the C, 3.7e-3 in PyTorch float32, while the
    running mean before it is 4.9e-2 and 7.1e-2 away). Each linear layer's bias before a
    batch norm is compared as ResNet-8's conv biases are (cancelled_biases.py): by its batch
    norm's running mean without it, and under Adam by the bound of each of its steps.

    PyTorch float32's state distance is measured on 1 + FLOAT32_DRAWS runs, not one
    (`float32_draws`), and the C's is held to STATE_FACTOR times the largest: where the two
    values of a channel nearly coincide, the batch norm's gradient is up to 1/sqrt(eps) = 316
    times its output's, and SGD's weights jump by orders of magnitude at such steps (layers.0's
    weight norm: 6.5 at the start, 2.9e3 after the 20 steps in float64, 2.4e3 in PyTorch
    float32, 2.0e4 in the C). Which steps jump, and how far, is a draw. Measured (2026-11-26,
    `ADIR_EXAMPLES_REPORT=1`): with SGD, PyTorch float32's state distance is 1.25 on the C's
    data and 0.85 to 7.4e9 on the 8 moved copies (four below 1.2, two at 164 and 177, one at
    2.3e5), the C's 189 (its running variances grow farthest: layers.4's 1.3e3); the run
    diverges, and on a clean CI machine the draws reached only 8.5e4 where the C's reached
    2.0e7: the state is not compared under SGD (its losses are). With Adam, whose steps do
    not grow with the gradient, the state draws are 0.40 to 0.50 and the C's 0.44; Adam's
    moments 1.0 to 91 and the C's 2.4 (layers.15's weight's second moment farthest, 12)."""
    data = training_data("autoencoder", 2)
    c_trace: list = []
    trace64: list = []
    moments64: dict | None = {} if optimizer == "adam" else None
    c_losses, c_state = c_training("autoencoder", optimizer, data, c_trace)
    float64_losses, state64 = torch_training(
        "autoencoder", optimizer, data, torch.float64, trace64, moments64
    )
    c_error = np.abs(c_losses / np.array(float64_losses) - 1)
    first_input = (torch.from_numpy(data[0][0]),)
    cancelled = batchnorm_after(load_example("autoencoder").model(), first_input)
    assert len(cancelled) == 9  # the 9 linear layers before a batch norm (NOISE_DRIVEN)

    def compared(state: dict, trace: list, moments: dict | None) -> dict[str, dict]:
        """The groups compared: the state less the cancelled biases, with their running
        means without them; Adam's moments less the cancelled biases'."""
        state = dict(state)
        for bias, (mean, momentum) in cancelled.items():
            biases = [before[bias] for before in trace]
            state[mean] = bias_free_running_mean(state[mean], biases, momentum)
            del state[bias]
        groups = {"state": state}
        if moments is not None:
            noise = {f"{b}_{moment}" for b in cancelled for moment in ("exp_avg", "exp_avg_sq")}
            groups["Adam's moments"] = {s: m for s, m in moments.items() if s not in noise}
        return groups

    expected = compared(state64, trace64, moments64)
    actual = compared(c_state, c_trace, {s: c_state[s] for s in moments64 or {}} or None)
    float32_distances: dict[str, list[float]] = {group: [] for group in expected}
    for draw, draw_data in enumerate(float32_draws(data)):
        trace32: list = []
        moments32: dict | None = {} if optimizer == "adam" else None
        losses32, state32 = torch_training(
            "autoencoder", optimizer, draw_data, torch.float32, trace32, moments32
        )
        if draw == 0:  # the same data as the C's
            spread = np.abs(np.array(losses32) / float64_losses - 1)
        for group, values in compared(state32, trace32, moments32).items():
            float32_distances[group].append(state_distance(values, expected[group]))
    distances = {
        group: (
            state_distance(actual[group], reference),
            max(float32_distances[group]),
            largest_tensor_distance(actual[group], reference),
        )
        for group, reference in expected.items()
    }
    if os.environ.get("ADIR_EXAMPLES_REPORT"):
        print(
            f"\nautoencoder {optimizer} batch 2: the losses' largest distance from float64, "
            f"the C {c_error.max():.2e}, PyTorch float32 {spread.max():.2e}"
        )
        for group, (c_distance, f32_distance, (symbol, largest)) in distances.items():
            draws = ", ".join(f"{d:.2e}" for d in float32_distances[group])
            print(
                f"  {group}, distance from float64 (state_distance): the C {c_distance:.2e}, "
                f"PyTorch float32 up to {f32_distance:.2e} ({draws}; ratio "
                f"{c_distance / f32_distance:.2f}); the C's farthest tensor {symbol} {largest:.2e}"
            )
    assert spread.max() > 1e-3  # ill-conditioned indeed, or this test should be strict
    assert c_error.max() <= 2 * spread.max(), (c_error.max(), spread.max())
    if optimizer == "sgd":
        # SGD diverges here (weights grow by orders of magnitude at the steps where a channel's
        # two values nearly coincide): PyTorch float32's own draws span 0.85 to 7.4e9 on one
        # machine and 0.85 to 8.5e4 on a clean CI machine, where the C's reached 2.0e7; a bound
        # that moves by five orders of magnitude with the machine checks nothing. The losses
        # (above) and the cancelled biases' bound under Adam are what this run can hold.
        return
    for group, (c_distance, f32_distance, _) in distances.items():
        assert c_distance <= STATE_FACTOR * f32_distance, (group, c_distance, f32_distance)
    if optimizer == "adam":
        # Each step of a cancelled bias is at most lr times Adam's bound, plus a float32 ulp of
        # the bias for the update's rounding (as test_mlperf_tiny_ic_vww.py's).
        lr = OPTIMIZERS["adam"]
        for bias in cancelled:
            biases = [before[bias] for before in c_trace] + [c_state[bias]]
            for step, (before, after) in enumerate(itertools.pairwise(biases)):
                bound = lr * adam_step_bound(step + 1) + np.spacing(np.abs(before).max())
                assert np.abs(after - before).max() <= bound, (bias, step)


def test_ds_cnn_predict_of_the_example_equals_eval_mode() -> None:
    """derive-predict on examples/ds_cnn_torch.mlir (imported in training mode) is the model in
    eval mode: running statistics, no dropout, no step argument. float64 on both sides, after
    the batch norms' statistics are given trained-looking values; both sum in other orders
    (at most 64 terms per sum, 11 layers deep), so 1e-12 is a margin of 1,000 over rounding."""
    module = parse_example("ds_cnn_torch")
    DerivePredictPass().apply(adir_context(), module)
    session = Session(module, np.float64)
    model = torch_model_in_float64(load_example("ds_cnn").model())
    rng = np.random.default_rng(3)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name.endswith(("running_mean", "running_var")):
                values = rng.uniform(0.5, 2.0, tensor.shape)
                tensor.copy_(torch.from_numpy(values))
                session.params[symbol_names([name])[name]] = values
    x = rng.standard_normal((1, 1, 49, 10))
    (logits,) = session.call("predict", x)
    expected = model.eval()(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_autoencoder_at_batch_1_is_pytorchs_error_at_the_models_line(capsys) -> None:
    path = ROOT / "examples" / "torch" / "autoencoder.py"
    arguments = [f"{path}:model", "--input-shape", "1,640", "--loss", "mse"]
    assert adir_import_main(arguments) == 1
    _, start = inspect.getsourcelines(load_example("autoencoder").Autoencoder.forward)
    assert capsys.readouterr().err.startswith(
        f"{path}:{start + 1}: error: the model fails on the example inputs: Expected more than 1 "
        "value per channel when training, got input size torch.Size([1, 128]) (PyTorch's batch "
        "norm in training mode needs 2 or more values per channel"
    )
