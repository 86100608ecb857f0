"""`freeze-batchnorm` against PyTorch: fine-tuning with frozen batchnorm layers in eval mode.

The model: conv1 -> bn1 -> relu -> conv2 (no bias) -> bn2 -> relu -> global average pool -> fc.
conv1, bn1 and bn2's gamma and beta are frozen (`requires_grad=False`, `{trainable = false}` when
imported); conv2 and fc train. PyTorch's reference is the common fine-tuning practice: the
frozen batchnorms in eval mode (`bn.eval()`, the rest in training mode), so they normalise with
their running statistics (set to random values here, as a pretrained model has them) and never
update them. adir imports the model in training mode and `freeze-batchnorm` makes the same
choice: bn1 is folded into conv1 (both frozen, all known at compile time), bn2 stays a
per-channel affine (`batchnorm_eval`: conv2 trains).

Both run 20 SGD steps (lr 0.1, batch 4) in float64 from the same parameters; the losses and
every parameter after them agree to 1e-5 relative, the issue's bound. They cannot agree bit for
bit: the fold rounds conv1's weight times the batchnorm's factor to float32 once, at compile
time (a relative change of 2^-24 per weight), where PyTorch keeps the two apart. Without the
pass (train-mode batchnorm with batch statistics) the first loss already differs from
PyTorch's eval-mode one by more than 1e-3, so the comparison does tell the modes apart.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from c_testing import run_pipeline
from torch import nn

from adir.dialects.tensor.conv_and_pool import Conv2dOp
from adir.dialects.tensor.normalization import BatchnormEvalOp, BatchnormOp
from adir.dialects.tensor.params import ParamOp
from adir.frontends.torch_import import import_module, symbol_names
from adir.interpreter import Session

STEPS = 20
LR = 0.1
BATCH = 4
RTOL = 1e-5


class SmallCnn(nn.Module):
    def __init__(self, freeze: bool = True) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6, 3)
        for bn in (self.bn1, self.bn2):  # a pretrained model's statistics and affine
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(bn.weight, 0.5, 1.5)
            nn.init.uniform_(bn.bias, -0.2, 0.2)
        if not freeze:  # a scheme (`train=`) says what trains
            return
        frozen = (self.conv1, self.bn1, self.bn2)
        for param in (p for layer in frozen for p in layer.parameters()):
            param.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1(self.conv1(x)))
        h = torch.relu(self.bn2(self.conv2(h)))
        return self.fc(h.mean(dim=(2, 3)))


def data() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(3)
    return [
        (rng.standard_normal((BATCH, 3, 8, 8)), rng.integers(0, 3, BATCH)) for _ in range(STEPS)
    ]


def torch_reference(batches: list[tuple[np.ndarray, np.ndarray]]) -> tuple[list[float], dict]:
    model = SmallCnn().double()
    model.train()
    model.bn1.eval()
    model.bn2.eval()
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trained, lr=LR)
    losses = []
    for x, label in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(torch.tensor(x)), torch.tensor(label))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    state = {name: t.detach().numpy() for name, t in model.state_dict().items()}
    return losses, state


def imported():
    model = SmallCnn()
    model.train()
    example = torch.zeros(BATCH, 3, 8, 8)
    return import_module(model, (example,), loss="cross_entropy", label_shape=(BATCH,))


def adir_training(pipeline: str, batches) -> tuple[list[float], Session]:
    module = run_pipeline(imported(), f"{pipeline}autodiff,insert-optimizer{{kind=sgd lr={LR}}}")
    session = Session(module, np.float64)
    losses = [float(session.call("train_step", x, label)[0]) for x, label in batches]
    return losses, session


def test_frozen_batchnorm_trains_like_pytorch_in_eval_mode():
    batches = data()
    expected_losses, expected = torch_reference(batches)
    losses, session = adir_training("freeze-batchnorm,", batches)
    np.testing.assert_allclose(losses, expected_losses, rtol=RTOL)
    names = symbol_names(list(SmallCnn().state_dict()))
    # The folded conv1 and bn1 are new parameters; every other one is compared.
    for name, symbol in names.items():
        if symbol in session.params:
            np.testing.assert_allclose(
                session.params[symbol], expected[name], rtol=RTOL, atol=RTOL, err_msg=symbol
            )
    compared = {symbol for symbol in names.values() if symbol in session.params}
    assert {"conv2_weight", "fc_weight", "fc_bias", "bn2_running_mean"} <= compared
    # bn1's parameters went into the folded conv; bn2's statistics are unchanged by training.
    assert "bn1_running_mean" not in session.params
    np.testing.assert_array_equal(
        session.params["bn2_running_var"], SmallCnn().bn2.running_var.double().numpy()
    )


def test_folds_bn1_into_conv1_and_keeps_bn2_as_an_affine():
    module = run_pipeline(imported(), "freeze-batchnorm")
    ops = list(module.walk())
    assert not any(isinstance(op, BatchnormOp) for op in ops)
    (affine,) = [op for op in ops if isinstance(op, BatchnormEvalOp)]
    assert affine.input.owner.weight.owner.param.root_reference.data == "conv2_weight"
    params = {op.sym_name.data for op in ops if isinstance(op, ParamOp)}
    assert {"conv1_weight_bn", "conv1_weight_bn_bias"} <= params
    assert not params & {"conv1_weight", "conv1_bias", "bn1_weight", "bn1_running_mean"}
    convs = [op for op in ops if isinstance(op, Conv2dOp)]
    assert convs[0].weight.owner.param.root_reference.data == "conv1_weight_bn"


def test_without_the_pass_the_batchnorms_use_batch_statistics():
    batches = data()[:1]
    expected_losses, _ = torch_reference(batches)
    losses, _ = adir_training("", batches)
    assert abs(losses[0] - expected_losses[0]) > 1e-3 * abs(expected_losses[0])


# TTE's bias-only update plus the classifier (`--train=bias+last:1`): conv1's bias, both
# batchnorms' betas and fc train; the conv weights and the batchnorms' gammas are frozen.
BIAS_SCHEME = "bias+last:1"
BIAS_TRAINED = ("conv1.bias", "bn1.bias", "bn2.bias", "fc.weight", "fc.bias")
BIAS_OPTIMIZERS = {"sgd": LR, "adam": 0.0078125}  # learning rates f32 holds exactly


def torch_bias_reference(batches, optimizer: str) -> tuple[list[float], dict]:
    """PyTorch's fine-tuning of the bias scheme: every batchnorm in eval mode (its gamma frozen,
    its beta trained as a bias), `requires_grad=False` on everything but BIAS_TRAINED."""
    model = SmallCnn(freeze=False).double()
    model.train()
    model.bn1.eval()
    model.bn2.eval()
    for name, param in model.named_parameters():
        param.requires_grad_(name in BIAS_TRAINED)
    trained = [p for p in model.parameters() if p.requires_grad]
    lr = BIAS_OPTIMIZERS[optimizer]
    opt = (
        torch.optim.SGD(trained, lr=lr) if optimizer == "sgd" else torch.optim.Adam(trained, lr=lr)
    )
    losses = []
    for x, label in batches:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(torch.tensor(x)), torch.tensor(label))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    state = {name: t.detach().numpy() for name, t in model.state_dict().items()}
    return losses, state


def adir_bias_training(freeze: str, optimizer: str, batches) -> tuple[list[float], Session]:
    model = SmallCnn(freeze=False)
    model.train()
    example = torch.zeros(BATCH, 3, 8, 8)
    module = import_module(
        model, (example,), loss="cross_entropy", label_shape=(BATCH,), train=BIAS_SCHEME
    )
    lr = BIAS_OPTIMIZERS[optimizer]
    module = run_pipeline(module, f"{freeze}autodiff,insert-optimizer{{kind={optimizer} lr={lr}}}")
    session = Session(module, np.float64)
    losses = [float(session.call("train_step", x, label)[0]) for x, label in batches]
    return losses, session


@pytest.mark.parametrize("optimizer", list(BIAS_OPTIMIZERS))
def test_a_trained_beta_keeps_the_batchnorm_in_eval_mode_as_pytorch_fine_tuning(optimizer):
    """Both batchnorms run in eval form though their betas train (bn1 is not folded: conv1's
    bias trains), and 20 steps give PyTorch's losses and parameters to 1e-5; the running
    statistics stay as they were."""
    batches = data()
    expected_losses, expected = torch_bias_reference(batches, optimizer)
    losses, session = adir_bias_training("freeze-batchnorm,", optimizer, batches)
    np.testing.assert_allclose(losses, expected_losses, rtol=RTOL)
    names = symbol_names(list(SmallCnn().state_dict()))
    for name in (*BIAS_TRAINED, "conv1.weight", "bn1.weight", "bn2.running_mean"):
        symbol = names[name]
        np.testing.assert_allclose(
            session.params[symbol], expected[name], rtol=RTOL, atol=RTOL, err_msg=symbol
        )
    for name in ("bn1.running_var", "bn2.running_var"):
        np.testing.assert_array_equal(
            session.params[names[name]], getattr(SmallCnn(), name.split(".")[0]).running_var
        )


def test_a_trained_beta_saves_nothing_of_the_batchnorm_for_the_backward_pass():
    """The gradient function has no train-mode batchnorm and no `batchnorm_grad`: the betas'
    gradients are sums of the output gradient, and no running statistic is stored."""
    model = SmallCnn(freeze=False)
    model.train()
    module = import_module(
        model,
        (torch.zeros(BATCH, 3, 8, 8),),
        loss="cross_entropy",
        label_shape=(BATCH,),
        train=BIAS_SCHEME,
    )
    differentiated = run_pipeline(module, "freeze-batchnorm,autodiff")
    names = [op.name for op in differentiated.walk()]
    assert names.count("adir.batchnorm_eval") == 2 * 2  # in @loss and in @loss_grad
    assert "adir.batchnorm" not in names and "adir.batchnorm_grad" not in names
    assert "adir.store" not in names
    kept = run_pipeline(module, "freeze-batchnorm{trained_beta=false},autodiff")
    kept_names = [op.name for op in kept.walk()]
    assert kept_names.count("adir.batchnorm_grad") == 2


def test_with_trained_beta_false_the_batchnorms_train_with_batch_statistics():
    """`trained_beta=false` keeps the train-mode batchnorm: its first loss is PyTorch's with
    the batchnorms in training mode, not the eval-mode one (they differ by more than 1e-3)."""
    batches = data()[:1]
    eval_losses, _ = torch_bias_reference(batches, "sgd")
    losses, _ = adir_bias_training("freeze-batchnorm{trained_beta=false},", "sgd", batches)
    model = SmallCnn(freeze=False).double()
    model.train()
    x, label = batches[0]
    train_loss = nn.functional.cross_entropy(model(torch.tensor(x)), torch.tensor(label)).item()
    np.testing.assert_allclose(losses[0], train_loss, rtol=RTOL)
    assert abs(losses[0] - eval_losses[0]) > 1e-3 * abs(eval_losses[0])
