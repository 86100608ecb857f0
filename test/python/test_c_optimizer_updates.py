"""The C kernels of the optimizer's update ops against the interpreter (ASan, UBSan):

- `sgd_update`, `momentum_update`, `adam_update` with every option, in place over the parameter
  and its state (as bufferization uses them), bit for bit: the kernels round each operation
  once, in the order of the elementwise ops they stand for, as the interpreter does;
- their matmul forms with each transpose flag and across the kernels' 64-column block, in place,
  over several steps (to float32 rounding: the C sums the product in its own order);
- whole training steps of small MLPs from autodiff + insert-optimizer + fuse-weight-updates for
  every optimizer variant: losses, parameters and optimizer state agree with the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import check_c_against_interpreter
from test_optimizer_update_ops import MLP as TANH_MLP
from test_optimizer_update_ops import VARIANTS

RNG = np.random.default_rng(3)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def scalar(value: float) -> np.ndarray:
    return np.asarray(value, np.float32)


ADAM = "beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32"

# variant: (the update, its properties, its state, how many bias corrections it reads)
ELEMENTWISE = {
    "sgd": ("sgd_update", "", [], 0),
    "sgd_decay_clip": ("sgd_update", "weight_decay = 0.01 : f32, clip_value = 0.5 : f32", [], 0),
    "momentum": ("momentum_update", "momentum = 0.9 : f32", ["buf"], 0),
    "nesterov_decay_clip": (
        "momentum_update",
        "momentum = 0.9 : f32, nesterov, weight_decay = 0.01 : f32, clip_value = 0.5 : f32",
        ["buf"],
        0,
    ),
    "adam": ("adam_update", ADAM, ["m", "v"], 2),
    "adam_l2_clip": (
        "adam_update",
        f"{ADAM}, weight_decay = 0.1 : f32, clip_value = 0.5 : f32",
        ["m", "v"],
        2,
    ),
    "adamw": (
        "adam_update",
        f"{ADAM}, weight_decay = 0.1 : f32, decoupled_weight_decay",
        ["m", "v"],
        2,
    ),
}


def update_ir(update: str, properties: str, state: list[str], corrections: int, grad: str) -> str:
    """`@f(grad operands, lr, corrections...)`: one update of @p and its state, stored (so in
    place), returning the new parameter."""
    t = "tensor<5x70xf32>"
    params = "\n".join(
        f"adir.param @{name} : {t} = #adir.uniform<low = 0.0, high = 1.0, seed = {i}>"
        for i, name in enumerate(["p", *state], start=1)
    )
    loads = "\n".join(f"  %{name} = adir.load @{name} : {t}" for name in ["p", *state])
    scalars = ["%lr", *[f"%c{i}" for i in range(corrections)]]
    grad_args, grad_types = {
        "elementwise": (["%g"], [t]),
        "plain": (["%a", "%b"], ["tensor<5x3xf32>", "tensor<3x70xf32>"]),
        "transpose_a": (["%a", "%b"], ["tensor<3x5xf32>", "tensor<3x70xf32>"]),
        "transpose_b": (["%a", "%b"], ["tensor<5x3xf32>", "tensor<70x3xf32>"]),
    }[grad]
    flags = "" if grad in ("elementwise", "plain") else grad
    props = ", ".join(p for p in (flags, properties) if p)
    name = update if grad == "elementwise" else f"matmul_{update}"
    results = ["%new_p", *[f"%new_{s}" for s in state]]
    operands = ["%p", *[f"%{s}" for s in state], *grad_args, *scalars]
    operand_types = [t] * (1 + len(state)) + grad_types + ["tensor<f32>"] * len(scalars)
    result_types = ", ".join([t] * len(results))
    if len(results) > 1:
        result_types = f"({result_types})"
    argument_types = [*grad_types, *["tensor<f32>"] * len(scalars)]
    arguments = ", ".join(
        f"{v}: {ty}" for v, ty in zip([*grad_args, *scalars], argument_types, strict=True)
    )
    stores = "\n".join(
        f"  adir.store {r}, @{s} : {t}" for r, s in zip(results, ["p", *state], strict=True)
    )
    return f"""
{params}
func.func @f({arguments}) -> {t} {{
{loads}
  {", ".join(results)} = adir.{name} {", ".join(operands)} {{{props}}}
      : {", ".join(operand_types)} -> {result_types}
{stores}
  func.return %new_p : {t}
}}"""


def update_steps(grad: str, corrections: int) -> list[list[np.ndarray]]:
    shapes = {
        "elementwise": [(5, 70)],
        "plain": [(5, 3), (3, 70)],
        "transpose_a": [(3, 5), (3, 70)],
        "transpose_b": [(5, 3), (70, 3)],
    }[grad]
    data = []
    for t, lr in enumerate((0.1, 0.01, 0.5), start=1):
        args = [normal(*shape) for shape in shapes]
        # A nan gradient entry, which clipping lets through (as numpy's minimum/maximum do).
        args[0][0, 0] = np.nan if grad == "elementwise" and t == 2 else args[0][0, 0]
        scalars = [1.0 - 0.9**t, float(np.sqrt(np.float32(1.0 - 0.999**t)))][:corrections]
        data.append([*args, scalar(lr), *[scalar(c) for c in scalars]])
    return data


@pytest.mark.parametrize("variant", sorted(ELEMENTWISE))
def test_update_kernels_in_place_bit_for_bit(variant: str) -> None:
    update, properties, state, corrections = ELEMENTWISE[variant]
    text = update_ir(update, properties, state, corrections, "elementwise")
    steps = update_steps("elementwise", corrections)
    check_c_against_interpreter(text, "f", steps, rtol=0.0, atol=0.0)


@pytest.mark.parametrize("grad", ["plain", "transpose_a", "transpose_b"])
@pytest.mark.parametrize("variant", sorted(ELEMENTWISE))
def test_matmul_update_kernels_in_place_over_steps(variant: str, grad: str) -> None:
    update, properties, state, corrections = ELEMENTWISE[variant]
    text = update_ir(update, properties, state, corrections, grad)
    steps = update_steps(grad, corrections)
    check_c_against_interpreter(text, "f", steps, atol=1e-5)


MLP = """
adir.param @w1 : tensor<70x10xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 11>
adir.param @b1 : tensor<70xf32> = #adir.uniform<low = -0.2, high = 0.2, seed = 12>
adir.param @w2 : tensor<4x70xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 13>

func.func @loss(%x: tensor<8x10xf32>, %y: tensor<8xi64>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<70x10xf32>
  %b1 = adir.load @b1 : tensor<70xf32>
  %m1 = adir.matmul %x, %w1 {transpose_b} : tensor<8x10xf32>, tensor<70x10xf32> -> tensor<8x70xf32>
  %z1 = adir.add %m1, %b1 : tensor<8x70xf32>, tensor<70xf32> -> tensor<8x70xf32>
  %h1 = adir.sigmoid %z1 : tensor<8x70xf32>
  %w2 = adir.load @w2 : tensor<4x70xf32>
  %z2 = adir.matmul %h1, %w2 {transpose_b} : tensor<8x70xf32>, tensor<4x70xf32> -> tensor<8x4xf32>
  %l = adir.cross_entropy %z2, %y : tensor<8x4xf32>, tensor<8xi64> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def training_steps(options: str, x_shape: tuple[int, int], classes: int):
    steps = []
    for index in range(5):
        args = [normal(*x_shape), RNG.integers(0, classes, x_shape[0]).astype(np.int64)]
        if "runtime_lr" in options:
            args.append(scalar((0.02, 0.01, 0.005, 0.01, 0.03)[index]))
        steps.append(args)
    return steps


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("model", ["sigmoid_mlp", "tanh_mlp"])
def test_fused_training_steps_equal_the_interpreter(model: str, variant: str) -> None:
    """Losses of 5 steps, then every parameter and optimizer state; the sigmoid MLP's 70-wide
    w1 crosses the fused kernels' block boundary, the tanh MLP has per-parameter lr_scale and
    weight decay."""
    options = VARIANTS[variant]
    text, x_shape = {"sigmoid_mlp": (MLP, (8, 10)), "tanh_mlp": (TANH_MLP, (6, 10))}[model]
    check_c_against_interpreter(
        text,
        "train_step",
        training_steps(options, x_shape, 4),
        differentiate=f"autodiff,insert-optimizer{{{options}}},dce",
    )
