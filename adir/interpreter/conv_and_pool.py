"""numpy semantics of the conv_and_pool family (adir/dialects/tensor/conv_and_pool.py).

Vectorised over pixels: a window view of the padded input (`sliding_window_view`, strided by
the stride and the dilation, no copy) turns conv2d into one contraction (`einsum`, i.e. an
im2col matrix product) and a pool into one reduction. The adjoints that scatter back into the
input (conv2d_grad_input, avgpool2d_grad) loop over the KH x KW kernel positions, adding one
strided slice each, never over pixels. Everything computes in the operands' dtype.

Where PyTorch's CPU kernel fixes an order of summation that is cheap to follow, the
interpreter follows it (the pools' adjoints), so results agree exactly; the convolutions and
the window sums leave the order to BLAS and numpy, and
test/python/test_interpreter_conv_and_pool.py derives how far apart the results may be.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import conv_and_pool as cp
from adir.dialects.tensor.conv_and_pool import Window2d
from adir.interpreter.family import FamilyFunctions
from adir.interpreter.row_sum import row_sums


def pad_image(x: np.ndarray, padding: Sequence[int], value: float) -> np.ndarray:
    """x [..., H, W] padded by (top, bottom, left, right) with `value`."""
    top, bottom, left, right = padding
    if not any(padding):
        return x
    widths = [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)]
    return np.pad(x, widths, constant_values=value)


def windows(padded: np.ndarray, window: Window2d) -> np.ndarray:
    """The windows of a padded [..., Hp, Wp] image: a view [..., H_out, W_out, KH, KW]."""
    extent = (window.extent(0), window.extent(1))
    view = sliding_window_view(padded, extent, axis=(-2, -1))
    (sh, sw), (dh, dw) = window.stride, window.dilation
    return view[..., ::sh, ::sw, ::dh, ::dw]


def scatter_windows(
    values: np.ndarray, window: Window2d, input_size: Sequence[int], reverse: bool = False
) -> np.ndarray:
    """The adjoint of `windows(pad_image(x))`: values [..., H_out, W_out, KH, KW] added back
    to the input positions each window read, padding cut off -> [..., H, W].

    One strided slice per kernel position. With `reverse`, the kernel positions go last to
    first, so that each input element receives its terms in row-major output order (a later
    output row reads it with an earlier kernel row), which is the order of PyTorch's pooling
    backward kernels.
    """
    height, width = input_size
    padded = np.zeros(
        (*values.shape[:-4], window.padded(0, height), window.padded(1, width)), values.dtype
    )
    out_h, out_w, kh, kw = values.shape[-4:]
    (sh, sw), (dh, dw) = window.stride, window.dilation
    positions = [(i, j) for i in range(kh) for j in range(kw)]
    for i, j in reversed(positions) if reverse else positions:
        rows = slice(i * dh, i * dh + sh * (out_h - 1) + 1, sh)
        cols = slice(j * dw, j * dw + sw * (out_w - 1) + 1, sw)
        padded[..., rows, cols] += values[..., i, j]
    top, _, left, _ = window.padding
    return padded[..., top : top + height, left : left + width].copy()


# --- convolution -------------------------------------------------------------------------


def _grouped(array: np.ndarray, groups: int) -> np.ndarray:
    """[A, G * B, ...] -> [A, G, B, ...] (channels split into their groups)."""
    return array.reshape(array.shape[0], groups, array.shape[1] // groups, *array.shape[2:])


def conv2d(
    x: np.ndarray, w: np.ndarray, b: np.ndarray | None, window: Window2d, groups: int
) -> np.ndarray:
    """`y[n, g, o] = sum_{c, i, j} windows[n, g, c, :, :, i, j] * w[g, o, c, i, j] (+ b)`."""
    cols = _grouped(windows(pad_image(x, window.padding, 0.0), window), groups)
    weight = w.reshape(groups, w.shape[0] // groups, *w.shape[1:])
    y = np.einsum("ngchwij,gocij->ngohw", cols, weight, optimize=True)
    y = y.reshape(x.shape[0], w.shape[0], *y.shape[-2:])
    return y if b is None else y + b[:, None, None]


def conv2d_grad_input(
    dy: np.ndarray, w: np.ndarray, input_size: Sequence[int], window: Window2d, groups: int
) -> np.ndarray:
    """The transposed convolution: each output's `dy` times the weight, added back over the
    window it read (`dx[n, g, c] = sum dy[n, g, o] * w[g, o, c, i, j]` at the read position)."""
    weight = w.reshape(groups, w.shape[0] // groups, *w.shape[1:])
    cols = np.einsum("ngohw,gocij->ngchwij", _grouped(dy, groups), weight, optimize=True)
    cols = cols.reshape(dy.shape[0], groups * w.shape[1], *cols.shape[-4:])
    return scatter_windows(cols, window, input_size)


def conv2d_grad_weight(x: np.ndarray, dy: np.ndarray, window: Window2d, groups: int) -> np.ndarray:
    """`dw[g, o, c, i, j] = sum_{n, h, w} dy[n, g, o, h, w] * windows[n, g, c, h, w, i, j]`."""
    cols = _grouped(windows(pad_image(x, window.padding, 0.0), window), groups)
    dw = np.einsum("ngohw,ngchwij->gocij", _grouped(dy, groups), cols, optimize=True)
    return dw.reshape(dy.shape[1], *dw.shape[2:])


# --- pooling -----------------------------------------------------------------------------


def maxpool2d(x: np.ndarray, window: Window2d) -> np.ndarray:
    """The max of each window of x padded with -inf; nan if the window holds a nan."""
    return windows(pad_image(x, window.padding, -np.inf), window).max(axis=(-2, -1))


def max_positions(x: np.ndarray, window: Window2d) -> np.ndarray:
    """For each window, the flat index `h * W + w` into its image of the element PyTorch's
    max_pool2d picks: its CPU kernel scans the window's image elements in row-major order and
    takes one when `val > max || isnan(val)`, starting from the first with max = -inf. So the
    first maximum, or the last nan, or the first element if all are -inf. [N, C, H_out, W_out].
    """
    height, width = x.shape[-2:]
    flat_index = np.arange(height * width).reshape(height, width)
    index = windows(pad_image(flat_index, window.padding, -1), window)  # -1: padding
    index = index.reshape(*index.shape[:2], -1)  # [H_out, W_out, K]
    values = windows(pad_image(x, window.padding, -np.inf), window)
    values = values.reshape(*values.shape[:4], -1)  # [N, C, H_out, W_out, K]
    inside = index >= 0
    is_nan = np.isnan(values)
    candidates = np.where(inside & ~is_nan, values, -np.inf)
    largest = candidates.max(axis=-1, keepdims=True)
    first_max = np.argmax((candidates == largest) & inside, axis=-1)
    last_nan = values.shape[-1] - 1 - np.argmax(is_nan[..., ::-1], axis=-1)
    position = np.where(is_nan.any(axis=-1), last_nan, first_max)
    return np.take_along_axis(np.broadcast_to(index, values.shape), position[..., None], -1)[..., 0]


def maxpool2d_grad(x: np.ndarray, dy: np.ndarray, window: Window2d) -> np.ndarray:
    """Each window's dy added to the element it picked (`max_positions`), window by window in
    row-major order as PyTorch's backward kernel adds them (`np.add.at` is unbuffered and goes
    in index order), so overlapping windows sum in the same order."""
    batch, channels, height, width = x.shape
    planes = np.arange(batch * channels).reshape(batch, channels, 1, 1) * (height * width)
    dx = np.zeros(x.size, dy.dtype)
    np.add.at(dx, (planes + max_positions(x, window)).ravel(), dy.ravel())
    return dx.reshape(x.shape)


def pool_divisors(
    input_size: Sequence[int], window: Window2d, count_include_pad: bool, dtype: np.dtype
) -> np.ndarray:
    """avgpool2d's divisor per window, [H_out, W_out] in `dtype`: the kernel's size, or the
    number of the window's elements inside the image (integers, exact in float32)."""
    padded = pad_image(np.ones(tuple(input_size), np.int64), window.padding, 0)
    if count_include_pad:
        padded = np.ones_like(padded)
    return windows(padded, window).sum(axis=(-2, -1)).astype(dtype)


def avgpool2d(x: np.ndarray, window: Window2d, count_include_pad: bool) -> np.ndarray:
    total = windows(pad_image(x, window.padding, 0.0), window).sum(axis=(-2, -1))
    return total / pool_divisors(x.shape[-2:], window, count_include_pad, x.dtype)


def avgpool2d_grad(
    dy: np.ndarray,
    input_size: Sequence[int],
    window: Window2d,
    count_include_pad: bool,
) -> np.ndarray:
    """`dy / divisor` spread over each window, in PyTorch's order (`scatter_windows`)."""
    share = dy / pool_divisors(input_size, window, count_include_pad, dy.dtype)
    kh, kw = window.kernel
    spread = np.broadcast_to(share[..., None, None], (*share.shape, kh, kw))
    return scatter_windows(spread, window, input_size, reverse=True)


def global_avgpool2d(x: np.ndarray) -> np.ndarray:
    """Each plane's sum in the C reference's order (`row_sums`), over its size."""
    plane = x.shape[-2] * x.shape[-1]
    sums = row_sums(x.reshape(*x.shape[:-2], plane)) / x.dtype.type(plane)
    return sums.reshape(*x.shape[:-2], 1, 1)


@register_impls
class ConvAndPoolFunctions(FamilyFunctions):
    @impl(cp.Conv2dOp)
    def run_conv2d(self, interpreter: Interpreter, op: cp.Conv2dOp, args: tuple[Any, ...]):
        x, w, *bias = args
        window = op.window(w.shape[2:])
        return (conv2d(x, w, bias[0] if bias else None, window, op.group_count()),)

    @impl(cp.Conv2dGradInputOp)
    def run_conv2d_grad_input(
        self, interpreter: Interpreter, op: cp.Conv2dGradInputOp, args: tuple[Any, ...]
    ):
        dy, w = args
        size = op.pair_values("input_size")
        return (conv2d_grad_input(dy, w, size, op.window(w.shape[2:]), op.group_count()),)

    @impl(cp.Conv2dGradWeightOp)
    def run_conv2d_grad_weight(
        self, interpreter: Interpreter, op: cp.Conv2dGradWeightOp, args: tuple[Any, ...]
    ):
        x, dy = args
        window = op.window(op.pair_values("kernel_size"))
        return (conv2d_grad_weight(x, dy, window, op.group_count()),)

    # conv1d: conv2d on height-1 views ([N, C, L] -> [N, C, 1, L], no copy), so the numbers
    # are conv2d's.
    @impl(cp.Conv1dOp)
    def run_conv1d(self, interpreter: Interpreter, op: cp.Conv1dOp, args: tuple[Any, ...]):
        x, w, *bias = args
        window = op.window((1, w.shape[2]))
        y = conv2d(
            x[:, :, None], w[:, :, None], bias[0] if bias else None, window, op.group_count()
        )
        return (y[:, :, 0],)

    @impl(cp.Conv1dGradInputOp)
    def run_conv1d_grad_input(
        self, interpreter: Interpreter, op: cp.Conv1dGradInputOp, args: tuple[Any, ...]
    ):
        dy, w = args
        size, window = (1, op.length_values("input_size")), op.window((1, w.shape[2]))
        dx = conv2d_grad_input(dy[:, :, None], w[:, :, None], size, window, op.group_count())
        return (dx[:, :, 0],)

    @impl(cp.Conv1dGradWeightOp)
    def run_conv1d_grad_weight(
        self, interpreter: Interpreter, op: cp.Conv1dGradWeightOp, args: tuple[Any, ...]
    ):
        x, dy = args
        window = op.window((1, op.length_values("kernel_size")))
        dw = conv2d_grad_weight(x[:, :, None], dy[:, :, None], window, op.group_count())
        return (dw[:, :, 0],)

    @impl(cp.Maxpool2dOp)
    def run_maxpool2d(self, interpreter: Interpreter, op: cp.Maxpool2dOp, args: tuple[Any, ...]):
        return (maxpool2d(args[0], op.window()),)

    @impl(cp.Maxpool2dGradOp)
    def run_maxpool2d_grad(
        self, interpreter: Interpreter, op: cp.Maxpool2dGradOp, args: tuple[Any, ...]
    ):
        return (maxpool2d_grad(*args, op.window()),)

    @impl(cp.Avgpool2dOp)
    def run_avgpool2d(self, interpreter: Interpreter, op: cp.Avgpool2dOp, args: tuple[Any, ...]):
        return (avgpool2d(args[0], op.window(), bool(op.count_include_pad.value.data)),)

    @impl(cp.Avgpool2dGradOp)
    def run_avgpool2d_grad(
        self, interpreter: Interpreter, op: cp.Avgpool2dGradOp, args: tuple[Any, ...]
    ):
        size = op.pair_values("input_size")
        include = bool(op.count_include_pad.value.data)
        return (avgpool2d_grad(args[0], size, op.window(), include),)

    @impl(cp.GlobalAvgpool2dOp)
    def run_global_avgpool2d(
        self, interpreter: Interpreter, op: cp.GlobalAvgpool2dOp, args: tuple[Any, ...]
    ):
        return (global_avgpool2d(args[0]),)
