"""A model imported in training mode trains as PyTorch trains it: training-mode dropout is
`adir.dropout` (seeds 1, 2, ... in the order the model runs them, reading a `%step` argument
the importer adds), batch norm uses the batch's statistics and stores its running ones, and
`derive-predict` gives the eval forms. BatchNorm1d over (N, C) and (N, C, L) is batch norm; at
(1, C) PyTorch refuses training, and the importer says so at the model's line.

Gradients are compared in float64, with PyTorch's dropout replaced by adir's masks
(adir_dropout_masks.py): the gradient given the mask. The interpreter and PyTorch sum in other
orders, about 1e-16 relative per sum of a few hundred terms; a batch norm's backward can cancel
(its adjoint minus two projections), so 1e-11 leaves a margin of 100 over that. A wrong mask
changes a gradient entry by its whole value."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_dropout_masks import with_adir_masks
from torch import nn
from xdsl.dialects.func import FuncOp

from adir.context import adir_context
from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import TorchImportError, import_module, symbol_names
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass
from adir.passes.derive_predict import DerivePredictPass

TOLERANCE = 1e-11


class DropoutMlp(nn.Module):
    """Two dropouts and a BatchNorm1d over (N, C)."""

    def __init__(self, p1: float = 0.5, p2: float = 0.25) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(12, 16),
            nn.BatchNorm1d(16),
            nn.ReLU(),
            nn.Dropout(p1),
            nn.Linear(16, 16),
            nn.ReLU(),
            nn.Dropout(p2),
            nn.Linear(16, 4),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class Conv1dLike(nn.Module):
    """A BatchNorm1d over (N, C, L), as after a 1-D convolution (here a linear map of L)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.bn = nn.BatchNorm1d(3)
        self.out = nn.Linear(18, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.flatten(torch.relu(self.bn(self.fc(x))), 1))


def in_float64(model: nn.Module) -> nn.Module:
    """The model in float64, its batch norms' momentum and eps rounded to float32, the values
    adir's f32 properties hold (0.1 is 0.100000001490116 there: the running statistics differ
    by 1.5e-8 relative otherwise)."""
    model = model.double()
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.momentum = float(np.float32(module.momentum))
            module.eps = float(np.float32(module.eps))
    return model


def functions(module) -> dict[str, FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}


def gradients(module, *args) -> tuple[float, dict[str, np.ndarray], Session]:
    """@loss_grad in float64: the loss, the gradients by symbol, the session after the call."""
    module = module.clone()
    AutodiffPass().apply(adir_context(), module)
    grad = functions(module)["loss_grad"]
    symbols = [ref.root_reference.data for ref in grad.attributes["adir.gradients"].data]
    session = Session(module, np.float64)
    loss, *grads = session.call("loss_grad", *args)
    return float(loss), dict(zip(symbols, grads, strict=True)), session


def assert_like_torch(
    reference: nn.Module, grads: dict, session: Session, zero_in_theory: str = ""
) -> None:
    """Every gradient and every running statistic against the float64 `reference` after its
    backward pass. `zero_in_theory`: the bias of the linear layer before a batch norm, which
    subtracts it again, so its gradient is 0 in real arithmetic and rounding noise (below
    1e-16 here) on both sides: checked to be that small."""
    names = symbol_names(list(reference.state_dict()))
    parameters = dict(reference.named_parameters())
    assert set(grads) == {names[n] for n in parameters}
    for name, tensor in reference.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        symbol = names[name]
        if name == zero_in_theory:
            assert np.abs(grads[symbol]).max() < 1e-15, symbol
            continue
        actual = grads[symbol] if name in parameters else session.params[symbol]
        wanted = (parameters[name].grad if name in parameters else tensor).numpy()
        scale = np.abs(wanted).max()
        np.testing.assert_allclose(
            actual, wanted, rtol=TOLERANCE, atol=TOLERANCE * scale, err_msg=symbol
        )


def test_training_dropout_is_adir_dropout_with_a_step_argument_and_a_seed_each() -> None:
    torch.manual_seed(0)
    module = import_module(DropoutMlp(), (torch.randn(4, 12),), loss="cross_entropy")
    text = module_to_text(module)
    assert "func.func @loss(%x: tensor<4x12xf32>, %label: tensor<4xi32>, %step: tensor<i64>)" in (
        text
    )
    dropouts = [line for line in text.splitlines() if "adir.dropout" in line]
    assert len(dropouts) == 2
    assert "%step {seed = 1 : i64}" in dropouts[0]  # p = 0.5, the default, is not printed
    assert "%step {p = 2.500000e-01 : f32, seed = 2 : i64}" in dropouts[1]


@pytest.mark.parametrize("step", [0, 5])
def test_training_dropout_gradients_equal_torch_given_the_mask(step: int) -> None:
    torch.manual_seed(1)
    model, x = DropoutMlp(), torch.randn(4, 12)
    label = np.array([0, 3, 1, 2], np.int32)
    module = import_module(model, (x,), loss="cross_entropy")
    reference = in_float64(model)
    dropouts, counter = with_adir_masks(reference)
    assert dropouts == [(1, 0.5), (2, 0.25)]  # the seeds the import gave them
    counter.step = step
    loss, grads, session = gradients(module, x.double().numpy(), label, np.int64(step))
    expected = F.cross_entropy(reference(x.double()), torch.from_numpy(label).long())
    expected.backward()
    np.testing.assert_allclose(loss, expected.item(), rtol=TOLERANCE)
    assert_like_torch(reference, grads, session, zero_in_theory="body.0.bias")


def test_zero_dropout_is_the_identity_bit_for_bit() -> None:
    """p = 0 in training mode: no adir.dropout and no step; PyTorch's dropout returns its input
    unchanged, so the imported forward equals PyTorch's float32 output bit for bit."""
    model = nn.Sequential(nn.Dropout(0.0), nn.ReLU(), nn.Dropout(0.0))  # relu: exact in both
    x = torch.randn(3, 7)
    module = import_module(model, (x,))
    text = module_to_text(module)
    assert "adir.dropout" not in text and "%step" not in text
    (output,) = Session(module).call("forward", x.numpy())
    np.testing.assert_array_equal(output, model(x).numpy())


def test_eval_mode_import_has_no_dropout_and_no_step() -> None:
    torch.manual_seed(2)
    model = DropoutMlp().eval()
    text = module_to_text(import_module(model, (torch.randn(4, 12),), loss="cross_entropy"))
    assert "adir.dropout" not in text and "%step" not in text
    assert "adir.batchnorm_eval" in text and "adir.store" not in text


def test_predict_of_the_training_import_equals_eval_mode() -> None:
    """One way in: import in training mode; derive-predict's @predict (running statistics, no
    dropout, no step) equals the model in eval mode."""
    torch.manual_seed(3)
    model, x = DropoutMlp(), torch.randn(4, 12)
    with torch.no_grad():
        model.body[1].running_mean.uniform_(-1, 1)
        model.body[1].running_var.uniform_(0.5, 2)
    module = import_module(model, (x,), loss="cross_entropy")
    DerivePredictPass().apply(adir_context(), module)
    predict = functions(module)["predict"]
    assert [arg.type.get_shape() for arg in predict.body.block.args] == [(4, 12)]
    names = [op.name for op in predict.walk()]
    assert "adir.dropout" not in names and "adir.batchnorm_eval" in names
    (output,) = Session(module, np.float64).call("predict", x.double().numpy())
    expected = in_float64(model).eval()(x.double()).detach().numpy()
    np.testing.assert_allclose(output, expected, rtol=TOLERANCE, atol=TOLERANCE)


def test_batchnorm1d_over_n_c_l_trains_like_torch() -> None:
    """(N, C, L) = (1, 3, 6): batch 1 is well defined here, 6 values per channel."""
    torch.manual_seed(4)
    model, x = Conv1dLike(), torch.randn(1, 3, 6)
    label = np.array([2], np.int32)
    module = import_module(model, (x,), loss="cross_entropy")
    assert "adir.batchnorm %" in module_to_text(module)
    loss, grads, session = gradients(module, x.double().numpy(), label)
    reference = in_float64(model)
    expected = F.cross_entropy(reference(x.double()), torch.from_numpy(label).long())
    expected.backward()
    np.testing.assert_allclose(loss, expected.item(), rtol=TOLERANCE)
    assert_like_torch(reference, grads, session)  # fc.bias is per position, not per channel


def test_batchnorm1d_at_batch_1_over_n_c_is_pytorchs_error_at_the_models_line() -> None:
    model = DropoutMlp()
    with pytest.raises(TorchImportError) as caught:
        import_module(model, (torch.randn(1, 12),), loss="cross_entropy")
    _, start = inspect.getsourcelines(DropoutMlp.forward)
    assert caught.value.site.line == start + 1  # return self.body(x)
    assert caught.value.message.startswith(
        "the model fails on the example inputs: Expected more than 1 value per channel when "
        "training, got input size torch.Size([1, 16]) (PyTorch's batch norm in training mode "
        "needs 2 or more values per channel, N x spatial size: train at batch >= 2, or import "
        "the model in eval mode)"
    )
