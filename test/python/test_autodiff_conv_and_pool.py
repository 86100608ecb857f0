"""VJP rules of the conv_and_pool family: the gradient of `sum(op(args) * r)` against
torch.autograd (float64, the harness's 1e-5) and central finite differences, for every
configuration the interpreter test covers (on smaller images, since finite differences
interpret the function twice per input element); and a LeNet-like chain whose parameter
gradients equal torch's.

Random normal inputs have no ties within 1e-6 in a maxpool window (with probability ~1e-4
per window pair), so maxpool is differentiable at them and finite differences hold; the
tie-breaking is checked exactly in test_interpreter_conv_and_pool.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    check_op_gradients,
    differentiate_ir,
    finite_difference_gradients,
    torch_gradients,
)
from test_interpreter_conv_and_pool import ConvCase, PoolCase

from adir.interpreter import Session

F = torch.nn.functional


def props_text(props: dict[str, str]) -> str:
    return f" {{{', '.join(f'{k} = {v}' for k, v in props.items())}}}" if props else ""


# The interpreter test's configurations, on images small enough for finite differences.
CONV_CASES = {
    "3x3": ConvCase((2, 3, 5, 5), (4, 3, 3, 3)),
    "no_bias": ConvCase((2, 3, 5, 5), (4, 3, 3, 3), bias=False),
    "stride_2": ConvCase((2, 2, 7, 7), (3, 2, 3, 3), stride=(2, 2)),
    "padding_1": ConvCase((1, 3, 5, 5), (4, 3, 3, 3), padding=(1, 1, 1, 1)),
    "stride_2_padding_1": ConvCase((2, 2, 6, 6), (3, 2, 3, 3), stride=(2, 2), padding=(1,) * 4),
    "asymmetric_padding": ConvCase((2, 2, 5, 6), (3, 2, 3, 3), padding=(0, 2, 1, 0)),
    "asymmetric_padding_stride_2": ConvCase(
        (1, 2, 8, 7), (3, 2, 3, 2), stride=(2, 2), padding=(1, 0, 0, 1)
    ),
    "groups_2": ConvCase((2, 4, 5, 5), (6, 2, 3, 3), groups=2),
    "depthwise": ConvCase((2, 4, 5, 5), (4, 1, 3, 3), padding=(1,) * 4, groups=4),
    "depthwise_multiplier_2": ConvCase((1, 3, 5, 5), (6, 1, 3, 3), bias=False, groups=3),
    "dilation_2": ConvCase((1, 2, 7, 7), (3, 2, 3, 3), padding=(2,) * 4, dilation=(2, 2)),
    "mixed_stride_dilation": ConvCase((2, 2, 7, 8), (3, 2, 2, 3), stride=(2, 1), dilation=(1, 2)),
    "odd_sizes": ConvCase((2, 3, 9, 7), (5, 3, 5, 3), stride=(3, 2), padding=(2, 1, 0, 1)),
    "1x1": ConvCase((2, 5, 4, 4), (3, 5, 1, 1)),
    "1x1_stride_2": ConvCase((2, 5, 5, 4), (3, 5, 1, 1), bias=False, stride=(2, 2)),
    "kernel_covers_input": ConvCase((2, 2, 4, 4), (3, 2, 4, 4)),
}


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv2d(name: str) -> None:
    case = CONV_CASES[name]
    shapes = [case.input, case.weight] + ([(case.weight[0],)] if case.bias else [])
    op_text = f"adir.conv2d OPERANDS{props_text(case.props())}"
    if case.bias:
        check_op_gradients(op_text, shapes, case.torch_conv)
    else:
        check_op_gradients(op_text, shapes, lambda x, w: case.torch_conv(x, w, None))


# conv1d: (input, weight, stride, (left, right), dilation, groups, bias), against F.conv1d of
# the input padded by F.pad (torch's conv1d pads both ends alike).
CONV1D_CASES = {
    "k3": ((2, 3, 7), (4, 3, 3), 1, (0, 0), 1, 1, True),
    "stride_2_asymmetric_padding_no_bias": ((1, 2, 8), (3, 2, 3), 2, (2, 1), 1, 1, False),
    "dilation_2_groups_2": ((2, 4, 9), (6, 2, 3), 1, (2, 2), 2, 2, True),
    "depthwise": ((1, 3, 6), (3, 1, 4), 1, (1, 2), 1, 3, True),
}


@pytest.mark.parametrize("name", sorted(CONV1D_CASES))
def test_conv1d(name: str) -> None:
    shape, weight, stride, padding, dilation, groups, bias = CONV1D_CASES[name]
    props = (
        f"{{stride = array<i64: {stride}>, padding = array<i64: {padding[0]}, {padding[1]}>, "
        f"dilation = array<i64: {dilation}>, groups = {groups} : i64}}"
    )

    def torch_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None):
        return F.conv1d(F.pad(x, padding), w, b, stride, 0, dilation, groups)

    shapes = [shape, weight] + ([(weight[0],)] if bias else [])
    check_op_gradients(f"adir.conv1d OPERANDS {props}", shapes, torch_conv)


POOL_CASES = {
    "2x2": PoolCase((2, 3, 6, 6), (2, 2)),
    "2x2_odd_input": PoolCase((2, 2, 5, 7), (2, 2)),
    "3x3_stride_2_padding_1": PoolCase((2, 2, 7, 6), (3, 3), (2, 2), (1, 1, 1, 1)),
    "3x3_stride_1_padding_1": PoolCase((1, 2, 5, 5), (3, 3), (1, 1), (1, 1, 1, 1)),
    "overlapping_3x3_stride_2": PoolCase((2, 2, 7, 7), (3, 3), (2, 2)),
    "rectangular": PoolCase((1, 2, 7, 6), (3, 2), (2, 1), (1, 1, 0, 0)),
    "asymmetric_padding": PoolCase((1, 2, 7, 6), (3, 2), (2, 1), (1, 0, 0, 1)),
    "asymmetric_padding_2": PoolCase((2, 2, 6, 7), (4, 4), (3, 2), (0, 2, 1, 0)),
    "kernel_covers_input": PoolCase((2, 3, 4, 4), (4, 4)),
    "1x1": PoolCase((2, 2, 3, 4), (1, 1)),
}


@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_maxpool2d(name: str) -> None:
    case = POOL_CASES[name]
    op_text = f"adir.maxpool2d OPERANDS{props_text(case.props())}"
    check_op_gradients(op_text, [case.input], case.torch_maxpool, seed=1)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_avgpool2d(name: str, count_include_pad: bool) -> None:
    case = POOL_CASES[name]
    props = case.props()
    if not count_include_pad:
        props["count_include_pad"] = "false"
    op_text = f"adir.avgpool2d OPERANDS{props_text(props)}"
    check_op_gradients(op_text, [case.input], lambda x: case.torch_avgpool(x, count_include_pad))


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 2, 1, 1), (2, 1, 7, 7)], ids=str)
def test_global_avgpool2d(shape: tuple) -> None:
    check_op_gradients(
        "adir.global_avgpool2d OPERANDS", [shape], lambda x: F.adaptive_avg_pool2d(x, 1)
    )


# --- a LeNet-like chain ------------------------------------------------------------------

LENET_LIKE = """
adir.param @c1 : tensor<4x1x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @b1 : tensor<4xf32> = #adir.uniform<low = -0.3, high = 0.3, seed = 2>
adir.param @c2 : tensor<6x4x3x3xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
adir.param @b2 : tensor<6xf32> = #adir.uniform<low = -0.2, high = 0.2, seed = 4>
adir.param @fc : tensor<5x24xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 5>

func.func @f(%x: tensor<2x1x12x10xf32>, %label: tensor<2xi32>) -> tensor<f32> {
  %c1 = adir.load @c1 : tensor<4x1x3x3xf32>
  %b1 = adir.load @b1 : tensor<4xf32>
  %h1 = adir.conv2d %x, %c1, %b1 {padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x1x12x10xf32>, tensor<4x1x3x3xf32>, tensor<4xf32> -> tensor<2x4x12x10xf32>
  %a1 = adir.relu %h1 : tensor<2x4x12x10xf32>
  %p1 = adir.maxpool2d %a1 {kernel_size = array<i64: 2, 2>}
      : tensor<2x4x12x10xf32> -> tensor<2x4x6x5xf32>
  %c2 = adir.load @c2 : tensor<6x4x3x3xf32>
  %b2 = adir.load @b2 : tensor<6xf32>
  %h2 = adir.conv2d %p1, %c2, %b2
      : tensor<2x4x6x5xf32>, tensor<6x4x3x3xf32>, tensor<6xf32> -> tensor<2x6x4x3xf32>
  %a2 = adir.relu %h2 : tensor<2x6x4x3xf32>
  %p2 = adir.maxpool2d %a2 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 1>}
      : tensor<2x6x4x3xf32> -> tensor<2x6x2x2xf32>
  %flat = adir.reshape %p2 {shape = array<i64: 2, 24>} : tensor<2x6x2x2xf32> -> tensor<2x24xf32>
  %fc = adir.load @fc : tensor<5x24xf32>
  %logits = adir.matmul %flat, %fc {transpose_b}
      : tensor<2x24xf32>, tensor<5x24xf32> -> tensor<2x5xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<2x5xf32>, tensor<2xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}"""


def test_lenet_like_chain_gradients_equal_torch() -> None:
    """conv, relu, maxpool, conv, relu, maxpool, reshape, matmul, cross_entropy: the loss and
    every parameter's gradient (and the image's) equal torch.autograd's for the same weights,
    in float64, and finite differences of the interpreted loss."""
    module = differentiate_ir(LENET_LIKE, "f", wrt_args=[0])
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 1, 12, 10))
    label = np.array([3, 0], np.int32)
    session = Session(module, np.float64)
    params = [session.params[name] for name in ("c1", "b1", "c2", "b2", "fc")]
    loss, *grads = session.call("f_grad", x, label)

    def reference(x, c1, b1, c2, b2, fc, label):
        a1 = F.max_pool2d(torch.relu(F.conv2d(x, c1, b1, padding=1)), 2)
        a2 = F.max_pool2d(torch.relu(F.conv2d(a1, c2, b2)), 2, (2, 1))
        return F.cross_entropy(a2.reshape(2, 24) @ fc.T, label.long())

    args = [x, *params, label]
    expected = torch_gradients(reference, args, [1, 2, 3, 4, 5, 0])
    assert_gradients_close([loss, *grads], expected)
    assert np.count_nonzero(grads[0]) > 0 and np.count_nonzero(grads[-1]) > 0

    # Finite differences with respect to the image (the parameters are module state).
    (numeric,) = finite_difference_gradients(module, [x, label], [0])
    np.testing.assert_allclose(grads[-1], numeric, rtol=1e-6, atol=1e-6 * np.abs(numeric).max())


def test_image_used_three_times_accumulates_the_adjoints() -> None:
    """An image feeding a conv, a residual add and an avgpool: its adjoint sums
    conv2d_grad_input, the maxpool2d_grad through the add, and avgpool2d_grad (fan-out), as
    torch.autograd's."""
    ir = """
func.func @f(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x3x3xf32>, %r: tensor<1x2x2x2xf32>)
    -> tensor<f32> {
  %c = adir.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32> -> tensor<1x2x6x6xf32>
  %s = adir.add %c, %x : tensor<1x2x6x6xf32>
  %m = adir.maxpool2d %s {kernel_size = array<i64: 3, 3>}
      : tensor<1x2x6x6xf32> -> tensor<1x2x2x2xf32>
  %v = adir.avgpool2d %x {kernel_size = array<i64: 3, 3>}
      : tensor<1x2x6x6xf32> -> tensor<1x2x2x2xf32>
  %mv = adir.mul %m, %v : tensor<1x2x2x2xf32>
  %p = adir.mul %mv, %r : tensor<1x2x2x2xf32>
  %l = adir.sum %p : tensor<1x2x2x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""
    rng = np.random.default_rng(9)
    args = [rng.standard_normal((1, 2, 6, 6)), rng.standard_normal((2, 2, 3, 3))]
    args.append(rng.standard_normal((1, 2, 2, 2)))
    module = differentiate_ir(ir, "f", [0, 1])

    def reference(x, w, r):
        m = F.max_pool2d(F.conv2d(x, w, padding=1) + x, 3)
        return (m * F.avg_pool2d(x, 3) * r).sum()

    actual = adir_gradients(module, args)
    assert_gradients_close(actual, torch_gradients(reference, args, [0, 1]))
