"""Which kernel ops become CMSIS-DSP calls (`-t 'c{kernels="cmsis-dsp"}'`, `--c-kernels`).

With `kernels="cmsis-dsp"` the C backend asks this map first for each kernel op: an entry
returns the C statement that calls CMSIS-DSP, or None where the call would not compute what
the reference kernel computes, and the op then keeps its reference kernel. The rule for
"legal" is strict: same result for every input up to the order of a floating-point sum, so
the CMSIS build trains like the reference build.

    kernel op                          CMSIS-DSP                     when
    matmul                             arm_mat_mult_f32 (per batch)  no transpose
    matmul {transpose_b}               arm_mat_vec_mult_f32 per row  no transpose_a
    add, sub, mul                      arm_add/sub/mult_f32          operands of the out's shape
    neg                                arm_negate_f32
    relu                               arm_clip_f32(x, 0, +inf)      (bit-identical, nan and -0)
    reshape, flatten                   arm_copy_f32
    sum                                arm_accumulate_f32 per row    trailing axes (inner = 1)
    sgd_update                         arm_scale_f32, arm_sub_f32    no weight decay, no clipping
    matmul_sgd_update {transpose_a}    arm_scale/add/sub_f32 by row  the same, no transpose_b

Matrix dims are uint16_t in CMSIS-DSP: a matmul with a dim above 65535 (or of 0, which its
do-while loops do not allow) stays on the reference kernel, and so does every operand that
is not f32. Left out on purpose: `max` (arm_max_no_idx_f32 drops nans, numpy's max keeps
them), `exp` and `log` (arm_vexp_f32/arm_vlog_f32 call expf/logf on a scalar core but are
polynomial approximations under Helium and Neon, so legality would depend on the target),
and matmuls with transpose_a (CMSIS-DSP has no transposed operand; arm_mat_trans_f32 would
need scratch memory that the plan does not have). Convolutions, pooling, the losses and the
momentum and Adam updates have no CMSIS-DSP counterpart. The SGD updates round as the
reference does (the product, summed over k in order, times lr, subtracted), so they are bit for
bit the reference's.

Matmuls and updates go through thin wrappers (runtime `adir_cmsis_dsp.c`: the matrix structs,
the loops over batches, rows or chunks of a row); the elementwise calls name the CMSIS-DSP
function itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from xdsl.dialects.builtin import Float32Type

from adir.backends.c.calls import CallSite, flag
from adir.backends.c.calls.elementwise import broadcast_layout, is_flat
from adir.backends.c.calls.reductions import reduced_axes, reduction_groups
from adir.dialects.kernel import KERNELS, KernelOp
from adir.dialects.tensor import activations as act
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import matmul_and_shape as mm
from adir.dialects.tensor import optimizers as opt
from adir.dialects.tensor import reductions as red
from adir.dialects.tensor.base import TensorOp

KERNEL_SETS = ("reference", "cmsis-dsp", "cmsis-nn")  # cmsis-nn: cmsis_nn.py

# The CMSIS-DSP sources (under the sdist's Source/) that the calls below and the wrappers need.
CMSIS_DSP_SOURCES = (
    "BasicMathFunctions/arm_add_f32.c",
    "BasicMathFunctions/arm_clip_f32.c",
    "BasicMathFunctions/arm_mult_f32.c",
    "BasicMathFunctions/arm_negate_f32.c",
    "BasicMathFunctions/arm_scale_f32.c",
    "BasicMathFunctions/arm_sub_f32.c",
    "MatrixFunctions/arm_mat_mult_f32.c",
    "MatrixFunctions/arm_mat_vec_mult_f32.c",
    "StatisticsFunctions/arm_accumulate_f32.c",
    "SupportFunctions/arm_copy_f32.c",
)
# How every CMSIS-DSP file is compiled, on the host and on a Cortex-M: __GNUC_PYTHON__ builds
# without CMSIS-Core (which no package registry ships; the f32 functions do not use its DSP
# intrinsics), and ARM_MATH_LOOPUNROLL is CMSIS-DSP's default build, the same code on both.
CMSIS_DSP_DEFINES = ("-D__GNUC_PYTHON__", "-DARM_MATH_LOOPUNROLL")
CMSIS_DSP_INCLUDES = ("Include", "PrivateInclude")

UINT16_MAX = 2**16 - 1

CmsisEmitter = Callable[[KernelOp, CallSite], str | None]
CMSIS_DSP_EMITTERS: dict[type[KernelOp], CmsisEmitter] = {}

Emitter = TypeVar("Emitter", bound=CmsisEmitter)


def lowers(*tensor_ops: type[TensorOp]) -> Callable[[Emitter], Emitter]:
    """Register the CMSIS-DSP form of the kernels of these tensor ops."""

    def register(emitter: Emitter) -> Emitter:
        for tensor_op in tensor_ops:
            CMSIS_DSP_EMITTERS[KERNELS[tensor_op]] = emitter
        return emitter

    return register


def cmsis_dsp_call(op: KernelOp, site: CallSite) -> str | None:
    """The CMSIS-DSP statement of `op`, or None where it keeps its reference kernel."""
    emitter = CMSIS_DSP_EMITTERS.get(type(op))
    if emitter is None or not all_f32(op):
        return None
    return emitter(op, site)


def all_f32(op: KernelOp) -> bool:
    return all(
        isinstance(value.type.element_type, Float32Type)  # type: ignore[attr-defined]
        for value in (*op.ins, *op.outs)
    )


def call(function: str, *arguments: object) -> str:
    return f"{function}({', '.join(str(a) for a in arguments)});"


@lowers(mm.MatmulOp)
def matmul(op: KernelOp, site: CallSite) -> str | None:
    if op.transpose_a is not None:  # type: ignore[attr-defined]
        return None
    lhs, rhs, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    m, n, k = out[-2], out[-1], lhs[-1]
    if not all(1 <= dim <= UINT16_MAX for dim in (m, n, k)):
        return None
    batch = out[0] if len(out) == 3 else 1
    shared_b = int(len(rhs) == 2)
    transpose_b = flag(op.transpose_b)  # type: ignore[attr-defined]
    wrapper = "adir_cmsis_matmul_nt" if transpose_b else "adir_cmsis_matmul"
    return call(wrapper, site.input(0), site.input(1), site.output(), batch, m, n, k, shared_b)


def binary(function: str) -> CmsisEmitter:
    """The CMSIS-DSP `function(a, b, out, size)` of an elementwise op, where neither operand
    is broadcast."""

    def emit(op: KernelOp, site: CallSite) -> str | None:
        dims, strides = broadcast_layout(site.out_shape(), [site.in_shape(0), site.in_shape(1)])
        if not is_flat(dims, strides):
            return None
        return call(function, site.input(0), site.input(1), site.output(), f"{site.out_size()}u")

    return emit


lowers(ew.AddOp)(binary("arm_add_f32"))
lowers(ew.SubOp)(binary("arm_sub_f32"))
lowers(ew.MulOp)(binary("arm_mult_f32"))


@lowers(ew.NegOp)
def neg(op: KernelOp, site: CallSite) -> str:
    return call("arm_negate_f32", site.input(0), site.output(), f"{site.out_size()}u")


@lowers(act.ReluOp)
def relu(op: KernelOp, site: CallSite) -> str:
    """arm_clip_f32 keeps x unless x > high or x < low: with [0, +inf], a nan and -0.0 pass
    as they pass the reference `x < 0 ? 0 : x`, and everything else is the same too."""
    size = f"{site.out_size()}u"
    return call("arm_clip_f32", site.input(0), site.output(), "0.0f", "INFINITY", size)


@lowers(mm.ReshapeOp, mm.FlattenOp)
def copy(op: KernelOp, site: CallSite) -> str:
    return call("arm_copy_f32", site.input(0), site.output(), f"{site.out_size()}u")


@lowers(red.SumOp)
def sum_(op: KernelOp, site: CallSite) -> str | None:
    """A sum over trailing axes (inner = 1): each contiguous row of x sums into one element.
    A sum over size-1 axes only is a copy (one element is its own sum; -0.0 stays -0.0)."""
    shape = site.in_shape(0)
    groups = reduction_groups(shape, reduced_axes(op, site, len(shape)))
    if any(is_reduced for _, is_reduced in groups[:-1]) or 0 in shape:
        return None  # a middle or leading run, several runs, or nothing to add
    reduced = groups[-1][0] if groups and groups[-1][1] else 1
    outer = math.prod(shape) // reduced
    if reduced == 1:
        return call("arm_copy_f32", site.input(0), site.output(), f"{outer}u")
    if outer == 1:
        return call("arm_accumulate_f32", site.input(0), f"{reduced}u", site.output())
    return call("adir_cmsis_sum_rows", site.input(0), site.output(), f"{outer}u", f"{reduced}u")


def unregularized(op: KernelOp) -> bool:
    """No weight decay and no clipping: the update is param - lr * grad."""
    weight_decay, clip_value = op.weight_decay, op.clip_value  # type: ignore[attr-defined]
    return not weight_decay.value.data and not clip_value.value.data


@lowers(opt.SgdUpdateOp)
def sgd_update(op: KernelOp, site: CallSite) -> str | None:
    if not unregularized(op):
        return None
    return call("adir_cmsis_sgd_update", *site.buffers(), f"{site.out_size()}u")


@lowers(opt.MatmulSgdUpdateOp)
def matmul_sgd_update(op: KernelOp, site: CallSite) -> str | None:
    """The weight gradient dy^T x (transpose_a, a plain b) of a batch of k >= 1 rows."""
    transpose_a, transpose_b = op.transpose_a, op.transpose_b  # type: ignore[attr-defined]
    if not unregularized(op) or transpose_a is None or transpose_b is not None:
        return None
    m, n = site.out_shape()
    k = site.in_shape(1)[0]
    if k < 1:
        return None
    return call("adir_cmsis_matmul_sgd_update", *site.buffers(), m, n, k)
