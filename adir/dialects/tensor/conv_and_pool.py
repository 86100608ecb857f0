"""Convolution and pooling on NCHW images, and their gradient ops (each prints on one line,
wrapped here):

    %y = adir.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
           : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x4x4xf32>
    %p = adir.maxpool2d %y {kernel_size = array<i64: 2, 2>}
           : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
    %a = adir.avgpool2d %y {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>,
           padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<1x4x4x4xf32>
    %g = adir.global_avgpool2d %y : tensor<1x4x4x4xf32> -> tensor<1x4x1x1xf32>
    %z = adir.conv1d %s, %k {padding = array<i64: 1, 1>}
           : tensor<1x3x16xf32>, tensor<4x3x3xf32> -> tensor<1x4x16xf32>

Images are `[N, C, H, W]` (NCHW, PyTorch's layout) and conv weights `[O, C / groups, KH, KW]`
(`nn.Conv2d.weight`). NHWC is not an op variant: a layout is a kernel-level decision, so a
lowering to CMSIS-NN (which wants NHWC) transposes there, and the tensor level keeps one layout
and one set of rules. Each op equals its `torch.nn.functional` namesake on those shapes.

Properties (`array<i64: ...>`; a property equal to its default is left out of the print):

- `stride = [height, width]` (conv default [1, 1]; pools default to the kernel size, as torch);
- `padding = [top, bottom, left, right]`, default zeros. Four entries always, so a symmetric and
  an asymmetric padding are one form; asymmetric padding is `F.pad` followed by the op with no
  padding. Pools pad with -inf (max) or 0 (avg) and, as torch, allow at most half the kernel
  on each side, so that every window holds an element of the image;
- `dilation = [height, width]` (conv only; default [1, 1]) and `groups` (default 1; depthwise
  is groups = C); `kernel_size = [height, width]` for the pools, read from the weight for conv.

Output sizes round down (torch's `ceil_mode = False`): `out = (in + pad_lo + pad_hi -
dilation * (kernel - 1) - 1) // stride + 1`, at least 1.

conv1d (`[N, C, L]`, weights `[O, C / groups, K]`, `padding = [left, right]`, one-entry
`stride` and `dilation`) is conv2d of an image of height 1: `[N, C, L]` and `[N, C, 1, L]` are
the same bytes, so it and its two gradient ops share conv2d's shape rules, numpy semantics and C
kernels, and a model's sequence data and 1-D weights are never copied into 4-D shapes.

conv2d's bias is an optional third operand (`F.conv2d(x, w, b)`), not a separate `bias_add`:
every conv kernel (reference C, CMSIS-NN) takes the bias, so there is nothing to fuse later.
It is the op's only optional operand, so IRDL needs no `operandSegmentSizes` to place it.

The gradient ops are the two halves of PyTorch's `convolution_backward` and the pools'
backward kernels. A forward shape that the gradient's operands do not determine (with a stride
above 1, several input sizes give one output size) is a property: `input_size` (H, W of the
forward input) or `kernel_size`. maxpool2d saves no indices: `maxpool2d_grad` reads the
forward input and finds each window's maximum again, as PyTorch picks it (the first maximum in
row-major order, the last nan if the window has one). That costs a second pass over the input
instead of an i32 buffer the size of the output, and the input is usually alive anyway (it is
the relu output that relu_grad reads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypedDict

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    Dim,
    Dims,
    FloatTensor,
    Shape,
    format_shape,
    require_equal_dims,
    require_rank,
    tensor_type,
)
from adir.dialects.tensor.traits import LayerWeight, NotDifferentiable, Recomputable

AXES = ("height", "width")
SIDES = ("top", "bottom", "left", "right")


def _array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def padding4(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a torch-style (height, width) pair or 4 entries;
    for Python builders (the IR always holds 4 entries)."""
    if isinstance(padding, int):
        return (padding,) * 4
    values = tuple(padding)
    if len(values) == 2:
        return (values[0], values[0], values[1], values[1])
    if len(values) == 4:
        return values  # type: ignore[return-value]
    raise ValueError(f"padding needs 1, 2 or 4 entries, got {list(values)}")


def pair(value: int | Sequence[int]) -> tuple[int, int]:
    """(height, width) from an int or a pair, as torch accepts them."""
    if isinstance(value, int):
        return (value, value)
    height, width = value
    return (height, width)


@dataclass(frozen=True)
class Window2d:
    """Where a 2-D sliding window goes: for output row `o`, kernel row `i` reads padded input
    row `o * stride + i * dilation`, i.e. input row `o * stride + i * dilation - pad_top`."""

    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int, int, int]
    dilation: tuple[int, int] = (1, 1)

    def extent(self, axis: int) -> int:
        """The span of the dilated kernel along axis 0 (height) or 1 (width)."""
        return self.dilation[axis] * (self.kernel[axis] - 1) + 1

    def padded(self, axis: int, size: int) -> int:
        return size + self.padding[2 * axis] + self.padding[2 * axis + 1]


def window_output(
    op_name: str,
    operand: str,
    size: Dim,
    kernel: Dim,
    window: Window2d,
    axis: int,
    axes: tuple[str, str] = AXES,
) -> Dim:
    """The output size along `axis` of a `kernel` sliding over `size` with the window's
    stride, padding and dilation (None if the size or the kernel is unknown, which is why the
    kernel is apart from the window); a kernel wider than the padded input is an error, as in
    PyTorch."""
    if size is None or kernel is None:
        return None
    dilation = window.dilation[axis]
    extent = dilation * (kernel - 1) + 1
    lo, hi = window.padding[2 * axis], window.padding[2 * axis + 1]
    padded = size + lo + hi
    if extent > padded:
        dilated = f" ({kernel} dilated by {dilation})" if dilation > 1 else ""
        raise VerifyException(
            f"{op_name}: kernel {axes[axis]} {extent}{dilated} exceeds the padded {operand} "
            f"{axes[axis]} {padded} ({size} + padding {lo} + {hi})"
        )
    return (padded - extent) // window.stride[axis] + 1


def check_output_dims(
    op_name: str,
    grad_shape: Dims,
    expected: tuple[Dim, Dim],
    input_size: tuple[Dim, Dim],
    axes: tuple[str, str] = AXES,
) -> None:
    """The adjoint `grad` has the spatial size the forward op's output had."""
    for axis in (0, 1):
        got, want = grad_shape[2 + axis], expected[axis]
        if got is not None and want is not None and got != want:
            raise VerifyException(
                f"{op_name}: operand grad has {axes[axis]} {got}, but the forward op gives "
                f"{want} for an input {axes[axis]} of {input_size[axis]}"
            )


def _known(a: Dim, b: Dim) -> Dim:
    return a if a is not None else b


def _dims4(shape: Shape) -> Dims:
    return (None,) * 4 if shape is None else shape


class ConvParameters(TypedDict):
    """conv2d's properties as Python values: the keyword arguments of its gradient ops."""

    stride: tuple[int, int]
    padding: tuple[int, int, int, int]
    dilation: tuple[int, int]
    groups: int


class PoolParameters(TypedDict):
    """A pool's window as Python values: the keyword arguments of its gradient op."""

    kernel_size: tuple[int, int]
    stride: tuple[int, int] | None
    padding: tuple[int, int, int, int]


class WindowOp(TensorOp):
    """An op with a 2-D window: checks and reads its `stride` and `padding` properties.
    Subclasses declare them (conv with defaults, pools with `stride` defaulting to the kernel)."""

    traits = traits_def(Pure())

    def entries(self, prop: str, count: int, meaning: str, minimum: int) -> tuple[int, ...]:
        """The values of an `array<i64>` property, checked for count and lower bound."""
        array = self.properties[prop]
        assert isinstance(array, DenseArrayBase)
        values = tuple(int(v) for v in array.get_values())
        if len(values) != count:
            raise VerifyException(
                f"{self.name}: {prop} must have {count} entr{'y' if count == 1 else 'ies'} "
                f"({meaning}), got {len(values)}"
            )
        if any(v < minimum for v in values):
            kind = "positive" if minimum == 1 else "non-negative"
            raise VerifyException(f"{self.name}: {prop} entries must be {kind}, got {list(values)}")
        return values

    def padding_values(self) -> tuple[int, int, int, int]:
        return self.entries("padding", 4, "top, bottom, left, right", 0)  # type: ignore[return-value]

    def pair_values(self, prop: str) -> tuple[int, int]:
        return self.entries(prop, 2, "height, width", 1)  # type: ignore[return-value]


# --- convolution -------------------------------------------------------------------------


class ConvWindowOp(WindowOp):
    """conv2d and its gradient ops: `stride`, `padding`, `dilation` and `groups`."""

    stride = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))
    dilation = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    groups = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    AXIS_NAMES: ClassVar[tuple[str, str]] = AXES
    """The names of the spatial axes in messages."""

    @staticmethod
    def conv_properties(
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ) -> dict[str, Attribute]:
        return {
            "stride": _array(pair(stride)),
            "padding": _array(padding4(padding)),
            "dilation": _array(pair(dilation)),
            "groups": IntegerAttr(groups, i64),
        }

    def conv_parameters(self) -> ConvParameters:
        """The keyword arguments that rebuild these properties (for the VJP rules)."""
        return {
            "stride": self.pair_values("stride"),
            "padding": self.padding_values(),
            "dilation": self.pair_values("dilation"),
            "groups": self.group_count(),
        }

    def group_count(self) -> int:
        groups = self.groups.value.data
        if groups < 1:
            raise VerifyException(f"{self.name}: groups must be positive, got {groups}")
        return groups

    def window(self, kernel: Sequence[int]) -> Window2d:
        """The window of a kernel of this size (checking the properties)."""
        return Window2d(
            (kernel[0], kernel[1]),
            self.pair_values("stride"),
            self.padding_values(),
            self.pair_values("dilation"),
        )

    def check_channels(
        self, in_channels: Dim, weight_shape: Dims, out_operand: str = "weight"
    ) -> tuple[Dim, Dim]:
        """(output channels, input channels) from the weight [O, C / groups, KH, KW] and the
        image's channels, checking that they fit the groups; `out_operand` names the operand
        the output channels come from."""
        groups = self.group_count()
        out_channels, group_channels = weight_shape[0], weight_shape[1]
        if in_channels is not None and group_channels is not None:
            if in_channels != group_channels * groups:
                raise VerifyException(
                    f"{self.name}: input channels {in_channels} and weight channels "
                    f"{group_channels} (x groups {groups}) do not match"
                )
        elif in_channels is not None and in_channels % groups:
            raise VerifyException(
                f"{self.name}: input channels {in_channels} are not divisible by groups {groups}"
            )
        if out_channels is not None and out_channels % groups:
            raise VerifyException(
                f"{self.name}: output channels {out_channels} of operand {out_operand} are not "
                f"divisible by groups {groups}"
            )
        if in_channels is None and group_channels is not None:
            in_channels = group_channels * groups
        return out_channels, in_channels

    def conv_output(self, input_shape: Dims, kernel: tuple[Dim, Dim]) -> tuple[Dim, Dim]:
        """(H_out, W_out) of the convolution of an input by a kernel, either maybe unknown."""
        window = self.window((1, 1))  # stride, padding and dilation; the kernel is apart
        return (
            window_output(
                self.name, "input", input_shape[2], kernel[0], window, 0, self.AXIS_NAMES
            ),
            window_output(
                self.name, "input", input_shape[3], kernel[1], window, 1, self.AXIS_NAMES
            ),
        )

    def conv_result(self, x: Dims, w: Dims) -> Dims:
        """conv2d's shape rule on [N, C, H, W] and [O, C / groups, KH, KW], with the optional
        bias [O] as the op's third operand: [N, O, H_out, W_out]."""
        out_channels, _ = self.check_channels(x[1], w)
        bias = self.operand_shape(2) if len(self.operands) == 3 else None
        require_rank(self.name, "bias", bias, (1,))
        if bias is not None:
            if None not in (bias[0], out_channels) and bias[0] != out_channels:
                raise VerifyException(
                    f"{self.name}: operand bias has {bias[0]} entries but operand "
                    f"weight has {out_channels} output channels"
                )
            out_channels = _known(out_channels, bias[0])
        height, width = self.conv_output(x, (w[2], w[3]))
        return (x[0], out_channels, height, width)

    def grad_input_result(self, dy: Dims, w: Dims, size: tuple[int, int]) -> Dims:
        """conv2d_grad_input's shape rule: [N, C, H, W] from the adjoint [N, O, H_out, W_out],
        the weight and the forward input's (H, W)."""
        out_channels, in_channels = self.check_channels(None, w)
        require_equal_dims(self.name, "output channels", dy[1], out_channels, ("grad", "weight"))
        expected = self.conv_output((None, None, *size), (w[2], w[3]))
        check_output_dims(self.name, dy, expected, size, self.AXIS_NAMES)
        return (dy[0], in_channels, *size)

    def grad_weight_result(self, x: Dims, dy: Dims, kernel: tuple[int, int]) -> Dims:
        """conv2d_grad_weight's shape rule: [O, C / groups, KH, KW] from the forward input,
        the adjoint [N, O, H_out, W_out] and the kernel's (KH, KW)."""
        groups = self.group_count()
        out_channels, in_channels = self.check_channels(x[1], (dy[1], None, *kernel), "grad")
        require_equal_dims(self.name, "batch sizes", x[0], dy[0], ("input", "grad"))
        expected = self.conv_output(x, kernel)
        check_output_dims(self.name, dy, expected, (x[2], x[3]), self.AXIS_NAMES)
        group_channels = None if in_channels is None else in_channels // groups
        return (out_channels, group_channels, *kernel)


@irdl_op_definition
class Conv2dOp(ConvWindowOp):
    """`F.conv2d(input, weight, bias, stride, padding, dilation, groups)`, with `padding` as
    (top, bottom, left, right): `F.conv2d(F.pad(input, (left, right, top, bottom)), ...)`.

    input [N, C, H, W], weight [O, C / groups, KH, KW], bias [O] (optional) -> [N, O, H_out,
    W_out]. Output channel o of group g = o // (O / groups) sees input channels
    g * C / groups ... (g + 1) * C / groups - 1.
    """

    name = "adir.conv2d"
    input = operand_def(FloatTensor)
    weight = operand_def(FloatTensor)
    bias = opt_operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(LayerWeight("weight", bias="bias"))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ):
        properties = self.conv_properties(stride, padding, dilation, groups)
        super().__init__([input, weight, bias], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        input_shape, weight_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (4,))
        require_rank(self.name, "weight", weight_shape, (4,))
        return [tensor_type(f32, self.conv_result(_dims4(input_shape), _dims4(weight_shape)))]


@irdl_op_definition
class Conv2dGradInputOp(ConvWindowOp):
    """The adjoint of conv2d's input: `torch.nn.grad.conv2d_input(input_size, weight, grad,
    stride, padding, dilation, groups)` (the transposed convolution), with conv2d's properties
    and the forward input's spatial size `input_size = [H, W]`.

    grad [N, O, H_out, W_out], weight [O, C / groups, KH, KW] -> [N, C, H, W]:
    `dx[n, c, h, w] = sum dy[n, o, p, q] * weight[o, c', i, j]` over the o of c's group and the
    (p, q, i, j) with `p * stride + i * dilation - pad_top = h` (likewise for w). Padded
    positions receive gradient too, and are cut off.
    """

    name = "adir.conv2d_grad_input"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    grad = operand_def(FloatTensor)
    weight = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    input_size = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        grad: SSAValue,
        weight: SSAValue,
        input_size: Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ):
        properties = self.conv_properties(stride, padding, dilation, groups)
        properties["input_size"] = _array(input_size)
        super().__init__([grad, weight], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        grad_shape, weight_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "grad", grad_shape, (4,))
        require_rank(self.name, "weight", weight_shape, (4,))
        size = self.pair_values("input_size")
        return [
            tensor_type(f32, self.grad_input_result(_dims4(grad_shape), _dims4(weight_shape), size))
        ]


@irdl_op_definition
class Conv2dGradWeightOp(ConvWindowOp):
    """The adjoint of conv2d's weight: `torch.nn.grad.conv2d_weight(input, weight_size, grad,
    stride, padding, dilation, groups)`, with conv2d's properties and the kernel's spatial
    size `kernel_size = [KH, KW]`.

    input [N, C, H, W], grad [N, O, H_out, W_out] -> [O, C / groups, KH, KW]:
    `dw[o, c', i, j] = sum_{n, p, q} dy[n, o, p, q] * padded_input[n, c, p * stride + i *
    dilation, q * stride + j * dilation]` with c the c'-th channel of o's group. The bias's
    adjoint is no op of its own: it is `sum(grad, [0, 2, 3])`.
    """

    name = "adir.conv2d_grad_weight"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    input = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    kernel_size = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        input: SSAValue,
        grad: SSAValue,
        kernel_size: Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
    ):
        properties = self.conv_properties(stride, padding, dilation, groups)
        properties["kernel_size"] = _array(kernel_size)
        super().__init__([input, grad], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        input_shape, grad_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (4,))
        require_rank(self.name, "grad", grad_shape, (4,))
        kernel = self.pair_values("kernel_size")
        x, dy = _dims4(input_shape), _dims4(grad_shape)
        return [tensor_type(f32, self.grad_weight_result(x, dy, kernel))]


# --- 1-D convolution: conv2d of an image of height 1 -----------------------------------------


def _height_one(shape: Shape) -> Dims:
    """[N, C, L] as [N, C, 1, L]: the same elements in the same order."""
    n, c, length = (None,) * 3 if shape is None else shape
    return (n, c, 1, length)


class Conv1dWindowOp(ConvWindowOp):
    """conv1d and its gradient ops: on `[N, C, L]` and weights `[O, C / groups, K]`, which are
    `[N, C, 1, L]` and `[O, C / groups, 1, K]` byte for byte, so each op is its conv2d
    namesake on an image of height 1, with the same shape rule, numbers and kernel. Properties:
    `stride = [s]`, `padding = [left, right]`, `dilation = [d]`, `groups`."""

    stride = prop_def(DenseArrayBase[I64], default_value=_array([1]))
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0]))
    dilation = prop_def(DenseArrayBase[I64], default_value=_array([1]))
    AXIS_NAMES: ClassVar[tuple[str, str]] = ("height", "length")

    @staticmethod
    def conv1d_properties(
        stride: int = 1, padding: int | Sequence[int] = 0, dilation: int = 1, groups: int = 1
    ) -> dict[str, Attribute]:
        left, right = (padding, padding) if isinstance(padding, int) else padding
        return {
            "stride": _array([stride]),
            "padding": _array([left, right]),
            "dilation": _array([dilation]),
            "groups": IntegerAttr(groups, i64),
        }

    def conv1d_parameters(self) -> dict[str, int | tuple[int, int]]:
        """The keyword arguments that rebuild these properties (for the VJP rule)."""
        (stride,) = self.entries("stride", 1, "length", 1)
        left, right = self.entries("padding", 2, "left, right", 0)
        (dilation,) = self.entries("dilation", 1, "length", 1)
        return {
            "stride": stride,
            "padding": (left, right),
            "dilation": dilation,
            "groups": self.group_count(),
        }

    def conv_parameters(self) -> ConvParameters:
        """conv2d's properties for the same convolution of a height-1 image."""
        one = self.conv1d_parameters()
        left, right = one["padding"]  # type: ignore[misc]
        return {
            "stride": (1, one["stride"]),  # type: ignore[typeddict-item]
            "padding": (0, 0, left, right),
            "dilation": (1, one["dilation"]),  # type: ignore[typeddict-item]
            "groups": self.group_count(),
        }

    def window(self, kernel: Sequence[int]) -> Window2d:
        """The window of a [1, K] kernel on a height-1 image (`kernel` as (1, K))."""
        two = self.conv_parameters()
        return Window2d((kernel[0], kernel[1]), two["stride"], two["padding"], two["dilation"])

    def length_values(self, prop: str) -> int:
        """A one-entry property (`input_size`, `kernel_size`): a length."""
        return self.entries(prop, 1, "length", 1)[0]


@irdl_op_definition
class Conv1dOp(Conv1dWindowOp):
    """`F.conv1d(input, weight, bias, stride, padding, dilation, groups)`, with `padding` as
    (left, right): `F.conv1d(F.pad(input, (left, right)), ...)`.

    input [N, C, L], weight [O, C / groups, K], bias [O] (optional) -> [N, O, L_out], with
    `L_out = (L + left + right - dilation * (K - 1) - 1) // stride + 1`: conv2d of height 1.
    """

    name = "adir.conv1d"
    input = operand_def(FloatTensor)
    weight = operand_def(FloatTensor)
    bias = opt_operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(LayerWeight("weight", bias="bias"))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        stride: int = 1,
        padding: int | Sequence[int] = 0,
        dilation: int = 1,
        groups: int = 1,
    ):
        properties = self.conv1d_properties(stride, padding, dilation, groups)
        super().__init__([input, weight, bias], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        input_shape, weight_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (3,))
        require_rank(self.name, "weight", weight_shape, (3,))
        n, o, _, length = self.conv_result(_height_one(input_shape), _height_one(weight_shape))
        return [tensor_type(f32, (n, o, length))]


@irdl_op_definition
class Conv1dGradInputOp(Conv1dWindowOp):
    """The adjoint of conv1d's input (`torch.nn.grad.conv1d_input`): conv2d_grad_input of
    height 1, with conv1d's properties and the forward input's length `input_size = [L]`.
    grad [N, O, L_out], weight [O, C / groups, K] -> [N, C, L]."""

    name = "adir.conv1d_grad_input"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    grad = operand_def(FloatTensor)
    weight = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    input_size = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        grad: SSAValue,
        weight: SSAValue,
        input_size: Sequence[int],
        stride: int = 1,
        padding: int | Sequence[int] = 0,
        dilation: int = 1,
        groups: int = 1,
    ):
        properties = self.conv1d_properties(stride, padding, dilation, groups)
        properties["input_size"] = _array(input_size)
        super().__init__([grad, weight], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        grad_shape, weight_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "grad", grad_shape, (3,))
        require_rank(self.name, "weight", weight_shape, (3,))
        size = (1, self.length_values("input_size"))
        dy, w = _height_one(grad_shape), _height_one(weight_shape)
        n, c, _, length = self.grad_input_result(dy, w, size)
        return [tensor_type(f32, (n, c, length))]


@irdl_op_definition
class Conv1dGradWeightOp(Conv1dWindowOp):
    """The adjoint of conv1d's weight (`torch.nn.grad.conv1d_weight`): conv2d_grad_weight of
    height 1, with conv1d's properties and the kernel's length `kernel_size = [K]`.
    input [N, C, L], grad [N, O, L_out] -> [O, C / groups, K]. The bias's adjoint is
    `sum(grad, [0, 2])`."""

    name = "adir.conv1d_grad_weight"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    input = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    kernel_size = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        input: SSAValue,
        grad: SSAValue,
        kernel_size: Sequence[int],
        stride: int = 1,
        padding: int | Sequence[int] = 0,
        dilation: int = 1,
        groups: int = 1,
    ):
        properties = self.conv1d_properties(stride, padding, dilation, groups)
        properties["kernel_size"] = _array(kernel_size)
        super().__init__([input, grad], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        input_shape, grad_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (3,))
        require_rank(self.name, "grad", grad_shape, (3,))
        kernel = (1, self.length_values("kernel_size"))
        x, dy = _height_one(input_shape), _height_one(grad_shape)
        o, c, _, k = self.grad_weight_result(x, dy, kernel)
        return [tensor_type(f32, (o, c, k))]


# --- pooling -----------------------------------------------------------------------------


class PoolWindowOp(WindowOp):
    """A pool's window: `kernel_size`, `stride` (default: the kernel size) and `padding`."""

    kernel_size = prop_def(DenseArrayBase[I64])
    stride = opt_prop_def(DenseArrayBase[I64])
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))

    @staticmethod
    def pool_properties(
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
    ) -> dict[str, Attribute]:
        properties = {"kernel_size": _array(pair(kernel_size))}
        if stride is not None:
            properties["stride"] = _array(pair(stride))
        properties["padding"] = _array(padding4(padding))
        return properties

    def pool_parameters(self) -> PoolParameters:
        """The keyword arguments that rebuild these properties (for the VJP rules); a stride
        left out (the kernel size) stays left out."""
        window = self.window()
        stride = None if self.stride is None else window.stride
        return {"kernel_size": window.kernel, "stride": stride, "padding": window.padding}

    def window(self) -> Window2d:
        """The pooling window (checking the properties)."""
        kernel = self.pair_values("kernel_size")
        stride = kernel if self.stride is None else self.pair_values("stride")
        padding = self.padding_values()
        for index, pad in enumerate(padding):
            axis = index // 2
            if pad > kernel[axis] // 2:
                raise VerifyException(
                    f"{self.name}: padding {pad} ({SIDES[index]}) exceeds half the kernel "
                    f"{AXES[axis]} {kernel[axis]}"
                )
        return Window2d(kernel, stride, padding)

    def pool_output(self, input_shape: Dims) -> tuple[Dim, Dim]:
        """(H_out, W_out) of pooling an input of this shape."""
        window = self.window()
        return (
            window_output(self.name, "input", input_shape[2], window.kernel[0], window, 0),
            window_output(self.name, "input", input_shape[3], window.kernel[1], window, 1),
        )


class PoolOp(PoolWindowOp):
    """input [N, C, H, W] -> [N, C, H_out, W_out], each channel pooled on its own."""

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = self.operand_shape(0)
        require_rank(self.name, "input", shape, (4,))
        x = _dims4(shape)
        return [tensor_type(f32, (x[0], x[1], *self.pool_output(x)))]


@irdl_op_definition
class Maxpool2dOp(PoolOp):
    """`F.max_pool2d(input, kernel_size, stride, padding)`: the maximum of each window of the
    input padded with -inf (a nan in the window gives nan), asymmetric padding included."""

    name = "adir.maxpool2d"
    traits = traits_def(Recomputable())

    def __init__(
        self,
        input: SSAValue,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
    ):
        super().__init__([input], self.pool_properties(kernel_size, stride, padding))


@irdl_op_definition
class Avgpool2dOp(PoolOp):
    """`F.avg_pool2d(input, kernel_size, stride, padding, count_include_pad)`: the sum of each
    window of the zero-padded input over the window's size (`count_include_pad`, the default,
    as torch) or over the number of its elements inside the image."""

    name = "adir.avgpool2d"
    traits = traits_def(Recomputable())
    count_include_pad = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    def __init__(
        self,
        input: SSAValue,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        count_include_pad: bool = True,
    ):
        properties = self.pool_properties(kernel_size, stride, padding)
        properties["count_include_pad"] = BoolAttr.from_bool(count_include_pad)
        super().__init__([input], properties)


@irdl_op_definition
class GlobalAvgpool2dOp(TensorOp):
    """`F.adaptive_avg_pool2d(input, 1)`: the mean of each channel, [N, C, H, W] ->
    [N, C, 1, 1]. Its adjoint is `grad / (H * W)` broadcast back, a composition."""

    name = "adir.global_avgpool2d"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure(), Recomputable())

    def __init__(self, input: SSAValue):
        super().__init__([input])

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = self.operand_shape(0)
        require_rank(self.name, "input", shape, (4,))
        x = _dims4(shape)
        if 0 in x[2:]:
            raise VerifyException(
                f"{self.name}: operand input ({format_shape(shape)}) has no pixels to average"
            )
        return [tensor_type(f32, (x[0], x[1], 1, 1))]


@irdl_op_definition
class Maxpool2dGradOp(PoolWindowOp):
    """The adjoint of maxpool2d's input, from the forward `input` and the adjoint `grad` of
    its result (PyTorch's `max_pool2d_with_indices_backward`, with the indices recomputed):
    each window passes its `grad` to the element torch's forward picks, the first maximum in
    row-major order (the last nan if there is one); overlapping windows add up. Properties
    as the forward op's; the result has the input's type."""

    name = "adir.maxpool2d_grad"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    input = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)

    def __init__(
        self,
        input: SSAValue,
        grad: SSAValue,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
    ):
        super().__init__([input, grad], self.pool_properties(kernel_size, stride, padding))

    def infer_result_types(self) -> Sequence[Attribute]:
        input_shape, grad_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (4,))
        require_rank(self.name, "grad", grad_shape, (4,))
        x, dy = _dims4(input_shape), _dims4(grad_shape)
        batch = require_equal_dims(self.name, "batch sizes", x[0], dy[0], ("input", "grad"))
        channels = require_equal_dims(self.name, "channels", x[1], dy[1], ("input", "grad"))
        check_output_dims(self.name, dy, self.pool_output(x), (x[2], x[3]))
        return [tensor_type(f32, (batch, channels, x[2], x[3]))]


@irdl_op_definition
class Avgpool2dGradOp(PoolWindowOp):
    """The adjoint of avgpool2d's input, from the adjoint `grad` of its result and the
    forward input's spatial size `input_size = [H, W]` (PyTorch's `avg_pool2d_backward`):
    each window spreads `grad / divisor` over its elements, the divisor being avgpool2d's.
    grad [N, C, H_out, W_out] -> [N, C, H, W]."""

    name = "adir.avgpool2d_grad"
    traits = traits_def(NotDifferentiable("a gradient op: autodiff emits it"))
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    count_include_pad = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    input_size = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        grad: SSAValue,
        input_size: Sequence[int],
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        count_include_pad: bool = True,
    ):
        properties = self.pool_properties(kernel_size, stride, padding)
        properties["count_include_pad"] = BoolAttr.from_bool(count_include_pad)
        properties["input_size"] = _array(input_size)
        super().__init__([grad], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        grad_shape = self.operand_shape(0)
        require_rank(self.name, "grad", grad_shape, (4,))
        size = self.pair_values("input_size")
        dy = _dims4(grad_shape)
        check_output_dims(self.name, dy, self.pool_output((None, None, *size)), size)
        return [tensor_type(f32, (dy[0], dy[1], *size))]


CONV_AND_POOL_OPS = [
    Conv2dOp,
    Conv1dOp,
    Maxpool2dOp,
    Avgpool2dOp,
    GlobalAvgpool2dOp,
    Conv2dGradInputOp,
    Conv2dGradWeightOp,
    Conv1dGradInputOp,
    Conv1dGradWeightOp,
    Maxpool2dGradOp,
    Avgpool2dGradOp,
]
