"""Flush-to-zero in the interpreter: what a C build with `-DADIR_FLUSH_DENORMALS` computes
(runtime `adir_float_mode.h`), op by op.

`Session(module, flush_denormals=True)` runs every op on operands whose subnormal floats read
as zero of the same sign (DAZ), and replaces each subnormal float of its results, and of the
buffers a kernel op writes in place, by zero of the same sign (FTZ). The C flushes every float
operation inside a kernel as well; see docs/numerics.md ("Subnormal floats") for where the two
can differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, OpImplResult
from xdsl.ir import Operation


def flush(value: Any) -> Any:
    """`value` with its subnormal floats replaced by signed zeros (arrays are flushed in place,
    other values are returned as they are)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        tiny = np.finfo(value.dtype).tiny
        subnormal = (value != 0) & (np.abs(value) < tiny)
        if subnormal.any():
            if value.flags.writeable:
                np.copyto(value, np.copysign(0, value), where=subnormal)
            else:
                value = np.where(subnormal, np.copysign(0, value), value).astype(value.dtype)
    elif isinstance(value, np.floating) and value != 0 and abs(value) < np.finfo(value.dtype).tiny:
        value = type(value)(np.copysign(0, value))
    return value


class FlushingInterpreter(Interpreter):
    """xDSL's interpreter with every op's float operands and results flushed to zero."""

    def _run_op(self, op: Operation, inputs: tuple[Any, ...]) -> OpImplResult:
        result = super()._run_op(op, tuple(flush(value) for value in inputs))
        for value in inputs:  # buffers written in place (the kernel level)
            flush(value)
        return OpImplResult(tuple(flush(value) for value in result.values), result.terminator_value)
