"""The C of the kernel ops `select-kernels{kernels=cmsis-nn}` gave to CMSIS-NN.

The pass decided which op becomes which s8 function and gave it its scratch buffer (a last
`outs` operand planned in the arena); here each becomes one call, its parameter structs written
as C99 compound literals with designated initializers (so the call reads like TFLite Micro's,
field by field), its status passed to `ADIR_CMSIS_NN_CHECK` (by default ignored: the pass only
chose calls whose arguments CMSIS-NN accepts; define it, e.g. to an assert, to check). The
multiplier and shift tables are `static const`; CMSIS-NN's quant-params structs take them as
`int32_t *` and only read them, hence the casts.

CMSIS-NN's conventions, as TFLite Micro fills them: input_offset = -input zero point,
output_offset = output zero point, filter_offset = 0 (symmetric weights), padding = the top and
left padding (the rest follows from the sizes), dims {n, h, w, c} with the fully-connected
filter as {accum depth, 1, 1, output depth}.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import IntegerAttr

from adir.backends.c.calls import CallSite
from adir.backends.c.calls.quantized import ints, scalar
from adir.dialects.kernel import KernelOp

CMSIS_NN_HEADER = "arm_nnfunctions.h"


def dims(shape: tuple[int, ...] | list[int]) -> str:
    n, h, w, c = shape
    return f"&(const cmsis_nn_dims){{.n = {n}, .h = {h}, .w = {w}, .c = {c}}}"


def tile(pair: list[int] | tuple[int, int]) -> str:
    """A (height, width) pair as cmsis_nn_tile."""
    return f"{{.w = {pair[1]}, .h = {pair[0]}}}"


def activation(op: KernelOp) -> str:
    return f"{{.min = {scalar(op, 'act_min')}, .max = {scalar(op, 'act_max')}}}"


def context(op: KernelOp, site: CallSite, results: int = 1) -> str:
    """The scratch buffer the pass planned (an `outs` past the results), or none."""
    if len(op.outs) > results:
        size = op.attributes["adir.kernel_scratch"]
        assert isinstance(size, IntegerAttr)
        return (
            f"&(const cmsis_nn_context){{.buf = {site.output(results)}, .size = {size.value.data}}}"
        )
    return "&(const cmsis_nn_context){.buf = NULL, .size = 0}"


def check(call: str) -> str:
    return f"ADIR_CMSIS_NN_CHECK({call});"


def conv(op: KernelOp, site: CallSite, function: str) -> str:
    image, weight, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    top, _, left, _ = ints(op, "padding")
    offsets = (
        f".input_offset = {-scalar(op, 'input_zero_point')}, "
        f".output_offset = {scalar(op, 'output_zero_point')}"
    )
    window = (
        f".stride = {tile(ints(op, 'stride'))}, .padding = {tile((top, left))}, "
        f".dilation = {tile(ints(op, 'dilation'))}, .activation = {activation(op)}"
    )
    if function == "arm_depthwise_conv_wrapper_s8":
        params = (
            f"&(const cmsis_nn_dw_conv_params){{{offsets}, "
            f".ch_mult = {out[3] // image[3]}, {window}}}"
        )
    else:
        params = f"&(const cmsis_nn_conv_params){{{offsets}, {window}}}"
    multiplier, shift = site.table(ints(op, "multiplier")), site.table(ints(op, "shift"))
    quant = (
        f"&(const cmsis_nn_per_channel_quant_params){{.multiplier = (int32_t *){multiplier}, "
        f".shift = (int32_t *){shift}}}"
    )
    return check(
        f"{function}({context(op, site)}, {params}, {quant}, {dims(image)}, {site.input(0)}, "
        f"{dims(weight)}, {site.input(1)}, {dims((1, 1, 1, out[3]))}, {site.input(2)}, "
        f"{dims(out)}, {site.output()})"
    )


def fully_connected(op: KernelOp, site: CallSite, build: str) -> str:
    (batch, depth), out_features = site.in_shape(0), site.in_shape(1)[0]
    input_offset = -scalar(op, "input_zero_point")
    params = (
        f"&(const cmsis_nn_fc_params){{.input_offset = {input_offset}, .filter_offset = 0, "
        f".output_offset = {scalar(op, 'output_zero_point')}, .activation = {activation(op)}}}"
    )
    (multiplier,), (shift,) = ints(op, "multiplier"), ints(op, "shift")
    quant = (
        f"&(const cmsis_nn_per_tensor_quant_params){{.multiplier = {multiplier}, .shift = {shift}}}"
    )
    call = check(
        f"arm_fully_connected_s8({context(op, site)}, {params}, {quant}, "
        f"{dims((batch, 1, 1, depth))}, {site.input(0)}, {dims((depth, 1, 1, out_features))}, "
        f"{site.input(1)}, {dims((1, 1, 1, out_features))}, {site.input(2)}, "
        f"{dims((batch, 1, 1, out_features))}, {site.output()})"
    )
    if build != "mve":
        return call
    # Helium's kernel reads each output's bias + input_offset * (its weights' sum) from the
    # scratch buffer instead of the bias: arm_vector_sum_s8 writes them there first.
    sums = check(
        f"arm_vector_sum_s8((int32_t *)(void *){site.output(1)}, {depth}, {out_features}, "
        f"{site.input(1)}, {input_offset}, 0, {site.input(2)})"
    )
    return f"{sums}\n    {call}"


def pool(op: KernelOp, site: CallSite, function: str) -> str:
    image, out = site.in_shape(0), site.out_shape()
    top, _, left, _ = ints(op, "padding")
    params = (
        f"&(const cmsis_nn_pool_params){{.stride = {tile(ints(op, 'stride'))}, "
        f".padding = {tile((top, left))}, .activation = {activation(op)}}}"
    )
    kernel = ints(op, "kernel_size")
    return check(
        f"{function}({context(op, site)}, {params}, {dims(image)}, {site.input(0)}, "
        f"{dims((1, kernel[0], kernel[1], 1))}, {dims(out)}, {site.output()})"
    )


def softmax(op: KernelOp, site: CallSite) -> str:
    """arm_softmax_s8(input, num_rows, row_size, mult, shift, diff_min, output): the rows are
    the last axis (select-kernels only chose rows of 1 to 511 entries). It returns void, so
    there is no status for ADIR_CMSIS_NN_CHECK."""
    row_size = site.in_shape(0)[-1]
    return (
        f"arm_softmax_s8({site.input(0)}, {site.out_size() // row_size}, {row_size}, "
        f"{scalar(op, 'multiplier')}, {scalar(op, 'shift')}, {scalar(op, 'diff_min')}, "
        f"{site.output()});"
    )


def elementwise_add(op: KernelOp, site: CallSite) -> str:
    """arm_elementwise_add_s8(in1, in2, in1_offset, in1_mult, in1_shift, in2_offset, in2_mult,
    in2_shift, left_shift, out, out_offset, out_mult, out_shift, act_min, act_max, size)."""
    args = [
        site.input(0),
        site.input(1),
        -scalar(op, "lhs_zero_point"),
        scalar(op, "lhs_multiplier"),
        scalar(op, "lhs_shift"),
        -scalar(op, "rhs_zero_point"),
        scalar(op, "rhs_multiplier"),
        scalar(op, "rhs_shift"),
        scalar(op, "left_shift"),
        site.output(),
        scalar(op, "output_zero_point"),
        scalar(op, "multiplier"),
        scalar(op, "shift"),
        scalar(op, "act_min"),
        scalar(op, "act_max"),
        site.out_size(),
    ]
    return check(f"arm_elementwise_add_s8({', '.join(str(a) for a in args)})")


CmsisNnCall = Callable[[KernelOp, CallSite, str], str]
CMSIS_NN_CALLS: dict[str, CmsisNnCall] = {
    "arm_convolve_wrapper_s8": lambda op, site, _: conv(op, site, "arm_convolve_wrapper_s8"),
    "arm_depthwise_conv_wrapper_s8": (
        lambda op, site, _: conv(op, site, "arm_depthwise_conv_wrapper_s8")
    ),
    "arm_fully_connected_s8": fully_connected,
    "arm_max_pool_s8": lambda op, site, _: pool(op, site, "arm_max_pool_s8"),
    "arm_avgpool_s8": lambda op, site, _: pool(op, site, "arm_avgpool_s8"),
    "arm_softmax_s8": lambda op, site, _: softmax(op, site),
    "arm_elementwise_add_s8": lambda op, site, _: elementwise_add(op, site),
}
"""The C form of each CMSIS-NN function select-kernels may record, keyed by its name."""


def cmsis_nn_call(op: KernelOp, site: CallSite, function: str, build: str) -> str:
    """The statement of an op select-kernels gave to CMSIS-NN's `function`, for CMSIS-NN's
    `build` (scalar, dsp or mve)."""
    call = CMSIS_NN_CALLS.get(function)
    if call is None:
        raise site.error(f"no C form for the CMSIS-NN function {function}")
    return call(op, site, build)
