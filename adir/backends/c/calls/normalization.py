"""C calls of the normalization family's kernels (runtime: adir_normalization.c)."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import StringAttr

from adir.backends.c.calls import CallSite, c_float, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import normalization as norm

# The function of adir_normalization.h that turns a dropout step buffer into its counter.
DROPOUT_COUNTERS = {
    "int32_t": "adir_dropout_counter_i32",
    "int64_t": "adir_dropout_counter_i64",
    "float": "adir_dropout_counter_f32",
}


def chosen(op: KernelOp, kernel: str) -> str:
    """The kernel select-kernels named in `adir.kernel_call` (a tuned variant: the hosts'
    `_channels` batchnorms), else `kernel`."""
    call = op.attributes.get("adir.kernel_call")
    return call.data if isinstance(call, StringAttr) else kernel


def batch_channels_spatial(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """An `[N, C, *]` input as the kernels see it: N, C and the product of the other dims."""
    return shape[0], shape[1], math.prod(shape[2:])


@emits(norm.BatchnormOp, norm.BatchnormReluOp)
def batchnorm(op: KernelOp, site: CallSite) -> str:
    """adir_batchnorm or adir_batchnorm_relu (the same arguments), or the kernel chosen."""
    kernel = op.name.removeprefix("adir_kernel.")
    ins = [site.input(i) for i in range(5)]
    outs = [site.output(i) for i in range(5)]
    momentum, eps = c_float(op.momentum.value.data), c_float(op.eps.value.data)
    dims = batch_channels_spatial(site.in_shape(0))
    return site.call(chosen(op, kernel), *ins, *outs, *dims, momentum, eps)


@emits(norm.BatchnormEvalOp)
def batchnorm_eval(op: KernelOp, site: CallSite) -> str:
    ins = [site.input(i) for i in range(5)]
    dims = batch_channels_spatial(site.in_shape(0))
    return site.call("batchnorm_eval", *ins, site.output(), *dims, c_float(op.eps.value.data))


@emits(norm.BatchnormGradOp)
def batchnorm_grad(op: KernelOp, site: CallSite) -> str:
    ins = [site.input(i) for i in range(5)]
    outs = [site.output(i) for i in range(3)]
    dims = batch_channels_spatial(site.in_shape(0))
    return site.call(chosen(op, "batchnorm_grad"), *ins, *outs, *dims)


@emits(norm.BatchnormReluGradOp)
def batchnorm_relu_grad(op: KernelOp, site: CallSite) -> str:
    ins = [site.input(i) for i in range(6)]
    outs = [site.output(i) for i in range(3)]
    dims = batch_channels_spatial(site.in_shape(0))
    return site.call(chosen(op, "batchnorm_relu_grad"), *ins, *outs, *dims)


def rows_and_columns(op: KernelOp, shape: tuple[int, ...]) -> tuple[int, int]:
    """A `[*, *normalized_shape]` input as the layer norm kernels see it: rows of D values."""
    split = len(shape) - len(op.normalized_shape.get_values())
    return math.prod(shape[:split]), math.prod(shape[split:])


@emits(norm.LayerNormOp)
def layer_norm(op: KernelOp, site: CallSite) -> str:
    """The weight and bias are NULL where the op has none."""
    affine = [site.input(i) if i < len(site.ins) else "NULL" for i in (1, 2)]
    outs = [site.output(i) for i in range(3)]
    rows, columns = rows_and_columns(op, site.in_shape(0))
    eps = c_float(op.eps.value.data)
    return site.call("layer_norm", site.input(0), *affine, *outs, rows, columns, eps)


@emits(norm.LayerNormGradOp)
def layer_norm_grad(op: KernelOp, site: CallSite) -> str:
    ins = [site.input(i) for i in range(4)]
    weight = site.input(4) if len(site.ins) == 5 else "NULL"
    outs = [site.output(i) for i in range(3)]
    rows, columns = rows_and_columns(op, site.in_shape(0))
    return site.call("layer_norm_grad", *ins, weight, *outs, rows, columns)


@emits(norm.DropoutOp, norm.DropoutGradOp)
def dropout(op: KernelOp, site: CallSite) -> str:
    """Dropout and its backward apply the same mask: one kernel."""
    counter = DROPOUT_COUNTERS.get(site.in_c_type(1))
    if counter is None:
        raise site.error(f"no dropout counter of a {site.in_type(1).element_type} step")
    step, seed = f"{counter}({site.input(1)})", f"UINT64_C({op.seed.value.data})"
    size, p = f"{site.out_size()}u", c_float(op.p.value.data)
    return site.call("dropout", site.input(0), site.output(), size, step, seed, p)
