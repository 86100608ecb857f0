"""A functional JAX port of a PyTorch module, for tools/bench.py's JAX column on the models of
examples/torch/.

`port(net)` traces `net` with torch.fx and returns `forward(params, x)`, a pure JAX function of
the parameters (a list in `net.parameters()` order, so the module's own initial weights go in
unchanged) and the input. One walk over the traced graph serves every model: each node is a
known module (`MODULES`), function (`FUNCTIONS`) or method (`METHODS`), converted with the
module's own settings (stride, padding, groups, eps, ...). It is the same computation as
PyTorch's, not an approximation of it:

- batch norm in training mode normalizes with the batch's mean and its biased variance (the
  running statistics, which PyTorch updates as a side effect, change no loss or parameter);
  in eval mode with the running statistics;
- zero padding as the module says it: `padding=` of a convolution on both sides, `ZeroPad2d`'s
  four sides apart (DS-CNN's TensorFlow "same" padding is 4 rows above and 5 below);
- a dropout is an error in training mode (each framework draws its own masks), the identity in
  eval mode or with p = 0.

Anything else is a `NotImplementedError` naming the module or function, so a new model fails
loudly instead of timing something else. `loss(name)` gives the examples' `LOSS`es.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
from torch import fx, nn


def _pair(value: int | tuple[int, ...]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def _conv2d(module: nn.Conv2d, weights: dict[str, Any], x):
    import jax

    if module.padding_mode != "zeros" or isinstance(module.padding, str):
        raise NotImplementedError(f"Conv2d padding {module.padding!r} / {module.padding_mode}")
    padding = [(p, p) for p in _pair(module.padding)]
    y = jax.lax.conv_general_dilated(
        x,
        weights["weight"],
        window_strides=_pair(module.stride),
        padding=padding,
        rhs_dilation=_pair(module.dilation),
        feature_group_count=module.groups,
        dimension_numbers=("NCHW", "OIHW", "NCHW"),
        precision=jax.lax.Precision.HIGHEST,
    )
    if "bias" in weights:
        y = y + weights["bias"][None, :, None, None]
    return y


def _linear(module: nn.Linear, weights: dict[str, Any], x):
    import jax

    y = jax.numpy.matmul(x, weights["weight"].T, precision=jax.lax.Precision.HIGHEST)
    return y + weights["bias"] if "bias" in weights else y


def _batch_norm(module: nn.modules.batchnorm._BatchNorm, weights: dict[str, Any], x):
    import jax.numpy as jnp

    axes = tuple(i for i in range(x.ndim) if i != 1)  # every dim but the channels
    channel = (1, -1) + (1,) * (x.ndim - 2)
    if module.training or module.running_mean is None:
        mean = jnp.mean(x, axes, keepdims=True)
        variance = jnp.mean(jnp.square(x - mean), axes, keepdims=True)  # biased, as PyTorch's
    else:
        mean = jnp.asarray(module.running_mean.numpy()).reshape(channel)
        variance = jnp.asarray(module.running_var.numpy()).reshape(channel)
    y = (x - mean) / jnp.sqrt(variance + module.eps)
    if module.affine:
        y = y * weights["weight"].reshape(channel) + weights["bias"].reshape(channel)
    return y


def _zero_pad2d(module: nn.ZeroPad2d, _weights, x):
    import jax

    left, right, top, bottom = module.padding
    none = (0, 0, 0)
    config = [none] * (x.ndim - 2) + [(top, bottom, 0), (left, right, 0)]
    return jax.lax.pad(x, jax.numpy.zeros((), x.dtype), config)


def _avg_pool2d(module: nn.AvgPool2d, _weights, x):
    import jax

    if module.ceil_mode or _pair(module.padding) != (0, 0):
        raise NotImplementedError("AvgPool2d with padding or ceil_mode")
    kernel = _pair(module.kernel_size)
    stride = _pair(module.stride or module.kernel_size)
    total = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 1, *kernel), (1, 1, *stride), "VALID")
    return total / (kernel[0] * kernel[1])


def _adaptive_avg_pool2d(module: nn.AdaptiveAvgPool2d, _weights, x):
    if _pair(module.output_size) != (1, 1):
        raise NotImplementedError(f"AdaptiveAvgPool2d to {module.output_size}")
    return x.mean(axis=(2, 3), keepdims=True)


def _max_pool2d(module: nn.MaxPool2d, _weights, x):
    import jax
    import jax.numpy as jnp

    if module.ceil_mode or _pair(module.padding) != (0, 0) or _pair(module.dilation) != (1, 1):
        raise NotImplementedError("MaxPool2d with padding, dilation or ceil_mode")
    kernel = _pair(module.kernel_size)
    stride = _pair(module.stride or module.kernel_size)
    return jax.lax.reduce_window(
        x, -jnp.inf, jax.lax.max, (1, 1, *kernel), (1, 1, *stride), "VALID"
    )


def _flatten(x, start_dim: int = 1, end_dim: int = -1):
    end = end_dim % x.ndim
    return x.reshape(*x.shape[:start_dim], -1, *x.shape[end + 1 :])


def _dropout(module: nn.Dropout, _weights, x):
    if module.training and module.p > 0:
        raise NotImplementedError(
            "Dropout in training mode: each framework draws its own masks (replace it by "
            "nn.Identity, or port the module in eval mode)"
        )
    return x


def _relu(x):
    import jax

    return jax.nn.relu(x)


def _relu6(x):
    import jax.numpy as jnp

    return jnp.clip(x, 0.0, 6.0)


def _sigmoid(x):
    import jax

    return jax.nn.sigmoid(x)


def _tanh(x):
    import jax.numpy as jnp

    return jnp.tanh(x)


def _elementwise(function: Callable) -> Callable:
    """A parameterless module as its function of the input."""
    return lambda _module, _weights, x: function(x)


MODULES: dict[type[nn.Module], Callable] = {
    nn.Conv2d: _conv2d,
    nn.Linear: _linear,
    nn.BatchNorm1d: _batch_norm,
    nn.BatchNorm2d: _batch_norm,
    nn.ZeroPad2d: _zero_pad2d,
    nn.AvgPool2d: _avg_pool2d,
    nn.AdaptiveAvgPool2d: _adaptive_avg_pool2d,
    nn.MaxPool2d: _max_pool2d,
    nn.Flatten: lambda module, _weights, x: _flatten(x, module.start_dim, module.end_dim),
    nn.Dropout: _dropout,
    nn.Identity: _elementwise(lambda x: x),
    nn.ReLU: _elementwise(_relu),
    nn.ReLU6: _elementwise(_relu6),
    nn.Sigmoid: _elementwise(_sigmoid),
    nn.Tanh: _elementwise(_tanh),
}
"""Module type -> f(module, its parameters by local name, input)."""

FUNCTIONS: dict[Callable, Callable] = {
    operator.add: operator.add,
    torch.add: operator.add,
    operator.mul: operator.mul,
    torch.flatten: _flatten,
    torch.relu: _relu,
    nn.functional.relu: lambda x, inplace=False: _relu(x),
}
"""Function called in a forward -> its JAX counterpart (same arguments)."""

METHODS: dict[str, Callable] = {"flatten": _flatten, "relu": _relu}
"""Tensor method called in a forward -> its JAX counterpart (the tensor first)."""


def port(net: nn.Module) -> Callable:
    """`forward(params, x)` in JAX: `net`'s computation, `params` in `net.parameters()` order."""
    graph = fx.symbolic_trace(net).graph
    index = {name: i for i, (name, _p) in enumerate(net.named_parameters())}
    steps = []  # (node, converter, the module's parameters: local name -> index) in graph order
    for node in graph.nodes:
        if node.op == "call_module":
            module = net.get_submodule(node.target)
            converter = MODULES.get(type(module))
            if converter is None:
                raise NotImplementedError(f"no JAX port of {type(module).__name__} ({node.target})")
            prefix = f"{node.target}."
            owned = {
                name: index[prefix + name] for name, _p in module.named_parameters(recurse=False)
            }
            steps.append((node, converter, owned))
        elif node.op == "call_function":
            if node.target not in FUNCTIONS:
                raise NotImplementedError(f"no JAX port of the function {node.target}")
            steps.append((node, FUNCTIONS[node.target], None))
        elif node.op == "call_method":
            if node.target not in METHODS:
                raise NotImplementedError(f"no JAX port of the method Tensor.{node.target}")
            steps.append((node, METHODS[node.target], None))
        elif node.op not in ("placeholder", "output"):
            raise NotImplementedError(f"no JAX port of a graph node {node.op} {node.target}")
    modules = {
        node.name: net.get_submodule(node.target) for node, _c, owned in steps if owned is not None
    }
    (placeholder,) = [node for node in graph.nodes if node.op == "placeholder"]
    (output,) = [node for node in graph.nodes if node.op == "output"]

    def forward(params, x):
        values = {placeholder.name: x}

        def value(argument):
            return values[argument.name] if isinstance(argument, fx.Node) else argument

        for node, converter, owned in steps:
            args = [value(a) for a in node.args]
            kwargs = {k: value(a) for k, a in node.kwargs.items()}
            if owned is None:
                values[node.name] = converter(*args, **kwargs)
            else:
                weights = {name: params[i] for name, i in owned.items()}
                values[node.name] = converter(modules[node.name], weights, *args)
        return value(output.args[0])

    return forward


def loss(name: str) -> Callable:
    """An example's `LOSS` as `f(output, label)` in JAX, with PyTorch's mean reduction."""
    import jax
    import jax.numpy as jnp

    def cross_entropy(output, label):
        logp = jax.nn.log_softmax(output, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, label[:, None].astype(jnp.int32), axis=1))

    def mse(output, label):
        return jnp.mean(jnp.square(output - label))

    losses = {"cross_entropy": cross_entropy, "mse": mse}
    if name not in losses:
        raise NotImplementedError(f"no JAX port of the loss {name!r}")
    return losses[name]
