"""ATen's 2-D and 1-D convolution and pooling: the conv_and_pool family (NCHW, as PyTorch's).

The 1-D pools need nothing here: torch.export writes `F.max_pool1d`, `F.avg_pool1d` and
`F.adaptive_avg_pool1d` as their 2-D forms between an unsqueeze and a squeeze."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import fx

from adir.frontends.aten.registry import Args, Lowering, Unsupported, aten, aten_, require


def _pair(value: int | Sequence[int]) -> tuple[int, int]:
    """ATen's `int[2]`: an int, or one or two entries."""
    if isinstance(value, int):
        return (value, value)
    values = tuple(int(v) for v in value)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def _zero_padding_of_hw(arg: Any) -> tuple[fx.Node, tuple[int, int, int, int]] | None:
    """(source, [top, bottom, left, right]) if `arg` is a `constant_pad_nd` with value 0 that
    pads only H and W (TensorFlow's "same" padding written as `nn.ZeroPad2d`), else None."""
    if not isinstance(arg, fx.Node) or arg.target != aten_.constant_pad_nd.default:
        return None
    source, pad = arg.args[0], [int(p) for p in arg.args[1]]
    value = arg.args[2] if len(arg.args) > 2 else arg.kwargs.get("value", 0)
    if value != 0 or len(pad) not in (2, 4) or min(pad) < 0 or not isinstance(source, fx.Node):
        return None
    left, right, top, bottom = (*pad, 0, 0)[:4]
    return source, (top, bottom, left, right)


def _zero_padding_of_length(arg: Any) -> tuple[fx.Node, tuple[int, int]] | None:
    """(source, [left, right]) if `arg` is a `constant_pad_nd` with value 0 that pads only the
    last dim (`nn.ZeroPad1d`, `F.pad(x, (l, r))`, an even kernel's `padding="same"`), else None."""
    folded = _zero_padding_of_hw(arg)
    if folded is None or len(arg.args[1]) != 2:
        return None
    source, (_, _, left, right) = folded
    return source, (left, right)


@aten(aten_.convolution.default)
def convolution(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`F.conv2d` (torch's symmetric padding [ph, pw] is adir's [ph, ph, pw, pw]), and
    `F.conv1d` (a 3-D weight). A zero padding of H and W right before a 2-D conv
    (`nn.ZeroPad2d`, `F.pad`), and a zero padding of L right before a 1-D conv, is added to
    the conv's own padding, which is asymmetric in adir, so the padded input is never
    materialised."""
    rank = len(Lowering.shape(a["weight"]))
    require(rank in (3, 4), f"a {rank - 2}-D convolution (adir has conv2d and conv1d)")
    require(not a["transposed"], "a transposed convolution")
    if rank == 3:
        return conv1d(lo, node, a)
    height, width = _pair(a["padding"])
    padding = (height, height, width, width)
    source = a["input"]
    if (folded := _zero_padding_of_hw(source)) is not None:
        source, extra = folded
        padding = tuple(p + e for p, e in zip(padding, extra, strict=True))
    return lo.b.conv2d(
        lo.value(source),
        lo.value(a["weight"]),
        lo.value(a["bias"]),
        stride=_pair(a["stride"]),
        padding=padding,
        dilation=_pair(a["dilation"]),
        groups=int(a["groups"]),
    )


def conv1d(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`F.conv1d` on [N, C, L]: `adir.conv1d` (symmetric padding p is [p, p]), a zero padding
    of L before it folded in."""
    stride, dilation = _single(a["stride"]), _single(a["dilation"])
    padding = (_single(a["padding"]),) * 2
    source = a["input"]
    if (folded := _zero_padding_of_length(source)) is not None:
        source, extra = folded
        padding = (padding[0] + extra[0], padding[1] + extra[1])
    return lo.b.conv1d(
        lo.value(source),
        lo.value(a["weight"]),
        lo.value(a["bias"]),
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=int(a["groups"]),
    )


def _single(value: int | Sequence[int]) -> int:
    """ATen's `int[1]`: an int, or one entry."""
    return value if isinstance(value, int) else int(value[0])


@aten(aten_.max_pool2d_with_indices.default)
def max_pool2d(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """The pooled values; the indices (result #1) are not computed (adir saves none)."""
    require(_pair(a["dilation"]) == (1, 1), f"dilation={list(_pair(a['dilation']))}")
    require(not a["ceil_mode"], "ceil_mode=True")
    stride = _pair(a["stride"]) if a["stride"] else None
    pooled = lo.b.maxpool2d(
        lo.value(a["self"]), _pair(a["kernel_size"]), stride, _pair(a["padding"])
    )
    return (pooled, None)


@aten(aten_.avg_pool2d.default)
def avg_pool2d(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require(not a["ceil_mode"], "ceil_mode=True")
    require(a["divisor_override"] is None, f"divisor_override={a['divisor_override']}")
    stride = _pair(a["stride"]) if a["stride"] else None
    return lo.b.avgpool2d(
        lo.value(a["self"]),
        _pair(a["kernel_size"]),
        stride,
        _pair(a["padding"]),
        count_include_pad=bool(a["count_include_pad"]),
    )


@aten(aten_._adaptive_avg_pool2d.default, aten_.adaptive_avg_pool2d.default)
def adaptive_avg_pool2d(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """Output 1x1 is `global_avgpool2d`; an output size that divides the input's is an
    `avgpool2d` with kernel = stride = input / output (torch's windows are those then)."""
    x = lo.value(a["self"])
    height, width = Lowering.shape(a["self"])[-2:]
    out_h, out_w = _pair(a["output_size"])
    if (out_h, out_w) == (1, 1):
        return lo.b.global_avgpool2d(x)
    if height % out_h or width % out_w:
        raise Unsupported(f"output size {[out_h, out_w]} that does not divide {[height, width]}")
    kernel = (height // out_h, width // out_w)
    return lo.b.avgpool2d(x, kernel, kernel)
