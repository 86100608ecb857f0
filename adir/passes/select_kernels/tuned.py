"""When adir's tuned kernels (`runtime/tuned/`) compute an op.

    kernel op                                       tuned kernel                  when
    matmul                                          adir_tuned_matmul             always
    sgd/momentum/adam_update, matmul_*_update       adir_tuned_<kernel>           always
    conv2d, conv2d_grad_input, conv2d_grad_weight   adir_tuned_<kernel>_depthwise depthwise,
                                                                                  dilation 1
                                                    adir_tuned_<kernel>           stride 1,
                                                                                  dilation 1, no
                                                                                  padding, not 1x1
                                                    adir_tuned_<kernel>_gemm      the others
    conv1d, conv1d_grad_input, conv1d_grad_weight   adir_tuned_<kernel>           stride 1,
                                                                                  dilation 1, no
                                                                                  padding
    maxpool2d, maxpool2d_grad                       adir_tuned_<kernel>           windows tile the
                                                                                  image
    batchnorm, batchnorm_grad,                      adir_tuned_<kernel>           Cortex-M4F, M7
    batchnorm_relu, batchnorm_relu_grad             adir_tuned_<kernel>_channels  the hosts

On the Cortex-M4F and M7 (`SCALAR_FPU_TARGETS`) a depthwise 3x3 of stride 1 or 2 calls
the register-blocked `_depthwise_3x3` kernels.

The direct convolution tiles read the im2col view of an unpadded stride-1 convolution as
contiguous runs of the input's rows (LeNet's convolutions). The `_gemm` kernels build im2col a
panel (a block of taps by a chunk of output pixels) at a time in a scratch buffer
(`adir.kernel_scratch`, planned in the arena) and multiply it on the shared GEMM micro-kernel:
any stride, padding, dilation and groups; a pointwise (1x1, stride 1, unpadded) convolution is
a GEMM on the image itself, whose forward pass and input gradient need no scratch. The
`_depthwise` kernels (one input channel per output channel) copy each plane with its padding
into scratch; on the hosts a 3x3 weight gradient, and a strided 3x3 input gradient, ask for a
block of `DEPTHWISE_BLOCK` channels' planes and dy interleaved (their sums in vector lanes,
adir_tuned_depthwise_lanes.c) and run with one plane (`adir.kernel_scratch_min`). The pool tiles
assume every pixel is in at most one window inside the image. On the hosts (`IMPLICIT_TARGETS`)
a `_gemm` kernel also has an implicit-GEMM path (`adir_tuned_conv_implicit.c`): it copies one
sample's image into phase planes, from which every im2col row is read in place (a strided input
gradient: dy into one plane, each phase of dx a stride-1 correlation of it with that phase's
taps), and asks for that scratch (`implicit_floats`) where it is more than the panel; given
less, it builds panels.
Outside those shapes the op keeps its reference kernel. Each tuned kernel is tested against its
reference on shapes that reach every tile edge, and the `_gemm` kernels on every panel shape
and at each implicit path's exact scratch (`test/python/test_c_kernels_vs_reference.py`).

Scratch. The tuned kernels must not make a training step need more memory than the reference
kernels do. A `_gemm` kernel asks for a panel of every tap by `PANEL_PIXELS` pixels (`taps x
64 x 4` bytes; at most `SCRATCH_BUDGET` on a Cortex-M) and runs with any smaller one (fewer
taps a panel, each block's sums continuing the last's), so its op also records the least it
takes, a panel of `MIN_PANEL_TAPS` taps (`adir.kernel_scratch_min`: 4 KiB on the host, 1 KiB
on a Cortex-M). `plan-memory` places every other buffer first and gives each panel as much of
the arena's free bytes at its op as it asked for (`plan_memory/scratch.py`). So with the tuned
kernels a step's arena is the reference kernels' arena plus at most one minimum panel (at a
step's peak nothing is free: ResNet-8's and MobileNet's SGD steps at batch 1, where the
deepest conv's weight gradient runs) plus, where a depthwise conv runs at the peak, its
scratch, which has a fixed size and is placed with the other buffers: about two planes of one
channel (DS-CNN's @predict at batch 1: 64,000 bytes with the reference kernels, 65,472).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr

from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import conv_and_pool as cp
from adir.dialects.tensor import matmul as mm
from adir.dialects.tensor import normalization as norm
from adir.dialects.tensor import optimizers as opt
from adir.passes.select_kernels.rules import Refuse, Use, in_shape, ints, judges, out_shape
from adir.passes.select_kernels.targets import KernelTarget


@judges(
    "tuned",
    mm.MatmulOp,
    opt.SgdUpdateOp,
    opt.MomentumUpdateOp,
    opt.AdamUpdateOp,
    opt.MatmulSgdUpdateOp,
    opt.MatmulMomentumUpdateOp,
    opt.MatmulAdamUpdateOp,
)
def any_shape(op: KernelOp, target: KernelTarget) -> Use:
    """Tiles with edge cases for every size: any shape."""
    return Use()


def unpadded_stride_one(
    op: KernelOp, image: tuple[int, ...], out: tuple[int, ...], kernel: list[int]
) -> Use | Refuse:
    """Whether a convolution of `image` [N, C, *spatial] into `out` with a `kernel` (one size
    per spatial dim: [KH, KW], or [K] for conv1d, whose tuned kernels are conv2d's of height 1)
    has stride 1, dilation 1 and no padding (its output is exactly what fits)."""
    if any(stride != 1 for stride in ints(op, "stride")):
        return Refuse(f"stride {ints(op, 'stride')}: the tiles take stride 1")
    if any(dilation != 1 for dilation in ints(op, "dilation")):
        return Refuse(f"dilation {ints(op, 'dilation')}: the tiles take dilation 1")
    fits = tuple(size - taps + 1 for size, taps in zip(image[2:], kernel, strict=True))
    if any(ints(op, "padding")) or tuple(out[2:]) != fits:
        return Refuse(f"padding {ints(op, 'padding')}: the tiles take none")
    return Use()


@judges("tuned", cp.Conv1dOp)
def conv1d(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    return unpadded_stride_one(op, in_shape(op, 0), out_shape(op), list(in_shape(op, 1)[2:]))


@judges("tuned", cp.Conv1dGradInputOp)
def conv1d_grad_input(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """dy [N, O, L'] and w give dx, the input's shape."""
    return unpadded_stride_one(op, out_shape(op), in_shape(op, 0), list(in_shape(op, 1)[2:]))


@judges("tuned", cp.Conv1dGradWeightOp)
def conv1d_grad_weight(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """x and dy [N, O, L'] give dw, the weight's shape."""
    return unpadded_stride_one(op, in_shape(op, 0), in_shape(op, 1), ints(op, "kernel_size"))


PANEL_PIXELS = 64
"""Output pixels per im2col panel of the `_gemm` kernels: four of the widest micro-kernel tile
(NR = 16), so that a panel's rows feed whole tiles (`ADIR_CONV_CHUNK` in the C)."""
SMALL_SRAM_TARGETS = ("cortex-m3", "cortex-m4f", "cortex-m7", "cortex-m55", "rv32imac", "rv32imafc")
SCRATCH_BUDGET = dict.fromkeys(SMALL_SRAM_TARGETS, 8 * 1024)
"""Bytes a `_gemm` kernel's panel may ask for on a target with a few hundred KB of SRAM
(elsewhere every tap of `PANEL_PIXELS` pixels); panels over it have fewer taps."""
MIN_PANEL_TAPS = dict.fromkeys(SMALL_SRAM_TARGETS, 4)
"""Taps of the smallest panel a `_gemm` kernel's scratch is shrunk to (of `PANEL_PIXELS`
pixels): a micro-kernel tile's width, the target's ADIR_GEMM_NR (4 on these cores, up to 16
elsewhere), so that the weight gradient's GEMM over a block of taps still runs whole tiles."""
FLOAT_BYTES = 4
IMPLICIT_TARGETS = ("host", "x86-avx2", "x86-avx512")
"""Targets whose settings set ADIR_CONV_IMPLICIT: there a `_gemm` kernel asks for the scratch
of its implicit-GEMM path (`implicit_floats`) where that is more than the panel."""
VECTOR_HOST_TARGETS = ("host", "x86-avx2", "x86-avx512")
"""The hosts: vector units, deep out-of-order cores (batchnorm's `_channels` kernels)."""
IMPLICIT_SLACK = 64
"""adir_tuned_conv_implicit.c's ADIR_IMPLICIT_SLACK."""
COLUMN_PLANE_TAPS = 64
"""adir_tuned_conv_implicit.c's ADIR_IMPLICIT_COLUMN_TAPS: below it, a convolution whose phase
planes would drop more than an eighth of their columns gets a plane of each kernel column."""


def phases_used(kernel: int, dilation: int, stride: int) -> int:
    """Phases of `stride` that some tap k < kernel lands on (k * dilation % stride)."""
    return len({k * dilation % stride for k in range(kernel)})


def phase_span(phase: int, size: int, pad: int, stride: int) -> tuple[int, int]:
    """The first index h' and the count of one phase's pixels h' * stride + phase - pad of an
    input gradient that lie in [0, size) (adir_phase_span)."""
    end = (size + pad - phase + stride - 1) // stride
    lo = (pad - phase + stride - 1) // stride if pad > phase else 0
    return lo, max(end - lo, 0)


def grad_input_extent(size: int, pad: int, kernel: int, dilation: int, stride: int) -> int:
    """The rows (or columns) of the dy plane that an input gradient reads phase by phase
    (adir_grad_input_extent): its lead (tap k of phase a reads row h' - k d // s + lead, h' >=
    that phase's first) plus every phase's last h' + 1."""
    lead = max(k * dilation // stride - phase_span(k * dilation % stride, size, pad, stride)[0]
               for k in range(kernel))  # fmt: skip
    return lead + max(sum(phase_span(a, size, pad, stride)) for a in range(stride))


def implicit_floats(
    kernel: str,
    image: tuple[int, ...],
    out: tuple[int, ...],
    weight: tuple[int, ...],
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    groups: int,
) -> int | None:
    """The scratch floats of a `_gemm` kernel's implicit-GEMM path (adir_conv_implicit_floats
    in adir_tuned_conv_implicit.c: one sample's phase (or column) planes with their slack, one
    offset a tap, and dy^T of one sample for the weight gradient or the weights transposed (for
    the input gradient, each phase's sub-kernel; its planes are one plane of dy that every phase
    reads: see adir_tuned_conv_implicit.c)), or None where it has none (the input gradient of a
    1x1 kernel: W^T dy on dy itself, nothing to save)."""
    (_, channels, height, width), (_, outputs, rows, cols) = image, out
    group_channels, group_outputs = channels // groups, outputs // groups
    _, _, kh, kw = weight
    top, _, left, _ = padding

    def planes(ch: int, o_h: int, o_w: int, s: list[int]) -> tuple[int, int]:
        """The planes' floats (with the slack) and the taps of `ch` channels into o_h x o_w."""
        plane_rows = o_h + (kh - 1) * dilation[0] // s[0]
        plane_cols = o_w + (kw - 1) * dilation[1] // s[1]
        side_by_side = phases_used(kw, dilation[1], s[1])
        if ch * kh * kw < COLUMN_PLANE_TAPS and 8 * (plane_cols - o_w) > plane_cols:
            plane_cols, side_by_side = o_w, kw  # a plane of each kernel column
        phases = phases_used(kh, dilation[0], s[0]) * side_by_side
        return phases * ch * plane_rows * plane_cols + plane_cols + IMPLICIT_SLACK, ch * kh * kw

    if kernel == "conv2d_grad_input":
        if kh * kw == 1:
            return None
        plane_rows = grad_input_extent(height, top, kh, dilation[0], stride[0])
        plane_cols = grad_input_extent(width, left, kw, dilation[1], stride[1])
        taps = group_outputs * kh * kw
        floats = group_outputs * plane_rows * plane_cols + plane_cols + IMPLICIT_SLACK
        return floats + taps + group_channels * taps
    floats, taps = planes(group_channels, rows, cols, stride)
    if kernel == "conv2d_grad_weight":
        return floats + taps + rows * cols * group_outputs
    return floats + taps + taps * group_outputs


DEPTHWISE_BLOCK = 16
"""Channels whose padded planes and dy the depthwise 3x3 weight gradient interleaves on the hosts
(adir_tuned_depthwise_lanes.c's ADIR_DEPTHWISE_BLOCK): one vector multiply-add a tap and pixel
for a vector's channels, each channel's sum in the reference's order."""


SCALAR_FPU_TARGETS = ("cortex-m4f", "cortex-m7")
"""Scalar cores with 32 single-precision registers and VFMA (the M4F's settings header; not the
M55, whose Helium vectors the flat rows may use, and where arm-none-eabi-gcc -O2 spills the
register blocks below: 48 loads and stores to the stack, not measured). A
depthwise 3x3 runs the register-blocked `_depthwise_3x3` kernels there: 9 weights and a block
of output pixels' sums in registers, no padded columns computed (adir_tuned_depthwise_3x3.c).
The flat rows of `_depthwise` are built for vector units and keep their sums in memory, about
12 instructions a multiply-accumulate on the M4F (docs/cortex_m.md). Batchnorm runs its
unrolled kernels there (`batchnorm` below)."""


def depthwise_3x3(op: KernelOp, image: tuple[int, ...], kernel: tuple[int, int]) -> bool:
    """Whether a depthwise convolution of `image` [N, C, H, W] fits the `_depthwise_3x3`
    kernels: a 3x3 kernel, the same stride 1 or 2 both ways, padding at most 2 at the top and
    left (the stride-1 input gradient places dy 2 - padding rows and columns into its plane)."""
    stride = ints(op, "stride")
    if kernel != (3, 3) or stride not in ([1, 1], [2, 2]):
        return False
    return all(0 <= pad <= 2 for pad in ints(op, "padding"))


def conv2d_kernel(
    op: KernelOp,
    kernel: str,
    image: tuple[int, ...],
    out: tuple[int, ...],
    weight: tuple[int, ...],
    target: KernelTarget,
) -> Use | Refuse:
    """Which tuned kernel computes `kernel` (conv2d, conv2d_grad_input or conv2d_grad_weight)
    of a convolution of `image` [N, C, H, W] into `out` [N, O, P, Q] by a `weight` [O,
    C / groups, KH, KW], and the scratch it needs (see the module docstring)."""
    groups_attr = op.properties["groups"]
    assert isinstance(groups_attr, IntegerAttr)
    groups = groups_attr.value.data
    (_, channels, *_), (_, outputs, rows, cols) = image, out
    _, group_channels, kh, kw = weight
    stride, dilation = ints(op, "stride"), ints(op, "dilation")
    if groups == channels == outputs and dilation == [1, 1]:
        if target.name in SCALAR_FPU_TARGETS and depthwise_3x3(op, image, (kh, kw)):
            # The larger of the padded input plane and the padded dy plane of the stride-1
            # input gradient (adir_tuned_depthwise_3x3.c).
            padded_rows, padded_cols = (rows - 1) * stride[0] + 3, (cols - 1) * stride[1] + 3
            floats = max(padded_rows * padded_cols, (image[2] + 2) * (image[3] + 2))
            return Use(call=f"{kernel}_depthwise_3x3", scratch=FLOAT_BYTES * floats)
        # A padded plane, kw zeros past it, and a row of sums (adir_tuned_depthwise.c).
        padded_rows, padded_cols = (rows - 1) * stride[0] + kh, (cols - 1) * stride[1] + kw
        floats = padded_rows * padded_cols + kw + rows * padded_cols
        lanes = DEPTHWISE_BLOCK * (padded_rows * padded_cols + rows * cols)
        in_lanes = kernel == "conv2d_grad_weight" or (
            kernel == "conv2d_grad_input" and stride != [1, 1]
        )
        if (
            target.name in VECTOR_HOST_TARGETS
            and in_lanes
            and (kh, kw) == (3, 3)
            and lanes > floats
        ):
            # The weight gradient, and a strided input gradient, with channels in vector lanes:
            # a block's interleaved planes and dy (adir_tuned_depthwise_lanes.c), or, given
            # less, the scalar sums.
            return Use(
                call=f"{kernel}_depthwise",
                scratch=FLOAT_BYTES * lanes,
                scratch_min=FLOAT_BYTES * floats,
            )
        return Use(call=f"{kernel}_depthwise", scratch=FLOAT_BYTES * floats)
    pointwise = (kh, kw) == (1, 1) and stride == [1, 1] and not any(ints(op, "padding"))
    pointwise = pointwise and (rows, cols) == tuple(image[2:])
    if not pointwise and isinstance(unpadded_stride_one(op, image, out, [kh, kw]), Use):
        return Use()
    if pointwise and kernel != "conv2d_grad_weight":
        return Use(call=f"{kernel}_gemm")
    # An im2col panel of every tap by PANEL_PIXELS pixels (fewer taps over the target's
    # budget); plan-memory may shrink it down to MIN_PANEL_TAPS taps (adir_tuned_conv_gemm.c).
    taps = group_channels * kh * kw
    pixels = min(rows * cols, PANEL_PIXELS)
    wanted = taps * pixels
    budget = SCRATCH_BUDGET.get(target.name)
    if budget is not None:
        wanted = min(wanted, budget // FLOAT_BYTES)
    least = MIN_PANEL_TAPS.get(target.name, 16) * pixels
    if target.name in IMPLICIT_TARGETS:
        padding = ints(op, "padding")
        implicit = implicit_floats(kernel, image, out, weight, stride, padding, dilation, groups)
        wanted = max(wanted, implicit or 0)
    return Use(
        call=f"{kernel}_gemm",
        scratch=FLOAT_BYTES * wanted,
        scratch_min=FLOAT_BYTES * least if least < wanted else None,
    )


@judges("tuned", cp.Conv2dOp)
def conv2d(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    return conv2d_kernel(op, "conv2d", in_shape(op, 0), out_shape(op), in_shape(op, 1), target)


@judges("tuned", cp.Conv2dGradInputOp)
def conv2d_grad_input(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """dy [N, O, P, Q] and w give dx, the input's shape."""
    return conv2d_kernel(
        op, "conv2d_grad_input", out_shape(op), in_shape(op, 0), in_shape(op, 1), target
    )


@judges("tuned", cp.Conv2dGradWeightOp)
def conv2d_grad_weight(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """x and dy [N, O, P, Q] give dw, the weight's shape."""
    return conv2d_kernel(
        op, "conv2d_grad_weight", in_shape(op, 0), in_shape(op, 1), out_shape(op), target
    )


def tiling_windows(op: KernelOp, image: tuple[int, ...], out: tuple[int, ...]) -> Use | Refuse:
    """Whether the pool's windows tile the image: stride = kernel, no padding at the top and
    left, every window inside the image (padding at the bottom or right is then never read)."""
    kernel = ints(op, "kernel_size")
    stride = ints(op, "stride") if op.properties.get("stride") is not None else kernel
    if stride != kernel:
        return Refuse(f"stride {stride} is not the kernel {kernel}: windows overlap or skip")
    top, _, left, _ = ints(op, "padding")
    if top or left:
        return Refuse(f"padding {ints(op, 'padding')} at the top or left: the tiles take none")
    if out[2] * kernel[0] > image[2] or out[3] * kernel[1] > image[3]:
        return Refuse("windows past the image's edge")
    return Use()


@judges("tuned", cp.Maxpool2dOp)
def maxpool2d(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    return tiling_windows(op, in_shape(op, 0), out_shape(op))


@judges("tuned", cp.Maxpool2dGradOp)
def maxpool2d_grad(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """x and dy [N, C, P, Q] give dx."""
    return tiling_windows(op, in_shape(op, 0), in_shape(op, 1))


@judges(
    "tuned", norm.BatchnormOp, norm.BatchnormGradOp, norm.BatchnormReluOp, norm.BatchnormReluGradOp
)
def batchnorm(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    """Each row's eight partial sums in registers, the elementwise passes four elements a turn,
    the gradient's two sums in one pass and the relu (if fused) in the passes, bit for bit the
    reference's (adir_tuned_batchnorm.c): for a scalar core, where a loop's counter and branch
    cost as much as an element's add (DS-CNN's batchnorm_relu on the M4F: 16.9 and 29.4
    instructions an element, forward and gradient). On the hosts the `_channels` kernels, also
    bit for bit the reference's: a row's eight partial sums are one 8-float vector, and eight
    rows run side by side, so that the core overlaps their adds
    (adir_tuned_batchnorm_channels.c)."""
    if target.name in VECTOR_HOST_TARGETS:
        return Use(call=f"{op.name.split('.', 1)[1]}_channels")
    if target.name not in SCALAR_FPU_TARGETS:
        return Refuse(f"written for scalar cores and hosts, not measured on {target.name}")
    return Use()
