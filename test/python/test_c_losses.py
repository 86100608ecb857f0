"""The C kernels of the losses family against the interpreter (gcc, ASan, UBSan): every loss and
its gradient with each reduction, the classification losses with each form of target (i32 or
i64 class indices, class probabilities; batched and unbatched), inputs where a naive formula
overflows or a log is clamped, the seed model's training step, and what the C does with data
the interpreter rejects."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from c_testing import build_c, c_compilers, check_c_against_interpreter, run_pipeline

from adir.context import parse_module

RNG = np.random.default_rng(0)
EXAMPLES = Path(__file__).parents[2] / "examples"


def tensor(shape: tuple[int, ...], element: str = "f32") -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{element}>"


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def uniform(shape: tuple[int, ...], low: float = 0.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


def loss_and_grad_ir(ops: list[str], reduction: str, x: str, t: str, loss: str) -> str:
    """@f(x, t, dloss) returning each op's loss and its input's adjoint, in the op order."""
    r = f'{{reduction = "{reduction}"}}'
    lines, results = [], []
    for op in ops:
        lines.append(f"  %{op} = adir.{op} %x, %t {r} : {x}, {t} -> {loss}")
        lines.append(f"  %d_{op} = adir.{op}_grad %x, %t, %dl {r} : {x}, {t}, {loss} -> {x}")
        results += [(f"%{op}", loss), (f"%d_{op}", x)]
    values, types = ", ".join(v for v, _ in results), ", ".join(t for _, t in results)
    return "\n".join(
        [
            f"func.func @f(%x: {x}, %t: {t}, %dl: {loss}) -> ({types}) {{",
            *lines,
            f"  func.return {values} : {types}",
            "}",
        ]
    )


# --- mse, bce, bce_with_logits ----------------------------------------------------------------

# One shape per reduction: a vector, a matrix (mean divides by 15), a 3-D tensor.
ELEMENTWISE_CASES = [("none", (7,)), ("mean", (3, 5)), ("sum", (2, 3, 5))]


@pytest.mark.parametrize(("reduction", "shape"), ELEMENTWISE_CASES, ids=str)
def test_mse(reduction: str, shape: tuple[int, ...]) -> None:
    """mse and mse_grad (2 / numel rounded once for "mean")."""
    loss = tensor(shape if reduction == "none" else ())
    text = loss_and_grad_ir(["mse"], reduction, tensor(shape), tensor(shape), loss)
    dloss = normal(*shape) if reduction == "none" else np.float32(1.7)
    check_c_against_interpreter(text, "f", [[3 * normal(*shape), normal(*shape), dloss]])


@pytest.mark.parametrize(("reduction", "shape"), ELEMENTWISE_CASES, ids=str)
def test_bce(reduction: str, shape: tuple[int, ...]) -> None:
    """bce and bce_grad on soft targets, with inputs of exactly 0 and 1 among them: the logs
    clamp at -100 and the gradient's denominator at 1e-12 (finite, huge), as in PyTorch."""
    loss = tensor(shape if reduction == "none" else ())
    text = loss_and_grad_ir(["bce"], reduction, tensor(shape), tensor(shape), loss)
    x = uniform(shape, 0.01, 0.99)
    x.flat[0], x.flat[-1], x.flat[2] = 0.0, 1.0, 1e-30
    dloss = normal(*shape) if reduction == "none" else np.float32(0.6)
    check_c_against_interpreter(text, "f", [[x, uniform(shape), dloss]])


@pytest.mark.parametrize(("reduction", "shape"), ELEMENTWISE_CASES, ids=str)
def test_bce_with_logits(reduction: str, shape: tuple[int, ...]) -> None:
    """bce_with_logits and its gradient on logits up to +-100 (exp(-x) overflows naively)."""
    loss = tensor(shape if reduction == "none" else ())
    text = loss_and_grad_ir(["bce_with_logits"], reduction, tensor(shape), tensor(shape), loss)
    x = 5 * normal(*shape)
    x.flat[0], x.flat[1], x.flat[-1] = -100.0, 100.0, 50.0
    dloss = normal(*shape) if reduction == "none" else np.float32(-2.5)
    check_c_against_interpreter(text, "f", [[x, uniform(shape), dloss]])


# --- nll and cross_entropy ----------------------------------------------------------------------


def class_target(form: str, batch: tuple[int, ...], classes: int) -> tuple[str, np.ndarray]:
    """(its tensor type, a value) of a target: "i32" / "i64" indices or "probs" (rows of
    probabilities summing to 1; a softmax of random logits)."""
    if form == "probs":
        shape = (*batch, classes)
        z = np.exp(normal(*shape))
        return tensor(shape), (z / z.sum(axis=-1, keepdims=True)).astype(np.float32)
    dtype = np.int32 if form == "i32" else np.int64
    return tensor(batch, form), RNG.integers(0, classes, batch).astype(dtype)


@pytest.mark.parametrize(
    ("form", "reduction", "batch", "classes"),
    [
        ("i32", "none", (3,), 7),
        ("i32", "mean", (3,), 7),
        ("i32", "sum", (5,), 2),
        ("i64", "mean", (4,), 9),
        ("probs", "none", (3,), 7),
        ("probs", "mean", (5,), 4),
        ("probs", "sum", (2,), 3),
        ("i32", "none", (), 6),  # unbatched: input [C], target [], one loss of shape []
        ("i64", "mean", (), 5),
        ("probs", "sum", (), 6),
    ],
    ids=str,
)
def test_nll_and_cross_entropy(
    form: str, reduction: str, batch: tuple[int, ...], classes: int
) -> None:
    """nll and cross_entropy with their gradients for one form of target and reduction."""
    x = tensor((*batch, classes))
    t, target = class_target(form, batch, classes)
    loss_shape = batch if reduction == "none" else ()
    text = loss_and_grad_ir(["nll", "cross_entropy"], reduction, x, t, tensor(loss_shape))
    dloss = normal(*loss_shape) if loss_shape else np.float32(1.3)
    check_c_against_interpreter(text, "f", [[3 * normal(*batch, classes), target, dloss]])


def test_cross_entropy_of_large_logits() -> None:
    """Logits of +-50 and +-1e4: cross_entropy stays finite (the max is subtracted first) and
    its gradient is the interpreter's, both where softmax saturates to one class and not."""
    x, t = tensor((4, 5)), tensor((4,), "i32")
    text = loss_and_grad_ir(["cross_entropy"], "mean", x, t, tensor(()))
    logits = np.array(
        [
            [50.0, -50.0, 0.0, 49.0, -1.0],
            [-50.0, -50.0, -50.0, -50.0, -49.5],
            [1e4, -1e4, 0.0, 1e4, 3.0],
            [-1e4, 0.5, -0.5, 1.0, -1e4],
        ],
        np.float32,
    )
    labels = np.array([1, 4, 0, 3], np.int32)
    loss, _ = check_c_against_interpreter(text, "f", [[logits, labels, np.float32(1.0)]])
    assert np.isfinite(loss)


def test_mnist_mlp_trains() -> None:
    """The seed model's SGD step (matmul, sigmoid, log_softmax, nll; sigmoid_grad and the fused
    cross_entropy_grad of a [1, 10] input and an i32 label, "mean") for three steps: losses
    and final weights."""
    steps = [[uniform((1, 784)), np.array([label], np.int32)] for label in (3, 7, 0)]
    check_c_against_interpreter(
        (EXAMPLES / "mnist_mlp.mlir").read_text(),
        "train_step",
        steps,
        differentiate="autodiff,insert-optimizer{kind=sgd lr=0.1}",
    )


def test_invalid_targets_give_nan_in_c() -> None:
    """What the interpreter rejects as bad data: in C, a class index outside [0, C) makes its
    sample's loss and gradient row nan and reads nothing out of bounds (ASan); a bce
    probability outside [0, 1] makes that element's loss and gradient nan."""
    x, t, dl = "tensor<3x4xf32>", "tensor<3xi64>", "tensor<3xf32>"
    p = "tensor<2xf32>"
    none = '{reduction = "none"}'
    text = f"""
    func.func @f(%x: {x}, %t: {t}, %dl: {dl}, %p: {p}, %q: {p}, %dp: {p})
        -> ({dl}, {x}, {p}, {p}) {{
      %l = adir.cross_entropy %x, %t {none} : {x}, {t} -> {dl}
      %dx = adir.nll_grad %x, %t, %dl {none} : {x}, {t}, {dl} -> {x}
      %b = adir.bce %p, %q {none} : {p}
      %db = adir.bce_grad %p, %q, %dp {none} : {p}, {p}, {p} -> {p}
      func.return %l, %dx, %b, %db : {dl}, {x}, {p}, {p}
    }}"""
    module = run_pipeline(parse_module(text, "test.mlir"), "infer-shapes")
    planned = run_pipeline(module, "bufferize,plan-memory")
    args = [
        normal(3, 4),
        np.array([1, 4, -1], np.int64),
        np.ones(3, np.float32),
        np.array([0.5, 1.5], np.float32),
        np.array([0.25, 0.5], np.float32),
        np.ones(2, np.float32),
    ]
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(planned, "f", 1, Path(directory), c_compilers()[0], sanitize=True)
        loss, dx, bce, dbce = build.run(0, [args])
    assert np.isfinite(loss[0]) and np.isnan(loss[1:]).all()
    assert np.isfinite(dx[0]).all() and np.isnan(dx[1:]).all()
    assert np.isfinite(bce[0]) and np.isnan(bce[1])
    assert np.isfinite(dbce[0]) and np.isnan(dbce[1])
