"""Helpers for checking VJP rules: differentiate small IR functions with the `autodiff` pass,
run the gradient function in the interpreter, compare with torch.autograd and with central
finite differences.

The usual check wraps one op so the loss is `sum(op(args) * r)` with a random `r`: the op's
result adjoint is then `r`, not all ones, so every entry of the rule is exercised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from adir_testing import tensor_type
from xdsl.dialects.builtin import ModuleOp

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass

# float64 interpretation against float64 autograd: the rules are exact formulas, so only
# rounding separates them.
RTOL = 1e-5


def differentiate_ir(ir: str, func: str = "f", wrt_args: Sequence[int] = ()) -> ModuleOp:
    """Parse, verify, run autodiff on @func; the module holds @func and @func_grad."""
    module = parse_module(ir, "test.mlir")
    module.verify()
    AutodiffPass(func=func, wrt_args=tuple(wrt_args)).apply(adir_context(), module)
    module.verify()
    return module


def wrapped_op_ir(op_text: str, operand_types: Sequence[str], result_type: str) -> str:
    """`@f(operands..., %r) = sum(op(operands) * r)`; OPERANDS in `op_text` stands for the
    operand list, and the op's types are appended."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    names = ", ".join(f"%a{i}" for i in range(len(operand_types)))
    types = ", ".join(operand_types)
    return f"""
func.func @f({args}, %r: {result_type}) -> tensor<f32> {{
  %y = {op_text.replace("OPERANDS", names)} : {types} -> {result_type}
  %p = adir.mul %y, %r : {result_type}
  %l = adir.sum %p : {result_type} -> tensor<f32>
  func.return %l : tensor<f32>
}}"""


def adir_gradients(module: ModuleOp, args: Sequence[np.ndarray], func: str = "f") -> list:
    """(loss, gradients...) from the interpreted gradient function, in float64."""
    return list(Session(module, np.float64).call(f"{func}_grad", *args))


def torch_gradients(
    fn: Callable[..., torch.Tensor], args: Sequence[np.ndarray], wrt_args: Sequence[int]
) -> list[np.ndarray]:
    """(loss, gradients of the chosen args) by torch.autograd in float64."""
    tensors = [
        torch.tensor(a, dtype=torch.float64, requires_grad=i in wrt_args)
        if np.issubdtype(np.asarray(a).dtype, np.floating)
        else torch.tensor(a)
        for i, a in enumerate(args)
    ]
    loss = fn(*tensors)
    grads = torch.autograd.grad(loss, [tensors[i] for i in wrt_args], allow_unused=True)
    return [loss.detach().numpy()] + [
        np.zeros(np.shape(args[i])) if g is None else g.numpy()
        for i, g in zip(wrt_args, grads, strict=True)
    ]


# An absolute floor for gradients that are exactly zero in theory (e.g. through sum(softmax(x)),
# which is constant): float64 rounding leaves residues of about 1e-16 times the magnitude of
# the terms that cancel, which in these tests (O(1) inputs) stays far below 1e-12.
ZERO_FLOOR = 1e-12


def assert_gradients_close(actual: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> None:
    """Each entry within RTOL of the reference, relative to the largest entry of that
    gradient (so a gradient with zeros is not held to an impossible relative bound), or within
    ZERO_FLOOR where the whole gradient is (near) zero."""
    assert len(actual) == len(expected)
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        assert a.shape == e.shape, f"gradient #{index}: shape {a.shape} != {e.shape}"
        scale = float(np.max(np.abs(e), initial=0.0))
        atol = max(RTOL * scale, ZERO_FLOOR)
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=atol, err_msg=f"gradient #{index}")


def finite_difference_gradients(
    module: ModuleOp,
    args: Sequence[np.ndarray],
    wrt_args: Sequence[int],
    func: str = "f",
    step: float = 1e-6,
) -> list[np.ndarray]:
    """Central differences of the interpreted loss in float64: (f(x+h) - f(x-h)) / 2h, with
    truncation error O(h^2) and rounding error O(eps / h), both ~1e-10 relative here."""
    session = Session(module, np.float64)
    grads = []
    for index in wrt_args:
        base = np.array(args[index], np.float64)
        grad = np.zeros_like(base)
        for position in np.ndindex(base.shape):
            values = []
            for sign in (1.0, -1.0):
                shifted = base.copy()
                shifted[position] += sign * step
                call_args = list(args)
                call_args[index] = shifted
                values.append(session.call(func, *call_args)[0].item())
            grad[position] = (values[0] - values[1]) / (2 * step)
        grads.append(grad)
    return grads


def check_op_gradients(
    op_text: str,
    shapes: Sequence[tuple[int, ...]],
    torch_op: Callable[..., torch.Tensor],
    wrt_args: Sequence[int] | None = None,
    inputs: Sequence[np.ndarray] | None = None,
    elem_types: Sequence[str] | None = None,
    seed: int = 0,
    finite_differences: bool = True,
) -> None:
    """Differentiate `sum(op(args) * r)` and compare with torch.autograd and, in float64,
    with central finite differences. By default every float operand is differentiated."""
    rng = np.random.default_rng(seed)
    elem_types = list(elem_types or ["f32"] * len(shapes))
    args = list(inputs) if inputs is not None else [rng.standard_normal(s) for s in shapes]
    with torch.no_grad():
        as_torch = [torch.tensor(a) for a in args]
        result_shape = tuple(torch_op(*as_torch).shape)
    r = rng.standard_normal(result_shape)
    types = [tensor_type(s, e) for s, e in zip(shapes, elem_types, strict=True)]
    if wrt_args is None:
        wrt_args = [i for i, e in enumerate(elem_types) if e == "f32"]
    ir = wrapped_op_ir(op_text, types, tensor_type(result_shape))
    module = differentiate_ir(ir, "f", wrt_args)
    call_args = [*args, r]
    actual = adir_gradients(module, call_args)
    expected = torch_gradients(lambda *t: (torch_op(*t[:-1]) * t[-1]).sum(), call_args, wrt_args)
    assert_gradients_close(actual, expected)
    if finite_differences:
        numeric = finite_difference_gradients(module, call_args, wrt_args)
        for index, (a, n) in enumerate(zip(actual[1:], numeric, strict=True)):
            scale = max(float(np.max(np.abs(n), initial=0.0)), 1.0)
            np.testing.assert_allclose(
                a, n, rtol=1e-6, atol=1e-6 * scale, err_msg=f"finite differences #{index}"
            )
