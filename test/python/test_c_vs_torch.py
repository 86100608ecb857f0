"""The seed MLP's generated C trains like PyTorch: from the same initial weights and on the same
data, 100 SGD steps at lr 0.01 give the same loss at every step to 1e-4 relative (float32 on
both sides, different summation orders)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from adir_testing import parse_example
from c_testing import build_c, run_pipeline

from adir.interpreter import Session
from adir.passes import PLANNING_PIPELINE

STEPS = 100


@pytest.mark.slow
def test_seed_mlp_c_follows_pytorch_for_100_steps() -> None:
    model = parse_example("mnist_mlp")
    planned = run_pipeline(
        model,
        f"infer-shapes,autodiff,insert-optimizer{{kind=sgd lr=0.01}},{PLANNING_PIPELINE}",
    )
    rng = np.random.default_rng(7)
    # MNIST-like inputs in [0, 1], and labels that depend on them (a fixed random projection),
    # so that there is something to learn.
    xs = rng.random((STEPS, 1, 784), dtype=np.float32)
    projection = rng.standard_normal((784, 10)).astype(np.float32)
    labels = np.argmax(xs @ projection, axis=-1).astype(np.int32)
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(planned, "train_step", STEPS, Path(directory), sanitize=False)
        outputs = build.run(0, [[x, label] for x, label in zip(xs, labels, strict=True)])
    c_losses = np.array([float(v) for v in outputs[:STEPS]])

    # The same initial weights: the initializers' values, which the C reproduces bit for bit.
    initial = Session(model).params
    w1 = torch.nn.Parameter(torch.from_numpy(initial["w1"].copy()))
    w2 = torch.nn.Parameter(torch.from_numpy(initial["w2"].copy()))
    optimizer = torch.optim.SGD([w1, w2], lr=0.01)
    torch_losses = []
    for x, label in zip(xs, labels, strict=True):
        optimizer.zero_grad()
        hidden = torch.sigmoid(torch.from_numpy(x) @ w1.T)
        log_probs = torch.log_softmax(hidden @ w2.T, dim=-1)
        loss = torch.nn.functional.nll_loss(log_probs, torch.from_numpy(label).long())
        loss.backward()
        optimizer.step()
        torch_losses.append(loss.item())
    np.testing.assert_allclose(c_losses, np.array(torch_losses), rtol=1e-4)
    # And the training did something: the last 20 steps' loss is below the first 20's.
    assert c_losses[-20:].mean() < c_losses[:20].mean()
