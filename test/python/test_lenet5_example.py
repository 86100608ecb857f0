"""examples/lenet5.mlir computes the loss and, after the autodiff pass, the gradients of a
torch.nn LeNet-5 with the same weights.

Tolerances. float64: every op is within a few units of rounding (u = 1.1e-16) of PyTorch's
result relative to its terms (test_interpreter_conv_and_pool.py and the other interpreter
tests), and no step of the network amplifies them by more than ~1e2 for these inputs (the
differences seen are below 2e-15): 1e-12 relative. float32: both sides round every sum of k
<= 256 terms differently; random rounding errors grow like sqrt(k) u (Higham, Accuracy and
Stability of Numerical Algorithms, 2nd ed., section 3.1's rule of thumb; the worst case gamma_k
is not reached by random data), 16 u = 1e-6 per contraction, and the longest chain from the
loss to a gradient (fc3, fc2, fc1, conv2, conv1) has five contractions: 1e-5 relative to the
largest entry of each gradient, 1e-6 for the loss, as for the seed model. Both sides pick the
same element of every maxpool window (a relu's zeros tie exactly, and both pick the first);
two distinct entries within rounding of each other in one window would flip a pick, which
these fixed inputs do not have.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_testing import differentiated, parse_example
from torch import nn
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.dialects.func import FuncOp

from adir.interpreter import Session

PARAMS = [
    ("conv1_w", (6, 1, 5, 5)),
    ("conv1_b", (6,)),
    ("conv2_w", (16, 6, 5, 5)),
    ("conv2_b", (16,)),
    ("fc1_w", (120, 256)),
    ("fc1_b", (120,)),
    ("fc2_w", (84, 120)),
    ("fc2_b", (84,)),
    ("fc3_w", (10, 84)),
    ("fc3_b", (10,)),
]


class LeNet5(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(256, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def torch_lenet(params: dict[str, np.ndarray]) -> LeNet5:
    """A LeNet5 in the params' dtype, holding them (`conv1.weight` is `conv1_w`, ...)."""
    net = LeNet5().to(torch.float64 if params["conv1_w"].dtype == np.float64 else torch.float32)
    with torch.no_grad():
        for name, parameter in net.named_parameters():
            layer, kind = name.split(".")
            parameter.copy_(torch.from_numpy(params[f"{layer}_{kind[0]}"]))
    return net


@pytest.fixture(scope="module")
def module() -> ModuleOp:
    return parse_example("lenet5")


@pytest.fixture(scope="module")
def grad_module(module: ModuleOp) -> ModuleOp:
    return differentiated(module)


def digits(dtype, count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.random((1, 1, 28, 28)).astype(dtype), rng.integers(0, 10, (1,)).astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loss_equals_torch(module: ModuleOp, dtype) -> None:
    session = Session(module, dtype)
    net = torch_lenet(session.params)
    for x, label in digits(dtype, 3, seed=0):
        (loss,) = session.call("loss", x, label)
        with torch.no_grad():
            expected = F.cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(label).long())
        assert loss.shape == ()
        assert loss.item() == pytest.approx(
            expected.item(), rel=1e-12 if dtype == np.float64 else 1e-6
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_equal_torch(grad_module: ModuleOp, dtype) -> None:
    """@loss_grad returns the loss and the ten parameter gradients, in declaration order,
    equal to torch.autograd's through nn.Conv2d, nn.Linear, relu and max_pool2d."""
    session = Session(grad_module, dtype)
    net = torch_lenet(session.params)
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    for x, label in digits(dtype, 3, seed=1):
        loss, *grads = session.call("loss_grad", x, label)
        net.zero_grad()
        expected = F.cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(label).long())
        expected.backward()
        assert loss.item() == pytest.approx(expected.item(), rel=tolerance / 10)
        assert len(grads) == len(PARAMS)
        for actual, (name, parameter) in zip(grads, net.named_parameters(), strict=True):
            reference = parameter.grad.numpy()
            scale = np.abs(reference).max()
            assert scale > 0, name
            np.testing.assert_allclose(
                actual, reference, rtol=tolerance, atol=tolerance * scale, err_msg=name
            )


def test_initial_weights_follow_torch_default_bounds(module: ModuleOp) -> None:
    """kaiming_uniform with a = sqrt(5) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bound of
    nn.Conv2d's and nn.Linear's weights, which the example gives their biases too."""
    params = Session(module).params
    fan_in = {"conv1": 25, "conv2": 150, "fc1": 256, "fc2": 120, "fc3": 84}
    for name, shape in PARAMS:
        assert params[name].shape == shape
        bound = 1 / np.sqrt(fan_in[name.split("_")[0]])
        assert np.abs(params[name]).max() <= bound
        assert np.abs(params[name]).max() > (0.5 if len(shape) == 1 else 0.9) * bound


def test_gradient_function_computes_nothing_for_the_image(grad_module: ModuleOp) -> None:
    """The digit is data: @loss_grad has no conv2d_grad_input for the first conv, and no op
    produces a value of the image's shape."""
    grad = next(
        op
        for op in grad_module.ops
        if isinstance(op, FuncOp) and op.sym_name == StringAttr("loss_grad")
    )
    names = [op.name for op in grad.walk()]
    assert names.count("adir.conv2d_grad_input") == 1  # the second conv's input only
    assert names.count("adir.conv2d_grad_weight") == 2
    assert names.count("adir.maxpool2d_grad") == 2
    shapes = [tuple(r.type.get_shape()) for op in grad.walk() for r in op.results]
    assert (1, 1, 28, 28) not in shapes
    outputs = list(grad.function_type.outputs.data)
    assert outputs == [TensorType(f32, [])] + [TensorType(f32, s) for _, s in PARAMS]
