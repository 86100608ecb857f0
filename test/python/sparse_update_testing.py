"""Sparse update schemes against PyTorch: a small CNN imported with a scheme (`train=`), and the
same model in PyTorch with the scheme's parameters frozen (`requires_grad=False`) and, for a
channel fraction, the weight's gradient masked past its first channels (`w.grad[k:] = 0`).

`Scheme.frozen` and `Scheme.masked` spell out by hand what PyTorch freezes, so that the tests do
not read adir's own resolution of the scheme back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from adir.dialects.tensor.params import ParamOp
from adir.frontends.torch_import import import_module
from adir.passes.split_partial_updates import FROZEN_PART_OF

STEPS = 20
BATCH = 4
CLASSES = 10
# Learning rates that f32 holds exactly (adir's lr is an f32 scalar), so that a float64 run
# differs from PyTorch's by rounding alone.
OPTIMIZERS = {"sgd": ("sgd", 0.0625), "adam": ("adam", 0.0078125)}


class SmallCnn(nn.Module):
    """conv 3x3 1->8, relu, conv 3x3 8->8, relu, flatten, linear 8*4*4 -> 10: three layers, each
    with a bias."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.conv2 = nn.Conv2d(8, 8, 3)
        self.fc = nn.Linear(8 * 4 * 4, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.fc(torch.flatten(h, 1))


@dataclass(frozen=True)
class Scheme:
    """A scheme string and what it means in PyTorch: the parameters it freezes, and the
    weights that train only their first k output channels (name -> k)."""

    text: str
    frozen: tuple[str, ...]
    masked: dict[str, int] = field(default_factory=dict)


ALL = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc.weight", "fc.bias")
SCHEMES = {
    "bias": Scheme("bias", ("conv1.weight", "conv2.weight", "fc.weight")),
    "last": Scheme("last:1", ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias")),
    "bias_last": Scheme("bias+last:1", ("conv1.weight", "conv2.weight")),
    # ceil(0.25 * 8) = 2 channels of conv2, ceil(0.25 * 10) = 3 rows of fc; biases whole
    "channels": Scheme(
        "channels:0.25@last:2+bias",
        ("conv1.weight",),
        {"conv2.weight": 2, "fc.weight": 3},
    ),
    "channels_count": Scheme(
        "channels:5@conv1+all@fc",
        ("conv1.bias", "conv2.weight", "conv2.bias"),
        {"conv1.weight": 5},
    ),
}


def batches(seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        (
            rng.random((BATCH, 1, 8, 8), dtype=np.float32),
            rng.integers(0, CLASSES, BATCH).astype(np.int32),
        )
        for _ in range(STEPS)
    ]


def imported(scheme: Scheme) -> tuple[nn.Module, object]:
    """The model (seeded) and its adir module under `scheme`."""
    torch.manual_seed(0)
    model = SmallCnn()
    data = batches()
    module = import_module(
        model, (torch.from_numpy(data[0][0]),), loss="cross_entropy", train=scheme.text
    )
    return model, module


def torch_training(
    model: nn.Module, scheme: Scheme, optimizer: str, dtype: torch.dtype
) -> tuple[list[float], dict[str, np.ndarray]]:
    """The loss of each step and every parameter after them (by torch name), in `dtype`."""
    model = model.to(dtype)
    named = dict(model.named_parameters())
    for name in scheme.frozen:
        named[name].requires_grad_(False)
    for name, channels in scheme.masked.items():
        # Only the first `channels` output channels get a gradient (TTE's sub-layer update).
        named[name].register_hook(lambda g, k=channels: torch.cat([g[:k], torch.zeros_like(g[k:])]))
    kind, lr = OPTIMIZERS[optimizer]
    trained = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(trained, lr=lr) if kind == "sgd" else torch.optim.Adam(trained, lr=lr)
    losses = []
    for x, label in batches():
        opt.zero_grad()
        loss = F.cross_entropy(model(torch.from_numpy(x).to(dtype)), torch.from_numpy(label).long())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {name: p.detach().numpy() for name, p in model.named_parameters()}


def whole_params(module, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each torch parameter's value from adir's parameters: a split weight is its trained block
    and its frozen rest (`adir.frozen_part_of`) joined again."""
    rest = {}
    for op in module.ops:
        if isinstance(op, ParamOp) and FROZEN_PART_OF in op.attributes:
            rest[op.attributes[FROZEN_PART_OF].root_reference.data] = op.sym_name.data
    whole = {}
    for name in ALL:
        symbol = name.replace(".", "_")
        value = values[symbol]
        if symbol in rest:
            value = np.concatenate([value, values[rest[symbol]]])
        whole[name] = value
    return whole
