"""Attention as torch.export writes it, imported from tiny modules: the interpreter's loss and
gradients (of the parameters and of the input) equal PyTorch's in float64, with the harness of
test_torch_import_shape_ops.py (`loss = sum_i sum(f(x * w)_i * r_i)`, 1e-12 relative).

`F.scaled_dot_product_attention` (and `nn.MultiheadAttention`, which calls it) arrives as views,
transposes, `bmm`s over batch x heads and `aten._safe_softmax`: a softmax over the last axis
that gives zeros, not nan, in a row whose scores are all -inf (a query that an additive mask
hides from every key). adir imports that as `softmax` and a `select` of zeros where the row's
max is -inf; the cases below include such a row, and a row partly masked. With
`need_weights=True` (the default), `nn.MultiheadAttention` computes the weights itself, with a
plain softmax. The heads are 16 wide: attention scales q and k each by head_dim^-1/4, which the
importer holds as an f32 constant, exact for 16 (0.5) and rounded for most other widths, which
the 1e-12 comparison with float64 PyTorch would see. Also here: the views between them are one
reshape of their source, and an expand to a tensor's own shape is the tensor. Boolean masks
(`is_causal=True`, a boolean `attn_mask`) are computed at import into the additive float mask
PyTorch adds (adir/frontends/constant_folding.py).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from test_torch_import_shape_ops import check
from torch import nn

from adir.frontends.torch_import import UnsupportedOpsError, import_module


def mask_with_a_hidden_row() -> torch.Tensor:
    """An additive mask over 4 queries x 4 keys: causal (key j > query i is -inf), and query 2
    hidden from every key."""
    mask = torch.triu(torch.full((4, 4), float("-inf")), diagonal=1)
    mask[2] = float("-inf")
    return mask


def attention(t: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Two heads of 16 over 4 tokens: q, k and v are three scalings of `t` [N, 2, 4, 16]."""
    return F.scaled_dot_product_attention(t, t * 0.5, t * -1.5, attn_mask=mask)


def test_scaled_dot_product_attention() -> None:
    text = check(lambda t, _: attention(t, None), (2, 2, 4, 16))
    # The guard: the row's max compared with -inf, selecting zeros before and after.
    assert text.count("adir.softmax ") == 1 and text.count("adir.select ") == 2
    assert text.count("adir.max ") == 1 and text.count("adir.cmp ") == 1


def test_scaled_dot_product_attention_with_a_row_masked_out() -> None:
    """PyTorch's output is 0 in the hidden row (its gradient too); adir's must be the same,
    not nan."""
    mask = mask_with_a_hidden_row()
    with torch.no_grad():
        hidden = attention(torch.randn(2, 2, 4, 16), mask)[:, :, 2]
    assert torch.equal(hidden, torch.zeros_like(hidden))
    check(lambda t, _: attention(t, mask.to(t.dtype)), (2, 2, 4, 16))


def test_multihead_attention_without_weights() -> None:
    torch.manual_seed(1)
    layer = nn.MultiheadAttention(32, 2, batch_first=True)
    text = check(lambda t, mha: mha(t, t, t, need_weights=False)[0], (2, 4, 32), layer)
    assert text.count("adir.softmax ") == 1


def test_multihead_attention_with_weights_and_a_float_mask() -> None:
    """`need_weights=True`: the attention weights (averaged over the heads) are an output too,
    computed with a plain softmax (so no row is hidden here: PyTorch's weights would be nan
    there), under a causal mask."""
    torch.manual_seed(1)
    layer = nn.MultiheadAttention(32, 2, batch_first=True)
    mask = torch.triu(torch.full((4, 4), float("-inf")), diagonal=1)
    check(lambda t, mha: mha(t, t, t, attn_mask=mask.to(t.dtype)), (2, 4, 32), layer)


def test_a_chain_of_views_is_one_reshape_and_an_expand_to_its_own_shape_is_nothing() -> None:
    text = check(
        lambda t, _: t.view(2, 12).unsqueeze(0).squeeze(0).view(4, 6).expand(4, 6) * 2.0,
        (2, 3, 4),
    )
    assert text.count("adir.reshape ") == 1 and "adir.broadcast_to" not in text


class BooleanMasked(nn.Module):
    """Attention under a boolean mask buffer (True: attend), as `F.scaled_dot_product_attention`
    takes it: causal, and query 2 hidden from every key."""

    def __init__(self) -> None:
        super().__init__()
        mask = torch.tril(torch.ones(4, 4, dtype=torch.bool))
        mask[2] = False
        self.register_buffer("mask", mask)


def test_a_boolean_mask_buffer_is_folded_into_an_additive_mask() -> None:
    """The buffer is no parameter: `torch.where(mask, 0, -inf)` is computed at import
    (adir/frontends/constant_folding.py) and added to the scores as one constant."""
    masked = BooleanMasked()
    text = check(
        lambda t, _: F.scaled_dot_product_attention(t, t * 0.5, t * -1.5, attn_mask=masked.mask),
        (2, 2, 4, 16),
    )
    assert "mask" not in text.split("func.func")[0]  # no adir.param for the buffer
    constants = [line for line in text.splitlines() if "adir.constant" in line]
    assert sum(line.endswith(": tensor<4x4xf32>") for line in constants) == 1  # the mask


def test_a_boolean_mask_buffer_of_multihead_attention_is_folded() -> None:
    class Masked(BooleanMasked):
        def __init__(self) -> None:
            super().__init__()
            self.attention = nn.MultiheadAttention(32, 2, batch_first=True)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            # nn.MultiheadAttention's boolean mask is the other way round: True hides a key.
            return self.attention(x, x, x, attn_mask=~self.mask, need_weights=False)[0]

    torch.manual_seed(2)
    model = Masked()
    module = import_module(model, (torch.randn(2, 4, 32),), loss="mse")
    assert "adir.param @mask" not in str(module)


def test_causal_attention_is_a_constant_mask() -> None:
    """`is_causal=True`: the lower-triangular mask PyTorch builds from `arange`s and a boolean
    `full` is computed at import, and the scores get it as one additive constant."""
    text = check(
        lambda t, _: F.scaled_dot_product_attention(t, t * 0.5, t * -1.5, is_causal=True),
        (2, 2, 4, 16),
    )
    assert text.count("adir.softmax ") == 1 and "adir.constant" in text


def test_a_boolean_constant_that_reaches_arithmetic_is_a_located_error() -> None:
    """A boolean constant is folded only into what it becomes; one that an op adir computes
    reads as a boolean (here a multiplication) is an error at the model's line."""

    class Gated(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("gate", torch.tensor([True, False, True]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.gate

    with pytest.raises(UnsupportedOpsError) as error:
        import_module(Gated(), (torch.randn(2, 3),), loss="mse")
    message = str(error.value)
    assert "aten.mul.Tensor" in message and "a boolean or integer constant" in message
    assert "test_torch_import_attention.py" in message  # the model's line
