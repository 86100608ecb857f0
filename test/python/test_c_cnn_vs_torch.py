"""LeNet-5 and the DS-CNN, compiled to C, train like PyTorch: from the same initial weights and
on the same data, 50 steps of SGD (lr 0.01) and of Adam (lr 1e-3) give the same loss at every
step as `torch.optim.SGD` / `torch.optim.Adam` to 1e-4 relative (float32 on both sides,
different summation orders).

The PyTorch models are the ones the examples' interpreter tests check against
(test_lenet5_example.LeNet5, test_ds_cnn_example.DSCNN), holding the initializers' values,
which the C reproduces bit for bit. PyTorch cannot draw adir's dropout masks, so the DS-CNN
multiplies by the masks adir draws for each step (`dropout_multiplier` with the step's
counter); its batchnorms train their running statistics as buffers, as the C stores them.

Why SGD at lr 0.01: there a float64 PyTorch run of the same 50 steps stays within 7e-7 relative
of both float32 runs' losses, so 1e-4 leaves float32's own drift a factor of 150. At lr 0.1 the
comparison would be of rounding: LeNet-5 overshoots (its loss falls to 1e-3, where a difference
of 5e-8 is 5e-5 relative, then jumps to 9); and in the DS-CNN the float32 weights part from
float64's five times faster than at lr 0.01 until, at step 43, one batchnorm output within
rounding of zero falls on the other side of its ReLU, whose derivative is 1 on one side and 0
on the other. That step's gradients differ by O(1) in one entry, the weights by 2e-4, and every
later step flips more ReLUs (57, 287, 583, ...): each float32 run, the C (from step 35) and
PyTorch, ends 1e-2 from float64 and from the other. At lr 0.01 no ReLU flips (PyTorch float32
against float64) in the 50 steps.

Adam moves a parameter whose gradient is only rounding noise by noise-driven steps (see
test_c_examples.py: weights behind dead units, and the DS-CNN gammas on which the loss does not
depend); the loss, compared here, does not see them.

Measured, largest relative difference of a step's loss, C vs PyTorch float32 (vs float64):
LeNet-5 SGD 3.3e-7 (3.9e-7), Adam 5.0e-6 (4.8e-6, a loss of 0.26 off by 1.2e-6);
DS-CNN SGD 1.8e-7 (1.3e-7), Adam 1.2e-7 (1.7e-7).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_testing import parse_example
from c_testing import build_c, run_pipeline
from test_ds_cnn_example import DROPOUTS, DSCNN, SHAPE
from test_lenet5_example import torch_lenet

from adir.interpreter import Session
from adir.interpreter.normalization import dropout_counter, dropout_multiplier
from adir.passes import PLANNING_PIPELINE

STEPS = 50
LEARNING_RATES = {"sgd": 0.01, "adam": 1e-3}
TORCH_OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
CLASSES = {"lenet5": 10, "ds_cnn": 12}


def batches(example: str) -> tuple[np.ndarray, np.ndarray]:
    """STEPS random inputs of the example's shape (LeNet-5: pixels in [0, 1]; DS-CNN: MFCCs,
    standard normal) and labels that depend on them (a fixed random projection), so that there
    is something to learn."""
    module = parse_example(example)
    loss = next(op for op in module.ops if "adir.loss" in getattr(op, "attributes", {}))
    shape = tuple(loss.function_type.inputs.data[0].get_shape())
    rng = np.random.default_rng(7)
    if example == "lenet5":
        xs = rng.random((STEPS, *shape), dtype=np.float32)
    else:
        xs = rng.standard_normal((STEPS, *shape), dtype=np.float32)
    projection = rng.standard_normal((int(np.prod(shape)), CLASSES[example])).astype(np.float32)
    labels = np.argmax(xs.reshape(STEPS, -1) @ projection, axis=-1).astype(np.int32)
    return xs, labels.reshape(STEPS, 1)


def c_losses(example: str, optimizer: str, xs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The loss of each step of the example's generated C training step."""
    planned = run_pipeline(
        parse_example(example),
        f"infer-shapes,autodiff,insert-optimizer{{kind={optimizer} "
        f"lr={LEARNING_RATES[optimizer]}}},{PLANNING_PIPELINE}",
    )
    steps = [[x, label] for x, label in zip(xs, labels, strict=True)]
    if example == "ds_cnn":  # dropout's step counter
        steps = [[*args, np.array(step, np.int64)] for step, args in enumerate(steps)]
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(planned, "train_step", STEPS, Path(directory), sanitize=False)
        outputs = build.run(0, steps)
    return np.array([float(v) for v in outputs[:STEPS]])


def torch_ds_cnn(params: dict[str, np.ndarray]) -> DSCNN:
    """A float32 DSCNN holding the params (batchnorm running statistics as buffers)."""
    net = DSCNN()
    with torch.no_grad():
        for name, tensor in net.adir_names().items():
            tensor.copy_(torch.from_numpy(params[name]))
    return net


def dropout_masks(step: int) -> list[torch.Tensor]:
    """adir's dropout multipliers of the DS-CNN's two dropouts at this training step."""
    counter = dropout_counter(np.array(step, np.int64), float_step=False)
    return [
        torch.from_numpy(dropout_multiplier(SHAPE, np.dtype(np.float32), seed, counter, p))
        for seed, p in DROPOUTS
    ]


def torch_losses(example: str, optimizer: str, xs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The loss of each step of the same model trained by torch.optim, in float32."""
    initial = Session(parse_example(example)).params
    net = torch_lenet(initial) if example == "lenet5" else torch_ds_cnn(initial)
    net.train()
    torch_optimizer = TORCH_OPTIMIZERS[optimizer](net.parameters(), lr=LEARNING_RATES[optimizer])
    losses = []
    for step, (x, label) in enumerate(zip(xs, labels, strict=True)):
        torch_optimizer.zero_grad()
        inputs = torch.from_numpy(x)
        logits = net(inputs) if example == "lenet5" else net(inputs, dropout_masks(step))
        loss = F.cross_entropy(logits, torch.from_numpy(label).long())
        loss.backward()
        torch_optimizer.step()
        losses.append(loss.item())
    return np.array(losses)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", sorted(LEARNING_RATES))
@pytest.mark.parametrize("example", ["lenet5", "ds_cnn"])
def test_cnn_c_follows_pytorch_for_50_steps(example: str, optimizer: str) -> None:
    xs, labels = batches(example)
    c = c_losses(example, optimizer, xs, labels)
    np.testing.assert_allclose(c, torch_losses(example, optimizer, xs, labels), rtol=1e-4)
    # And the training did something: the last 20 steps' loss is below the first 20's.
    assert c[-20:].mean() < c[:20].mean()
