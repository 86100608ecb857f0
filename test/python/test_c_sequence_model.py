"""A small sequence classifier, Embedding(50, 16) -> LayerNorm(16) -> mean over the sequence ->
Linear(16, 4) -> cross-entropy, brought in the way a user would: `adir-import` on this file,
`adir-opt --optimizer=sgd --plan-memory` (the shortcut pipeline, with its weight-update fusion
and reordering), the C built with ASan and UBSan. 20 SGD steps of the C give the loss of every
step and every parameter after them to 1e-4 relative (parameters also to 1e-4 of their
tensor's largest magnitude, as in test_c_torch_import.py: float32 on both sides, different
summation orders) against `torch.optim.SGD` on the same module and data.

The tokens are int64 in PyTorch and i32 in adir (the importer's rule for integer inputs); they
include the padding index 0, whose row of the table must not move; tokens that never occur
keep their rows too, while the rows of repeated tokens accumulate their gradients. The import
also goes through the importer API, which gives the same IR.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import build_c, c_compilers
from torch import nn

from adir.context import parse_module
from adir.frontends.torch_import import import_module, symbol_names

STEPS, LR, RTOL = 20, 0.5, 1e-4
BATCH, SEQUENCE, TOKENS, CLASSES = 4, 7, 50, 4
BIN = Path(sys.executable).parent


class TinySequenceClassifier(nn.Module):
    """Token embeddings, layer-normalised, averaged over the sequence, then a linear
    classifier: the embedding and normalisation of a tiny transformer without its attention."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embedding = nn.Embedding(TOKENS, 16, padding_idx=0)
        self.norm = nn.LayerNorm(16)
        self.classifier = nn.Linear(16, CLASSES)
        with torch.no_grad():  # weight and bias away from PyTorch's 1 and 0, so both matter
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.norm(self.embedding(tokens)).mean(dim=1))


def batches() -> list[tuple[np.ndarray, np.ndarray]]:
    """Tokens from the first 30 of the 50 (so rows 30..49 get no gradient), with padding."""
    rng = np.random.default_rng(7)
    data = []
    for _ in range(STEPS):
        tokens = rng.integers(0, 30, (BATCH, SEQUENCE)).astype(np.int64)
        tokens[:, -2:] = 0  # padded sequences
        data.append((tokens, rng.integers(0, CLASSES, BATCH).astype(np.int64)))
    return data


def torch_training(data: list[tuple[np.ndarray, np.ndarray]]) -> tuple[list[float], dict]:
    model = TinySequenceClassifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for tokens, label in data:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(torch.from_numpy(tokens)), torch.from_numpy(label))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    state = model.state_dict()
    symbols = symbol_names(list(state))
    return losses, {symbols[name]: tensor.detach().numpy() for name, tensor in state.items()}


def run(command: list[str]) -> str:
    completed = subprocess.run(command, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.mark.slow
def test_sequence_model_in_c_trains_like_pytorch(tmp_path: Path) -> None:
    imported = run(
        [
            str(BIN / "adir-import"),
            f"{__file__}:TinySequenceClassifier",
            "--input-shape",
            f"{BATCH},{SEQUENCE}:i64",
            "--loss",
            "cross_entropy",
            "-o",
            "-",
        ]
    )
    api = import_module(
        TinySequenceClassifier(),
        (torch.zeros((BATCH, SEQUENCE), dtype=torch.int64),),
        loss="cross_entropy",
    )
    assert str(parse_module(imported, "model.mlir")) == str(api)
    assert "adir.embedding" in imported and "adir.layer_norm" in imported
    assert "%tokens: tensor<4x7xi32>" in imported
    (tmp_path / "model.mlir").write_text(imported)
    planned_text = run(
        [
            str(BIN / "adir-opt"),
            "--optimizer=sgd",
            f"--lr={LR}",
            "--plan-memory",
            str(tmp_path / "model.mlir"),
        ]
    )
    planned = parse_module(planned_text, "planned.mlir")
    data = batches()
    c_data = [(tokens.astype(np.int32), label.astype(np.int32)) for tokens, label in data]
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(
            planned, "train_step", STEPS, Path(directory), c_compilers()[0], sanitize=True
        )
        outputs = build.run(0, c_data)
    c_losses = np.array([float(v) for v in outputs[:STEPS]])
    params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]
    torch_losses, torch_state = torch_training(data)
    np.testing.assert_allclose(c_losses, np.array(torch_losses), rtol=RTOL)
    assert len(outputs) == STEPS + len(params)
    c_state = dict(zip(params, outputs[STEPS:], strict=True))
    assert set(c_state) == set(torch_state)
    for symbol, value in c_state.items():
        expected = torch_state[symbol]
        scale = np.abs(expected).max()
        np.testing.assert_allclose(value, expected, rtol=RTOL, atol=RTOL * scale, err_msg=symbol)
    initial = copy.deepcopy(TinySequenceClassifier().embedding.weight.detach().numpy())
    table = c_state["embedding_weight"]
    np.testing.assert_array_equal(table[0], initial[0])  # the padding row
    np.testing.assert_array_equal(table[30:], initial[30:])  # tokens never seen
    assert not np.array_equal(table[1:30], initial[1:30])
