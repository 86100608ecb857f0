"""tools/torch_to_jax.py, the JAX port behind tools/bench.py's JAX column on the MLPerf Tiny
models: from the torch module's own initial weights, the ported forward and loss give PyTorch's
loss (the benchmark then checks step 10 of training); what it cannot port is an error that
names it."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax", reason="JAX is bench's optional peer: pip install -e .[bench]")
jnp = jax.numpy

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def tool(name: str):
    """tools/<name>.py as a module (bench.py sets BLAS thread variables on import: undone)."""
    spec = importlib.util.spec_from_file_location(f"tool_{name}", TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    with mock.patch.dict(os.environ):
        spec.loader.exec_module(module)
    return module


bench, torch_to_jax = tool("bench"), tool("torch_to_jax")


@pytest.mark.parametrize(
    ("model", "batch"),
    [("resnet8", 2), ("ds_cnn", 2), ("mobilenet_v1", 1), ("autoencoder", 2)],
)
def test_the_port_gives_pytorchs_loss_at_step_0(model: str, batch: int) -> None:
    """The loss of the bench's model (training mode, dropouts out) on its example batch, in
    PyTorch and in the port from the same weights, to 1e-5: float32 summed in other orders
    differs by about 1e-6 (MobileNet's 0.4851310 against 0.4851305). The semantics the port
    must get right move the loss by far more: with batch norm's unbiased variance (n - 1) the
    autoencoder's loss at batch 2 is 1.1273 instead of 1.2057, and DS-CNN's first convolution
    padded 4 rows below instead of 5 (its ZeroPad2d is 4 above, 5 below) gives 2.27395
    instead of 2.27628 (1e-3)."""
    net = bench.torch_model(model)
    x, y = bench.torch_source(model).example_input(batch)
    name = bench.torch_source(model).LOSS
    with torch.no_grad():
        expected = float(getattr(torch.nn, bench.TORCH_LOSSES[name])()(net(x), y))
    forward, criterion = torch_to_jax.port(net), torch_to_jax.loss(name)
    params = [jnp.asarray(p.detach().numpy()) for p in net.parameters()]
    got = float(criterion(forward(params, jnp.asarray(x.numpy())), jnp.asarray(y.numpy())))
    assert got == pytest.approx(expected, rel=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["ds_cnn", "autoencoder"])
def test_the_port_takes_the_gradient_pytorch_takes(model: str) -> None:
    """In float64, every parameter's gradient of the loss at step 0 (batch 2) equals PyTorch's
    to 1e-9 of the model's largest gradient: DS-CNN's agree to about 1e-11 (in float32 the
    batch norms' backward, a difference of nearly equal sums, leaves 4e-3). Relative to the
    model's largest, not each parameter's own: a bias in front of a batch norm has a gradient
    that is zero up to rounding in both. The training check of bench's step 10 rests on this."""
    net = bench.torch_model(model).double()
    x, y = bench.torch_source(model).example_input(2)
    x, y = x.double(), y.double() if y.dtype.is_floating_point else y
    name = bench.torch_source(model).LOSS
    getattr(torch.nn, bench.TORCH_LOSSES[name])()(net(x), y).backward()
    expected = [p.grad.numpy() for p in net.parameters()]
    largest = max(float(np.abs(g).max()) for g in expected)
    forward, criterion = torch_to_jax.port(net), torch_to_jax.loss(name)
    jax.config.update("jax_enable_x64", True)
    try:
        params = [jnp.asarray(p.detach().numpy()) for p in net.parameters()]
        xj, yj = jnp.asarray(x.numpy()), jnp.asarray(y.numpy())
        grads = jax.grad(lambda p: criterion(forward(p, xj), yj))(params)
        assert all(g.dtype == jnp.float64 for g in grads)
        for (label, _p), g, e in zip(net.named_parameters(), grads, expected, strict=True):
            assert np.abs(np.asarray(g) - e).max() <= 1e-9 * largest, label
    finally:
        jax.config.update("jax_enable_x64", False)


def test_what_the_port_cannot_do_is_an_error_that_names_it() -> None:
    from torch import nn

    with pytest.raises(NotImplementedError, match="GELU"):
        torch_to_jax.port(nn.Sequential(nn.Linear(4, 4), nn.GELU()))
    training_dropout = torch_to_jax.port(nn.Sequential(nn.Dropout(0.5)).train())
    with pytest.raises(NotImplementedError, match="Dropout in training mode"):
        training_dropout([], jnp.ones((2, 4)))
    with pytest.raises(NotImplementedError, match="loss 'nll'"):
        torch_to_jax.loss("nll")
