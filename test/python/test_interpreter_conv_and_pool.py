"""The conv_and_pool family in the interpreter equals PyTorch (torch.nn.functional), forward
ops and gradient ops, in float32 and float64.

Tolerances, with u = eps / 2 the unit roundoff of the dtype and gamma_k = k u / (1 - k u)
(Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.1):

- conv2d, conv2d_grad_input, conv2d_grad_weight: each result is a sum of products, so any
  order of evaluation is within gamma_k of the exact value, relative to the sum of the
  products' magnitudes (Higham, eq. 3.5); k is the number of terms: (C / groups) * KH * KW
  (+1 for the bias) for conv2d, (O / groups) * KH * KW for the input adjoint and N * H_out *
  W_out for the weight adjoint. numpy's einsum (BLAS) and PyTorch's kernels sum in different
  orders, so the two results are within 2 gamma_k M of each other, M being the same op
  applied to |x|, |w|, |dy| and |b| (computed in float64). In float64 this is ~1e-14 relative
  for these sizes, in float32 ~1e-5. The bound needs both sides to form the sum of products
  itself, not a Winograd or FFT transform of it: PyTorch on x86 convolves float32 with oneDNN
  and float64 with im2col and GEMM (its Winograd depthwise kernel is ARM-only), which
  `test_torch_convolves_directly` rechecks.
- avgpool2d: `sum / divisor` over m <= KH * KW elements: within gamma_m of the window sum of
  |x| over the divisor, plus u of the result for the division, which together are within
  gamma_{KH * KW} avgpool2d(|x|): 2 gamma_{KH * KW} avgpool2d(|x|) between the two sides.
  global_avgpool2d the same with m = H * W.
- maxpool2d: exact (a maximum rounds nothing), nan where PyTorch has nan.
- maxpool2d_grad, avgpool2d_grad: exactly equal. The interpreter performs PyTorch's CPU
  operations in PyTorch's order: each window's `dy` (or `dy / divisor`, one IEEE division on
  both sides) is added to an input element in row-major output order, starting from 0. The
  element maxpool2d_grad routes to is torch's choice (the first maximum, the last nan), which
  the edge-value tests check against `return_indices=True`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from adir_testing import interpret, tensor_type
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_interpreter_activations import assert_within
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import VerifyException

from adir.context import adir_context, parse_module
from adir.dialects.tensor.shapes import shape_of
from adir.passes.infer_shapes import InferShapesPass

F = torch.nn.functional
DTYPES = [np.float32, np.float64]


def gamma(k: int, dtype) -> float:
    u = float(np.finfo(dtype).eps) / 2
    return k * u / (1 - k * u)


def array_text(values: Sequence[int]) -> str:
    return f"array<i64: {', '.join(str(v) for v in values)}>"


def func_ir(op: str, props: dict[str, str], operands: Sequence[tuple], result: tuple | None) -> str:
    """`@f(%a0, ...) = op(%a0, ...) {props}`, with operand shapes `operands` and the result
    shape `result` (None: unranked, for infer-shapes to fill in)."""
    types = [tensor_type(s) for s in operands]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%a{i}" for i in range(len(types)))
    attrs = f" {{{', '.join(f'{k} = {v}' for k, v in props.items())}}}" if props else ""
    tr = "tensor<*xf32>" if result is None else tensor_type(result)
    return f"""
func.func @f({args}) -> {tr} {{
  %0 = adir.{op} {names}{attrs} : {", ".join(types)} -> {tr}
  func.return %0 : {tr}
}}"""


# --- convolution -------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvCase:
    input: tuple[int, int, int, int]
    weight: tuple[int, int, int, int]
    bias: bool = True
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    def props(self) -> dict[str, str]:
        props = {}
        if self.stride != (1, 1):
            props["stride"] = array_text(self.stride)
        if any(self.padding):
            props["padding"] = array_text(self.padding)
        if self.dilation != (1, 1):
            props["dilation"] = array_text(self.dilation)
        if self.groups != 1:
            props["groups"] = f"{self.groups} : i64"
        return props

    def torch_conv(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None):
        """F.conv2d with torch's own padding where it is symmetric, else F.pad first."""
        top, bottom, left, right = self.padding
        padding: tuple[int, int] = (0, 0)
        if (top, left) == (bottom, right):
            padding = (top, left)
        else:
            x = F.pad(x, (left, right, top, bottom))
        return F.conv2d(x, w, b, self.stride, padding, self.dilation, self.groups)


CONV_CASES = {
    "3x3": ConvCase((2, 3, 8, 8), (4, 3, 3, 3)),
    "no_bias": ConvCase((2, 3, 8, 8), (4, 3, 3, 3), bias=False),
    "stride_2": ConvCase((2, 3, 9, 9), (4, 3, 3, 3), stride=(2, 2)),
    "padding_1": ConvCase((2, 3, 8, 8), (4, 3, 3, 3), padding=(1, 1, 1, 1)),
    "stride_2_padding_1": ConvCase((1, 3, 8, 8), (5, 3, 3, 3), stride=(2, 2), padding=(1,) * 4),
    "asymmetric_padding": ConvCase((2, 3, 7, 8), (4, 3, 3, 3), padding=(0, 2, 1, 0)),
    "asymmetric_padding_stride_2": ConvCase(
        (1, 2, 8, 7), (3, 2, 3, 2), stride=(2, 2), padding=(1, 0, 0, 1)
    ),
    "groups_2": ConvCase((2, 4, 7, 7), (6, 2, 3, 3), groups=2),
    "depthwise": ConvCase((2, 4, 7, 7), (4, 1, 3, 3), padding=(1,) * 4, groups=4),
    "depthwise_multiplier_2": ConvCase((1, 3, 6, 6), (6, 1, 3, 3), bias=False, groups=3),
    "dilation_2": ConvCase((1, 3, 9, 9), (4, 3, 3, 3), padding=(2,) * 4, dilation=(2, 2)),
    "mixed_stride_dilation": ConvCase((2, 2, 9, 10), (3, 2, 2, 3), stride=(2, 1), dilation=(1, 2)),
    "odd_sizes": ConvCase((3, 5, 11, 7), (7, 5, 5, 3), stride=(3, 2), padding=(2, 1, 0, 1)),
    "1x1": ConvCase((2, 8, 5, 5), (4, 8, 1, 1)),
    "1x1_stride_2": ConvCase((2, 8, 5, 6), (4, 8, 1, 1), bias=False, stride=(2, 2)),
    "kernel_covers_input": ConvCase((2, 3, 5, 5), (4, 3, 5, 5)),
    "lenet_conv1": ConvCase((1, 1, 28, 28), (6, 1, 5, 5)),
}


def conv_operands(case: ConvCase, dtype, seed: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    operands = [rng.standard_normal(case.input), rng.standard_normal(case.weight)]
    if case.bias:
        operands.append(rng.standard_normal(case.weight[0]))
    return [a.astype(dtype) for a in operands]


def with_bias(tensors: list[torch.Tensor]) -> tuple:
    """(x, w, b), b None for a conv without bias."""
    return (*tensors, None) if len(tensors) == 2 else tuple(tensors)


def float64_tensors(arrays: Sequence[np.ndarray], absolute: bool = False) -> list[torch.Tensor]:
    return [torch.from_numpy(np.abs(a) if absolute else a).double() for a in arrays]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv2d_matches_torch(name: str, dtype) -> None:
    case = CONV_CASES[name]
    operands = conv_operands(case, dtype)
    with torch.no_grad():
        expected = case.torch_conv(*with_bias([torch.from_numpy(a) for a in operands]))
        magnitude = case.torch_conv(*with_bias(float64_tensors(operands, True)))
    ir = func_ir("conv2d", case.props(), [a.shape for a in operands], tuple(expected.shape))
    (actual,) = interpret(ir, "f", *operands, float_dtype=dtype)
    terms = case.weight[1] * case.weight[2] * case.weight[3] + case.bias
    assert_within(actual, expected.numpy(), 0.0, 2 * gamma(terms, dtype) * magnitude.numpy())


def torch_conv_grads(
    case: ConvCase, operands: Sequence[np.ndarray], dy: np.ndarray, absolute=False
):
    """(dx, dw) of `sum(conv(x, w, b) * dy)` by torch.autograd, in the operands' dtype, or in
    float64 on |x|, |w|, |dy| (the magnitudes of the terms) when `absolute`."""
    if absolute:
        tensors = float64_tensors(operands, True)
        grad = torch.from_numpy(np.abs(dy)).double()
    else:
        tensors = [torch.from_numpy(a) for a in operands]
        grad = torch.from_numpy(dy)
    x, w, b = with_bias(tensors)
    x, w = x.requires_grad_(), w.requires_grad_()
    y = case.torch_conv(x, w, b)
    dx, dw = torch.autograd.grad(y, [x, w], grad)
    return dx.numpy(), dw.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv2d_grad_ops_match_torch(name: str, dtype) -> None:
    """conv2d_grad_input and conv2d_grad_weight against PyTorch's convolution backward."""
    case = CONV_CASES[name]
    operands = conv_operands(case, dtype)
    x, w = operands[:2]
    with torch.no_grad():
        out_shape = tuple(case.torch_conv(torch.from_numpy(x), torch.from_numpy(w), None).shape)
    dy = np.random.default_rng(5).standard_normal(out_shape).astype(dtype)
    expected_dx, expected_dw = torch_conv_grads(case, operands, dy)
    magnitude_dx, magnitude_dw = torch_conv_grads(case, operands, dy, absolute=True)

    props = case.props()
    input_ir = func_ir(
        "conv2d_grad_input",
        {**props, "input_size": array_text(case.input[2:])},
        [dy.shape, w.shape],
        case.input,
    )
    (dx,) = interpret(input_ir, "f", dy, w, float_dtype=dtype)
    terms_dx = case.weight[0] // case.groups * case.weight[2] * case.weight[3]
    assert_within(dx, expected_dx, 0.0, 2 * gamma(terms_dx, dtype) * magnitude_dx)

    weight_ir = func_ir(
        "conv2d_grad_weight",
        {**props, "kernel_size": array_text(case.weight[2:])},
        [x.shape, dy.shape],
        case.weight,
    )
    (dw,) = interpret(weight_ir, "f", x, dy, float_dtype=dtype)
    terms_dw = out_shape[0] * out_shape[2] * out_shape[3]
    assert_within(dw, expected_dw, 0.0, 2 * gamma(terms_dw, dtype) * magnitude_dw)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_torch_convolves_directly(name: str, dtype) -> None:
    """The premise of the conv2d bounds: PyTorch picks no Winograd convolution here."""
    case = CONV_CASES[name]
    x, w = torch.zeros(case.input, dtype=dtype), torch.zeros(case.weight, dtype=dtype)
    backend = torch._C._select_conv_backend(
        x, w, None, case.stride, (0, 0), case.dilation, False, (0, 0), case.groups, None
    )
    assert backend.name in ("Mkldnn", "Slow2d", "SlowDilated2d"), backend


def test_conv2d_propagates_inf_and_nan_like_torch() -> None:
    """An inf reaches every output whose window holds it (inf * w, w != 0); a nan, and an inf
    meeting a -inf, give nan: the same IEEE results in any order of summation."""
    case = CONV_CASES["padding_1"]
    x, w, b = conv_operands(case, np.float32)
    x[0, 0, 1, 1], x[0, 1, 5, 5], x[0, 2, 5, 6] = np.inf, np.inf, -np.inf
    x[1, 2, 4, 4] = np.nan
    with torch.no_grad():
        expected = case.torch_conv(*[torch.from_numpy(a) for a in (x, w, b)]).numpy()
    ir = func_ir("conv2d", case.props(), [x.shape, w.shape, b.shape], expected.shape)
    (actual,) = interpret(ir, "f", x, w, b)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    assert np.isnan(actual).any() and np.isinf(expected).any()
    np.testing.assert_array_equal(actual[np.isinf(expected)], expected[np.isinf(expected)])


# --- pooling -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolCase:
    input: tuple[int, int, int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int] | None = None
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)

    def props(self) -> dict[str, str]:
        props = {"kernel_size": array_text(self.kernel)}
        if self.stride is not None:
            props["stride"] = array_text(self.stride)
        if any(self.padding):
            props["padding"] = array_text(self.padding)
        return props

    @property
    def symmetric(self) -> bool:
        top, bottom, left, right = self.padding
        return (top, left) == (bottom, right)

    def torch_maxpool(self, x: torch.Tensor) -> torch.Tensor:
        top, bottom, left, right = self.padding
        if self.symmetric:
            return F.max_pool2d(x, self.kernel, self.stride, (top, left))
        padded = F.pad(x, (left, right, top, bottom), value=-torch.inf)
        return F.max_pool2d(padded, self.kernel, self.stride)

    def torch_avgpool(self, x: torch.Tensor, count_include_pad: bool) -> torch.Tensor:
        top, bottom, left, right = self.padding
        if self.symmetric:
            return F.avg_pool2d(x, self.kernel, self.stride, (top, left), False, count_include_pad)
        # F.pad then a window sum (divisor_override = 1, torch's summation), over the window's
        # size or its count of image elements: torch's avg_pool2d formula.
        pad = (left, right, top, bottom)
        total = F.avg_pool2d(F.pad(x, pad), self.kernel, self.stride, divisor_override=1)
        if count_include_pad:
            return total / (self.kernel[0] * self.kernel[1])
        inside = F.pad(torch.ones_like(x[:1, :1]), pad)
        return total / F.avg_pool2d(inside, self.kernel, self.stride, divisor_override=1)


POOL_CASES = {
    "2x2": PoolCase((2, 3, 8, 8), (2, 2)),
    "2x2_odd_input": PoolCase((2, 3, 7, 9), (2, 2)),
    "3x3_stride_2_padding_1": PoolCase((2, 3, 7, 9), (3, 3), (2, 2), (1, 1, 1, 1)),
    "3x3_stride_1_padding_1": PoolCase((1, 2, 6, 5), (3, 3), (1, 1), (1, 1, 1, 1)),
    "overlapping_3x3_stride_2": PoolCase((2, 2, 9, 9), (3, 3), (2, 2)),
    "rectangular": PoolCase((1, 2, 9, 8), (3, 2), (2, 1), (1, 1, 0, 0)),
    "asymmetric_padding": PoolCase((1, 2, 9, 8), (3, 2), (2, 1), (1, 0, 0, 1)),
    "asymmetric_padding_2": PoolCase((2, 2, 6, 7), (4, 4), (3, 2), (0, 2, 1, 0)),
    "kernel_covers_input": PoolCase((2, 3, 5, 5), (5, 5)),
    "1x1": PoolCase((2, 3, 4, 5), (1, 1)),
}


def pool_output_shape(case: PoolCase) -> tuple[int, ...]:
    with torch.no_grad():
        return tuple(case.torch_maxpool(torch.zeros(case.input)).shape)


def pool_input(case: PoolCase, dtype, seed: int = 13) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(case.input).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_maxpool2d_and_grad_equal_torch(name: str, dtype) -> None:
    case = POOL_CASES[name]
    x = pool_input(case, dtype)
    out = pool_output_shape(case)
    dy = np.random.default_rng(17).standard_normal(out).astype(dtype)
    xt = torch.from_numpy(x).requires_grad_()
    expected = case.torch_maxpool(xt)
    (expected_dx,) = torch.autograd.grad(expected, xt, torch.from_numpy(dy))

    (y,) = interpret(func_ir("maxpool2d", case.props(), [x.shape], out), "f", x, float_dtype=dtype)
    np.testing.assert_array_equal(y, expected.detach().numpy())
    assert y.dtype == dtype
    grad_ir = func_ir("maxpool2d_grad", case.props(), [x.shape, out], case.input)
    (dx,) = interpret(grad_ir, "f", x, dy, float_dtype=dtype)
    np.testing.assert_array_equal(dx, expected_dx.numpy())


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_avgpool2d_and_grad_match_torch(name: str, dtype, count_include_pad: bool) -> None:
    case = POOL_CASES[name]
    x = pool_input(case, dtype)
    out = pool_output_shape(case)
    dy = np.random.default_rng(19).standard_normal(out).astype(dtype)
    xt = torch.from_numpy(x).requires_grad_()
    expected = case.torch_avgpool(xt, count_include_pad)
    (expected_dx,) = torch.autograd.grad(expected, xt, torch.from_numpy(dy))
    with torch.no_grad():
        magnitude = case.torch_avgpool(torch.from_numpy(np.abs(x)).double(), count_include_pad)

    props = case.props()
    if not count_include_pad:
        props["count_include_pad"] = "false"
    (y,) = interpret(func_ir("avgpool2d", props, [x.shape], out), "f", x, float_dtype=dtype)
    bound = 2 * gamma(case.kernel[0] * case.kernel[1], dtype) * magnitude.numpy()
    assert_within(y, expected.detach().numpy(), 0.0, bound)
    grad_props = {**props, "input_size": array_text(case.input[2:])}
    grad_ir = func_ir("avgpool2d_grad", grad_props, [out], case.input)
    (dx,) = interpret(grad_ir, "f", dy, float_dtype=dtype)
    np.testing.assert_array_equal(dx, expected_dx.numpy())


GLOBAL_SHAPES = [(2, 3, 7, 5), (1, 4, 1, 1), (2, 2, 16, 16), (3, 1, 28, 28)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", GLOBAL_SHAPES, ids=str)
def test_global_avgpool2d_matches_torch(shape: tuple, dtype) -> None:
    x = np.random.default_rng(23).standard_normal(shape).astype(dtype)
    with torch.no_grad():
        expected = F.adaptive_avg_pool2d(torch.from_numpy(x), 1).numpy()
        magnitude = F.adaptive_avg_pool2d(torch.from_numpy(np.abs(x)).double(), 1).numpy()
    ir = func_ir("global_avgpool2d", {}, [shape], (*shape[:2], 1, 1))
    (y,) = interpret(ir, "f", x, float_dtype=dtype)
    assert_within(y, expected, 0.0, 2 * gamma(shape[2] * shape[3], dtype) * magnitude)


# Inputs with ties (small integers), nan, -inf and inf, in windows that overlap and reach
# into the padding: which element the max picks, and what it is.
EDGE_CASES = ["3x3_stride_1_padding_1", "3x3_stride_2_padding_1", "overlapping_3x3_stride_2"]


def edge_input(shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 2, shape).astype(np.float32)
    x[rng.random(shape) < 0.05] = np.nan
    x[rng.random(shape) < 0.15] = -np.inf
    x[rng.random(shape) < 0.03] = np.inf
    return x


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", EDGE_CASES)
def test_maxpool2d_picks_torchs_element_at_ties_and_nan(name: str, seed: int) -> None:
    """PyTorch's kernel takes an element when `val > max || isnan(val)`, scanning from max =
    -inf: the first of tied maxima, the last nan, the first element of an all -inf window."""
    case = POOL_CASES[name]
    x = edge_input((2, 3, 9, 9), seed)
    case = PoolCase(x.shape, case.kernel, case.stride, case.padding)
    out = pool_output_shape(case)
    dy = np.random.default_rng(seed).standard_normal(out).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_()
    top, _, left, _ = case.padding
    expected, indices = F.max_pool2d(xt, case.kernel, case.stride, (top, left), return_indices=True)
    (expected_dx,) = torch.autograd.grad(expected, xt, torch.from_numpy(dy))
    (y,) = interpret(func_ir("maxpool2d", case.props(), [x.shape], out), "f", x)
    np.testing.assert_array_equal(y, expected.detach().numpy())  # nan where torch has nan
    grad_ir = func_ir("maxpool2d_grad", case.props(), [x.shape, out], x.shape)
    (dx,) = interpret(grad_ir, "f", x, dy)
    np.testing.assert_array_equal(dx, expected_dx.numpy())
    assert (indices.numpy() != indices.numpy()[..., :1]).any()  # the windows pick differently


@pytest.mark.parametrize("name", EDGE_CASES)
def test_avgpool2d_propagates_inf_and_nan_like_torch(name: str) -> None:
    case = POOL_CASES[name]
    x = edge_input((2, 3, 9, 9), 7)
    case = PoolCase(x.shape, case.kernel, case.stride, case.padding)
    out = pool_output_shape(case)
    with torch.no_grad():
        expected = case.torch_avgpool(torch.from_numpy(x), True).numpy()
    (y,) = interpret(func_ir("avgpool2d", case.props(), [x.shape], out), "f", x)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(expected))
    infinite = np.isinf(expected)
    assert infinite.any()
    np.testing.assert_array_equal(y[infinite], expected[infinite])


# --- the shape rules accept what PyTorch accepts, with PyTorch's shapes ----------------------


def inferred_shape(op: str, props: dict[str, str], operands: Sequence[tuple]) -> tuple:
    """The result shape infer-shapes gives the op (a VerifyException if it rejects it)."""
    module = parse_module(func_ir(op, props, operands, None), "test.mlir")
    module.verify()
    InferShapesPass().apply(adir_context(), module)
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    return shape_of(function.function_type.outputs.data[0])


small = st.integers(1, 3)


@settings(max_examples=60, deadline=None)
@given(
    st.tuples(st.integers(1, 2), small, small, st.integers(1, 7), st.integers(1, 7)),
    st.tuples(st.integers(1, 4), st.integers(1, 4)),
    st.tuples(small, small),
    st.tuples(*[st.integers(0, 2)] * 4),
    st.tuples(st.integers(1, 2), st.integers(1, 2)),
)
def test_conv2d_shape_rule_agrees_with_torch(sizes, kernel, stride, padding, dilation) -> None:
    """For random geometry: the verifier rejects exactly the convolutions PyTorch rejects
    (a dilated kernel beyond the padded input), and otherwise infer-shapes, the interpreter
    and PyTorch give one shape."""
    batch, groups, group_channels, height, width = sizes
    case = ConvCase(
        (batch, groups * group_channels, height, width),
        (2 * groups, group_channels, *kernel),
        bias=True,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
    )
    operands = conv_operands(case, np.float32)
    try:
        with torch.no_grad():
            expected = tuple(case.torch_conv(*[torch.from_numpy(a) for a in operands]).shape)
    except RuntimeError:
        event("rejected")
        with pytest.raises(VerifyException, match="exceeds the padded input"):
            inferred_shape("conv2d", case.props(), [a.shape for a in operands])
        return
    assert inferred_shape("conv2d", case.props(), [a.shape for a in operands]) == expected
    ir = func_ir("conv2d", case.props(), [a.shape for a in operands], expected)
    assert interpret(ir, "f", *operands)[0].shape == expected


@settings(max_examples=100, deadline=None)
@given(
    st.tuples(st.integers(1, 7), st.integers(1, 7)),
    st.tuples(st.integers(1, 4), st.integers(1, 4)),
    st.one_of(st.none(), st.tuples(small, small)),
    st.tuples(st.integers(0, 2), st.integers(0, 2)),
    st.sampled_from(["maxpool2d", "avgpool2d"]),
)
def test_pool_shape_rule_agrees_with_torch(size, kernel, stride, padding, op: str) -> None:
    """As for conv2d, with PyTorch's pooling rules: at most half the kernel of padding, and
    the kernel within the padded input."""
    shape = (2, 3, *size)
    case = PoolCase(shape, kernel, stride, (padding[0], padding[0], padding[1], padding[1]))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    pool = F.max_pool2d if op == "maxpool2d" else F.avg_pool2d
    try:
        expected = tuple(pool(torch.from_numpy(x), kernel, stride, padding).shape)
    except RuntimeError:
        event("rejected")
        with pytest.raises(VerifyException, match="exceeds"):
            inferred_shape(op, case.props(), [shape])
        return
    assert inferred_shape(op, case.props(), [shape]) == expected
    assert interpret(func_ir(op, case.props(), [shape], expected), "f", x)[0].shape == expected
