"""The C kernels of the elementwise family against the interpreter (gcc, ASan, UBSan).

Each build is a few tenths of a second, so one function often holds several ops: every result
is compared. The cases cover every op on IEEE edge values (flat kernels), every broadcasting
layout the emitter simplifies differently (broadcast kernels), and results written in place
over an operand.
"""

from __future__ import annotations

import numpy as np
import pytest
from adir_testing import tensor_type
from c_testing import check_c_against_interpreter, run_pipeline

from adir.context import parse_module
from adir.dialects.kernel import KernelOp
from adir.passes import PLANNING_PIPELINE

RNG = np.random.default_rng(0)
SGD = "autodiff,insert-optimizer{kind=sgd lr=0.1}"

BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum"]
UNARY = ["neg", "exp", "log", "sqrt"]
PREDICATES = ["eq", "ne", "lt", "le", "gt", "ge"]
EDGE = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e-38, 3e38], np.float32)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def function_ir(
    args: list[tuple[str, str]], lines: list[str], results: list[tuple[str, str]]
) -> str:
    """`func.func @f` with these (name, type) arguments, body lines and returned values."""
    params = ", ".join(f"%{name}: {type_}" for name, type_ in args)
    types = ", ".join(type_ for _, type_ in results)
    values = ", ".join(f"%{name}" for name, _ in results)
    body = "\n".join(f"  {line}" for line in lines)
    return f"func.func @f({params}) -> ({types}) {{\n{body}\n  func.return {values} : {types}\n}}"


def binary_line(op: str, result: str, a: tuple, b: tuple, out: tuple) -> str:
    ta, tb, tr = tensor_type(a), tensor_type(b), tensor_type(out)
    return f"%{result} = adir.{op} %a, %b : {ta}, {tb} -> {tr}"


@pytest.mark.parametrize("op", BINARY)
def test_binary_flat_on_edge_values(op: str) -> None:
    """Every pair of edge values through the flat kernel: x/0 = inf, 0/0 = nan, a negative base
    to a non-integer power is nan, overflow to inf, and maximum/minimum propagate nan from
    either side as numpy does."""
    a, b = np.meshgrid(EDGE, EDGE)
    t = tensor_type(a.shape)
    text = function_ir(
        [("a", t), ("b", t)], [binary_line(op, "r", a.shape, a.shape, a.shape)], [("r", t)]
    )
    check_c_against_interpreter(text, "f", [[a, b]])


BROADCASTS = [
    ((8, 16), (16,)),  # a bias row: inner rows contiguous in both, the outer dim broadcast
    ((5,), ()),  # a scalar rhs
    ((), (2, 3)),  # a scalar lhs
    ((4, 1, 3), (2, 1)),  # both sides broadcast, ranks differ
    ((3, 1), (1, 5)),  # an outer product: lhs broadcast along rows, rhs along columns
    ((2, 3, 4), (2, 1, 4)),  # a middle dim broadcast: rows found through the outer dims
    ((2, 1, 3, 1, 5), (3, 1, 1)),  # rank 5 with dims of size 1 dropped
    ((1, 6), (6,)),  # different shapes, same layout: the flat kernel
    ((1, 1), (1,)),  # single elements: the flat kernel of one element
]


@pytest.mark.parametrize(("lhs", "rhs"), BROADCASTS, ids=str)
def test_binary_broadcast(lhs: tuple, rhs: tuple) -> None:
    """All seven binary ops on one broadcasting layout (a positive lhs, so that pow is finite)."""
    out = tuple(np.broadcast_shapes(lhs, rhs))
    lines = [binary_line(op, op, lhs, rhs, out) for op in BINARY]
    text = function_ir(
        [("a", tensor_type(lhs)), ("b", tensor_type(rhs))],
        lines,
        [(op, tensor_type(out)) for op in BINARY],
    )
    a = RNG.uniform(0.1, 2.0, lhs).astype(np.float32)
    check_c_against_interpreter(text, "f", [[a, normal(*rhs)], [a, normal(*rhs)]])


def test_unary_on_edge_values() -> None:
    """neg, exp, log and sqrt on edge values (log 0 = -inf, log and sqrt of negatives are nan,
    exp overflows to inf) and on an odd number of random values."""
    x = np.concatenate([EDGE, normal(8)])
    t = tensor_type(x.shape)
    lines = [f"%{op} = adir.{op} %x : {t}" for op in UNARY]
    text = function_ir([("x", t)], lines, [(op, t) for op in UNARY])
    check_c_against_interpreter(text, "f", [[x]])


def test_cmp_flat_on_edge_values() -> None:
    """Every predicate on every pair of edge values, as 0/1 bytes: nan compares false except
    under ne, and -0 equals +0."""
    a, b = np.meshgrid(EDGE, EDGE)
    t, r = tensor_type(a.shape), tensor_type(a.shape, "i1")
    lines = [f'%{p} = adir.cmp %a, %b {{predicate = "{p}"}} : {t}, {t} -> {r}' for p in PREDICATES]
    text = function_ir([("a", t), ("b", t)], lines, [(p, r) for p in PREDICATES])
    check_c_against_interpreter(text, "f", [[a, b]])


def test_cmp_broadcast() -> None:
    """cmp through the broadcast kernel, a row against a matrix and a scalar against a matrix,
    on small integers so that the equal cases (le, ge, eq) occur."""
    ta, tb, ts = tensor_type((3, 4)), tensor_type((4,)), tensor_type(())
    r = tensor_type((3, 4), "i1")
    lines = [
        f'%le = adir.cmp %a, %b {{predicate = "le"}} : {ta}, {tb} -> {r}',
        f'%eq = adir.cmp %s, %a {{predicate = "eq"}} : {ts}, {ta} -> {r}',
    ]
    text = function_ir([("a", ta), ("b", tb), ("s", ts)], lines, [("le", r), ("eq", r)])
    a = RNG.integers(-2, 3, (3, 4)).astype(np.float32)
    b = RNG.integers(-2, 3, (4,)).astype(np.float32)
    check_c_against_interpreter(text, "f", [[a, b, np.float32(1.0).reshape(())]])


def test_select_flat_and_broadcast() -> None:
    """select with three operands of one shape (the flat kernel), and with a condition, an
    on_true and a scalar on_false that broadcast together (as torch.where), one result each."""
    tc, t = tensor_type((3, 5), "i1"), tensor_type((3, 5))
    tc3, tt, tf, tr = (
        tensor_type((2, 1, 3), "i1"),
        tensor_type((4, 3)),
        tensor_type(()),
        tensor_type((2, 4, 3)),
    )
    lines = [
        f"%flat = adir.select %c, %x, %y : {tc}, {t}, {t} -> {t}",
        f"%wide = adir.select %c3, %u, %v : {tc3}, {tt}, {tf} -> {tr}",
    ]
    args = [("c", tc), ("x", t), ("y", t), ("c3", tc3), ("u", tt), ("v", tf)]
    text = function_ir(args, lines, [("flat", t), ("wide", tr)])
    inputs = [
        normal(3, 5) > 0,
        normal(3, 5),
        normal(3, 5),
        normal(2, 1, 3) > 0,
        normal(4, 3),
        np.float32(-2.5).reshape(()),
    ]
    check_c_against_interpreter(text, "f", [inputs])


IN_PLACE = """
func.func @f(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>, %r: tensor<5xf32>, %c: tensor<f32>,
             %s: tensor<f32>) -> tensor<4x5xf32> {
  %0 = adir.mul %a, %b : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %1 = adir.exp %0 : tensor<4x5xf32>
  %2 = adir.sub %r, %1 : tensor<5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %3 = adir.maximum %2, %c : tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
  %4 = adir.cmp %3, %a {predicate = "gt"} : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xi1>
  %5 = adir.select %4, %s, %3 : tensor<4x5xi1>, tensor<f32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %6 = adir.pow %5, %5 : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  func.return %6 : tensor<4x5xf32>
}
"""


def test_in_place_over_an_operand() -> None:
    """Kernels whose output is one of their inputs: a unary op, a broadcast sub writing over its
    rhs while its lhs broadcasts, maximum over its lhs against a scalar, select over on_false
    with a scalar on_true, and pow of a buffer with itself. The test first checks that
    bufferize did make each of them in place."""
    planned = run_pipeline(
        parse_module(IN_PLACE, "test.mlir"),
        f"infer-shapes,{PLANNING_PIPELINE}",
    )
    kernels = [op for op in planned.walk() if isinstance(op, KernelOp)]
    in_place = [op.name.removeprefix("adir_kernel.") for op in kernels if op.outs[0] in op.ins]
    assert in_place == ["exp", "sub", "maximum", "select", "pow"]
    inputs = [normal(4, 5), normal(4, 5), normal(5), np.float32(0.5).reshape(())]
    check_c_against_interpreter(IN_PLACE, "f", [[*inputs, np.float32(1.5).reshape(())]])


TRAINING = """
adir.param @w : tensor<3x4xf32> = #adir.uniform<low = 0.5, high = 1.5, seed = 1>
adir.param @b : tensor<4xf32> = #adir.uniform<low = -0.3, high = 0.3, seed = 2>
func.func @loss(%x: tensor<3x4xf32>, %y: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %b = adir.load @b : tensor<4xf32>
  %p = adir.mul %x, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %q = adir.add %p, %b : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %e = adir.exp %q : tensor<3x4xf32>
  %s = adir.sqrt %e : tensor<3x4xf32>
  %m = adir.sum %s {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<4xf32>
  %d = adir.div %m, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = adir.log %d : tensor<4xf32>
  %mx = adir.maximum %l, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %mn = adir.minimum %mx, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %pw = adir.pow %mn, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %n = adir.neg %pw : tensor<4xf32>
  %loss = adir.mean %n : tensor<4xf32> -> tensor<f32>
  func.return %loss : tensor<f32>
}
"""


def test_training_step_through_every_arithmetic_op() -> None:
    """Three SGD steps of a loss built from the arithmetic ops: their gradients (cmp and select
    for maximum/minimum, broadcasts for the bias, a sum for its gradient) and the in-place
    parameter updates."""
    x = RNG.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    y = RNG.uniform(0.5, 1.5, (4,)).astype(np.float32)
    check_c_against_interpreter(TRAINING, "train_step", [[x, y]] * 3, differentiate=SGD)


EMPTY = """
func.func @f(%b: tensor<3xf32>) -> tensor<3xf32> {
  %e = adir.constant dense<> : tensor<0x3xf32>
  %x = adir.add %e, %b : tensor<0x3xf32>, tensor<3xf32> -> tensor<0x3xf32>
  %s = adir.sum %x {axes = array<i64: 0>} : tensor<0x3xf32> -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}
"""


def test_broadcast_to_no_elements() -> None:
    """A broadcast whose result has no elements reads nothing (its sum is 0). (The empty
    operand is a constant: the test driver cannot pass an argument of no elements.)"""
    check_c_against_interpreter(EMPTY, "f", [[normal(3)]])
