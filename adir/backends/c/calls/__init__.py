"""How each kernel op becomes one C statement: a call of its kernel's macro.

One file per op family, mirroring `adir/dialects/tensor/` and the runtime's `adir_<family>.c`.
An emitter gets the kernel op and a `CallSite` (the C names of its buffers, their shapes, and a
way to declare constant tables) and returns the statement:

    @emits(mm.MatmulOp)
    def matmul(op: KernelOp, site: CallSite) -> str:
        ...
        return site.call("matmul", a, b, c, batch, m, n, k, ...)   # ADIR_MATMUL(...);

`site.call("matmul", ...)` prints the macro `ADIR_MATMUL`, which `adir_kernels.h` maps to the
reference kernel `adir_matmul` unless the user brings their own, or `ADIR_TUNED_MATMUL` (the
tuned kernel, same arguments) where `select-kernels` recorded `adir.kernel = "tuned"` on the op.
The CMSIS libraries' calls are printed by `cmsis_dsp.py` and `cmsis_nn.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue

from adir.diagnostics import OpError
from adir.dialects.kernel import KERNELS, KernelOp
from adir.dialects.tensor.base import TensorOp

CallEmitter = Callable[[KernelOp, "CallSite"], str]
CALL_EMITTERS: dict[type[KernelOp], CallEmitter] = {}

Emitter = TypeVar("Emitter", bound=CallEmitter)


def emits(*tensor_ops: type[TensorOp]) -> Callable[[Emitter], Emitter]:
    """Register an emitter for the kernels of these tensor ops."""

    def register(emitter: Emitter) -> Emitter:
        for tensor_op in tensor_ops:
            CALL_EMITTERS[KERNELS[tensor_op]] = emitter
        return emitter

    return register


def c_type(element_type: Attribute) -> str:
    """The C type of a buffer element."""
    if isinstance(element_type, Float32Type):
        return "float"
    if isinstance(element_type, Float64Type):
        return "double"
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return "uint8_t"
        if width in (8, 16, 32, 64):
            return f"int{width}_t"
    raise ValueError(f"no C type for element type {element_type}")


def c_float(value: float) -> str:
    """A float literal that reads back as the same float32 (nan and infinities via math.h)."""
    value = float(np.float32(value))
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    text = f"{value:.9g}"
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return strides[::-1]


class CallSite:
    """What an emitter needs to print the call of one kernel op."""

    def __init__(
        self,
        op: KernelOp,
        names: dict[SSAValue, str],
        table: Callable[[list[int]], str],
    ):
        self.op = op
        self._names = names
        self._table = table
        # Read once: each access to a variadic operand group decodes the segment sizes.
        self.ins, self.outs = tuple(op.ins), tuple(op.outs)
        library = op.attributes.get("adir.kernel")
        self._macro_prefix = "ADIR_TUNED_" if library == StringAttr("tuned") else "ADIR_"

    def input(self, index: int) -> str:
        return self._names[self.ins[index]]

    def output(self, index: int = 0) -> str:
        return self._names[self.outs[index]]

    def in_type(self, index: int) -> MemRefType:
        return self.ins[index].type  # type: ignore[return-value]

    def out_type(self, index: int = 0) -> MemRefType:
        return self.outs[index].type  # type: ignore[return-value]

    def in_shape(self, index: int) -> tuple[int, ...]:
        return self.in_type(index).get_shape()

    def out_shape(self, index: int = 0) -> tuple[int, ...]:
        return self.out_type(index).get_shape()

    def in_c_type(self, index: int) -> str:
        return c_type(self.in_type(index).element_type)

    def out_size(self, index: int = 0) -> int:
        return math.prod(self.out_shape(index))

    def table(self, values: Sequence[int]) -> str:
        """The name of a `static const int32_t` array holding `values` (shapes, strides)."""
        return self._table([int(v) for v in values])

    @property
    def kernel(self) -> str:
        """The kernel's name: `adir_kernel.sigmoid_grad` -> `sigmoid_grad`."""
        return self.op.name.split(".", 1)[1]

    def buffers(self) -> list[str]:
        """The C names of the op's ins, then its outs."""
        return [self._names[v] for v in (*self.ins, *self.outs)]

    def error(self, message: str) -> OpError:
        return OpError(self.op, f"C backend: {self.op.name}: {message}")

    def call(self, kernel: str, *arguments: object) -> str:
        """`ADIR_<KERNEL>(arguments...);`, or `ADIR_TUNED_<KERNEL>(...)` for an op that
        select-kernels gave the tuned kernel (ints and strings as given)."""
        return f"{self._macro_prefix}{kernel.upper()}({', '.join(str(a) for a in arguments)});"


def flag(value: object) -> int:
    """An optional unit property as a C int: 1 when present."""
    return 0 if value is None else 1


# The families register their emitters on import.
from adir.backends.c.calls import (  # noqa: E402, F401
    activations,
    conv_and_pool,
    data_movement,
    elementwise,
    embedding,
    losses,
    matmul,
    normalization,
    optimizers,
    quantized,
    reductions,
)
