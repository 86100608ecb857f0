"""The C kernels of the conv_and_pool family against the interpreter (gcc, ASan, UBSan).

Each configuration builds one function that runs a forward op and its gradient ops side by side
(conv2d, conv2d_grad_input and conv2d_grad_weight, and the same of conv1d; maxpool2d, avgpool2d
and their adjoints), so one C build checks the three loops that share a window. The
configurations cover what the kernels special-case: the kernel taps that fall into the padding
(symmetric, asymmetric, wider than the kernel), strides and dilations that skip pixels, output
sizes that drop the last rows and columns, groups and depthwise channels, the optional bias, and
the element maxpool2d_grad routes its gradient to among equal values, nan and -inf. LeNet-5 and
DS-CNN then train for a few SGD steps with the kernels as autodiff uses them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from c_testing import check_c_against_interpreter
from xdsl.dialects import memref
from xdsl.dialects.builtin import f32

from adir.backends.c.calls import CALL_EMITTERS, CallSite
from adir.diagnostics import OpError
from adir.dialects.kernel import KERNELS
from adir.dialects.tensor.conv_and_pool import Conv2dOp

Shape = tuple[int, ...]


@pytest.fixture
def rng() -> np.random.Generator:
    """Each test's own inputs, the same whichever tests run."""
    return np.random.default_rng(0)


def normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def tensor(shape: Shape) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}xf32>"


def array(values: Sequence[int]) -> str:
    return f"array<i64: {', '.join(str(v) for v in values)}>"


def window_output(
    size: int, kernel: int, stride: int, low: int, high: int, dilation: int = 1
) -> int:
    return (size + low + high - dilation * (kernel - 1) - 1) // stride + 1


def function(args: dict[str, Shape], lines: list[tuple[str, str, Shape]]) -> str:
    """`@f(args)` returning every line's result; a line is (name, `op operands {props} :
    operand types`, result shape)."""
    signature = ", ".join(f"%{name}: {tensor(shape)}" for name, shape in args.items())
    types = [tensor(shape) for _, _, shape in lines]
    names = ", ".join(f"%{name}" for name, _, _ in lines)
    body = [f"  %{name} = {op} -> {t}" for (name, op, _), t in zip(lines, types, strict=True)]
    return "\n".join(
        [
            f"func.func @f({signature}) -> ({', '.join(types)}) {{",
            *body,
            f"  func.return {names} : {', '.join(types)}",
            "}",
        ]
    )


# --- convolution -------------------------------------------------------------------------


@dataclass(frozen=True)
class Conv:
    input: tuple[int, int, int, int]
    weight: tuple[int, int, int, int]
    bias: bool = True
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    def output(self) -> Shape:
        sizes = [
            window_output(
                self.input[2 + axis], self.weight[2 + axis], self.stride[axis],
                self.padding[2 * axis], self.padding[2 * axis + 1], self.dilation[axis],
            )
            for axis in (0, 1)
        ]  # fmt: skip
        return (self.input[0], self.weight[0], *sizes)

    def props(self) -> list[str]:
        props = [f"stride = {array(self.stride)}", f"padding = {array(self.padding)}"]
        props += [f"dilation = {array(self.dilation)}", f"groups = {self.groups} : i64"]
        return props

    def args(self) -> dict[str, Shape]:
        """The function's arguments: conv2d's operands, then the adjoint of its result."""
        bias = {"b": self.weight[:1]} if self.bias else {}
        return {"x": self.input, "w": self.weight, **bias, "dy": self.output()}

    def text(self) -> str:
        """@f(x, w, [b,] dy) -> conv2d(x, w, [b]), its input and its weight adjoint of dy."""
        x, w, y = tensor(self.input), tensor(self.weight), tensor(self.output())
        inputs = {name: shape for name, shape in self.args().items() if name != "dy"}
        operands = ", ".join(f"%{name}" for name in inputs)
        types = ", ".join(tensor(shape) for shape in inputs.values())
        props = ", ".join(self.props())
        input_size = f"input_size = {array(self.input[2:])}"
        kernel_size = f"kernel_size = {array(self.weight[2:])}"
        return function(
            self.args(),
            [
                ("y", f"adir.conv2d {operands} {{{props}}} : {types}", self.output()),
                (
                    "dx",
                    f"adir.conv2d_grad_input %dy, %w {{{props}, {input_size}}} : {y}, {w}",
                    self.input,
                ),
                (
                    "dw",
                    f"adir.conv2d_grad_weight %x, %dy {{{props}, {kernel_size}}} : {x}, {y}",
                    self.weight,
                ),
            ],
        )

    def operands(self, rng: np.random.Generator) -> list[np.ndarray]:
        return [normal(rng, *shape) for shape in self.args().values()]


CONVS = {
    "3x3": Conv((2, 3, 6, 6), (4, 3, 3, 3)),
    "no_bias": Conv((2, 3, 6, 6), (4, 3, 3, 3), bias=False),
    "stride_2_drops_the_last_row_and_column": Conv((2, 2, 8, 8), (3, 2, 3, 3), stride=(2, 2)),
    "padding_1": Conv((1, 3, 5, 5), (4, 3, 3, 3), padding=(1, 1, 1, 1)),
    "stride_2_padding_1": Conv((2, 2, 6, 6), (3, 2, 3, 3), stride=(2, 2), padding=(1,) * 4),
    "asymmetric_padding": Conv((2, 2, 5, 6), (3, 2, 3, 3), padding=(0, 2, 1, 0)),
    "asymmetric_padding_stride_2": Conv(
        (1, 2, 8, 7), (3, 2, 3, 2), stride=(2, 2), padding=(1, 0, 0, 1)
    ),
    "padding_wider_than_the_kernel": Conv((1, 2, 3, 4), (2, 2, 1, 2), padding=(2, 3, 3, 1)),
    "groups_2": Conv((2, 4, 5, 5), (6, 2, 3, 3), groups=2),
    "depthwise": Conv((2, 4, 5, 5), (4, 1, 3, 3), padding=(1,) * 4, groups=4),
    "depthwise_multiplier_2_no_bias": Conv((1, 3, 5, 5), (6, 1, 3, 3), bias=False, groups=3),
    "dilation_2": Conv((1, 2, 7, 7), (3, 2, 3, 3), padding=(2,) * 4, dilation=(2, 2)),
    "mixed_stride_dilation": Conv((2, 2, 7, 8), (3, 2, 2, 3), stride=(2, 1), dilation=(1, 2)),
    "odd_sizes": Conv((2, 3, 9, 7), (5, 3, 5, 3), stride=(3, 2), padding=(2, 1, 0, 1)),
    "1x1_stride_2_no_bias": Conv((2, 5, 5, 4), (3, 5, 1, 1), bias=False, stride=(2, 2)),
    "kernel_covers_input": Conv((2, 2, 4, 4), (3, 2, 4, 4)),
}


@pytest.mark.parametrize("name", list(CONVS))
def test_conv2d_and_its_adjoints(name: str, rng: np.random.Generator) -> None:
    """Two steps: an adjoint that adds to its output without clearing it first fails the
    second (the arena holds the first step's values)."""
    conv = CONVS[name]
    check_c_against_interpreter(conv.text(), "f", [conv.operands(rng), conv.operands(rng)])


@dataclass(frozen=True)
class Conv1d:
    """conv1d on [N, C, L] with padding (left, right), and its adjoints."""

    input: tuple[int, int, int]
    weight: tuple[int, int, int]
    bias: bool = True
    stride: int = 1
    padding: tuple[int, int] = (0, 0)
    dilation: int = 1
    groups: int = 1

    def output(self) -> Shape:
        left, right = self.padding
        length = window_output(
            self.input[2], self.weight[2], self.stride, left, right, self.dilation
        )
        return (self.input[0], self.weight[0], length)

    def args(self) -> dict[str, Shape]:
        bias = {"b": self.weight[:1]} if self.bias else {}
        return {"x": self.input, "w": self.weight, **bias, "dy": self.output()}

    def text(self) -> str:
        """@f(x, w, [b,] dy) -> conv1d(x, w, [b]), its input and its weight adjoint of dy."""
        x, w, y = tensor(self.input), tensor(self.weight), tensor(self.output())
        inputs = {name: shape for name, shape in self.args().items() if name != "dy"}
        operands = ", ".join(f"%{name}" for name in inputs)
        types = ", ".join(tensor(shape) for shape in inputs.values())
        props = (
            f"stride = {array([self.stride])}, padding = {array(self.padding)}, "
            f"dilation = {array([self.dilation])}, groups = {self.groups} : i64"
        )
        input_size = f"input_size = {array(self.input[2:])}"
        kernel_size = f"kernel_size = {array(self.weight[2:])}"
        return function(
            self.args(),
            [
                ("y", f"adir.conv1d {operands} {{{props}}} : {types}", self.output()),
                (
                    "dx",
                    f"adir.conv1d_grad_input %dy, %w {{{props}, {input_size}}} : {y}, {w}",
                    self.input,
                ),
                (
                    "dw",
                    f"adir.conv1d_grad_weight %x, %dy {{{props}, {kernel_size}}} : {x}, {y}",
                    self.weight,
                ),
            ],
        )

    def operands(self, rng: np.random.Generator) -> list[np.ndarray]:
        return [normal(rng, *shape) for shape in self.args().values()]


CONV1DS = {
    "k3": Conv1d((2, 3, 10), (4, 3, 3)),
    "no_bias": Conv1d((2, 3, 10), (4, 3, 3), bias=False),
    "stride_2_drops_the_last_position": Conv1d((2, 2, 10), (3, 2, 3), stride=2),
    "padding_same": Conv1d((1, 3, 9), (4, 3, 5), padding=(2, 2)),
    "asymmetric_padding_wider_than_the_kernel": Conv1d((2, 2, 5), (3, 2, 2), padding=(3, 1)),
    "dilation_3_stride_2": Conv1d((1, 2, 13), (3, 2, 3), stride=2, padding=(1, 2), dilation=3),
    "groups_2": Conv1d((2, 4, 8), (6, 2, 3), groups=2),
    "depthwise": Conv1d((2, 4, 8), (4, 1, 5), padding=(2, 2), groups=4),
    "kernel_covers_input": Conv1d((2, 2, 4), (3, 2, 4)),
}


@pytest.mark.parametrize("name", list(CONV1DS))
def test_conv1d_and_its_adjoints(name: str, rng: np.random.Generator) -> None:
    """As conv2d's: two steps, so an adjoint that does not clear its output fails."""
    conv = CONV1DS[name]
    check_c_against_interpreter(conv.text(), "f", [conv.operands(rng), conv.operands(rng)])


# --- pooling -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    input: tuple[int, int, int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int] | None = None  # the kernel size
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)

    def output(self) -> Shape:
        stride = self.stride or self.kernel
        sizes = [
            window_output(
                self.input[2 + axis], self.kernel[axis], stride[axis], self.padding[2 * axis],
                self.padding[2 * axis + 1],
            )
            for axis in (0, 1)
        ]  # fmt: skip
        return (*self.input[:2], *sizes)

    def props(self) -> str:
        props = [f"kernel_size = {array(self.kernel)}", f"padding = {array(self.padding)}"]
        if self.stride is not None:
            props.append(f"stride = {array(self.stride)}")
        return ", ".join(props)

    def max_lines(self) -> list[tuple[str, str, Shape]]:
        x, y = tensor(self.input), tensor(self.output())
        return [
            ("max", f"adir.maxpool2d %x {{{self.props()}}} : {x}", self.output()),
            (
                "max_dx",
                f"adir.maxpool2d_grad %x, %dy {{{self.props()}}} : {x}, {y}",
                self.input,
            ),
        ]

    def avg_lines(self, count_include_pad: bool) -> list[tuple[str, str, Shape]]:
        x, y = tensor(self.input), tensor(self.output())
        props = f"{self.props()}, count_include_pad = {str(count_include_pad).lower()}"
        input_size = f"input_size = {array(self.input[2:])}"
        name = "avg" if count_include_pad else "avg_in_image"
        return [
            (name, f"adir.avgpool2d %x {{{props}}} : {x}", self.output()),
            (
                f"{name}_dx",
                f"adir.avgpool2d_grad %dy {{{props}, {input_size}}} : {y}",
                self.input,
            ),
        ]

    def text(self) -> str:
        """@f(x, dy) -> maxpool2d, avgpool2d (both divisors) and their adjoints of dy."""
        lines = self.max_lines() + self.avg_lines(True) + self.avg_lines(False)
        return function({"x": self.input, "dy": self.output()}, lines)


POOLS = {
    "2x2": Pool((2, 3, 6, 6), (2, 2)),
    "2x2_odd_input_drops_the_last_row_and_column": Pool((2, 2, 5, 7), (2, 2)),
    "3x3_stride_2_padding_1": Pool((2, 2, 7, 6), (3, 3), (2, 2), (1, 1, 1, 1)),
    "overlapping_3x3_stride_1_padding_1": Pool((1, 2, 5, 5), (3, 3), (1, 1), (1, 1, 1, 1)),
    "overlapping_3x3_stride_2": Pool((2, 2, 7, 7), (3, 3), (2, 2)),
    "rectangular": Pool((1, 2, 7, 6), (3, 2), (2, 1), (1, 1, 0, 0)),
    "asymmetric_padding": Pool((1, 2, 7, 6), (3, 2), (2, 1), (1, 0, 0, 1)),
    "asymmetric_padding_4x4": Pool((2, 2, 6, 7), (4, 4), (3, 2), (0, 2, 1, 0)),
    "kernel_covers_input": Pool((2, 3, 4, 4), (4, 4)),
    "1x1": Pool((2, 2, 3, 4), (1, 1)),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pools_and_their_adjoints(name: str, rng: np.random.Generator) -> None:
    """Two steps, as the conv test."""
    pool = POOLS[name]
    steps = [[normal(rng, *pool.input), normal(rng, *pool.output())] for _ in range(2)]
    check_c_against_interpreter(pool.text(), "f", steps)


# Overlapping windows with padding: a pixel is in up to 9 windows, and with ties the window's
# first maximum (row-major) gets the gradient, so a wrong pick or order shows. Windows that tile
# the image (kernel == stride, no padding) take the kernels' branch-free path: 2x2 its
# vectorized rows, 3x2 its general scan (each with a row and column left over).
TIES = Pool((2, 2, 6, 5), (3, 3), (1, 1), (1, 1, 1, 1))
TIE_POOLS = {
    "overlapping": TIES,
    "tiling_2x2": Pool((2, 2, 7, 5), (2, 2)),
    "tiling_3x2": Pool((2, 2, 7, 5), (3, 2)),
}


@pytest.mark.parametrize(
    "make_input",
    [
        lambda rng, shape: np.full(shape, 0.5, np.float32),
        lambda rng, shape: np.maximum(normal(rng, *shape), 0.0),  # relu output: ties at 0
        lambda rng, shape: rng.integers(0, 3, shape).astype(np.float32),
    ],
    ids=["all_equal", "relu_zeroed", "three_values"],
)
@pytest.mark.parametrize("pool", list(TIE_POOLS))
def test_maxpool2d_grad_gives_ties_to_the_first_maximum(
    make_input: Callable[[np.random.Generator, Shape], np.ndarray],
    pool: str,
    rng: np.random.Generator,
) -> None:
    ties = TIE_POOLS[pool]
    text = function({"x": ties.input, "dy": ties.output()}, ties.max_lines())
    x, dy = make_input(rng, ties.input), normal(rng, *ties.output())
    check_c_against_interpreter(text, "f", [[x, dy]])


@pytest.mark.parametrize("pool", list(TIE_POOLS))
def test_maxpool2d_picks_the_last_nan_and_a_minus_inf_window_picks_its_first_element(
    pool: str, rng: np.random.Generator
) -> None:
    """nan beats every value and a later nan beats an earlier one (PyTorch's scan); a window
    of -inf (and -inf padding) routes its gradient to its first pixel in the image."""
    ties = TIE_POOLS[pool]
    x = normal(rng, *ties.input)
    x[0, 0, 0, 0] = x[0, 0, 1, 1] = x[0, 0, 2, 3] = x[0, 0, 3, 0] = np.nan
    x[1, 1, :3, :3] = -np.inf
    x[1, 0] = -np.inf
    text = function({"x": ties.input, "dy": ties.output()}, ties.max_lines())
    check_c_against_interpreter(text, "f", [[x, normal(rng, *ties.output())]])


def test_global_avgpool2d_means_each_plane(rng: np.random.Generator) -> None:
    shapes = [(2, 3, 5, 4), (1, 2, 1, 1), (2, 1, 7, 7)]
    lines = [
        (f"g{i}", f"adir.global_avgpool2d %x{i} : {tensor(shape)}", (*shape[:2], 1, 1))
        for i, shape in enumerate(shapes)
    ]
    text = function({f"x{i}": shape for i, shape in enumerate(shapes)}, lines)
    check_c_against_interpreter(text, "f", [[normal(rng, *shape) for shape in shapes]])


def test_sizes_beyond_int32_are_an_error() -> None:
    """An image 10^9 wide is beyond what the kernels' int32_t arithmetic surely holds (sums of
    up to three sizes): an error naming the op, not wrong C. The emitter sees only types, so
    no buffer of that size is made."""
    width = 1_000_000_000
    x, y = (memref.AllocOp.get(f32, None, (1, 1, 1, width)).memref for _ in range(2))
    w = memref.AllocOp.get(f32, None, (1, 1, 1, 1)).memref
    kernel = KERNELS[Conv2dOp]([x, w], [y], Conv2dOp.conv_properties())
    site = CallSite(kernel, {x: "x", w: "w", y: "y"}, lambda what, values: what)
    with pytest.raises(OpError, match=r"adir_kernel.conv2d: sizes .* exceed the kernel's int32_t"):
        CALL_EMITTERS[type(kernel)](kernel, site)


# --- training ----------------------------------------------------------------------------

EXAMPLES = Path(__file__).parents[2] / "examples"
SGD = "autodiff,insert-optimizer{kind=sgd lr=0.1}"


def test_lenet5_trains(rng: np.random.Generator) -> None:
    """Three SGD steps of examples/lenet5.mlir: conv2d with bias (its gradient a sum), relu,
    maxpool2d and their adjoints as autodiff writes them, with the other families' kernels;
    losses and final parameters."""
    steps = [
        [rng.uniform(0.0, 1.0, (1, 1, 28, 28)).astype(np.float32), np.array([label], np.int32)]
        for label in (3, 7, 0)
    ]
    check_c_against_interpreter(
        (EXAMPLES / "lenet5.mlir").read_text(), "train_step", steps, differentiate=SGD
    )


def test_ds_cnn_trains(rng: np.random.Generator) -> None:
    """Two SGD steps of examples/ds_cnn.mlir: a stride-2 conv with TensorFlow's asymmetric
    "same" padding, depthwise and pointwise convs without bias, global_avgpool2d, between
    batchnorm and dropout; losses and final parameters (running statistics included)."""
    steps = [
        [normal(rng, 1, 1, 49, 10), np.array([label], np.int32), np.int64(step)]
        for step, label in enumerate((3, 11))
    ]
    check_c_against_interpreter(
        (EXAMPLES / "ds_cnn.mlir").read_text(), "train_step", steps, differentiate=SGD
    )
