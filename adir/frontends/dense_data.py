"""Parameter data in the IR: how the front-ends write a tensor's initial values.

A parameter with known values (a pretrained weight, a numpy array given to the builder) gets
them as builtin dense elements, which xDSL prints in one of three forms by itself:

    adir.param @b : tensor<32xf32> = dense<0.000000e+00> : tensor<32xf32>          every value equal
    adir.param @b : tensor<4xf32> = dense<[0.125730217, -0.132104859, ...]> : ...   100 or fewer
    adir.param @w : tensor<32x784xf32> = dense<"0x3DA10B3E..."> : tensor<32x784xf32>   more

The third is MLIR's hex form: the raw little-endian bytes of the f32 values, two hex digits a
byte, in row-major order, exactly what MLIR itself prints and parses for large constants.
xDSL's parser reads the whole string as one token and hands it to `bytes.fromhex`, so parsing
costs nanoseconds per value, where the list form sends every number through the Python lexer.
The decimal form keeps 9 significant digits, so both forms give back the same bits, except
that xDSL 0.74 prints inf and nan in a list as hex integers (`0x7F800000`) and parses those
back as the integer's value, so a tensor of 100 or fewer values survives a round trip through
text only if its values are finite (the hex form keeps every bit pattern).

Measured with `python tools/bench_parse.py` (a 784-1000-200-80-10 MLP, 1,002,090 random f32
parameters, 8.0 MB of text, on the 2-vCPU development box, CPython 3.11, xDSL 0.74): parsing
and verifying the module takes 0.08 s (best of 5; 0.13 s while other jobs loaded the box),
printing it 0.1-0.25 s (xDSL scans the values to rule out a splat first), and `adir-opt
model.mlir -o out.mlir` runs in 0.8 s wall, start-up included. The same values as decimal
lists would take 30-45 s to parse. An external binary file (MLIR's resources) could save at
most that 0.08 s and would make a model two files, so adir keeps the data in the IR.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType, f32


def dense_f32(values: np.ndarray | Sequence[float] | float) -> DenseIntOrFPElementsAttr:
    """f32 dense elements holding `values` (any array-like, converted to float32), without
    going through a Python list: the bytes are the array's little-endian f32 values in
    row-major order."""
    array = np.asarray(values, dtype="<f4")
    return DenseIntOrFPElementsAttr(TensorType(f32, array.shape), BytesAttr(array.tobytes()))
