"""`examples/torch/mobilenet_v2.py` (MobileNetV2-w0.35 at 128x128, TTE's model, a 10-class
head) imports with no edits and trains a step like PyTorch: batch 1, plain SGD at lr 0.01,
batch norms in training mode, from the model's own weights. In float64 the interpreter's
compiled `@train_step` gives PyTorch float64's loss to 1e-9 and every parameter and running
statistic after the step to 1e-7 of its tensor's largest magnitude (the tolerances and the
reasons for them are test_mlperf_tiny_ic_vww.py's, whose helpers this test uses: the same
conditioning of depthwise networks with ReLU6). Except 34 tensors whose exact value after the
step is 0 by the network's structure at its initial weights, where a relative tolerance means
nothing: the betas of the 17 projections' batch norms (the blocks' last, linear, layers; every
path from such a beta to the loss is linear up to a bias-free convolution into a batch norm in
training mode, whose input gradient sums to zero over each channel), and the running means of
the 17 batch norms after a 1x1 convolution of a block's output (a sum of batch-norm outputs
with beta 0, so of zero mean over each channel). float64 leaves residues of 1e-17 there (its
rounding of sums of terms near 1e-1), on both sides: both stay within 1e-15 of 0."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from c_testing import run_pipeline
from examples_testing import load_example
from test_mlperf_tiny_ic_vww import TRAIN, assert_params_close, torch_training

from adir.frontends.torch_import import import_module
from adir.interpreter import Session


def test_the_architecture_is_mobilenet_v2_at_width_035() -> None:
    """408,938 parameters: the backbone's 1x1 and depthwise convolutions and batch norms at
    width 0.35 (stem 16, stages 8 ... 112, the 1280-channel last conv) and the head's 1280 x 10
    + 10; the 64x64x48 expansion of the second block that the issue names."""
    file = load_example("mobilenet_v2")
    net = file.model()
    assert sum(p.numel() for p in net.parameters()) == 408_938
    x, _ = file.example_input(1)
    shapes: dict[str, tuple[int, ...]] = {}

    def record(module: torch.nn.Module, inputs: object, output: torch.Tensor) -> None:
        shapes["expansion"] = tuple(output.shape)

    net.features[2].conv[0].register_forward_hook(record)
    assert tuple(net(x).shape) == (1, 10)
    assert shapes["expansion"] == (1, 48, 64, 64)


@pytest.mark.slow
def test_mobilenet_v2_trains_a_step_like_pytorch() -> None:
    file = load_example("mobilenet_v2")
    net = file.model()
    x, label = file.example_input(1)
    data = [(x.numpy(), label.numpy())]
    module = import_module(copy.deepcopy(net), (x,), loss=file.LOSS)
    assert str(module).count("adir.clamp ") == 35  # the ReLU6s: stem, 2 per expanding block, last
    trained = run_pipeline(module, TRAIN)
    losses64, state64 = torch_training(net, data, torch.float64)
    session = Session(trained, float_dtype=np.float64)
    loss = session.call("train_step", x.numpy().astype(np.float64), label.numpy())[0]
    np.testing.assert_allclose(float(loss), losses64[0], rtol=1e-9)
    zero = {name for name, value in state64.items() if np.abs(value).max() < 1e-15}
    expected = set()
    for i, block in blocks(net):
        expected.add(f"features_{i}_conv_{len(block.conv) - 1}_bias")
        after = f"features_{i + 1}_" + ("1" if i == 17 else "conv_1")  # the next 1x1's bn
        expected.add(f"{after}_running_mean")
    assert zero == expected and len(zero) == 34
    for symbol in zero:
        np.testing.assert_allclose(session.params[symbol], 0.0, atol=1e-15, err_msg=symbol)
    others = {name: value for name, value in session.params.items() if name not in zero}
    assert_params_close(others, state64, 1e-7)


def blocks(net: torch.nn.Module) -> list[tuple[int, torch.nn.Module]]:
    """The inverted residual blocks of `net.features` with their index."""
    return [(i, m) for i, m in enumerate(net.features) if hasattr(m, "residual")]
