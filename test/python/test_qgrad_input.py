"""`adir.qgrad_input`: the adjoint of an int8 layer's input, read from the int8 weight itself.

Four layers with seeded int8 weights and float adjoints of their accumulators: a 3x3 conv
(stride 2, padding 1 on all sides, 5x4 input), a depthwise 3x3 conv with channel multiplier 2
and dilation 2 (batch 2), a 1x1 conv, and a fully-connected layer (batch 2). The interpreter's
result is PyTorch's `conv2d_input` (and `grad @ weight`) in float64 on the weight's integers
as floats, to 1e-6 of the result's largest magnitude (float32 sums of at most 36 products of
an int8 and a standard-normal float); the C kernel (gcc and clang, ASan, UBSan) gives the
interpreter's to 1e-6 as well (it sums in another order).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from c_testing import c_compilers, check_c_against_interpreter

from adir.context import parse_module
from adir.interpreter import Session

# (name, grad shape, weight shape, properties, input size (conv), groups)
CASES = [
    ("conv", (1, 3, 2, 4), (4, 3, 3, 2), (2, 2), (1, 1, 1, 1), (1, 1), (5, 4), 1),
    ("depthwise", (2, 2, 2, 6), (1, 3, 3, 6), (1, 1), (1, 1, 1, 1), (2, 2), (4, 4), 3),
    ("pointwise", (1, 4, 4, 8), (8, 1, 1, 5), (1, 1), (0, 0, 0, 0), (1, 1), (4, 4), 1),
    ("fully_connected", (2, 10), (10, 7), None, None, None, None, 1),
]


def array(values) -> str:
    return ", ".join(str(v) for v in values)


def module_text(case) -> str:
    _, g, w, stride, padding, dilation, size, groups = case
    if stride is None:
        out = (g[0], w[1])
        props = ""
    else:
        channels = groups if groups != 1 else w[3]
        out = (g[0], *size, channels)
        props = (
            f" {{stride = array<i64: {array(stride)}>, padding = array<i64: {array(padding)}>, "
            f"dilation = array<i64: {array(dilation)}>, groups = {groups} : i64, "
            f"input_size = array<i64: {array(size)}>}}"
        )

    def t(shape, element):
        return f"tensor<{'x'.join(str(d) for d in shape)}x{element}>"

    return f"""
func.func @f(%g: {t(g, "f32")}, %w: {t(w, "i8")}) -> {t(out, "f32")} {{
  %0 = adir.qgrad_input %g, %w{props} : {t(g, "f32")}, {t(w, "i8")} -> {t(out, "f32")}
  func.return %0 : {t(out, "f32")}
}}
"""


def data(case, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal(case[1]).astype(np.float32)
    weight = rng.integers(-127, 128, case[2]).astype(np.int8)
    return grad, weight


def torch_reference(case, grad: np.ndarray, weight: np.ndarray) -> np.ndarray:
    _, _, _, stride, padding, dilation, size, groups = case
    g = torch.from_numpy(grad).double()
    w = torch.from_numpy(weight.astype(np.float64))
    if stride is None:
        return (g @ w).numpy()
    # OHWI -> OIHW; a depthwise [1, KH, KW, O] -> [O, 1, KH, KW]
    oihw = w.permute(3, 0, 1, 2) if groups != 1 else w.permute(0, 3, 1, 2)
    top, bottom, left, right = padding
    assert (top, left) == (bottom, right)  # conv2d_input pads symmetrically
    channels = groups if groups != 1 else weight.shape[3]
    dx = torch.nn.grad.conv2d_input(
        (g.shape[0], channels, *size),
        oihw.contiguous(),
        g.permute(0, 3, 1, 2),
        stride=stride,
        padding=(top, left),
        dilation=dilation,
        groups=groups,
    )
    return dx.permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_the_interpreter_is_pytorch_s_input_gradient(case) -> None:
    grad, weight = data(case, 0)
    (ours,) = Session(parse_module(module_text(case), "qgrad_input.mlir")).call("f", grad, weight)
    expected = torch_reference(case, grad, weight)
    assert ours.dtype == np.float32 and ours.shape == expected.shape
    scale = float(np.abs(expected).max())
    assert scale > 0
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6 * scale)


@pytest.mark.parametrize("compiler", c_compilers())
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_the_c_kernel_is_the_interpreter(case, compiler: str) -> None:
    grad, weight = data(case, 1)
    scale = float(np.abs(torch_reference(case, grad, weight)).max())
    check_c_against_interpreter(
        module_text(case), "f", [[grad, weight]], rtol=0, atol=1e-6 * scale, compiler=compiler
    )
