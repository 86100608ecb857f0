"""C calls of the conv_and_pool family's kernels (runtime: adir_conv_and_pool.c).

Every kernel takes the image's sizes (batch, channels, height, width), the output's spatial
size and the window (kernel, stride, top and left padding; dilation and groups for conv); the
bottom and right padding are implied by the output size. conv2d's optional bias is NULL when
absent.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr

from adir.backends.c.calls import CallSite, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import conv_and_pool as cp


def values(op: KernelOp, prop: str) -> list[int]:
    array = op.properties[prop]
    assert isinstance(array, DenseArrayBase)
    return [int(v) for v in array.get_values()]


def conv_window(op: KernelOp, kernel: tuple[int, ...]) -> list[int]:
    """kernel_height, kernel_width, stride (2), pad_top, pad_left, dilation (2), groups."""
    top, _, left, _ = values(op, "padding")
    groups = op.properties["groups"]
    assert isinstance(groups, IntegerAttr)
    return [*kernel, *values(op, "stride"), top, left, *values(op, "dilation"), groups.value.data]


def pool_window(op: KernelOp) -> list[int]:
    """kernel_height, kernel_width, stride (2; the kernel's size when left out), pad_top,
    pad_left."""
    kernel = values(op, "kernel_size")
    stride = values(op, "stride") if "stride" in op.properties else kernel
    top, _, left, _ = values(op, "padding")
    return [*kernel, *stride, top, left]


def count_include_pad(op: KernelOp) -> int:
    include = op.properties["count_include_pad"]
    assert isinstance(include, IntegerAttr)  # BoolAttr is IntegerAttr[i1]
    return int(include.value.data)


INT32_MAX = 2**31 - 1


def window_call(
    site: CallSite,
    kernel: str,
    buffers: list[str],
    sizes: list[int],
    window: list[int],
    taps: int | None = None,
    extra: list[str] | None = None,
) -> str:
    """`ADIR_<KERNEL>(buffers, sizes, window)`, if the sizes fit the kernels' int32_t
    arithmetic: each value it computes is a sum of at most three of them (a padded image
    size, a tap's position), N * C planes or KH * KW taps (`taps`, for a 1-D window K)."""
    batch, channels = sizes[0], sizes[1]
    taps = window[0] * window[1] if taps is None else taps
    largest = max(3 * max(sizes + window), batch * channels, taps)
    if largest > INT32_MAX:
        raise site.error(f"sizes {sizes} and window {window} exceed the kernel's int32_t")
    return site.call(kernel, *buffers, *sizes, *window, *(extra or []))


def conv2d_call(op: KernelOp, site: CallSite, kernel: str, buffers: list[str],
                sizes: list[int], window: list[int]) -> str:  # fmt: skip
    """The call of a conv2d kernel: the one select-kernels named in `adir.kernel_call` (a
    tuned `_gemm` or `_depthwise` kernel) with its scratch buffer (an `outs` after the result)
    as floats and their count (NULL, 0 when it needs none), else `kernel`."""
    call = op.attributes.get("adir.kernel_call")
    if not isinstance(call, StringAttr):
        return window_call(site, kernel, buffers, sizes, window)
    scratch = ["NULL", "0"]
    if len(site.outs) > 1:
        size = op.attributes["adir.kernel_scratch"]
        assert isinstance(size, IntegerAttr)
        scratch = [f"(float *)(void *){site.output(1)}", str(size.value.data // 4)]
    return window_call(site, call.data, buffers, sizes, window, extra=scratch)


@emits(cp.Conv2dOp)
def conv2d(op: KernelOp, site: CallSite) -> str:
    image, weight, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    bias = site.input(2) if len(op.ins) == 3 else "NULL"
    buffers = [site.input(0), site.input(1), bias, site.output()]
    return conv2d_call(op, site, "conv2d", buffers, [*image, *out[1:]], conv_window(op, weight[2:]))


@emits(cp.Conv2dGradInputOp)
def conv2d_grad_input(op: KernelOp, site: CallSite) -> str:
    grad, weight, image = site.in_shape(0), site.in_shape(1), site.out_shape()
    buffers = [site.input(0), site.input(1), site.output()]
    sizes = [*image, *grad[1:]]
    return conv2d_call(op, site, "conv2d_grad_input", buffers, sizes, conv_window(op, weight[2:]))


@emits(cp.Conv2dGradWeightOp)
def conv2d_grad_weight(op: KernelOp, site: CallSite) -> str:
    image, grad, weight = site.in_shape(0), site.in_shape(1), site.out_shape()
    buffers = [site.input(0), site.input(1), site.output()]
    sizes = [*image, *grad[1:]]
    return conv2d_call(op, site, "conv2d_grad_weight", buffers, sizes, conv_window(op, weight[2:]))


def conv1d_window(op: KernelOp, kernel: int) -> list[int]:
    """kernel, stride, pad_left, dilation, groups (the right padding is implied by the output
    length)."""
    left, _ = values(op, "padding")
    groups = op.properties["groups"]
    assert isinstance(groups, IntegerAttr)
    return [kernel, *values(op, "stride"), left, *values(op, "dilation"), groups.value.data]


@emits(cp.Conv1dOp)
def conv1d(op: KernelOp, site: CallSite) -> str:
    sequence, weight, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    bias = site.input(2) if len(op.ins) == 3 else "NULL"
    buffers = [site.input(0), site.input(1), bias, site.output()]
    sizes = [*sequence, *out[1:]]
    return window_call(site, "conv1d", buffers, sizes, conv1d_window(op, weight[2]), weight[2])


@emits(cp.Conv1dGradInputOp)
def conv1d_grad_input(op: KernelOp, site: CallSite) -> str:
    grad, weight, sequence = site.in_shape(0), site.in_shape(1), site.out_shape()
    buffers = [site.input(0), site.input(1), site.output()]
    sizes = [*sequence, *grad[1:]]
    return window_call(
        site, "conv1d_grad_input", buffers, sizes, conv1d_window(op, weight[2]), weight[2]
    )


@emits(cp.Conv1dGradWeightOp)
def conv1d_grad_weight(op: KernelOp, site: CallSite) -> str:
    sequence, grad, weight = site.in_shape(0), site.in_shape(1), site.out_shape()
    buffers = [site.input(0), site.input(1), site.output()]
    sizes = [*sequence, *grad[1:]]
    return window_call(
        site, "conv1d_grad_weight", buffers, sizes, conv1d_window(op, weight[2]), weight[2]
    )


@emits(cp.Maxpool2dOp)
def maxpool2d(op: KernelOp, site: CallSite) -> str:
    image, out = site.in_shape(0), site.out_shape()
    buffers = [site.input(0), site.output()]
    return window_call(site, "maxpool2d", buffers, [*image, *out[2:]], pool_window(op))


@emits(cp.Maxpool2dGradOp)
def maxpool2d_grad(op: KernelOp, site: CallSite) -> str:
    image, grad = site.in_shape(0), site.in_shape(1)
    buffers = [site.input(0), site.input(1), site.output()]
    return window_call(site, "maxpool2d_grad", buffers, [*image, *grad[2:]], pool_window(op))


@emits(cp.Avgpool2dOp)
def avgpool2d(op: KernelOp, site: CallSite) -> str:
    image, out = site.in_shape(0), site.out_shape()
    buffers = [site.input(0), site.output()]
    window = [*pool_window(op), count_include_pad(op)]
    return window_call(site, "avgpool2d", buffers, [*image, *out[2:]], window)


@emits(cp.Avgpool2dGradOp)
def avgpool2d_grad(op: KernelOp, site: CallSite) -> str:
    grad, image = site.in_shape(0), site.out_shape()
    buffers = [site.input(0), site.output()]
    window = [*pool_window(op), count_include_pad(op)]
    return window_call(site, "avgpool2d_grad", buffers, [*image, *grad[2:]], window)


@emits(cp.GlobalAvgpool2dOp)
def global_avgpool2d(op: KernelOp, site: CallSite) -> str:
    image = site.in_shape(0)
    if max(image) > INT32_MAX or image[0] * image[1] > INT32_MAX:
        raise site.error(f"input {list(image)} exceeds the kernel's int32_t")
    return site.call("global_avgpool2d", site.input(0), site.output(), *image)
