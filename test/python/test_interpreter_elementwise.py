"""The elementwise family in the interpreter equals PyTorch, with broadcasting and edge values.

float64 runs compare to 1e-12 (the same IEEE operations); float32 to 1e-6 relative (numpy and
PyTorch may use different vectorised exp/log)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import assert_close, interpret, tensor_type, to_torch

BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "pow": torch.pow,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}
UNARY = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt}

# (lhs shape, rhs shape): equal, trailing broadcast, both sides broadcast, scalar.
BROADCAST_CASES = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((4, 1, 3), (2, 1)),
    ((), (2, 3)),
    ((5,), ()),
]


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(a, b))


def binary_ir(op: str, a: tuple, b: tuple) -> str:
    ta, tb, tr = tensor_type(a), tensor_type(b), tensor_type(broadcast_shape(a, b))
    return f"""
func.func @f(%a: {ta}, %b: {tb}) -> {tr} {{
  %0 = adir.{op} %a, %b : {ta}, {tb} -> {tr}
  func.return %0 : {tr}
}}"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", BROADCAST_CASES, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_matches_torch(op: str, shapes: tuple, dtype) -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    if op == "pow":
        a = np.abs(a) + 0.1  # a real power of a negative base is nan in both; tested below
    (actual,) = interpret(binary_ir(op, *shapes), "f", a, b, float_dtype=dtype)
    expected = BINARY[op](to_torch(a), to_torch(b))
    tolerance = 1e-12 if dtype == np.float64 else 1e-6
    assert actual.dtype == dtype
    assert_close(actual, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_matches_torch(op: str, dtype) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)).astype(dtype)
    if op in ("log", "sqrt"):
        x = np.abs(x) + 1e-3
    t = tensor_type((3, 4))
    ir = f"func.func @f(%x: {t}) -> {t} {{\n %0 = adir.{op} %x : {t}\n func.return %0 : {t}\n}}"
    (actual,) = interpret(ir, "f", x, float_dtype=dtype)
    tolerance = 1e-12 if dtype == np.float64 else 1e-6
    assert_close(actual, UNARY[op](to_torch(x)), rtol=tolerance, atol=tolerance)


EDGE = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-38, 3e38], np.float32)


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_edge_values_match_torch(op: str) -> None:
    """log(0) = -inf, log(-1) = nan, sqrt(-1) = nan, exp(inf) = inf, exp(89) = inf in f32."""
    t = tensor_type(EDGE.shape)
    ir = f"func.func @f(%x: {t}) -> {t} {{\n %0 = adir.{op} %x : {t}\n func.return %0 : {t}\n}}"
    (actual,) = interpret(ir, "f", EDGE)
    assert_close(actual, UNARY[op](to_torch(EDGE)), rtol=1e-6, atol=0)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_edge_values_match_torch(op: str) -> None:
    """Every pair of edge values: x/0 = inf, 0/0 = nan, (-1)**0.5 = nan, max(nan, 1) = nan."""
    a, b = np.meshgrid(EDGE, EDGE)
    shape = a.shape
    (actual,) = interpret(binary_ir(op, shape, shape), "f", a, b)
    assert_close(actual, BINARY[op](to_torch(a), to_torch(b)), rtol=1e-6, atol=0)


PREDICATES = {
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
}


@pytest.mark.parametrize("predicate", sorted(PREDICATES))
def test_cmp_matches_torch_including_nan(predicate: str) -> None:
    a, b = np.meshgrid(EDGE, EDGE[:4])
    ta, tr = tensor_type(a.shape), tensor_type(a.shape, "i1")
    ir = f"""
func.func @f(%a: {ta}, %b: {ta}) -> {tr} {{
  %0 = adir.cmp %a, %b {{predicate = "{predicate}"}} : {ta}, {ta} -> {tr}
  func.return %0 : {tr}
}}"""
    (actual,) = interpret(ir, "f", a, b)
    expected = PREDICATES[predicate](to_torch(a), to_torch(b)).numpy()
    assert actual.dtype == np.bool_
    np.testing.assert_array_equal(actual, expected)


def test_select_broadcasts_like_torch_where() -> None:
    rng = np.random.default_rng(5)
    condition = rng.standard_normal((2, 1, 3)) > 0
    on_true = rng.standard_normal((4, 3)).astype(np.float32)
    on_false = np.float32(-2.5).reshape(())
    tc, tt, tf, tr = (
        tensor_type((2, 1, 3), "i1"),
        tensor_type((4, 3)),
        tensor_type(()),
        tensor_type((2, 4, 3)),
    )
    ir = f"""
func.func @f(%c: {tc}, %t: {tt}, %e: {tf}) -> {tr} {{
  %0 = adir.select %c, %t, %e : {tc}, {tt}, {tf} -> {tr}
  func.return %0 : {tr}
}}"""
    (actual,) = interpret(ir, "f", condition, on_true, on_false)
    expected = torch.where(to_torch(condition), to_torch(on_true), to_torch(on_false))
    assert_close(actual, expected, rtol=0, atol=0)
