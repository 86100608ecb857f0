"""When CMSIS-DSP computes a float op (`select-kernels{kernels=cmsis-dsp}`).

The rule for "computes" is strict: the same result for every input up to the order of a
floating-point sum, so the CMSIS build trains like the reference build.

    kernel op                        CMSIS-DSP (call)                 when
    matmul                           adir_cmsis_matmul:               no transpose
                                     arm_mat_mult_f32 per batch
    matmul {transpose_b}             adir_cmsis_matmul_nt:            no transpose_a
                                     arm_mat_vec_mult_f32 per row
    add, sub, mul                    arm_add/sub/mult_f32             operands of the out's shape
    neg                              arm_negate_f32
    relu                             arm_clip_f32(x, 0, +inf)         (bit-identical, nan and -0)
    reshape, flatten                 arm_copy_f32
    sum                              arm_accumulate_f32,              trailing axes (inner = 1)
                                     adir_cmsis_sum_rows
    sgd_update                       adir_cmsis_sgd_update            no weight decay or clipping
    matmul_sgd_update {transpose_a}  adir_cmsis_matmul_sgd_update     the same, no transpose_b

Legal is not enough on a target where adir's own kernel is faster: `ADIR_FASTER` lists, per
target, the calls that lost to adir's kernels in instructions per call (measured under QEMU
with `tools/cortex_m_report.py --per-kernel`, docs/cortex_m.md), and the rule refuses them
there with the figures. On the Cortex-M4F, CMSIS-DSP keeps the flat add/sub/mul/neg and the
sums of one element (copies); its matmuls, relu, copies, row sums and SGD updates lose.
Elsewhere (the host, where the CMSIS build exists to be tested, and Helium cores, not
measured) a legal call is chosen.

Matrix dims are uint16_t in CMSIS-DSP: a matmul with a dim above 65535 (or of 0, which its
do-while loops do not allow) keeps adir's kernel, and so does every op whose operands are not
all f32. Left out on purpose: `max` (arm_max_no_idx_f32 drops nans, numpy's max keeps them),
`exp` and `log` (arm_vexp_f32/arm_vlog_f32 call expf/logf on a scalar core but are polynomial
approximations under Helium and Neon, so legality would depend on the target), and matmuls
with transpose_a (CMSIS-DSP has no transposed operand; arm_mat_trans_f32 would need scratch
memory that the plan does not have). Convolutions, pooling, the losses and the momentum and
Adam updates have no CMSIS-DSP counterpart. The SGD updates round as the reference does (the
product, summed over k in order, times lr, subtracted), so they are bit for bit the
reference's. The `adir_cmsis_*` calls are thin wrappers (runtime `adir_cmsis_dsp.c`: the
matrix structs, the loops over batches, rows or chunks of a row).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import DenseArrayBase, Float32Type, FloatAttr

from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import activations as act
from adir.dialects.tensor import data_movement as dm
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import matmul as mm
from adir.dialects.tensor import optimizers as opt
from adir.dialects.tensor import reductions as red
from adir.dialects.tensor.base import TensorOp
from adir.passes.select_kernels.rules import Refuse, Rule, Use, in_shape, judges, out_shape
from adir.passes.select_kernels.targets import KernelTarget

UINT16_MAX = 2**16 - 1

FloatRule = Callable[[KernelOp, KernelTarget], Use | Refuse]


# ADIR_FASTER[target][(tensor op, call)]: why adir's kernel is chosen over a legal CMSIS-DSP
# call on that target. Instructions per call under QEMU's mps2-an386 (arm-none-eabi-gcc 12.2
# -O2, the seed MLP's and LeNet-5's SGD steps at batch 1, docs/cortex_m.md), adir's against
# CMSIS-DSP's. The calls CMSIS-DSP keeps there won at every shape measured: arm_add_f32 (627
# against 707 at 120 elements) and the sums of one element (arm_copy_f32 400 against 620 at
# 1x120); arm_sub_f32, arm_mult_f32 and arm_negate_f32 are arm_add_f32's loop.
_M4_MATMUL_NT = (
    "slower than adir's on cortex-m4f: 63,627 against 94,333 instructions at 1x784 by "
    "32x784, 81,680 against 115,867 at 1x256 by 120x256 (it wins only at 1x32 by 10x32, "
    "1,520 against 1,640)"
)
_M4_COPY = "slower than adir's on cortex-m4f: 760 against 547 instructions at 1x16x4x4"
ADIR_FASTER: dict[str, dict[tuple[type[TensorOp], str | None], str]] = {
    "cortex-m4f": {
        (mm.MatmulOp, "adir_cmsis_matmul"): (
            "slower than adir's on cortex-m4f: 77,240 against 181,080 instructions at 1x120 "
            "by 120x256, 1,547 against 2,573 at 1x10 by 10x32"
        ),
        (mm.MatmulOp, "adir_cmsis_matmul_nt"): _M4_MATMUL_NT,
        (act.ReluOp, "arm_clip_f32"): (
            "slower than adir's on cortex-m4f: 27,640 against 41,467 instructions at 3456 elements"
        ),
        (red.SumOp, "adir_cmsis_sum_rows"): (
            "slower than adir's on cortex-m4f: 8,360 against 9,660 instructions at 6x576, "
            "2,840 against 3,200 at 16x64"
        ),
        (dm.ReshapeOp, "arm_copy_f32"): _M4_COPY,
        (dm.FlattenOp, "arm_copy_f32"): _M4_COPY,
        (opt.SgdUpdateOp, "adir_cmsis_sgd_update"): (
            "slower than adir's on cortex-m4f: 12,920 against 23,867 instructions at 2400 "
            "elements (two passes, arm_scale_f32 and arm_sub_f32)"
        ),
        (opt.MatmulSgdUpdateOp, "adir_cmsis_matmul_sgd_update"): (
            "slower than adir's on cortex-m4f: 159,893 against 363,627 instructions at 32x784, "
            "k = 1 (the gradient in a buffer, then two passes)"
        ),
    },
}


def float32_only(*tensor_ops: type[TensorOp]) -> Callable[[FloatRule], Rule]:
    """Register a CMSIS-DSP rule for these ops, refusing every op with a non-f32 operand, and
    every call that `ADIR_FASTER` says is slower than adir's kernel on the target."""

    def register(rule: FloatRule) -> Rule:
        def checked_for(tensor_op: type[TensorOp]) -> Rule:
            def checked(op: KernelOp, target: KernelTarget) -> Use | Refuse:
                values = (*op.ins, *op.outs)
                if not all(isinstance(v.type.element_type, Float32Type) for v in values):  # type: ignore[attr-defined]
                    return Refuse("not float32")
                verdict = rule(op, target)
                if isinstance(verdict, Use):
                    faster = ADIR_FASTER.get(target.name, {}).get((tensor_op, verdict.call))
                    if faster is not None:
                        return Refuse(f"{verdict.call}: {faster}")
                return verdict

            return checked

        for tensor_op in tensor_ops:
            judges("cmsis-dsp", tensor_op)(checked_for(tensor_op))
        return rule

    return register


def has(op: KernelOp, flag: str) -> bool:
    return op.properties.get(flag) is not None


@float32_only(mm.MatmulOp)
def matmul(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    if has(op, "transpose_a"):
        return Refuse("transpose_a: CMSIS-DSP has no transposed operand")
    out, lhs = out_shape(op), in_shape(op, 0)
    if not all(1 <= dim <= UINT16_MAX for dim in (out[-2], out[-1], lhs[-1])):
        return Refuse("a dim outside CMSIS-DSP's 1 to 65535")
    return Use("adir_cmsis_matmul_nt" if has(op, "transpose_b") else "adir_cmsis_matmul")


def broadcasts(shape: Sequence[int], out: Sequence[int]) -> bool:
    """Whether an operand of `shape` is broadcast to `out` (numpy's rules, aligned right)."""
    padded = (1,) * (len(out) - len(shape)) + tuple(shape)
    return 0 not in out and any(dim != size for dim, size in zip(padded, out, strict=True))


def binary(function: str) -> FloatRule:
    """The CMSIS-DSP `function(a, b, out, size)` of an elementwise op whose operands are not
    broadcast."""

    def rule(op: KernelOp, target: KernelTarget) -> Use | Refuse:
        if any(broadcasts(in_shape(op, i), out_shape(op)) for i in (0, 1)):
            return Refuse("a broadcast operand")
        return Use(function)

    return rule


float32_only(ew.AddOp)(binary("arm_add_f32"))
float32_only(ew.SubOp)(binary("arm_sub_f32"))
float32_only(ew.MulOp)(binary("arm_mult_f32"))


def always(function: str) -> FloatRule:
    return lambda op, target: Use(function)


float32_only(ew.NegOp)(always("arm_negate_f32"))
# arm_clip_f32 keeps x unless x > high or x < low: with [0, +inf], a nan and -0.0 pass as they
# pass the reference `x < 0 ? 0 : x`, and everything else is the same too.
float32_only(act.ReluOp)(always("arm_clip_f32"))
float32_only(dm.ReshapeOp, dm.FlattenOp)(always("arm_copy_f32"))


@float32_only(red.SumOp)
def sum_(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """A sum over trailing axes (inner = 1): each contiguous row of x sums into one element.
    A sum over size-1 axes only is a copy (one element is its own sum; -0.0 stays -0.0)."""
    shape = in_shape(op, 0)
    axes = op.properties.get("axes")
    reduced = red.reduced_axis_set(axes if isinstance(axes, DenseArrayBase) else None, len(shape))
    if reduced is None:
        return Refuse("axes that are not the input's")  # adir's kernel call reports them
    runs = red.reduction_runs(shape, reduced)
    if 0 in shape:
        return Refuse("nothing to add")
    if any(is_reduced for _, is_reduced in runs[:-1]):
        return Refuse("a leading or middle run of reduced axes")
    reduced_count = runs[-1][0] if runs and runs[-1][1] else 1
    if reduced_count == 1:
        return Use("arm_copy_f32")
    if reduced_count == math.prod(shape):
        return Use("arm_accumulate_f32")
    return Use("adir_cmsis_sum_rows")


def regularized(op: KernelOp) -> bool:
    """Whether the update has weight decay or clipping (not param - lr * grad)."""
    return any(
        isinstance(value := op.properties.get(name), FloatAttr) and value.value.data != 0
        for name in ("weight_decay", "clip_value")
    )


@float32_only(opt.SgdUpdateOp)
def sgd_update(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    if regularized(op):
        return Refuse("weight decay or clipping")
    return Use("adir_cmsis_sgd_update")


@float32_only(opt.MatmulSgdUpdateOp)
def matmul_sgd_update(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """The weight gradient dy^T x (transpose_a, a plain b) of a batch of k >= 1 rows."""
    if regularized(op):
        return Refuse("weight decay or clipping")
    if not has(op, "transpose_a") or has(op, "transpose_b"):
        return Refuse("not the weight gradient dy^T x (transpose_a, a plain b)")
    if in_shape(op, 1)[0] < 1:
        return Refuse("an empty batch")
    return Use("adir_cmsis_matmul_sgd_update")
