"""ATen's ops that only move data (views, permutes, slices, cat, pad, copies): the data movement
family."""

from __future__ import annotations

from typing import Any

import torch
from torch import fx
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from adir.dialects.tensor.data_movement import ReshapeOp
from adir.frontends.aten.registry import Args, Lowering, aten, aten_, require


def require_f32(node: fx.Node) -> None:
    """adir's data-movement ops move f32 tensors; an integer one (a label) is a located
    error saying so, rather than the op's operand-type message."""
    dtype = node.meta["val"].dtype
    require(
        dtype == torch.float32,
        f"a tensor of {str(dtype).removeprefix('torch.')}: adir moves only f32 data (give the "
        "model its integer inputs already in the shape it needs)",
    )


@aten(aten_.permute.default)
def permute(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require_f32(node)
    rank = len(Lowering.shape(a["self"]))
    return lo.b.transpose(lo.value(a["self"]), [d % rank for d in a["dims"]])


@aten(aten_.t.default)
def t(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require_f32(node)
    if len(Lowering.shape(a["self"])) < 2:
        return lo.value(a["self"])  # the transpose of a vector is itself
    return lo.b.transpose(lo.value(a["self"]), [1, 0])


@aten(aten_.transpose.int)
def transpose(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require_f32(node)
    rank = len(Lowering.shape(a["self"]))
    permutation = list(range(rank))
    i, j = a["dim0"] % rank, a["dim1"] % rank
    permutation[i], permutation[j] = permutation[j], permutation[i]
    return lo.b.transpose(lo.value(a["self"]), permutation)


@aten(
    aten_.view.default,
    aten_._unsafe_view.default,
    aten_.reshape.default,
    aten_.squeeze.dims,
    aten_.squeeze.dim,
    aten_.squeeze.default,
    aten_.unsqueeze.default,
    aten_.flatten.using_ints,
)
def reshape(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """Every view that only regroups dims is a reshape to the result's (static) shape. A
    reshape is a copy in adir, so a chain of views (attention's view, unsqueeze, squeeze, ...)
    is one reshape of the chain's source, and a view to the source's own shape is the source."""
    require_f32(node)
    source, shape = lo.value(a["self"]), Lowering.shape(node)
    if isinstance(source, SSAValue) and isinstance(source.owner, ReshapeOp):
        source = source.owner.input
    return source if _shape_of(source) == shape else lo.b.reshape(source, list(shape))


@aten(aten_.expand.default)
def expand(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`broadcast_to`; an expand to the tensor's own shape (attention's, before each bmm) is
    the tensor itself."""
    source, shape = lo.value(a["self"]), Lowering.shape(node)
    return source if _shape_of(source) == shape else lo.b.broadcast_to(source, list(shape))


def _shape_of(value: Any) -> tuple[int, ...] | None:
    """The static shape of an adir value (None for anything else: a parameter, which the
    importer names after its node, is reshaped even to its own shape)."""
    if isinstance(value, SSAValue) and isinstance(value.type, TensorType):
        return tuple(value.type.get_shape())
    return None


@aten(
    aten_.clone.default,
    aten_.alias.default,
    aten_.detach.default,
    aten_.lift_fresh_copy.default,
    aten_.contiguous.default,
)
def identity(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """A copy is the same value: adir has value semantics."""
    return lo.value(a["self"])


@aten(aten_._to_copy.default)
def to_copy(lo: Lowering, node: fx.Node, a: Args) -> Any:
    source = a["self"]
    require(
        not isinstance(source, fx.Node) or source.meta["val"].dtype == node.meta["val"].dtype,
        "a dtype conversion (adir computes in f32)",
    )
    return lo.value(source)


@aten(aten_.scalar_tensor.default, aten_.full.default)
def full(lo: Lowering, node: fx.Node, a: Args) -> Any:
    dtype = node.meta["val"].dtype
    require(
        dtype != torch.bool,
        "a torch.bool constant that does not fold into a float one at import (an attention "
        "mask does: adir/frontends/constant_folding.py); pass a float mask of 0.0 and -inf",
    )
    require(dtype == torch.float32, f"a {dtype} constant")
    value = a.get("s", a.get("fill_value"))
    return lo.b.constant(torch.full(Lowering.shape(node), float(value)).numpy())


def pad_sides(pad: list[int], rank: int) -> tuple[list[int], list[int]]:
    """ATen's `pad` (`F.pad`'s: (before, after) pairs from the last dim backwards) as adir.pad's
    `low` and `high`, one entry per dim."""
    low, high = [0] * rank, [0] * rank
    for pair in range(len(pad) // 2):
        dim = rank - 1 - pair
        low[dim], high[dim] = int(pad[2 * pair]), int(pad[2 * pair + 1])
    return low, high


@aten(aten_.constant_pad_nd.default)
def constant_pad_nd(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`F.pad(x, pad, value=v)` and `nn.ZeroPad2d`/`ConstantPad*d` are `adir.pad`. A zero
    padding of H and W that a 2-D convolution reads, or of L that a 1-D one reads, is folded into
    the convolution's padding instead (`conv_and_pool.convolution`), and this op is then left
    without uses and removed."""
    pad = [int(p) for p in a["pad"]]
    require(len(pad) % 2 == 0, f"pad {pad} with an odd number of entries")
    require(min(pad, default=0) >= 0, f"negative padding {pad} (a crop): slice the tensor instead")
    low, high = pad_sides(pad, len(Lowering.shape(a["self"])))
    return lo.b.pad(lo.value(a["self"]), low, high, value=float(a["value"]))


def clamped_bounds(size: int, start: int | None, end: int | None) -> tuple[int, int]:
    """`[start:end]` of a dim of `size` as ATen's `slice` reads it (at::slice): None is the
    dim's start or end, a negative bound counts from the end, and both are then clamped to
    [0, size] with end >= start. Python's slicing gives the same elements for positive steps;
    the clamped form is what the IR holds (`adir.slice` with bounds in the dim)."""
    start = 0 if start is None else start
    end = size if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    return start, min(max(end, start), size)


def slice_dim(lo: Lowering, value: Any, shape: tuple[int, ...], dim: int, bounds: tuple) -> Any:
    """`value[start:stop:step]` along `dim` (already clamped and in 0..rank-1); the whole dim
    with step 1 is the value itself."""
    start, stop, step = bounds
    if (start, stop, step) == (0, shape[dim], 1):
        return value
    starts, stops, steps = [0] * len(shape), list(shape), [1] * len(shape)
    starts[dim], stops[dim], steps[dim] = start, stop, step
    return lo.b.slice(value, starts, stops, steps)


@aten(aten_.slice.Tensor)
def slice_(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`self[..., start:end:step, ...]` along `dim`: `adir.slice` with ATen's bounds clamped
    into the dim (`x[:, -3:]`, `x[:, 100:]` and `x[:, :2**63 - 1]` all import)."""
    require_f32(node)
    shape = Lowering.shape(a["self"])
    dim = a["dim"] % len(shape)  # torch.export has checked the rank and that step >= 1
    start, stop = clamped_bounds(shape[dim], a["start"], a["end"])
    return slice_dim(lo, lo.value(a["self"]), shape, dim, (start, stop, a["step"]))


@aten(aten_.select.int)
def select(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`self.select(dim, index)` (`x[:, 2]`): the one-element slice at `index`, reshaped to
    drop `dim`."""
    require_f32(node)
    shape = Lowering.shape(a["self"])
    dim = a["dim"] % len(shape)
    index = a["index"] % shape[dim]  # torch.export has checked it is in range
    row = slice_dim(lo, lo.value(a["self"]), shape, dim, (index, index + 1, 1))
    return lo.b.reshape(row, list(Lowering.shape(node)))


@aten(aten_.cat.default)
def cat(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`torch.cat(tensors, dim)`: `adir.concat` (`torch.stack` comes here as a cat of views).
    PyTorch skips 1-D empty tensors in a cat of higher rank (a legacy rule); so does this."""
    require_f32(node)
    rank = len(Lowering.shape(node))
    tensors = [t for t in a["tensors"] if rank == 1 or Lowering.shape(t) != (0,)]
    if len(tensors) == 1:
        return lo.value(tensors[0])
    return lo.b.concat(lo.value(tensors), a["dim"] % rank)


@aten(aten_.split_with_sizes.default, aten_.split.Tensor)
def split(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`torch.split` (by sizes, or in chunks of `split_size`, the last one smaller): one
    `adir.slice` per part, which are the op's results (the unused ones are removed after
    lowering)."""
    require_f32(a["self"])
    shape = Lowering.shape(a["self"])
    dim = a["dim"] % len(shape)
    x, start, parts = lo.value(a["self"]), 0, []
    for part in node.meta["val"]:
        size = int(part.shape[dim])
        parts.append(slice_dim(lo, x, shape, dim, (start, start + size, 1)))
        start += size
    return tuple(parts)
