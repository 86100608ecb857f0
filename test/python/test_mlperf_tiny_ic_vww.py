"""MLPerf Tiny's image classification and visual wake words models, `examples/torch/resnet8.py`
and `examples/torch/mobilenet_v1.py` (ReLU6, and the same network with ReLU), import with no
edits, compile with SGD to C and train like PyTorch, from the model's own weights and on the
same batches (batch 2, plain SGD at lr 0.01, 3 steps, batch norms in training mode):

- in float64, the interpreter runs the compiled `@train_step` and gives PyTorch float64's loss
  at every step to 1e-9, and every parameter and running statistic after them to 1e-7 of its
  tensor's largest magnitude: autodiff, the VJP rules and the optimizer are PyTorch's (the
  clamps' conventions at their bounds are test_autodiff_activations.py's: random data never
  lands on a bound). (PyTorch runs with the f32 values of the IR's attributes: batch
  norm's eps and momentum, and the lr.) The conditioning below amplifies float64's rounding
  too: the largest parameter difference is 1.3e-9 of its tensor's magnitude (MobileNet's
  features_67_bias, a batch norm shift whose gradient is a small residue of a sum), and 1e-7
  is still 10^5 times below float32's spread.
- in float32, the C (ASan and UBSan) runs the same steps. ResNet-8 is well conditioned on
  its batches: PyTorch float32 stays within 1e-7 of float64 over the steps, and the C's losses
  and parameters equal PyTorch float32's to 1e-4 relative (parameters to 1e-4 of their
  tensor's largest magnitude, as test_c_torch_import.py). That needs every ReLU input farther
  from 0 than float32's rounding moves it, which `test_resnet8_batches_keep_relus_off_their_kink`
  checks: on the batches drawn with seed 1, one input of the stride-2 block's second ReLU
  in the third step is -6.1e-8 in float64 while float32 moves that ReLU's inputs by up to
  2.6e-6 (PyTorch float32: -5.4e-7; the C with the reference kernels: -7.2e-7; with the
  im2col GEMM input gradient, which sums in another order: +4.8e-7, so its gradient passed
  and the block's batchnorm shifts parted from PyTorch's by 2% after the step). ResNet-8's
  batches are drawn with seed 4, on which the closest input is 1.5 times that spread away.
  MobileNetV1-0.25 is not well conditioned: a ReLU (or ReLU6) input within float32 rounding
  of its kink switches a gradient element (in the first step,
  one of the 11th block's ReLU inputs is 8.7e-6 from 0), and the next steps spread that, so
  PyTorch's own float32 run strays from its float64 run by 6e-5 after one step and by 6e-3
  to 1e-2 after two (measured here, each run). Its losses after three steps are one draw of
  that spread, so the C's are held, as in issue 19's matrix below, to twice the largest of
  PyTorch float32's 18 runs (`float32_runs`: the data and 8 copies moved by one ulp, on 1 and
  on 2 threads), or 1e-4 if larger; its first loss (the forward pass, same weights) within
  1e-5. Measured on Zen 4 (2026-11-27), the largest loss error over the three steps on the
  9 data: PyTorch float32 1.9e-3 to 3.5e-2 (ReLU6: 1.6e-3 to 3.3e-2) over the 18 runs; the C,
  with batchnorm's current output form, 3.2e-3 to 3.1e-2 (ReLU6: 1.9e-3 to 3.6e-2), and with
  its earlier `x * scale + shift` form 2.8e-4 to 4.0e-2 (2.2e-3 to 3.8e-2): the same spread.
  One run's distance was the bound before: 2.0e-2 (ReLU6 2.5e-2) on the C's data, which the
  earlier form's C met there (2.2e-3) and missed on 4 of the 8 moved copies (both models).

Issue 19's matrix (`test_trains_20_steps_in_c_like_pytorch`): ResNet-8, MobileNetV1 and
MobileNetV2 (test_mobilenet_v2_example.py's model), 20 steps at batch 1 and 8 with SGD (lr
0.01) and Adam (lr 0.001), the C under ASan/UBSan against PyTorch float64: within 1e-4 where
PyTorch float32 itself is (tensor by tensor; the batch-normed conv biases by their running
means without them, cancelled_biases.py; under Adam each entry also within what float32
rounding of its gradients can move Adam's steps, adam_noise.py), and otherwise
(ill-conditioned) by the loss curve and by the whole trained state (parameters, running
statistics, Adam's moments), each within twice PyTorch float32's distance from float64: the
largest over 18 PyTorch float32 runs, the C's data and 8 copies of it moved by one float32
ulp (`float32_draws`), each on 1 and on 2 threads, since one run's distance is one draw of a
chaotic spread
(state_distance.py; the distances measured: docs/frontends.md). CI runs three cases,
`ADIR_EXAMPLES_MATRIX=1` all twelve.

The ReLU6 MobileNet also keeps the arena of its ReLU form, byte for byte: `adir.clamp`'s
gradient reads its output, as `adir.relu_grad` does (issue 19: 3,968,400 bytes at batch 1 when
ReLU6 imported as maximum and minimum, 2,134,416 with ReLU).
"""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adam_noise import rounding_allowance
from c_testing import build_c, c_compilers, run_pipeline
from cancelled_biases import (
    ZERO_GRADIENT,
    adam_step_bound,
    batchnorm_after,
    bias_free_running_mean,
    zero_gradient,
)
from examples_testing import STEPS as STEPS_20
from examples_testing import batches as batches_of_20
from examples_testing import float32_runs, load_example, training_matrix
from state_distance import largest_tensor_distance, state_distance
from torch import nn

from adir.frontends.torch_import import import_module, symbol_names
from adir.interpreter import Session
from adir.passes import PLANNING_PIPELINE

STEPS = 3
BATCH = 2
LR = 0.01
RTOL = 1e-4
TRAIN = f"infer-shapes,autodiff,insert-optimizer{{kind=sgd lr={LR}}}"


def batches(file: ModuleType, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The model file's example batch, then `STEPS - 1` more drawn the same way from `seed`."""
    x, label = file.example_input(BATCH)
    generator = torch.Generator().manual_seed(seed)
    data = [(x.numpy(), label.numpy())]
    for _ in range(STEPS - 1):
        x = torch.randn(x.shape, generator=generator)
        label = torch.randint(0, file.CLASSES, label.shape, generator=generator)
        data.append((x.numpy(), label.numpy()))
    return data


def torch_training(
    model: nn.Module, data: list[tuple[np.ndarray, np.ndarray]], dtype: torch.dtype
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The loss of each SGD step in `dtype`, and the state after them by adir symbol. In
    float64 with the float32 values adir's f32 attributes hold (eps, momentum, lr)."""
    model = copy.deepcopy(model).to(dtype)
    lr = LR
    if dtype == torch.float64:
        lr = float(np.float32(LR))
        for layer in model.modules():
            if isinstance(layer, nn.BatchNorm2d):
                layer.eps = float(np.float32(layer.eps))
                layer.momentum = float(np.float32(layer.momentum))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for x, label in data:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(torch.from_numpy(x).to(dtype)), torch.from_numpy(label))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    state = model.state_dict()
    symbols = symbol_names(list(state))
    return np.array(losses), {symbols[name]: tensor.numpy() for name, tensor in state.items()}


def assert_params_close(actual: dict, expected: dict, rtol: float) -> None:
    assert actual.keys() <= expected.keys() and len(actual) > 0
    for symbol, value in actual.items():
        reference = expected[symbol]
        scale = np.abs(reference).max()
        np.testing.assert_allclose(value, reference, rtol=rtol, atol=rtol * scale, err_msg=symbol)


CASES = {
    "resnet8": ("resnet8", "model", 4),
    "mobilenet_v1_relu6": ("mobilenet_v1", "model", 1),
    "mobilenet_v1_relu": ("mobilenet_v1", "model_with_relu", 1),
}
"""Each case's file, factory and seed of its batches (ResNet-8's: the module docstring)."""


def relu_inputs(
    model: nn.Module, data: list[tuple[np.ndarray, np.ndarray]], dtype: torch.dtype, train=None
) -> list[np.ndarray]:
    """The input of every `nn.ReLU` call in the steps of `train(model, data, dtype)` (the SGD
    of `torch_training` unless given), in float64."""
    model = copy.deepcopy(model)
    inputs: list[np.ndarray] = []
    for layer in model.modules():
        if isinstance(layer, nn.ReLU):
            layer.register_forward_hook(
                lambda _, args, __: inputs.append(args[0].detach().to(torch.float64).numpy())
            )
    (train or torch_training)(model, data, dtype)
    return inputs


def kink_margins(
    model: nn.Module, data: list[tuple[np.ndarray, np.ndarray]], train=None
) -> list[tuple[float, float, float]]:
    """For each ReLU call of the steps: its float64 input closest to 0, the largest difference
    float32 makes to that call's inputs, and the first over the second (the margin)."""
    exact, rounded = (
        relu_inputs(model, data, torch.float64, train),
        relu_inputs(model, data, torch.float32, train),
    )
    assert len(exact) == len(rounded) > 0
    margins = []
    for x, y in zip(exact, rounded, strict=True):
        closest, spread = float(x.flat[np.argmin(np.abs(x))]), float(np.abs(x - y).max())
        margins.append((closest, spread, abs(closest) / spread))
    return margins


def kink_margin(model: nn.Module, data: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """The smallest margin of `kink_margins`: below 1, some input's sign, and so whether its
    gradient passes, depends on the order of float32's sums."""
    return min(margin for _, _, margin in kink_margins(model, data))


def test_resnet8_batches_keep_relus_off_their_kink() -> None:
    """On the seed-1 batches the margin is 0.024 (-6.1e-8 against a spread of 2.6e-6, the
    module docstring; 0.026 on Zen 4, whose PyTorch kernels round other sums: the spread is
    float32's, and moves with the CPU); on ResNet-8's own (seed 4) it is 1.54, set by the first
    step's example batch that every seed shares. Below 1 an input's sign is float32's draw;
    above it, no float32 program's rounding reaches it."""
    file_name, factory, seed = CASES["resnet8"]
    file = load_example(file_name)
    model = getattr(file, factory)()
    assert kink_margin(model, batches(file, 1)) < 0.1
    assert kink_margin(model, batches(file, seed)) == pytest.approx(1.54, abs=0.01)


def test_resnet8_adam_batch_1_puts_a_relu_on_its_kink() -> None:
    """Why ResNet-8's loss with Adam at batch 1 can stray from PyTorch float64 by 2.1e-3 over
    issue 19's 20 steps (PyTorch float32 on 2 threads; on 1 thread 1.1e-7, and the C with
    main's kernels 1.2e-7, measured with and without ASan; the issue reported the C at 2.1e-3
    too): the first step's ReLUs are 13 spreads from their kink, but in the second step the
    stride-2 block's second ReLU has an input of -3.87e-7 in float64 while float32 moves that
    call's inputs by up to 2.97e-6. PyTorch float32 on 1 thread rounds it to 0.0 (the gradient
    stops, as in float64), on 2 threads to +6.0e-8 (it passes: that step's stacks.1.conv2
    weight gradient is 6.9% of its largest element from float64's, against 1.6e-6 on 1
    thread), and Adam, which divides each step by the gradient's own running magnitude, turns
    that into full-size steps of lr. Measured on the 20 steps, no draw of ResNet-8's data keeps
    every ReLU one spread away (32 draws of all 20 batches, seeds 100-131 at batch 1: the first
    step below 1 is the 1st to 9th); at batch 8 the example batch itself, shared by every
    draw, is 0.26 spreads away."""
    example = load_example("resnet8")
    data = batches_of_20(example, 1)[:2]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        margins = kink_margins(
            example.model(),
            data,
            lambda model, data, dtype: trained_in_torch(model, data, "adam", 0.001, dtype),
        )
    finally:
        torch.set_num_threads(threads)
    calls = len(margins) // len(data)
    assert calls == 7  # the stem's ReLU, then two in each of the three blocks
    assert min(margin for _, _, margin in margins[:calls]) == pytest.approx(13, abs=0.5)
    closest, spread, margin = min(margins[calls:], key=lambda entry: entry[2])
    assert margins[calls:].index((closest, spread, margin)) == 4  # stacks.1's second ReLU
    assert closest == pytest.approx(-3.87e-7, rel=0.01)
    # float32's spread is its rounding in this CPU's PyTorch kernels: 2.97e-6 on Sapphire
    # Rapids (margin 0.13), 2.09e-6 on Zen 4 (0.19); within reach of the kink on both.
    assert 1e-6 < spread < 5e-6
    assert margin < 0.5


def test_resnet8_adam_steps_its_batchnormed_conv_biases_on_rounding_noise() -> None:
    """Why the C's running means part from PyTorch float64's with Adam (issue 19's matrix at
    batch 1: the C's loss stays within 1.2e-7 of float64 over the 20 steps, but its
    stacks_2_bn1_running_mean is 1.26e-3 away against 2x PyTorch float32's 6.2e-4): every
    ResNet-8 conv has a bias and a training-mode batch norm after it, which subtracts the
    batch mean, so the bias's exact gradient is 0. float64 leaves 5.6e-18 of it, float32 a
    rounding residue of 3.0e-9 (the batch norm shift's is 6.6e-3); Adam divides by the
    gradient's own magnitude plus eps = 1e-8, so float64 moves the bias by 2.6e-12 in the 20
    steps and float32 by 9.9e-4, in directions set by the order of the sums. The loss does
    not see the bias (the batch norm removes it), but the running mean is the mean of the
    conv's output, bias included: float32 puts it 6.2e-4 from float64, and the C's sums, in
    another order, draw other noise. Neither a kink nor Adam's arithmetic
    (test_insert_optimizer.py's float64 Adam test)."""
    example = load_example("resnet8")
    model = example.model()
    data = batches_of_20(example, 1)
    x, label = (torch.from_numpy(value) for value in data[0])
    gradients = {}
    for dtype in (torch.float64, torch.float32):
        copied = copy.deepcopy(model).to(dtype)
        F.cross_entropy(copied(x.to(dtype)), label).backward()
        gradients[dtype] = {
            name: float(p.grad.abs().max())
            for name, p in copied.named_parameters()
            if name in ("stacks.2.conv1.bias", "stacks.2.bn1.bias")
        }
    assert gradients[torch.float64]["stacks.2.conv1.bias"] == pytest.approx(5.6e-18, rel=0.1)
    # float32's residue is rounding in the CPU's kernels' order: 3.0e-9 on Sapphire Rapids,
    # 2.4e-9 on Zen 4; nine orders above float64's on both.
    assert 1e-9 < gradients[torch.float32]["stacks.2.conv1.bias"] < 1e-8
    assert gradients[torch.float32]["stacks.2.bn1.bias"] == pytest.approx(6.6e-3, rel=0.01)
    initial = model.state_dict()["stacks.2.conv1.bias"].double().numpy()
    _, state64 = trained_in_torch(model, data, "adam", 0.001, torch.float64)
    _, state32 = trained_in_torch(model, data, "adam", 0.001, torch.float32)
    bias, mean = "stacks_2_conv1_bias", "stacks_2_bn1_running_mean"
    assert np.abs(state64[bias] - initial).max() == pytest.approx(2.6e-12, rel=0.05)
    # float32's noise, in directions its sums' order sets, moves the bias by steps of about lr
    # (at most 20 lr = 2e-2 in 20 steps): 9.9e-4 on Sapphire Rapids, 1.2e-3 on Zen 4; the
    # running mean, which sees the bias, 6.2e-4 and 7.5e-4 from float64's.
    assert 1e-4 < np.abs(state32[bias] - initial).max() < 2e-2
    assert 1e-4 < np.abs(state32[mean] - state64[mean]).max() < 5e-3


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_model_trains_like_pytorch(case: str) -> None:
    file_name, factory, seed = CASES[case]
    file = load_example(file_name)
    model = getattr(file, factory)()
    reference = copy.deepcopy(model)
    data = batches(file, seed)
    module = import_module(model, (torch.from_numpy(data[0][0]),), loss=file.LOSS)
    text = str(module)
    assert "adir.maximum" not in text and "adir.minimum" not in text
    assert text.count("adir.clamp ") == (27 if case == "mobilenet_v1_relu6" else 0)
    trained = run_pipeline(module, TRAIN)
    losses64, state64 = torch_training(reference, data, torch.float64)

    session = Session(trained, float_dtype=np.float64)
    ours64 = [session.call("train_step", x.astype(np.float64), label)[0] for x, label in data]
    np.testing.assert_allclose(np.array(ours64, np.float64), losses64, rtol=1e-9)
    assert_params_close(session.params, state64, 1e-7)

    planned = run_pipeline(trained, PLANNING_PIPELINE)
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(
            planned, "train_step", STEPS, Path(directory), c_compilers()[0], sanitize=True
        )
        outputs = build.run(0, data)
    c_losses = np.array([float(v) for v in outputs[:STEPS]])
    assert len(set(c_losses)) == STEPS  # each step trains on new data with new weights
    losses32, state32 = torch_training(reference, data, torch.float32)
    if case == "resnet8":
        assert np.max(np.abs(losses32 / losses64 - 1)) < 1e-6  # well conditioned
        np.testing.assert_allclose(c_losses, losses32, rtol=RTOL)
        params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]
        assert len(outputs) == STEPS + len(params)
        assert_params_close(dict(zip(params, outputs[STEPS:], strict=True)), state32, RTOL)
    else:
        spread = float(np.max(np.abs(losses32 / losses64 - 1)))
        assert spread > 1e-3  # the ill-conditioning the docstring describes
        assert abs(c_losses[0] / losses64[0] - 1) < 1e-5
        threads = torch.get_num_threads()  # 1 (conftest.py)
        for count, draw, draw_data in float32_runs(data):
            if (count, draw) != (threads, 0):  # the run above
                losses, _ = torch_training(reference, draw_data, torch.float32)
                spread = max(spread, float(np.max(np.abs(losses / losses64 - 1))))
        assert np.max(np.abs(c_losses / losses64 - 1)) <= max(RTOL, 2 * spread)


def arena_bytes(factory: str) -> int:
    file = load_example("mobilenet_v1")
    x, _ = file.example_input(1)
    module = import_module(getattr(file, factory)(), (x,), loss=file.LOSS)
    planned = run_pipeline(module, f"{TRAIN},{PLANNING_PIPELINE}")
    train_step = next(
        op
        for op in planned.ops
        if getattr(op, "sym_name", None) is not None and op.sym_name.data == "train_step"
    )
    return train_step.attributes["adir.arena_size"].value.data


@pytest.mark.slow
def test_relu6_mobilenet_has_the_arena_of_its_relu_form() -> None:
    """Batch 1, SGD: 2,134,992 bytes each (issue 19 asks for 1%; the clamp needs nothing):
    2,134,416 with the reference kernels, and the least im2col panel of the tuned 256x256
    pointwise conv's weight gradient at the peak, where nothing is free (16 taps x 9 pixels x
    4 = 576 bytes; select_kernels/tuned.py, "Scratch")."""
    assert arena_bytes("model") == arena_bytes("model_with_relu") == 2_134_992


def trained_in_torch(
    model: nn.Module, data, optimizer: str, lr: float, dtype: torch.dtype, trace=None, moments=None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """`torch_training` for any optimizer of OPTIMIZERS: losses and state by adir symbol. With
    a list `trace`, each step appends every parameter's gradient and every parameter before
    the step, by adir symbol. With a dict `moments`, Adam's moments after the steps go in it
    under the names of adir's state parameters (`<symbol>_exp_avg`, `<symbol>_exp_avg_sq`)."""
    model = copy.deepcopy(model).to(dtype)
    if dtype == torch.float64:
        lr = float(np.float32(lr))
        for layer in model.modules():
            if isinstance(layer, nn.BatchNorm2d):
                layer.eps = float(np.float32(layer.eps))
                layer.momentum = float(np.float32(layer.momentum))
    kind = torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam
    step_with = kind(model.parameters(), lr=lr)
    symbols = symbol_names(list(model.state_dict()))
    losses = []
    for x, label in data:
        step_with.zero_grad()
        loss = F.cross_entropy(model(torch.from_numpy(x).to(dtype)), torch.from_numpy(label))
        loss.backward()
        if trace is not None:
            named = list(model.named_parameters())
            trace.append(
                (
                    {symbols[n]: p.grad.double().numpy().copy() for n, p in named},
                    {symbols[n]: p.detach().double().numpy().copy() for n, p in named},
                )
            )
        step_with.step()
        losses.append(loss.item())
    if moments is not None:
        for name, parameter in model.named_parameters():
            for moment in ("exp_avg", "exp_avg_sq"):
                value = step_with.state[parameter][moment]
                moments[f"{symbols[name]}_{moment}"] = value.double().numpy()
    state = model.state_dict()
    state = {symbols[k]: v.double().numpy() for k, v in state.items() if v.is_floating_point()}
    return np.array(losses), state


OPTIMIZERS = {"sgd": 0.01, "adam": 0.001}
STATE_FACTOR = 2
"""How much farther from float64 than PyTorch float32's state the C's may be in an
ill-conditioned run (state_distance.py): issue 19's "the float32-vs-float64 spread of PyTorch
itself", as the losses' 2; that spread is the largest distance of PyTorch float32's
2 * (1 + FLOAT32_DRAWS) runs (`float32_draws`, each on 1 and on 2 threads)."""
# CI: ResNet-8 with SGD at batch 1 (well conditioned: 1e-4 of float32 PyTorch), MobileNetV1 with
# Adam at batch 1, MobileNetV2 with SGD at batch 1; ADIR_EXAMPLES_MATRIX=1: each with both at
# batch 1 and 8.
CI_RUNS = [("resnet8", "sgd", 1), ("mobilenet_v1", "adam", 1), ("mobilenet_v2", "sgd", 1)]
RUNS_20_STEPS = training_matrix(
    CI_RUNS,
    [
        (name, optimizer, batch)
        for name in ("resnet8", "mobilenet_v1", "mobilenet_v2")
        for optimizer in ("sgd", "adam")
        for batch in (1, 8)
        if (name, optimizer, batch) not in CI_RUNS
    ],
)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "optimizer", "batch"), RUNS_20_STEPS)
def test_trains_20_steps_in_c_like_pytorch(name: str, optimizer: str, batch: int) -> None:
    """Issue 19's matrix: 20 steps of the C (ASan/UBSan) against PyTorch in float64, the
    referee. The losses within 1e-4 relative or twice PyTorch float32's own largest distance
    from float64. Where PyTorch float32 holds every tensor within 1e-4 of its largest
    magnitude, the C must too, entry by entry (module docstring); where it does not, the run
    is ill-conditioned and the loss curve and the whole trained state's distance from float64
    are what is compared (the comments below say why). The C writes its state after every
    step, for the batch-normed biases' running means.

    Measured (2026-11-26, `ADIR_EXAMPLES_REPORT=1`), the state distance from float64 of the
    C / of PyTorch float32 (Adam's moments after the semicolon): ResNet-8 SGD batch 8 6.7e-6 /
    1.7e-2, Adam batch 8 1.9e-2 / 4.5e-2; 0.11 / 0.17, Adam batch 1 (ill-conditioned in that
    run: PyTorch float32's stem_1_bias 0.25 from float64) 1.7e-6 / 6.2e-2; 2.7e-6 / 0.28;
    MobileNetV1 SGD batch 1 0.61 / 0.60, Adam batch 1 0.45 / 0.43; 1.04 / 1.13, SGD batch 8
    0.60 / 0.59, Adam batch 8 0.50 / 0.35; 1.01 / 1.01."""
    example = load_example(name)
    model = example.model()
    data = batches_of_20(example, batch)
    lr = OPTIMIZERS[optimizer]
    module = import_module(copy.deepcopy(model), (torch.from_numpy(data[0][0]),), loss=example.LOSS)
    pipeline = f"infer-shapes,autodiff,insert-optimizer{{kind={optimizer} lr={lr}}}"
    planned = run_pipeline(module, f"{pipeline},{PLANNING_PIPELINE}")
    with tempfile.TemporaryDirectory(prefix=f"adir-{name}-") as directory:
        build = build_c(
            planned,
            "train_step",
            STEPS_20,
            Path(directory),
            c_compilers()[0],
            True,
            optimize="-O2",
            state_each_step=True,
        )
        # MobileNetV2 at batch 8 under ASan: the whole case took 1,104 s on two cores loaded
        # 8 times over (load average 15); the C's 20 steps are most of it. At -O2, not the
        # other tests' -O1 (whose small models gain less than the runtime's compile costs),
        # the tuned kernels' tiles run 4 times faster under ASan (MobileNetV2's 20 Adam steps
        # at batch 8: 40 s at -O1, 10 s), to the same bits: with -ffp-contract=off and no
        # -ffast-math no level reorders a float operation.
        build.timeout = 3600
        outputs = build.run(0, data)
    params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]
    assert len(outputs) == STEPS_20 * (1 + len(params))
    per_step = [outputs[i : i + 1 + len(params)] for i in range(0, len(outputs), 1 + len(params))]
    c_losses = np.array([float(step[0]) for step in per_step])
    c_states = [dict(zip(params, step[1:], strict=True)) for step in per_step]
    c_state = c_states[-1]
    trace32: list = []
    trace64: list = []
    moments32: dict | None = {} if optimizer == "adam" else None
    moments64: dict | None = {} if optimizer == "adam" else None
    losses32, state32 = trained_in_torch(
        model, data, optimizer, lr, torch.float32, trace32, moments32
    )
    losses64, state64 = trained_in_torch(
        model, data, optimizer, lr, torch.float64, trace64, moments64
    )
    # Over the 20 steps, as test_mlperf_tiny_examples.py's autoencoder at batch 2: where the
    # training is ill-conditioned, which step strays most differs from run to run.
    spread = float(np.max(np.abs(losses32 / losses64 - 1)))
    c_error = float(np.max(np.abs(c_losses / losses64 - 1)))
    assert set(state64) <= set(c_state)
    # What is compared: the state, less the biases a batch norm cancels (their running means
    # without them instead, cancelled_biases.py). Every parameter whose float64 gradient is 0
    # to rounding must be such a bias where parameters are compared, or this test would not
    # know how to compare it (ResNet-8: its 7 conv biases).
    cancelled = batchnorm_after(model, (torch.from_numpy(data[0][0]),))
    zero = zero_gradient([gradients for gradients, _ in trace64])
    c_biases = {
        bias: [trace64[0][1][bias], *(state[bias] for state in c_states[:-1])] for bias in cancelled
    }

    def bias_free(state: dict, trace: list | None, biases: dict | None = None) -> dict:
        """The state with each cancelled bias taken out of its running mean, and left out."""
        values = dict(state)
        for bias, (mean, momentum) in cancelled.items():
            taken = biases[bias] if biases else [before[bias] for _, before in trace]
            values[mean] = bias_free_running_mean(values[mean], taken, momentum)
            del values[bias]
        return values

    expected, float32 = bias_free(state64, trace64), bias_free(state32, trace32)
    actual = bias_free(c_state, None, c_biases)
    distance = {
        s: float(np.abs(float32[s] - e).max() / np.abs(e).max()) for s, e in expected.items()
    }
    worst = {"loss": spread, **distance}
    # Ill-conditioned: PyTorch's own float32 run is farther from float64 than RTOL (its loss,
    # or a tensor relative to its largest magnitude), so PyTorch itself would fail the 1e-4
    # comparison and its distance, tensor by tensor, is one draw of a chaotic spread (which
    # tensor strays most differs from run to run: MobileNet with Adam at batch 1, the C's
    # fc_bias 4.0e-3 from float64, PyTorch float32's 1.6e-3, while their losses stray by
    # 4.8e-2 and 4.3e-2). Then the loss curve is compared, as above. ResNet-8 at batch 8 is:
    # its example batch puts a ReLU 0.26 float32 spreads from its kink in the first step
    # (test_resnet8_adam_batch_1_puts_a_relu_on_its_kink), and the ReLU's decision differs
    # between float32 programs (PyTorch float32's stacks_2_bn1_bias 5.6e-2 of its largest
    # magnitude from float64 with SGD, its stem_1_bias 9.4e-2 with Adam).
    ill_conditioned = max(worst.values()) > RTOL
    # Then the whole trained state is compared by its distance from float64 (state_distance.py
    # says which and why): the parameters and running statistics as above, and Adam's moments
    # (less the cancelled biases', which are rounding noise as the biases are), the C's within
    # STATE_FACTOR times PyTorch float32's largest over its draws (below). Where the C's ReLUs
    # decide as float64's do, the C is far closer than that (ResNet-8 at batch 8 with SGD:
    # 6.7e-6 against 1.7e-2).
    # Left out too: every other parameter whose float64 gradient is 0 to rounding at every step
    # (MobileNetV2's projection batch norms' shifts, which the next block's batch norm
    # cancels through a bias-free 1x1 conv): float64 leaves it where it starts (0), so its
    # relative distance is float32's rounding noise over float64's (7.9e8 for PyTorch float32's
    # features_5_conv_7_bias with SGD at batch 1) and would be all the measure says.
    # And so with the tensors float64 keeps at 0 to rounding (the running means of the batch
    # norms after those 1x1 convs: their input's batch mean is the cancelled shift's image).
    largest = max(float(np.abs(e).max()) for e in expected.values())
    zero_valued = {s for s, e in expected.items() if np.abs(e).max() <= ZERO_GRADIENT * largest}
    noise_only = (zero - set(cancelled)) | zero_valued
    groups = {
        "state": (actual, float32, {s: v for s, v in expected.items() if s not in noise_only})
    }
    if optimizer == "adam":
        noise = {
            f"{symbol}_{moment}"
            for symbol in (*cancelled, *noise_only)
            for moment in ("exp_avg", "exp_avg_sq")
        }
        moments = {s: m for s, m in moments64.items() if s not in noise}
        groups["Adam's moments"] = (c_state, moments32, moments)
    float32_distances = {group: [state_distance(f32, e)] for group, (_, f32, e) in groups.items()}
    if ill_conditioned:
        # One PyTorch float32 run's distance is one draw of the chaotic spread, not the spread:
        # as for the autoencoder (test_mlperf_tiny_examples.py), PyTorch float32 also runs on
        # the data moved by one float32 ulp, and each of the 1 + FLOAT32_DRAWS data on 1 and on
        # 2 threads (`float32_runs`): 17 runs besides the one above, which alone decides
        # `ill_conditioned`. The C's state is held to STATE_FACTOR times the largest distance
        # of the 18, its losses to twice their largest spread. MobileNetV2 with Adam at batch 1
        # needs the losses' too (Zen 4, 2026-11-27, the C on the 9 data): the C's largest loss
        # errors 1.1e-2 to 3.9e-2, with batchnorm's earlier output form 1.0e-2 to 3.1e-2, where
        # PyTorch float32's run on the C's data alone strays 1.6e-2. Its moments need the 18
        # runs as well: with the earlier form the C's moments were 37 (batch 8) and 2.1 to 2.2
        # (batch 1) from float64 on Intel and on AMD Zen 4 alike (now 1.0 at batch 1 on Zen 4),
        # PyTorch float32's on the C's data 29 and 1.3 on Intel, 2.0 and 1.04 on Zen 4. The
        # measure is heavy-tailed there (one exp_avg_sq tensor decides it: the C's
        # features_14_conv_1_weight_exp_avg_sq 615 from float64): on Zen 4 the 18 runs span
        # 1.02 to 19.3 at batch 8 (the 9 on 1 thread up to 18.1, which the C's 36.7 exceeded
        # 2.03 times; 16 more ulp draws on 1 thread reached no farther) and 1.03 to 4.58 at
        # batch 1 (docs/frontends.md).
        threads = torch.get_num_threads()  # 1 (conftest.py)
        for count, draw, draw_data in float32_runs(data):
            if (count, draw) == (threads, 0):
                continue  # the run above
            draw_trace: list = []
            draw_moments: dict | None = {} if optimizer == "adam" else None
            draw_losses, draw_state = trained_in_torch(
                model, draw_data, optimizer, lr, torch.float32, draw_trace, draw_moments
            )
            spread = max(spread, float(np.max(np.abs(draw_losses / losses64 - 1))))
            draw_groups = {
                "state": bias_free(draw_state, draw_trace),
                "Adam's moments": draw_moments,
            }
            for group, (_, _, e) in groups.items():
                float32_distances[group].append(state_distance(draw_groups[group], e))
    distances = {
        group: (state_distance(c, e), max(float32_distances[group]), largest_tensor_distance(c, e))
        for group, (c, _, e) in groups.items()
    }
    if os.environ.get("ADIR_EXAMPLES_REPORT"):
        print(
            f"\n{name} {optimizer} batch {batch}"
            f"{' (ill-conditioned)' if ill_conditioned else ''}: PyTorch float32 vs float64, "
            f"the largest difference relative to its tensor's magnitude: {max(worst.values()):.2e} "
            f"({max(worst, key=worst.get)}), of the losses {spread:.2e}; the C's loss vs "
            f"float64: {c_error:.2e}"
        )
        for group, (c_distance, f32_distance, (symbol, largest)) in distances.items():
            print(
                f"  {group}, distance from float64 (state_distance): the C {c_distance:.2e}, "
                f"PyTorch float32 up to {f32_distance:.2e} ("
                f"{', '.join(f'{d:.2e}' for d in float32_distances[group])}; "
                f"ratio {c_distance / f32_distance:.2f}); "
                f"the C's farthest tensor {symbol} {largest:.2e}"
            )
    assert c_error <= max(RTOL, 2 * spread), (c_error, spread)
    if ill_conditioned:
        for group, (c_distance, f32_distance, _) in distances.items():
            assert c_distance <= STATE_FACTOR * f32_distance, (group, c_distance, f32_distance)
    if not ill_conditioned:
        assert zero == set(cancelled), zero ^ set(cancelled)
        for symbol, reference in expected.items():
            scale = float(np.abs(reference).max())
            atol = RTOL * scale
            if optimizer == "adam" and symbol in trace64[0][0]:
                # What float32 rounding of the gradients can move Adam by (adam_noise.py):
                # ResNet-8 at batch 1, stacks.2.conv2.weight[61, 24, 1, 0] near a zero gradient.
                atol = atol + rounding_allowance(
                    [g[symbol] for g, _ in trace64], [g[symbol] for g, _ in trace32], lr
                )
            error = np.abs(actual[symbol] - reference)
            excess = error - atol
            assert np.all(excess <= 0), (symbol, float(excess.max()), int(np.argmax(excess)))
    if optimizer == "adam":
        # Each step of a cancelled bias is at most lr times Adam's bound (1 to 1.156 over the
        # 20 steps; adam_step_bound), plus a float32 ulp of the bias for the update's rounding.
        for bias, biases in c_biases.items():
            for step, (before, after) in enumerate(
                zip(biases, [*biases[1:], c_state[bias]], strict=True)
            ):
                bound = lr * adam_step_bound(step + 1) + np.spacing(np.abs(before).max())
                assert np.abs(after - before).max() <= bound, (bias, step)
