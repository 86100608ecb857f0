"""numpy semantics of the kernel level (adir/dialects/kernel.py) and of the memref ops that
bufferization produces, so a module can be checked by interpreting it before and after.

A buffer is a numpy array, written in place: a kernel computes its tensor op's result with the
tensor-level implementation (reading all its inputs first) and copies it into its `outs`; a
parameter's buffer is the session's own array, so in-place updates change the parameter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImpl,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from adir.dialects.kernel import KERNELS, KernelOp, ParamBufferOp
from adir.interpreter.arrays import dense_to_numpy, to_numpy_dtype


@register_impls
class BufferFunctions(InterpreterFunctions):
    """Parameters' buffers, transient buffers, read-only constants and copies."""

    def __init__(self, module: ModuleOp, params: dict[str, np.ndarray], float_dtype: np.dtype):
        self.params = params
        self.float_dtype = float_dtype
        self.globals = {
            op.sym_name.data: op for op in module.ops if isinstance(op, memref.GlobalOp)
        }

    @impl(ParamBufferOp)
    def run_param(self, interpreter: Interpreter, op: ParamBufferOp, args: tuple[Any, ...]):
        return (self.params[op.param.root_reference.data],)

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: tuple[Any, ...]):
        type_ = op.memref.type
        dtype = to_numpy_dtype(type_.element_type, self.float_dtype)
        # Filled with nan, so a kernel reading a buffer nobody wrote shows up in the results.
        buffer = np.empty(tuple(type_.get_shape()), dtype)
        if np.issubdtype(dtype, np.floating):
            buffer.fill(np.nan)
        return (buffer,)

    @impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: Interpreter, op: memref.GetGlobalOp, args: tuple[Any, ...]
    ):
        value = self.globals[op.name_.root_reference.data].initial_value
        array = dense_to_numpy(value, self.float_dtype)  # type: ignore[arg-type]
        array.flags.writeable = False  # a constant lives in read-only memory
        return (array,)

    @impl(memref.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: memref.CopyOp, args: tuple[Any, ...]):
        source, destination = args
        np.copyto(destination, source)
        return ()


def kernel_functions(families: Iterable[InterpreterFunctions]) -> InterpreterFunctions:
    """Implementations of every kernel op, each running its tensor op's implementation."""
    tensor_impls: dict[type[Operation], tuple[InterpreterFunctions, OpImpl]] = {}
    for functions in families:
        for op_type, op_impl in type(functions)._impls():
            tensor_impls[op_type] = (functions, op_impl)
    namespace: dict[str, Any] = {}
    for tensor_op, kernel_op in KERNELS.items():
        if tensor_op in tensor_impls:
            namespace[f"run_{kernel_op.__name__}"] = impl(kernel_op)(
                _kernel_impl(tensor_op, *tensor_impls[tensor_op])
            )
    return register_impls(type("KernelFunctions", (InterpreterFunctions,), namespace))()


def _kernel_impl(tensor_op: type[Operation], functions: InterpreterFunctions, op_impl: OpImpl):
    # The tensor op's implementation reads only properties of the op it is given: a property-
    # only twin of each kernel op, made once (a training loop runs the same ops many times).
    proxies: dict[KernelOp, Operation] = {}

    def run(self: InterpreterFunctions, interpreter: Interpreter, op: KernelOp, args: tuple):
        inputs, outputs = args[: len(op.ins)], args[len(op.ins) :]
        if (proxy := proxies.get(op)) is None:
            proxy = proxies[op] = tensor_op.create(properties=dict(op.properties))
        results = op_impl(functions, interpreter, proxy, tuple(inputs)).values
        # A CMSIS-NN scratch buffer (select-kernels) may follow the results' buffers.
        for output, value in zip(outputs[: len(results)], results, strict=True):
            np.copyto(output, value)
        return ()

    return run
