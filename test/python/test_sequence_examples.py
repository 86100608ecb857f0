"""The sequence models of examples/torch/ (gru.py, lstm.py, transformer.py), as they are
written: each imports with no edits, compiles with SGD and with Adam to
C built with -Wall -Wextra -Wpedantic -Werror and run under ASan and UBSan, and 20 training steps
of the C, at batch 1 and at batch 8, give the loss of every step and every parameter after them
to 1e-4 relative, against `torch.optim.SGD` / `torch.optim.Adam` on the same module and data
(float32 on both sides).

Both sides sum in their own orders, so they differ by rounding, carried through 20 steps and,
in the recurrent models, through 32 time steps of the same weights. Parameters are compared
elementwise with an absolute floor of 1e-4 of the tensor's largest magnitude (entries a step
carries through zero), as in test_har_cnn_example.py. `ADIR_SEQUENCE_REPORT=1` prints the
largest difference of each run, relative to its tensor's largest magnitude (docs/frontends.md
lists them).

One part of one parameter has no gradient in real arithmetic: the bias of the keys in each
attention layer (the middle third of `in_proj_bias`) adds `q . b_k` to every score of a query's
row, which the softmax takes away again. Its computed gradient is rounding noise (at most
6.7e-10 in PyTorch float32 on the example's first batch, 1.4e-18 in float64), and Adam turns
noise into steps of up to lr whatever its size (m / (sqrt(v) + eps) with eps = 1e-8), so under
Adam the C and PyTorch move those entries by different noise: they are compared to STEPS * lr
(`NOISE_DRIVEN`, examples_testing.check_trains_in_c_like_pytorch), as
test_mlperf_tiny_examples.py does for DS-CNN's scale-invariant gammas. SGD moves them by lr
times the noise, and is compared like every other entry.
"""

from __future__ import annotations

import os

import pytest
from examples_testing import check_trains_in_c_like_pytorch, load_example, training_matrix

from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import import_module

LR = {"sgd": 0.05, "adam": 0.001}
# Entries whose gradient is 0 in real arithmetic (the docstring says why), by model and symbol.
NOISE_DRIVEN = {
    "transformer": {
        f"encoder_layers_{layer}_self_attn_in_proj_bias": slice(64, 128) for layer in range(2)
    }
}
# CI: each model at batch 1, GRU and LSTM with SGD, the transformer with Adam (gcc and clang for
# SGD); ADIR_EXAMPLES_MATRIX=1: every model at batch 1 and 8 with both (examples_testing.py).
CI_RUNS = [("gru", "sgd", 1), ("lstm", "sgd", 1), ("transformer", "adam", 1)]
RUNS = training_matrix(
    CI_RUNS,
    [
        (name, optimizer, batch)
        for name in ("gru", "lstm", "transformer")
        for optimizer in ("sgd", "adam")
        for batch in (1, 8)
        if (name, optimizer, batch) not in CI_RUNS
    ],
)


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        # One linear map of the whole input, one of the hidden state per time step (32), the
        # classifier's; per step the input's row sliced out, and split into the gates: GRU
        # splits both maps into 3 (1 + 3 + 3 slices), LSTM their sum into 4 (1 + 4).
        ("gru", {"adir.matmul ": 34, "adir.sigmoid ": 64, "adir.tanh ": 32, "adir.slice ": 224}),
        ("lstm", {"adir.matmul ": 34, "adir.sigmoid ": 96, "adir.tanh ": 64, "adir.slice ": 160}),
        # Per layer: the in-projection, q k^T, softmax(.) v, the out-projection, 2 linears;
        # the softmax with PyTorch's guard for rows of -inf (a max, a cmp, a select).
        ("transformer", {"adir.matmul ": 14, "adir.softmax ": 2, "adir.layer_norm ": 4}),
    ],
)
def test_imports_with_no_edits(name: str, ops: dict[str, int]) -> None:
    example = load_example(name)
    module = import_module(example.model(), example.example_input(1))
    module.verify()
    text = module_to_text(module)
    assert "func.func @loss(%x: tensor<1x" in text and "adir.cross_entropy" in text
    assert {op: text.count(op) for op in ops} == ops


@pytest.mark.slow
@pytest.mark.parametrize(("name", "optimizer", "batch"), RUNS)
def test_trains_in_c_like_pytorch(name: str, optimizer: str, batch: int) -> None:
    report = bool(os.environ.get("ADIR_SEQUENCE_REPORT"))
    noise_driven = NOISE_DRIVEN.get(name)
    check_trains_in_c_like_pytorch(name, optimizer, batch, LR[optimizer], noise_driven, report)
