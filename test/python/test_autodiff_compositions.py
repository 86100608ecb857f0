"""Property test: gradients of random compositions of 3 to 12 ops, with random fan-out and
broadcasting, equal torch.autograd's.

A program draws each op's operands from every value computed so far (so values fan out at
random), on shapes that broadcast against the (2, 3) "full" shape: (), (1, 3), (2, 1), (3,),
(2, 3). Ops are chosen so every intermediate stays finite (exp only after tanh, division only by
something in [1, 3]). The same program is evaluated by torch to get the reference gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from adir_testing import tensor_type
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    differentiate_ir,
    torch_gradients,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SHAPES = [(), (1, 3), (2, 1), (3,), (2, 3)]

UNARY = {
    "neg": torch.neg,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "softplus": F.softplus,
    "gelu": F.gelu,
}
BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}


@dataclass
class Step:
    kind: str  # a UNARY or BINARY name, or exp_tanh, safe_div, sum, mean, max, softmax,
    # log_softmax, matmul
    operands: tuple[int, ...]
    axis: int = -1


def result_shape(step: Step, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    ins = [shapes[i] for i in step.operands]
    if step.kind in ("sum", "mean", "max"):
        return tuple(1 for _ in ins[0]) if step.axis == -1 else ()
    if step.kind == "matmul":
        return (2, 3)
    return tuple(np.broadcast_shapes(*ins))


@st.composite
def programs(draw) -> tuple[list[tuple[int, ...]], list[Step]]:
    n_args = draw(st.integers(1, 3))
    # The first argument has the full shape, so matmul and softmax always find an operand.
    shapes = [(2, 3)] + [draw(st.sampled_from(SHAPES)) for _ in range(n_args - 1)]
    steps: list[Step] = []
    kinds = [
        *UNARY,
        *BINARY,
        "exp_tanh",
        "safe_div",
        "sum",
        "mean",
        "max",
        "softmax",
        "log_softmax",
        "matmul",
    ]
    for _ in range(draw(st.integers(3, 12))):
        kind = draw(st.sampled_from(kinds))
        pick = st.integers(0, len(shapes) - 1)
        if kind in BINARY or kind == "safe_div":
            step = Step(kind, (draw(pick), draw(pick)))
        elif kind == "matmul":
            full = [i for i, s in enumerate(shapes) if s == (2, 3)]  # argument 0 at least
            step = Step(kind, (draw(st.sampled_from(full)), draw(st.sampled_from(full))))
        elif kind in ("softmax", "log_softmax"):
            ranked = [i for i, s in enumerate(shapes) if len(s) >= 1]  # argument 0 at least
            operand = draw(st.sampled_from(ranked))
            step = Step(kind, (operand,), draw(st.integers(-len(shapes[operand]), -1)))
        elif kind in ("sum", "mean", "max"):
            # axis -1 stands for "all axes, keepdims" and 0 for "all axes to a scalar"
            step = Step(kind, (draw(pick),), draw(st.sampled_from([-1, 0])))
        else:
            step = Step(kind, (draw(pick),))
        steps.append(step)
        shapes.append(result_shape(step, shapes))
    return shapes[:n_args], steps


def to_ir(arg_shapes: list[tuple[int, ...]], steps: list[Step]) -> str:
    shapes = list(arg_shapes)
    names = [f"%a{i}" for i in range(len(shapes))]
    lines: list[str] = []

    def emit(op: str) -> str:
        """Append `%vN = <op>` (the op with its types) and return `%vN`."""
        name = f"%v{len(lines)}"
        lines.append(f"  {name} = {op}")
        return name

    for step in steps:
        ins = [names[i] for i in step.operands]
        in_types = [tensor_type(shapes[i]) for i in step.operands]
        out = result_shape(step, shapes)
        sig = f"{', '.join(in_types)} -> {tensor_type(out)}"
        if step.kind in UNARY or step.kind in BINARY:
            name = emit(f"adir.{step.kind} {', '.join(ins)} : {sig}")
        elif step.kind == "exp_tanh":
            name = emit(f"adir.exp {emit(f'adir.tanh {ins[0]} : {sig}')} : {tensor_type(out)}")
        elif step.kind == "safe_div":  # a / (2 + tanh(b)): the divisor is in [1, 3]
            t = emit(f"adir.tanh {ins[1]} : {in_types[1]}")
            two = emit("adir.constant dense<2.0> : tensor<f32>")
            divisor = emit(f"adir.add {t}, {two} : {in_types[1]}, tensor<f32> -> {in_types[1]}")
            name = emit(f"adir.div {ins[0]}, {divisor} : {sig}")
        elif step.kind in ("sum", "mean", "max"):
            keep = " {keepdims}" if step.axis == -1 else ""
            name = emit(f"adir.{step.kind} {ins[0]}{keep} : {sig}")
        elif step.kind in ("softmax", "log_softmax"):
            name = emit(f"adir.{step.kind} {ins[0]} {{axis = {step.axis} : i64}} : {sig}")
        else:  # two (2, 3) values a, b: (a @ b^T) @ a, through the transpose flag
            square = f"{', '.join(in_types)} -> tensor<2x2xf32>"
            t = emit(f"adir.matmul {ins[0]}, {ins[1]} {{transpose_b}} : {square}")
            name = emit(
                f"adir.matmul {t}, {ins[0]} : tensor<2x2xf32>, {in_types[0]} -> {tensor_type(out)}"
            )
        names.append(name)
        shapes.append(out)
    # The loss adds the sum of the last value and of one middle value weighted by %r, so
    # several paths reach it.
    middle = len(arg_shapes) + len(steps) // 2
    lines += [
        f"  %s1 = adir.sum {names[-1]} : {tensor_type(shapes[-1])} -> tensor<f32>",
        f"  %w = adir.mul {names[middle]}, %r : {tensor_type(shapes[middle])}, tensor<2x3xf32>"
        " -> tensor<2x3xf32>",
        "  %s2 = adir.sum %w : tensor<2x3xf32> -> tensor<f32>",
        "  %loss = adir.add %s1, %s2 : tensor<f32>",
        "  func.return %loss : tensor<f32>",
    ]
    args = ", ".join(f"%a{i}: {tensor_type(s)}" for i, s in enumerate(arg_shapes))
    header = f"func.func @f({args}, %r: tensor<2x3xf32>) -> tensor<f32> {{"
    return "\n".join([header, *lines, "}"])


def torch_program(arg_shapes: list[tuple[int, ...]], steps: list[Step]):
    def run(*tensors: torch.Tensor) -> torch.Tensor:
        values = list(tensors[:-1])
        r = tensors[-1]
        for step in steps:
            ins = [values[i] for i in step.operands]
            if step.kind in UNARY:
                out = UNARY[step.kind](ins[0])
            elif step.kind in BINARY:
                out = BINARY[step.kind](*ins)
            elif step.kind == "exp_tanh":
                out = torch.exp(torch.tanh(ins[0]))
            elif step.kind == "safe_div":
                out = ins[0] / (torch.tanh(ins[1]) + 2.0)
            elif step.kind in ("sum", "mean", "max"):
                reduce = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax}[step.kind]
                dims = tuple(range(ins[0].dim()))
                out = reduce(ins[0], dim=dims, keepdim=step.axis == -1) if dims else ins[0]
            elif step.kind == "softmax":
                out = torch.softmax(ins[0], dim=step.axis)
            elif step.kind == "log_softmax":
                out = torch.log_softmax(ins[0], dim=step.axis)
            else:
                out = (ins[0] @ ins[1].T) @ ins[0]
            values.append(out)
        middle = values[len(arg_shapes) + len(steps) // 2]
        return values[-1].sum() + (middle * r).sum()

    return run


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**32 - 1))
def test_random_composition_gradients_equal_torch(program, seed: int) -> None:
    arg_shapes, steps = program
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s) for s in arg_shapes] + [rng.standard_normal((2, 3))]
    wrt = list(range(len(arg_shapes)))
    module = differentiate_ir(to_ir(arg_shapes, steps), "f", wrt)
    actual = adir_gradients(module, args)
    expected = torch_gradients(torch_program(arg_shapes, steps), args, wrt)
    assert_gradients_close(actual, expected)
