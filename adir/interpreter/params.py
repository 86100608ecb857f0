"""numpy semantics of the params family: initial values, load and store."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from adir.diagnostics import OpError
from adir.dialects.tensor import params as p
from adir.dialects.tensor.initializers import InitializerAttr
from adir.interpreter.arrays import dense_to_numpy
from adir.interpreter.initializers import sample


def initial_value(param: p.ParamOp, float_dtype: np.dtype, seed: int = 0) -> np.ndarray:
    """A parameter's value before any step: its dense data or its initializer's draw.

    Initializers are drawn in float32 (the bits the C backend reproduces), then converted.
    """
    init = param.initial_value
    if isinstance(init, DenseIntOrFPElementsAttr):
        return dense_to_numpy(init, float_dtype)
    assert isinstance(init, InitializerAttr)
    shape = tuple(param.type.get_shape())
    return sample(init, shape, seed).astype(float_dtype)


def initial_params(module: ModuleOp, float_dtype: np.dtype, seed: int = 0) -> dict[str, np.ndarray]:
    """Every parameter's initial value (`OpError` at a parameter too large for this machine's
    memory: the verifier allows up to 2^63 elements, numpy holds what memory does)."""
    values = {}
    for op in module.ops:
        if isinstance(op, p.ParamOp):
            try:
                values[op.sym_name.data] = initial_value(op, float_dtype, seed)
            except MemoryError as error:
                count = math.prod(op.type.get_shape())
                raise OpError(
                    op,
                    f"the interpreter cannot hold @{op.sym_name.data}: {count} elements of "
                    f"{float_dtype.itemsize} bytes do not fit in memory",
                ) from error
    return values


@register_impls
class ParamFunctions(InterpreterFunctions):
    """Loads and stores on the parameter values of one session."""

    def __init__(self, params: dict[str, np.ndarray]):
        self.params = params

    @impl(p.LoadOp)
    def run_load(self, interpreter: Interpreter, op: p.LoadOp, args: tuple[Any, ...]):
        # A copy: a later store must not change a value already loaded (value semantics).
        return (self.params[op.param.root_reference.data].copy(),)

    @impl(p.StoreOp)
    def run_store(self, interpreter: Interpreter, op: p.StoreOp, args: tuple[Any, ...]):
        name = op.param.root_reference.data
        self.params[name] = np.array(args[0], dtype=self.params[name].dtype)
        return ()
