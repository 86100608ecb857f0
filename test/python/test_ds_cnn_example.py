"""examples/ds_cnn.mlir is a torch.nn DS-CNN with the same weights: @predict equals the model
in eval mode; @loss, and after autodiff @loss_grad, equal the model in training mode (batch
statistics, the running statistics' update, dropout) with PyTorch's dropout replaced by
multiplication with adir's masks (PyTorch cannot draw them; the reference computes them from
the specification, test_interpreter_normalization.reference_mask).

Tolerances, relative to the largest entry of each compared tensor. float32: both sides round
every sum of k terms differently (k <= 125: the batchnorm statistics over 25 x 5 positions;
the convolutions sum 40, 9 and 64 terms), and random rounding errors grow like sqrt(k) u =
7e-7 per sum (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.1's
rule of thumb). The longest chain, from the loss back to conv1's weight, passes about 40 such
sums (20 forward, 20 backward): 3e-5 if they added up linearly. A batchnorm's backward
subtracts from its adjoint the projections on 1 and on x_hat, which can cancel, so allow a
factor of 3 more: 1e-4 for the gradients and the running statistics, and 1e-5 for the loss
and the logits (half the chain, no backward). float64: the same with u = 1.1e-16, for each
side now that the reference rounds as much as the interpreter: 4e-13, rounded up to 1e-12
(1e-13 for the loss and logits). Measured: at most 2.4e-5 in float32 (bn1's gamma and beta)
and 1.3e-13 in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_testing import differentiated, parse_example
from test_interpreter_normalization import f32, reference_mask
from torch import nn
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from adir.interpreter import Session

MOMENTUM, EPS = f32(0.1), f32(1e-5)
DROPOUTS = [(1, 0.2), (2, 0.4)]  # (seed, p) of the two dropouts, in order
TOLERANCE = {np.float32: 1e-4, np.float64: 1e-12}
SHAPE = (1, 64, 25, 5)


def batchnorm() -> nn.BatchNorm2d:
    return nn.BatchNorm2d(64, eps=EPS, momentum=MOMENTUM)


class DSCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 64, (10, 4), stride=2, bias=False)
        self.bn1 = batchnorm()
        self.dw = nn.ModuleList(
            nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False) for _ in range(4)
        )
        self.dw_bn = nn.ModuleList(batchnorm() for _ in range(4))
        self.pw = nn.ModuleList(nn.Conv2d(64, 64, 1, bias=False) for _ in range(4))
        self.pw_bn = nn.ModuleList(batchnorm() for _ in range(4))
        self.fc = nn.Linear(64, 12)

    def forward(self, x: torch.Tensor, masks: list[torch.Tensor] | None = None) -> torch.Tensor:
        """masks: the dropout multipliers in training; None in eval."""
        x = F.relu(self.bn1(self.conv1(F.pad(x, (1, 1, 4, 5)))))
        if masks is not None:
            x = x * masks[0]
        for dw, dw_bn, pw, pw_bn in zip(self.dw, self.dw_bn, self.pw, self.pw_bn, strict=True):
            x = F.relu(pw_bn(pw(F.relu(dw_bn(dw(x))))))
        if masks is not None:
            x = x * masks[1]
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    def adir_names(self) -> dict[str, torch.Tensor]:
        """The example's param names -> this model's parameters and buffers."""
        names = {"conv1_w": self.conv1.weight, "fc_w": self.fc.weight, "fc_b": self.fc.bias}
        bns = {"bn1": self.bn1}
        for i in range(4):
            names[f"dw{i + 1}_w"] = self.dw[i].weight
            names[f"pw{i + 1}_w"] = self.pw[i].weight
            bns[f"dw{i + 1}_bn"] = self.dw_bn[i]
            bns[f"pw{i + 1}_bn"] = self.pw_bn[i]
        for name, bn in bns.items():
            names.update(
                {
                    f"{name}_gamma": bn.weight,
                    f"{name}_beta": bn.bias,
                    f"{name}_mean": bn.running_mean,
                    f"{name}_var": bn.running_var,
                }
            )
        return names


def torch_model(params: dict[str, np.ndarray]) -> DSCNN:
    """A DSCNN in float64 holding the session's parameter values."""
    net = DSCNN().double()
    with torch.no_grad():
        for name, tensor in net.adir_names().items():
            tensor.copy_(torch.from_numpy(np.asarray(params[name], np.float64)))
    return net


def masks(step: int) -> list[torch.Tensor]:
    return [
        torch.from_numpy(np.where(reference_mask(SHAPE, seed, step, p), 1 / (1 - f32(p)), 0.0))
        for seed, p in DROPOUTS
    ]


def assert_close(actual, expected, tolerance: float, what: str) -> None:
    expected = np.asarray(expected, np.float64)
    scale = float(np.max(np.abs(expected)))
    assert scale > 0, what
    np.testing.assert_allclose(
        np.asarray(actual, np.float64),
        expected,
        rtol=tolerance,
        atol=tolerance * scale,
        err_msg=what,
    )


@pytest.fixture(scope="module")
def module() -> ModuleOp:
    return parse_example("ds_cnn")


@pytest.fixture(scope="module")
def grad_module(module: ModuleOp) -> ModuleOp:
    return differentiated(module)


def utterances(dtype, count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (
            rng.standard_normal((1, 1, 49, 10)).astype(dtype),
            rng.integers(0, 12, (1,)).astype(np.int32),
        )


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """PyTorch's thread pool makes these small convolutions (the float64 depthwise ones
    above all) seconds slower on a loaded machine; one thread, restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def trained_looking_batchnorms(session: Session, dtype) -> None:
    """Random gamma, beta and running statistics. At the initial values (gamma 1, beta 0) the
    gradients of bn1's and pw1..pw3's gamma are exactly zero in theory (relu is positively
    homogeneous, and the depthwise conv and batchnorm after it undo a per-channel scale), so
    comparing them would compare rounding noise."""
    rng = np.random.default_rng(0)
    for name, value in session.params.items():
        if name.endswith(("_gamma", "_beta", "_mean")):
            session.params[name] = rng.standard_normal(value.shape).astype(dtype)
        elif name.endswith("_var"):
            session.params[name] = rng.uniform(0.5, 2.0, value.shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_predict_equals_eval_mode(module: ModuleOp, dtype) -> None:
    session = Session(module, dtype)
    trained_looking_batchnorms(session, dtype)
    net = torch_model(session.params).eval()
    for x, _ in utterances(dtype, 2, seed=1):
        (logits,) = session.call("predict", x)
        with torch.no_grad():
            expected = net(torch.from_numpy(x.astype(np.float64))).numpy()
        assert_close(logits, expected, TOLERANCE[dtype] / 10, "logits")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_training_steps_equal_torch(grad_module: ModuleOp, dtype) -> None:
    """Three steps of @loss_grad: the loss and the 29 gradients in declaration order, and the
    running statistics it stores, as nn.Module in training mode with the same dropout masks
    (the parameters held fixed)."""
    session = Session(grad_module, dtype)
    trained_looking_batchnorms(session, dtype)
    net = torch_model(session.params).train()
    tolerance = TOLERANCE[dtype]
    trainable = [n for n in net.adir_names() if not n.endswith(("_mean", "_var"))]
    order = [n for n in session.params if n in trainable]
    for step, (x, label) in enumerate(utterances(dtype, 3, seed=2)):
        loss, *grads = session.call("loss_grad", x, label, np.int64(step))
        net.zero_grad()
        logits = net(torch.from_numpy(x.astype(np.float64)), masks(step))
        expected = F.cross_entropy(logits, torch.from_numpy(label).long())
        expected.backward()
        assert_close(loss, expected.item(), tolerance / 10, f"step {step} loss")
        assert len(grads) == len(order) == 29
        tensors = net.adir_names()
        for name, grad in zip(order, grads, strict=True):
            assert_close(grad, tensors[name].grad.numpy(), tolerance, f"step {step} d{name}")
        for name, tensor in tensors.items():
            if name.endswith(("_mean", "_var")):
                assert_close(session.params[name], tensor.numpy(), tolerance, f"step {step} {name}")


def test_gradient_function_structure(grad_module: ModuleOp) -> None:
    """Nine batchnorm_grads, two dropout_grads recomputing their masks, the running
    statistics stored, and no adjoint for the utterance (no conv2d_grad_input for conv1)."""
    grad = next(
        op
        for op in grad_module.ops
        if isinstance(op, FuncOp) and op.sym_name == StringAttr("loss_grad")
    )
    names = [op.name for op in grad.walk()]
    assert names.count("adir.batchnorm_grad") == 9
    assert names.count("adir.dropout_grad") == 2
    assert names.count("adir.store") == 18
    assert names.count("adir.conv2d_grad_input") == 8
    assert names.count("adir.conv2d_grad_weight") == 9
