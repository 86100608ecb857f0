"""The C text of data: element counts, literals, and the initializer lists of constant tables and
frozen parameters (which a device keeps in flash)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    MemRefType,
    TensorType,
)

from adir.backends.c.calls import c_float
from adir.dense_literals import splat_value
from adir.diagnostics import OpError
from adir.dialects.tensor import params as p
from adir.dialects.tensor.initializers import InitializerAttr
from adir.interpreter.arrays import dense_to_numpy
from adir.interpreter.initializers import sample


def size_of(type_: MemRefType | TensorType) -> int:
    return math.prod(type_.get_shape())


def bytes_of(type_: MemRefType) -> int:
    return size_of(type_) * type_.element_type.compile_time_size  # type: ignore[attr-defined]


def c_literal(value: float | int, element_type: object) -> str:
    return c_float(float(value)) if isinstance(element_type, Float32Type) else str(int(value))


def literal_list(values: np.ndarray, element_type: object) -> str:
    """The elements of a constant as a C initializer list, 8 per line."""
    flat = values.reshape(-1)
    items = [c_literal(v, element_type) for v in flat]
    if not items:
        items = ["0"]
    lines = [", ".join(items[i : i + 8]) for i in range(0, len(items), 8)]
    return "{\n    " + ",\n    ".join(lines) + "\n}"


def constant_initializer(value: DenseIntOrFPElementsAttr, count: int) -> str:
    """The C initializer of a constant table of `count` elements. A splat of more than one
    line is never expanded into numbers (see `splat_initializer`)."""
    element_type = value.get_element_type()
    splat = splat_value(value)
    if splat is None or count <= 8:
        return literal_list(dense_to_numpy(value, np.dtype(np.float32)), element_type)
    return splat_initializer(c_literal(splat, element_type), count, not any(value.data.data))


def splat_initializer(item: str, count: int, zero_bits: bool) -> str:
    """`count` copies of the literal `item`: `{0}` when its bits are all zero (C zeroes the
    rest), else one printed line repeated (the table stays `const`, in flash)."""
    if zero_bits:
        return f"{{{item}}}"
    line = ", ".join([item] * 8)
    lines = [line] * (count // 8) + ([", ".join([item] * (count % 8))] if count % 8 else [])
    return "{\n    " + ",\n    ".join(lines) + "\n}"


def frozen_initializer(op: p.ParamOp) -> str:
    """The C initializer of a frozen parameter (`adir/param_storage.py`): its dense data, or
    the values of its seedless initializer (`#adir.zeros`, `#adir.fill`)."""
    count = max(size_of(op.type), 1)
    init = op.initial_value
    if isinstance(init, DenseIntOrFPElementsAttr):
        return constant_initializer(init, count)
    shape = tuple(op.type.get_shape())
    if not isinstance(init, InitializerAttr) or init.draw(shape).random:
        raise OpError(op, f"C backend: no constant form for the initial value {init}")
    values = sample(init, shape).reshape(-1)
    bits = values.view(np.uint32)
    if count <= 8 or not (bits == bits[0]).all():
        return literal_list(values, op.type.element_type)
    return splat_initializer(c_float(float(values[0])), count, bool(bits[0] == 0))
