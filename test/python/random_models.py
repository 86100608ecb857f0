"""Random valid models: op sequences with consistent shapes, built with the model builder.

    model = random_model(np.random.default_rng(seed))
    model.module, model.arguments(rng), model.optimizer

A model is a dense stack (matmul with optional bias, elementwise ops with parameters,
activations) or a convolutional stack (conv2d with random stride, padding, dilation and
groups, activations, pooling, batchnorm, then flatten and dense layers), ending in a random
loss. Sizes stay small so a model compiles and runs in well under a second.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from adir.frontends.builder import ModelBuilder, kaiming_uniform, normal, uniform

OPTIMIZERS = [
    "insert-optimizer{kind=sgd lr=0.01}",
    "insert-optimizer{kind=sgd lr=0.01 momentum=0.9 weight_decay=0.001}",
    "insert-optimizer{kind=adam lr=0.001}",
    "insert-optimizer{kind=adamw lr=0.001 weight_decay=0.01}",
]


@dataclass
class RandomModel:
    module: ModuleOp
    argument_shapes: list[tuple[tuple[int, ...], str]]  # (shape, "f32" | "i32" class indices)
    classes: int
    optimizer: str
    description: str

    def arguments(self, rng: np.random.Generator) -> list[np.ndarray]:
        values = []
        for shape, kind in self.argument_shapes:
            if kind == "i32":
                values.append(rng.integers(0, self.classes, shape).astype(np.int32))
            elif kind == "probability":
                values.append(rng.random(shape, dtype=np.float32))
            else:
                values.append(rng.standard_normal(shape).astype(np.float32))
        return values


class Generator:
    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.b = ModelBuilder()
        self.names = 0
        self.parts: list[str] = []

    def pick(self, options: list) -> object:
        return options[int(self.rng.integers(len(options)))]

    def param(self, shape: tuple[int, ...], fan_in: bool = True) -> SSAValue:
        self.names += 1
        init = (
            kaiming_uniform(a=math.sqrt(5))
            if fan_in and len(shape) >= 2
            else self.pick([uniform(low=-0.5, high=0.5), normal(mean=0.0, std=0.3)])
        )
        return self.b.param(f"p{self.names}", shape, init=init)

    def activation(self, x: SSAValue) -> SSAValue:
        b = self.b
        choices: list[tuple[str, Callable[[SSAValue], SSAValue]]] = [
            ("relu", b.relu),
            ("sigmoid", b.sigmoid),
            ("tanh", b.tanh),
            ("gelu", lambda v: b.gelu(v, approximate=self.pick(["none", "tanh"]))),
            ("leaky_relu", lambda v: b.leaky_relu(v, alpha=0.1)),
            ("softplus", lambda v: b.softplus(v, beta=2.0, threshold=5.0)),
        ]
        name, make = self.pick(choices)  # type: ignore[misc]
        self.parts.append(name)
        return make(x)

    def dense(self, x: SSAValue, width: int) -> tuple[SSAValue, int]:
        out = int(self.rng.integers(2, 9))
        b = self.b
        y = b.matmul(x, self.param((out, width)), transpose_b=True)
        self.parts.append(f"linear{out}")
        if self.rng.random() < 0.6:
            y = b.add(y, self.param((out,), fan_in=False))
            self.parts.append("bias")
        if self.rng.random() < 0.3:
            y = self.pick([b.mul, b.sub, b.maximum])(y, self.param((out,), fan_in=False))  # type: ignore[operator]
            self.parts.append("elementwise")
        return y, out


def random_model(rng: np.random.Generator) -> RandomModel:
    """One random valid model (see the module docstring)."""
    g = Generator(rng)
    b = g.b
    batch = int(rng.integers(2, 5))
    convolutional = rng.random() < 0.5
    classes = int(rng.integers(2, 6))
    loss_kind = g.pick(["cross_entropy", "log_softmax_nll", "mse", "bce_with_logits"])
    if convolutional:
        channels, side = int(rng.integers(1, 4)), int(rng.integers(6, 10))
        x_shape: tuple[int, ...] = (batch, channels, side, side)
    else:
        x_shape = (batch, int(rng.integers(2, 9)))
    target_shape: tuple[tuple[int, ...], str]
    if loss_kind in ("cross_entropy", "log_softmax_nll"):
        target_shape = ((batch,), "i32")
    elif loss_kind == "bce_with_logits":
        target_shape = ((batch, classes), "probability")
    else:
        target_shape = ((batch, classes), "f32")
    arguments = [(x_shape, "f32"), target_shape]
    label_type = "i32" if target_shape[1] == "i32" else "f32"
    with b.function(
        "loss", [("x", x_shape, "f32"), ("target", target_shape[0], label_type)], loss=True
    ) as (x, target):
        h = x
        if convolutional:
            h, width = conv_layers(g, x, x_shape)
        else:
            width = x_shape[1]
        for _ in range(int(rng.integers(0, 3))):
            h, width = g.dense(h, width)
            h = g.activation(h)
        logits = b.matmul(h, g.param((classes, width)), transpose_b=True)
        g.parts.append(loss_kind)
        if loss_kind == "cross_entropy":
            loss = b.cross_entropy(logits, target)
        elif loss_kind == "log_softmax_nll":
            loss = b.nll(b.log_softmax(logits), target)
        elif loss_kind == "bce_with_logits":
            loss = b.bce_with_logits(logits, target)
        else:
            loss = b.mse(logits, target, reduction=g.pick(["mean", "sum"]))
        b.ret(loss)
    optimizer = str(g.pick(OPTIMIZERS))
    return RandomModel(
        b.build(), arguments, classes, optimizer, " ".join(g.parts) + f" | {optimizer}"
    )


def conv_layers(g: Generator, x: SSAValue, shape: tuple[int, ...]) -> tuple[SSAValue, int]:
    """One or two conv blocks, then flatten: the value and its width."""
    b, rng = g.b, g.rng
    batch, channels, height, width = shape
    h = x
    for _ in range(int(rng.integers(1, 3))):
        groups = int(g.pick([d for d in (1, 2, 3) if channels % d == 0]))
        out = groups * int(rng.integers(1, 4))
        kernel = int(rng.integers(1, 4))
        stride, dilation = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        padding = [int(p) for p in rng.integers(0, 2, 4)]
        reach = dilation * (kernel - 1) + 1
        out_h = (height + padding[0] + padding[1] - reach) // stride + 1
        out_w = (width + padding[2] + padding[3] - reach) // stride + 1
        if out_h < 1 or out_w < 1:
            continue
        # A batchnorm needs a few values per channel, and a conv with more than one weight per
        # output channel: the batchnorm normalises each channel's scale away, so a single
        # weight's gradient is 0 in real arithmetic and only rounding noise in float (which
        # Adam turns into full-size steps, differently in every implementation). For the same
        # reason no bias goes before a batchnorm (the batch mean cancels it), as in real models.
        fan_in = (channels // groups) * kernel * kernel
        normalize = rng.random() < 0.3 and batch * out_h * out_w >= 8 and fan_in > 1
        bias = g.param((out,), fan_in=False) if not normalize and rng.random() < 0.5 else None
        weight = g.param((out, channels // groups, kernel, kernel))
        h = b.conv2d(
            h, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups
        )
        g.parts.append(f"conv{kernel}x{kernel}/s{stride}/d{dilation}/g{groups}")
        channels, height, width = out, out_h, out_w
        if normalize:
            g.parts.append("batchnorm")
            gamma, beta = g.param((channels,), fan_in=False), g.param((channels,), fan_in=False)
            g.names += 1
            mean = b.param(f"p{g.names}", (channels,), init=0.0, trainable=False)
            g.names += 1
            var = b.param(f"p{g.names}", (channels,), init=1.0, trainable=False)
            h, _m, _s, new_mean, new_var = b.batchnorm(h, gamma, beta, mean, var)
            b.store(new_mean, mean)
            b.store(new_var, var)
        h = g.activation(h)
        if rng.random() < 0.5 and min(height, width) >= 2:
            pool = g.pick(["max", "avg"])
            g.parts.append(f"{pool}pool")
            h = (b.maxpool2d if pool == "max" else b.avgpool2d)(h, 2, stride=2, padding=0)
            height, width = (height - 2) // 2 + 1, (width - 2) // 2 + 1
    if rng.random() < 0.3:
        g.parts.append("global_avgpool")
        h = b.global_avgpool2d(h)
        height = width = 1
    return b.flatten(h, start_dim=1), channels * height * width
