"""The C of the kernel ops `select-kernels{kernels=cmsis-dsp}` gave to CMSIS-DSP.

The pass decided which op calls which function (`adir.kernel_call`, the table in
`adir/passes/select_kernels/cmsis_dsp.py` says when); here each becomes one statement: the
CMSIS-DSP function itself for the elementwise calls, or a thin wrapper (runtime
`adir_cmsis_dsp.c`: the matrix structs, the loops over batches, rows or chunks of a row).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from adir.backends.c.calls import CallSite
from adir.dialects.kernel import KernelOp

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
CMSIS_DSP_HEADER = "adir_cmsis_dsp.h"


def call(function: str, *arguments: object) -> str:
    return f"{function}({', '.join(str(a) for a in arguments)});"


def matmul(function: str, op: KernelOp, site: CallSite) -> str:
    lhs, rhs, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    m, n, k = out[-2], out[-1], lhs[-1]
    batch = out[0] if len(out) == 3 else 1
    shared_b = int(len(rhs) == 2)
    return call(function, site.input(0), site.input(1), site.output(), batch, m, n, k, shared_b)


def binary(function: str, op: KernelOp, site: CallSite) -> str:
    return call(function, site.input(0), site.input(1), site.output(), f"{site.out_size()}u")


def unary(function: str, op: KernelOp, site: CallSite) -> str:
    return call(function, site.input(0), site.output(), f"{site.out_size()}u")


def clip_below_zero(function: str, op: KernelOp, site: CallSite) -> str:
    """relu as arm_clip_f32(x, out, 0, +inf, size)."""
    size = f"{site.out_size()}u"
    return call(function, site.input(0), site.output(), "0.0f", "INFINITY", size)


def accumulate(function: str, op: KernelOp, site: CallSite) -> str:
    """The sum of all of x into one element."""
    return call(function, site.input(0), f"{math.prod(site.in_shape(0))}u", site.output())


def sum_rows(function: str, op: KernelOp, site: CallSite) -> str:
    """Each contiguous row of x (its trailing reduced axes) sums into one element of out."""
    outer = site.out_size()
    reduced = math.prod(site.in_shape(0)) // outer
    return call(function, site.input(0), site.output(), f"{outer}u", f"{reduced}u")


def sgd_update(function: str, op: KernelOp, site: CallSite) -> str:
    return call(function, *site.buffers(), f"{site.out_size()}u")


def matmul_sgd_update(function: str, op: KernelOp, site: CallSite) -> str:
    """The weight gradient dy^T x of a batch of k rows."""
    m, n = site.out_shape()
    return call(function, *site.buffers(), m, n, site.in_shape(1)[0])


CmsisDspCall = Callable[[str, KernelOp, CallSite], str]
CMSIS_DSP_CALLS: dict[str, CmsisDspCall] = {
    "adir_cmsis_matmul": matmul,
    "adir_cmsis_matmul_nt": matmul,
    "arm_add_f32": binary,
    "arm_sub_f32": binary,
    "arm_mult_f32": binary,
    "arm_negate_f32": unary,
    "arm_copy_f32": unary,
    "arm_clip_f32": clip_below_zero,
    "arm_accumulate_f32": accumulate,
    "adir_cmsis_sum_rows": sum_rows,
    "adir_cmsis_sgd_update": sgd_update,
    "adir_cmsis_matmul_sgd_update": matmul_sgd_update,
}
"""The C form of each CMSIS-DSP call select-kernels may record, keyed by its name."""


def cmsis_dsp_call(op: KernelOp, site: CallSite, function: str) -> str:
    """The statement of an op select-kernels gave to CMSIS-DSP's `function`."""
    form = CMSIS_DSP_CALLS.get(function)
    if form is None:
        raise site.error(f"no C form for the CMSIS-DSP call {function}")
    return form(function, op, site)
