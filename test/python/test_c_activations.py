"""The C kernels of the activations family against the interpreter (gcc, ASan, UBSan): every
activation and its gradient with each attribute value, in place as bufferize plans them, on
inputs up to +-100 (where a naive sigmoid or softplus overflows), and softmax / log_softmax
along every axis of a 3-D tensor."""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import c_compilers, check_c_against_interpreter, run_pipeline

from adir.backends.c.model import print_model
from adir.context import parse_module

RNG = np.random.default_rng(0)

# Large magnitudes, both zeros, the softplus thresholds (20 at beta 1, 5 / 2 at beta 2) from
# either side, and ordinary values: 5 x 7 = 35 elements.
SPECIAL = [-100.0, -50.0, -20.0, -5.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 5.0]
SPECIAL += [19.99, 20.01, 2.499, 2.501, 50.0, 100.0]


def activation_input() -> np.ndarray:
    values = np.concatenate([SPECIAL, 3 * RNG.standard_normal(35 - len(SPECIAL))])
    return RNG.permutation(values).astype(np.float32).reshape(5, 7)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


T = "tensor<5x7xf32>"

# name -> (forward op with its attributes, its gradient op, whether the gradient reads the
# forward op's output, the C kernel of the forward op; the gradient's is `<kernel>_GRAD`).
ACTIVATIONS = {
    "relu": ("adir.relu", "adir.relu_grad", True, "RELU"),
    "leaky_relu": (
        "adir.leaky_relu {alpha = 2.000000e-01 : f32}",
        "adir.leaky_relu_grad {alpha = 2.000000e-01 : f32}",
        False,
        "LEAKY_RELU",
    ),
    "leaky_relu_negative_slope": (
        "adir.leaky_relu {alpha = -1.5 : f32}",
        "adir.leaky_relu_grad {alpha = -1.5 : f32}",
        False,
        "LEAKY_RELU",
    ),
    "sigmoid": ("adir.sigmoid", "adir.sigmoid_grad", True, "SIGMOID"),
    "tanh": ("adir.tanh", "adir.tanh_grad", True, "TANH"),
    "softplus": ("adir.softplus", "adir.softplus_grad", False, "SOFTPLUS"),
    "softplus_beta_threshold": (
        "adir.softplus {beta = 2.0 : f32, threshold = 5.0 : f32}",
        "adir.softplus_grad {beta = 2.0 : f32, threshold = 5.0 : f32}",
        False,
        "SOFTPLUS",
    ),
    "gelu": ("adir.gelu", "adir.gelu_grad", False, "GELU"),
    "gelu_tanh": (
        'adir.gelu {approximate = "tanh"}',
        'adir.gelu_grad {approximate = "tanh"}',
        False,
        "GELU_TANH",
    ),
    "relu6": (
        "adir.clamp {min = 0.0 : f32, max = 6.0 : f32}",
        "adir.clamp_grad {min = 0.0 : f32, max = 6.0 : f32}",
        True,
        "CLAMP",
    ),
    "hardswish": ("adir.hardswish", "adir.hardswish_grad", False, "HARDSWISH"),
    "hardsigmoid": ("adir.hardsigmoid", "adir.hardsigmoid_grad", False, "HARDSIGMOID"),
}

# A copy of an argument into a transient buffer (leaky_relu with slope 1 is the identity), so
# that the op after it may overwrite it.
COPY = "adir.leaky_relu {alpha = 1.0 : f32}"


def op_line(result: str, op: str, operands: str, types: str) -> str:
    """`%r = adir.op %a {attrs} : types`, from "adir.op {attrs}"."""
    name, _, attributes = op.partition(" ")
    return f"  %{result} = {' '.join(filter(None, [name, operands, attributes]))} : {types}"


def forward_ir(op: str) -> str:
    return "\n".join(
        [
            f"func.func @f(%x: {T}) -> {T} {{",
            op_line("c", COPY, "%x", T),
            op_line("y", op, "%c", T),
            f"  func.return %y : {T}",
            "}",
        ]
    )


def gradient_ir(forward: str, grad: str, reads_output: bool) -> str:
    """dx from the forward op's output (it dies there, so dx overwrites it) or from its input
    (an argument; dx overwrites a transient copy of dy)."""
    saved = "%y" if reads_output else "%x"
    return "\n".join(
        [
            f"func.func @f(%x: {T}, %dy: {T}) -> {T} {{",
            op_line("y", forward, "%x", T),
            op_line("g", COPY, "%dy", T),
            op_line("dx", grad, f"{saved}, %g", T),
            f"  func.return %dx : {T}",
            "}",
        ]
    )


def emitted_c(text: str) -> str:
    """The model's C source, to check which buffers a kernel call overwrites."""
    module = parse_module(text, "test.mlir")
    return print_model(run_pipeline(module, "infer-shapes,bufferize,plan-memory")).source


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_in_place_on_large_inputs(name: str) -> None:
    """Each activation, writing over its operand, on inputs up to +-100 and both zeros."""
    forward, _, _, kernel = ACTIVATIONS[name]
    text = forward_ir(forward)
    assert f"ADIR_{kernel}(c, c, 35u" in emitted_c(text)
    check_c_against_interpreter(text, "f", [[activation_input()]])


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_gradient_in_place(name: str) -> None:
    """Each gradient op, with the forward op's own output or input as the saved value, writing
    over the saved output (relu, sigmoid, tanh) or over the adjoint (the others)."""
    forward, grad, reads_output, kernel = ACTIVATIONS[name]
    text = gradient_ir(forward, grad, reads_output)
    call = "y, g, y" if reads_output else "x, g, g"
    assert f"ADIR_{kernel}_GRAD({call}, 35u" in emitted_c(text)
    check_c_against_interpreter(text, "f", [[activation_input(), normal(5, 7)]])


@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((3, 4, 5), 0),
        ((3, 4, 5), 1),
        ((3, 4, 5), -1),
        ((2, 1, 3), 1),  # a slice of one element: softmax 1, log_softmax 0
        ((11,), 0),
    ],
    ids=str,
)
def test_softmax_and_log_softmax_along_axis(shape: tuple[int, ...], axis: int) -> None:
    """softmax, log_softmax and both gradients along one axis (any axis, strided when not the
    last), on logits of spread 30 so that most exps underflow and none overflows."""
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    a = f"{{axis = {axis} : i64}}"
    text = f"""
    func.func @f(%x: {t}, %dy: {t}) -> ({t}, {t}, {t}, {t}) {{
      %s = adir.softmax %x {a} : {t}
      %l = adir.log_softmax %x {a} : {t}
      %ds = adir.softmax_grad %s, %dy {a} : {t}
      %dl = adir.log_softmax_grad %l, %dy {a} : {t}
      func.return %s, %l, %ds, %dl : {t}, {t}, {t}, {t}
    }}"""
    x = 30 * normal(*shape)
    check_c_against_interpreter(text, "f", [[x, normal(*shape)]])


def test_log_softmax_of_huge_logits_is_finite() -> None:
    """Logits of +-1e4 (exp overflows without the max shift): log_softmax stays finite and its
    gradient exact, as the interpreter's."""
    t = "tensor<3x6xf32>"
    text = f"""
    func.func @f(%x: {t}, %dy: {t}) -> ({t}, {t}) {{
      %l = adir.log_softmax %x : {t}
      %dl = adir.log_softmax_grad %l, %dy : {t}
      func.return %l, %dl : {t}, {t}
    }}"""
    x = (1e4 * np.sign(normal(3, 6)) + normal(3, 6)).astype(np.float32)
    (log_probs, _) = check_c_against_interpreter(text, "f", [[x, normal(3, 6)]])
    assert np.isfinite(log_probs).all()


# Every kink of the clamps below and of hardswish / hardsigmoid, the float32 next to each on
# both sides, nan and the infinities: 3 x 7 + 7 = 28 elements.
KINKS = np.array([-3.0, -1.0, -0.0, 0.0, 2.5, 3.0, 6.0], np.float32)
CLAMP_INPUT = np.concatenate(
    [
        KINKS,
        np.nextafter(KINKS, np.float32(-np.inf)),
        np.nextafter(KINKS, np.float32(np.inf)),
        np.array([np.nan, np.inf, -np.inf, -100.0, 100.0, 0.5, -0.5], np.float32),
    ]
).reshape(4, 7)
C = "tensor<4x7xf32>"


@pytest.mark.parametrize("compiler", c_compilers())
def test_clamps_and_hard_activations_at_their_kinks(compiler: str) -> None:
    """clamp (ReLU6, hardtanh's gradient; torch.clamp's inclusive one; one bound only; min >
    max), hardswish, hardsigmoid and every gradient, at the kinks, beside them, at nan and
    +-inf: the C equals the interpreter bit for bit (nan where it has nan)."""
    bounds = [
        "{min = 0.0 : f32, max = 6.0 : f32}",
        "{min = -1.0 : f32, max = 2.5 : f32, inclusive}",
        "{min = -0.0 : f32}",
        "{max = 3.0 : f32, inclusive}",
        "{min = 3.0 : f32, max = -1.0 : f32, inclusive}",
    ]
    lines, results = [], []
    for i, props in enumerate(bounds):
        lines.append(f"  %y{i} = adir.clamp %x {props} : {C}")
        saved = "%x" if "inclusive" in props else f"%y{i}"
        lines.append(f"  %d{i} = adir.clamp_grad {saved}, %dy {props} : {C}")
        results += [f"%y{i}", f"%d{i}"]
    for op in ("hardswish", "hardsigmoid"):
        lines.append(f"  %{op} = adir.{op} %x : {C}")
        lines.append(f"  %{op}_grad = adir.{op}_grad %x, %dy : {C}")
        results += [f"%{op}", f"%{op}_grad"]
    types = ", ".join([C] * len(results))
    text = "\n".join(
        [
            f"func.func @f(%x: {C}, %dy: {C}) -> ({types}) {{",
            *lines,
            f"  func.return {', '.join(results)} : {types}",
            "}",
        ]
    )
    source = emitted_c(text)
    assert "ADIR_CLAMP_GRAD(" in source and "ADIR_CLAMP_INCLUSIVE_GRAD(" in source
    # A missing bound is an infinite one: {min = -0.0} is [-0.0, inf], {max = 3.0} [-inf, 3].
    assert "28u, -0.0f, INFINITY);" in source and "28u, -INFINITY, 3.0f);" in source
    outputs = check_c_against_interpreter(
        text, "f", [[CLAMP_INPUT, normal(4, 7)]], rtol=0.0, atol=0.0, compiler=compiler
    )
    relu6, relu6_grad = outputs[0].ravel(), outputs[1].ravel()
    x = CLAMP_INPUT.ravel()
    assert np.isnan(relu6[x != x]).all() and (relu6_grad[(x == 0) | (x == 6)] == 0).all()
