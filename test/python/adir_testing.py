"""Helpers shared by the pytest suite: parse and run small IR functions, compare with PyTorch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass


def interpret(ir: str, func: str, *args: np.ndarray, float_dtype=np.float32) -> tuple:
    """Parse and verify `ir`, then call `@func` on `args` in the interpreter."""
    module = parse_module(ir, "test.mlir")
    module.verify()
    return Session(module, float_dtype).call(func, *args)


def tensor_type(shape: tuple[int, ...], elem: str = "f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{elem}>"


def to_torch(array: np.ndarray) -> torch.Tensor:
    """A torch tensor of the array's values and shape (0-d arrays stay 0-d)."""
    return torch.from_numpy(np.array(array, copy=True))


def assert_close(actual: np.ndarray, expected: torch.Tensor | np.ndarray, rtol: float, atol: float):
    """Equal shape, dtype kind and values; nan where the reference has nan."""
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else expected
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


EXAMPLES = Path(__file__).parents[2] / "examples"


def parse_example(name: str) -> ModuleOp:
    """`examples/<name>.mlir`, parsed and verified."""
    path = EXAMPLES / f"{name}.mlir"
    module = parse_module(path.read_text(), str(path))
    module.verify()
    return module


def differentiated(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with the gradient function of its loss (the autodiff pass), verified."""
    grad_module = module.clone()
    AutodiffPass().apply(adir_context(), grad_module)
    grad_module.verify()
    return grad_module
