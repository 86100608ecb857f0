"""`@train_step` from autodiff + insert-optimizer trains exactly as torch.optim does: 20 steps
on fixed random data, from the same initial weights, give the same losses and parameters to
1e-5 relative (both in float32; the bound covers float32 rounding differences between the two
implementations accumulated over 20 steps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass
from adir.passes.insert_optimizer import InsertOptimizerPass

ROOT = Path(__file__).parents[2]
STEPS = 20

RELU_MLP = """
adir.param @w1 : tensor<16x20xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 11>
adir.param @b1 : tensor<16xf32> = #adir.uniform<low = -0.2, high = 0.2, seed = 12>
adir.param @w2 : tensor<12x16xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 13>
adir.param @b2 : tensor<12xf32> = #adir.uniform<low = -0.25, high = 0.25, seed = 14>
adir.param @w3 : tensor<5x12xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 15>
adir.param @b3 : tensor<5xf32> = #adir.uniform<low = -0.28, high = 0.28, seed = 16>

func.func @loss(%x: tensor<8x20xf32>, %y: tensor<8xi64>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<16x20xf32>
  %b1 = adir.load @b1 : tensor<16xf32>
  %m1 = adir.matmul %x, %w1 {transpose_b} : tensor<8x20xf32>, tensor<16x20xf32> -> tensor<8x16xf32>
  %z1 = adir.add %m1, %b1 : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %h1 = adir.relu %z1 : tensor<8x16xf32>
  %w2 = adir.load @w2 : tensor<12x16xf32>
  %b2 = adir.load @b2 : tensor<12xf32>
  %m2 = adir.matmul %h1, %w2 {transpose_b} : tensor<8x16xf32>, tensor<12x16xf32> -> tensor<8x12xf32>
  %z2 = adir.add %m2, %b2 : tensor<8x12xf32>, tensor<12xf32> -> tensor<8x12xf32>
  %h2 = adir.relu %z2 : tensor<8x12xf32>
  %w3 = adir.load @w3 : tensor<5x12xf32>
  %b3 = adir.load @b3 : tensor<5xf32>
  %m3 = adir.matmul %h2, %w3 {transpose_b} : tensor<8x12xf32>, tensor<5x12xf32> -> tensor<8x5xf32>
  %z3 = adir.add %m3, %b3 : tensor<8x5xf32>, tensor<5xf32> -> tensor<8x5xf32>
  %l = adir.cross_entropy %z3, %y : tensor<8x5xf32>, tensor<8xi64> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def relu_mlp_torch(p: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    h1 = torch.relu(x @ p["w1"].T + p["b1"])
    h2 = torch.relu(h1 @ p["w2"].T + p["b2"])
    return F.cross_entropy(h2 @ p["w3"].T + p["b3"], y)


def seed_mlp_torch(p: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    hidden = torch.sigmoid(x @ p["w1"].T)
    return F.nll_loss(F.log_softmax(hidden @ p["w2"].T, dim=1), y)


def relu_mlp_data(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (rng.standard_normal((8, 20)).astype(np.float32), rng.integers(0, 5, 8).astype(np.int64))
        for _ in range(STEPS)
    ]


def seed_mlp_data(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    return [
        (rng.random((1, 784)).astype(np.float32), rng.integers(0, 10, 1).astype(np.int32))
        for _ in range(STEPS)
    ]


MODELS = {
    "seed_mlp": ((ROOT / "examples" / "mnist_mlp.mlir").read_text(), seed_mlp_torch, seed_mlp_data),
    "relu_mlp": (RELU_MLP, relu_mlp_torch, relu_mlp_data),
}

CONFIGS = {
    "sgd": {"kind": "sgd", "lr": 0.1},
    "sgd_momentum": {"kind": "sgd", "lr": 0.05, "momentum": 0.9},
    "sgd_nesterov_weight_decay": {
        "kind": "sgd",
        "lr": 0.05,
        "momentum": 0.9,
        "nesterov": True,
        "weight_decay": 0.01,
    },
    "adam": {"kind": "adam", "lr": 0.01},
    "adamw": {"kind": "adamw", "lr": 0.01, "weight_decay": 0.05},
    "adam_clip_norm_cosine": {
        "kind": "adam",
        "lr": 0.02,
        "clip_norm": 0.5,
        "schedule": "cosine",
        "t_max": 15,
        "eta_min": 0.001,
    },
}


def torch_optimizer(config: dict, params: list[torch.Tensor]):
    if config["kind"] == "sgd":
        optimizer = torch.optim.SGD(
            params,
            lr=config["lr"],
            momentum=config.get("momentum", 0.0),
            nesterov=config.get("nesterov", False),
            weight_decay=config.get("weight_decay", 0.0),
        )
    else:
        make = torch.optim.Adam if config["kind"] == "adam" else torch.optim.AdamW
        default_decay = 0.0 if config["kind"] == "adam" else 0.01
        optimizer = make(
            params, lr=config["lr"], weight_decay=config.get("weight_decay", default_decay)
        )
    scheduler = None
    if config.get("schedule") == "cosine":
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimizer, T_max=config["t_max"], eta_min=config["eta_min"]
        )
    return optimizer, scheduler


def train_adir(ir: str, config: dict, data):
    module = parse_module(ir, "model.mlir")
    module.verify()
    AutodiffPass().apply(adir_context(), module)
    InsertOptimizerPass(**config).apply(adir_context(), module)
    module.verify()
    session = Session(module)
    initial = {k: v.copy() for k, v in session.params.items()}
    losses = [session.call("train_step", x, y)[0].item() for x, y in data]
    return initial, losses, session.params


def train_torch(forward, config: dict, initial: dict[str, np.ndarray], names, data):
    params = {k: torch.tensor(initial[k], requires_grad=True) for k in names}
    optimizer, scheduler = torch_optimizer(config, list(params.values()))
    losses = []
    for x, y in data:
        optimizer.zero_grad()
        loss = forward(params, torch.from_numpy(x), torch.from_numpy(y).long())
        loss.backward()
        if config.get("clip_norm"):
            torch.nn.utils.clip_grad_norm_(list(params.values()), config["clip_norm"])
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy() for k, v in params.items()}


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_twenty_steps_equal_torch_optim(model: str, config: str) -> None:
    ir, forward, make_data = MODELS[model]
    data = make_data(np.random.default_rng(0))
    initial, losses, params = train_adir(ir, CONFIGS[config], data)
    names = [
        k for k in initial if "_exp_avg" not in k and "_momentum" not in k and k != "optimizer_step"
    ]
    expected_losses, expected_params = train_torch(forward, CONFIGS[config], initial, names, data)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5)
    for name in names:
        scale = np.abs(expected_params[name]).max()
        np.testing.assert_allclose(
            params[name], expected_params[name], rtol=1e-5, atol=1e-5 * scale, err_msg=name
        )


def train_torch_groups(config, initial, groups, data, lr_sequence=None):
    """Like train_torch for the relu MLP, with per-group options (torch param groups) and
    optionally the learning rate set by hand before each step."""
    params = {k: torch.tensor(initial[k], requires_grad=True) for k in initial if k[0] in "wb"}
    param_groups = [{"params": [params[n] for n in names], **options} for names, options in groups]
    optimizer, _ = torch_optimizer({**config, "schedule": None}, param_groups)
    scheduler = None
    if config.get("schedule") == "step":
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, config["step_size"], config["gamma"])
    if config.get("schedule") == "exponential":
        scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, config["gamma"])
    losses = []
    for step, (x, y) in enumerate(data):
        if lr_sequence is not None:
            for group in optimizer.param_groups:
                group["lr"] = lr_sequence[step]
        optimizer.zero_grad()
        loss = relu_mlp_torch(params, torch.from_numpy(x), torch.from_numpy(y).long())
        loss.backward()
        if config.get("clip_value"):
            torch.nn.utils.clip_grad_value_(list(params.values()), config["clip_value"])
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy() for k, v in params.items()}


def assert_same_training(losses, params, expected_losses, expected_params) -> None:
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5)
    for name, expected in expected_params.items():
        scale = np.abs(expected).max()
        np.testing.assert_allclose(
            params[name], expected, rtol=1e-5, atol=1e-5 * scale, err_msg=name
        )


WEIGHTS, BIASES = ["w1", "w2", "w3"], ["b1", "b2", "b3"]


@pytest.mark.parametrize(
    "config",
    [
        {
            "kind": "sgd",
            "lr": 0.1,
            "momentum": 0.5,
            "schedule": "step",
            "step_size": 6,
            "gamma": 0.5,
        },
        {"kind": "adam", "lr": 0.01, "schedule": "exponential", "gamma": 0.9},
        {"kind": "sgd", "lr": 0.2, "clip_value": 0.05},
    ],
    ids=["sgd_step_lr", "adam_exponential_lr", "sgd_clip_value"],
)
def test_schedules_and_value_clipping_equal_torch(config: dict) -> None:
    data = relu_mlp_data(np.random.default_rng(1))
    initial, losses, params = train_adir(RELU_MLP, config, data)
    model = {k: v for k, v in initial.items() if k in WEIGHTS + BIASES}
    expected = train_torch_groups(config, model, [(WEIGHTS + BIASES, {})], data)
    assert_same_training(losses, params, *expected)


def test_per_parameter_lr_scale_and_weight_decay_equal_torch_param_groups() -> None:
    """Biases marked {lr_scale = 0.5, weight_decay = 0.0}: torch's second param group has
    half the lr and no weight decay."""
    marks = "{lr_scale = 0.5 : f32, weight_decay = 0.0 : f32}"
    ir = RELU_MLP
    for seed in (12, 14, 16):  # the biases' initializers
        ir = ir.replace(f"seed = {seed}>", f"seed = {seed}> {marks}")
    assert ir.count("lr_scale") == 3
    config = {"kind": "adamw", "lr": 0.01, "weight_decay": 0.1}
    data = relu_mlp_data(np.random.default_rng(2))
    initial, losses, params = train_adir(ir, config, data)
    model = {k: v for k, v in initial.items() if k in WEIGHTS + BIASES}
    groups = [(WEIGHTS, {}), (BIASES, {"lr": 0.005, "weight_decay": 0.0})]
    assert_same_training(losses, params, *train_torch_groups(config, model, groups, data))


def test_runtime_learning_rate_is_the_last_argument() -> None:
    """runtime_lr=true: @train_step takes the lr as its last argument, a schedule chosen by
    the caller step by step; torch gets the same lr set on its param group."""
    config = {"kind": "sgd", "lr": 0.0, "momentum": 0.9, "runtime_lr": True}
    data = relu_mlp_data(np.random.default_rng(3))
    lrs = [0.1 / (1 + step) for step in range(STEPS)]
    module = parse_module(RELU_MLP, "model.mlir")
    AutodiffPass().apply(adir_context(), module)
    InsertOptimizerPass(**config).apply(adir_context(), module)
    module.verify()
    session = Session(module)
    initial = {k: v.copy() for k, v in session.params.items() if k in WEIGHTS + BIASES}
    losses = [
        session.call("train_step", x, y, np.float32(lr))[0].item()
        for (x, y), lr in zip(data, lrs, strict=True)
    ]
    expected = train_torch_groups(config, initial, [(WEIGHTS + BIASES, {})], data, lrs)
    assert_same_training(losses, session.params, *expected)


def adam_with_float32_constants(initial, names, data, lr: float) -> dict[str, np.ndarray]:
    """torch.optim.Adam's update written out in float64, with the constants adir's IR holds
    as f32 (`1 - beta1`, `beta2`, `1 - beta2`, eps, lr) rounded as there; the bias
    corrections `1 - beta^t` in double, as `adir.bias_correction` and PyTorch take them."""
    f32 = lambda value: float(np.float32(value))  # noqa: E731
    params = {k: torch.tensor(initial[k], dtype=torch.float64, requires_grad=True) for k in names}
    m = {k: torch.zeros_like(p) for k, p in params.items()}
    v = {k: torch.zeros_like(p) for k, p in params.items()}
    for t, (x, y) in enumerate(data, start=1):
        for p in params.values():
            p.grad = None
        relu_mlp_torch(params, torch.from_numpy(x).double(), torch.from_numpy(y).long()).backward()
        step_size, correction2_sqrt = f32(lr) / (1 - 0.9**t), (1 - 0.999**t) ** 0.5
        with torch.no_grad():
            for k, p in params.items():
                m[k] = m[k] + f32(1 - 0.9) * (p.grad - m[k])
                v[k] = v[k] * f32(0.999) + f32(1 - 0.999) * p.grad * p.grad
                p -= step_size * (m[k] / (v[k].sqrt() / correction2_sqrt + f32(1e-8)))
    return {k: p.detach().numpy() for k, p in params.items()}


def test_adam_in_float64_is_torch_adams_arithmetic() -> None:
    """The interpreter in float64 computes torch.optim.Adam's update term by term (eps added
    to sqrt(v) / sqrt(1 - beta2^t), the step lr / (1 - beta1^t)): against that update written
    out in float64 with the IR's f32 constants, the relu MLP's parameters after 20 steps agree
    to 1e-12 of each tensor's largest magnitude (measured: 2.7e-16). Against torch.optim.Adam
    itself in float64 they differ by the f32 rounding of those constants only (`1 - beta1` is
    0.10000000149 in f32; measured 1.8e-8 to 3.3e-8 here), well under 1e-7. (Issue 19's ResNet-8: 5
    steps agree likewise to 8.8e-14 but for the conv biases that feed a batch norm, whose
    exact gradient is 0 and whose float64 noise of 7e-17 Adam turns into steps.)"""
    data = [(x.astype(np.float64), y) for x, y in relu_mlp_data(np.random.default_rng(0))]
    config = {"kind": "adam", "lr": 0.01}
    module = parse_module(RELU_MLP, "model.mlir")
    AutodiffPass().apply(adir_context(), module)
    InsertOptimizerPass(**config).apply(adir_context(), module)
    session = Session(module, float_dtype=np.float64)
    initial = {k: v.copy() for k, v in session.params.items()}
    for x, y in data:
        session.call("train_step", x, y)
    names = ["w1", "b1", "w2", "b2", "w3", "b3"]
    written_out = adam_with_float32_constants(initial, names, data, config["lr"])
    _, torch_adam = train_torch(
        lambda p, x, y: relu_mlp_torch(p, x.double(), y),
        config,
        {k: initial[k].astype(np.float64) for k in names},
        names,
        data,
    )
    for name in names:
        scale = np.abs(written_out[name]).max()
        np.testing.assert_allclose(
            session.params[name], written_out[name], rtol=0, atol=1e-12 * scale
        )
        difference = np.abs(session.params[name] - torch_adam[name]).max() / scale
        assert 1e-12 < difference < 1e-7, (name, difference)
