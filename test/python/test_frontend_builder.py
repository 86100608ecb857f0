"""The Python model builder (`adir.frontends.builder`): it reproduces the seed model, builds
models that compute what PyTorch computes, and reports shape mistakes at the Python line."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from xdsl.dialects.builtin import FileLineColLoc

from adir.context import adir_context, parse_module
from adir.dialects.tensor.activations import ReluOp
from adir.dialects.tensor.initializers import KaimingUniformInit
from adir.dialects.tensor.params import ParamOp
from adir.frontends.builder import (
    BuildError,
    ModelBuilder,
    dialect_ops,
    fill,
    kaiming_uniform,
    module_to_text,
    normal,
)
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass

EXAMPLE = Path(__file__).parents[2] / "examples" / "mnist_mlp.mlir"
SEED_INPUTS = [("x", (1, 784), "f32"), ("label", (1,), "i32")]


def seed_mlp(names: bool, activation: str = "sigmoid") -> ModelBuilder:
    """examples/mnist_mlp.mlir with the builder (SSA names as in the file if `names`)."""
    b = ModelBuilder()
    w1 = b.param("w1", (32, 784), init=kaiming_uniform(a=math.sqrt(5)))
    w2 = b.param("w2", (10, 32), init=kaiming_uniform(a=math.sqrt(5)))

    def name(text: str) -> str | None:
        return text if names else None

    with b.function("loss", SEED_INPUTS, loss=True) as (x, label):
        h = b.matmul(x, w1, transpose_b=True, name=name("h"))
        a = getattr(b, activation)(h, name=name("a"))
        logits = b.matmul(a, w2, transpose_b=True, name=name("logits"))
        logp = b.log_softmax(logits, name=name("logp"))
        b.ret(b.nll(logp, label, name=name("loss")))
    return b


def example(activation: str = "sigmoid"):
    text = EXAMPLE.read_text().replace("adir.sigmoid", f"adir.{activation}")
    module = parse_module(text, str(EXAMPLE))
    module.verify()
    return module


def digits(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        (rng.random((1, 784), dtype=np.float32), rng.integers(0, 10, (1,)).astype(np.int32))
        for _ in range(count)
    ]


def test_seed_mlp_prints_exactly_as_the_example() -> None:
    """Same params (seeds 1 and 2 given by the builder), ops, types and SSA names."""
    assert seed_mlp(names=True).module_to_text() == module_to_text(example())


@pytest.mark.parametrize("activation", ["sigmoid", "relu"])
def test_mlp_computes_the_examples_loss(activation: str) -> None:
    """Without SSA names the IR differs only in names, so the loss is bit for bit the one of
    the example (with its sigmoid replaced by relu for the relu MLP)."""
    built = Session(seed_mlp(names=False, activation=activation).build())
    reference = Session(example(activation))
    for x, label in digits(3, seed=0):
        (loss,) = built.call("loss", x, label)
        (expected,) = reference.call("loss", x, label)
        assert loss.item() == expected.item()


def relu_mlp_with_biases(weights: dict[str, np.ndarray]) -> ModelBuilder:
    """784-64-32-10 relu MLP with biases, given weights as dense data, cross-entropy loss."""
    b = ModelBuilder()
    params = {name: b.param(name, value.shape, init=value) for name, value in weights.items()}
    with b.function("loss", [("x", (4, 784)), ("label", (4,), "i32")], loss=True) as (x, label):
        h = x
        for layer in (1, 2, 3):
            h = b.linear(h, params[f"w{layer}"], params[f"b{layer}"])
            h = b.relu(h) if layer < 3 else h
        b.ret(b.cross_entropy(h, label))
    return b


def test_relu_mlp_with_biases_gives_torchs_loss_and_gradients() -> None:
    """Weights given as numpy arrays become the params' values; loss to 1e-6 relative and the
    autodiff gradients to 1e-5 relative (float32 rounding through three layers is far below)."""
    rng = np.random.default_rng(1)
    sizes = [(64, 784), (32, 64), (10, 32)]
    weights: dict[str, np.ndarray] = {}
    for layer, (out, fan_in) in enumerate(sizes, 1):
        bound = 1 / math.sqrt(fan_in)
        weights[f"w{layer}"] = rng.uniform(-bound, bound, (out, fan_in)).astype(np.float32)
        weights[f"b{layer}"] = rng.uniform(-bound, bound, (out,)).astype(np.float32)
    module = relu_mlp_with_biases(weights).build()
    AutodiffPass().apply(adir_context(), module)
    module.verify()
    session = Session(module)
    for name, value in weights.items():
        assert np.array_equal(session.params[name], value)
    x = rng.random((4, 784), dtype=np.float32)
    label = rng.integers(0, 10, (4,)).astype(np.int32)
    loss, *grads = session.call("loss_grad", x, label)

    tensors = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    h = torch.from_numpy(x)
    for layer in (1, 2, 3):
        h = F.linear(h, tensors[f"w{layer}"], tensors[f"b{layer}"])
        h = torch.relu(h) if layer < 3 else h
    expected = F.cross_entropy(h, torch.from_numpy(label).long())
    expected.backward()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    for grad, name in zip(grads, weights, strict=True):
        reference = tensors[name].grad.numpy()
        np.testing.assert_allclose(grad, reference, rtol=1e-5, atol=1e-5 * np.abs(reference).max())


# --- mistakes are reported at the Python line that made them --------------------------------


def test_shape_mistake_names_the_op_the_numbers_and_the_call_site() -> None:
    b = ModelBuilder()
    w2 = b.param("w2", (10, 32), init=kaiming_uniform())
    with pytest.raises(BuildError) as caught, b.function("f", [("x", (1, 784))]) as (x,):
        line = inspect.currentframe().f_lineno + 1
        b.matmul(x, w2, transpose_b=True)  # x has 784 columns, w2^T 32 rows
    error = caught.value
    assert error.message == "adir.matmul: inner dimensions 784 and 32 do not match"
    assert (error.site.filename, error.site.line) == (__file__, line)
    assert str(error).splitlines() == [
        f"{__file__}:{line}: adir.matmul: inner dimensions 784 and 32 do not match",
        "    b.matmul(x, w2, transpose_b=True)  # x has 784 columns, w2^T 32 rows",
    ]


def test_broadcast_mistake_is_a_build_error() -> None:
    b = ModelBuilder()
    bias = b.param("b", (10,), init=0.0)
    with pytest.raises(BuildError, match=r"adir.add: operands lhs \(1x32\) and rhs \(10\) do"):
        with b.function("f", [("h", (1, 32))]) as (h,):
            b.add(h, bias)


def test_operand_of_the_wrong_element_type_is_a_build_error() -> None:
    b = ModelBuilder()
    with pytest.raises(BuildError, match=r"^.*test_frontend_builder.py:\d+: adir.relu: "):
        with b.function("f", [("label", (4,), "i32")]) as (label,):
            b.relu(label)


def test_failed_op_leaves_no_trace_in_the_ir() -> None:
    """The op that did not build is not in the block and is not a user of its operands."""
    b = ModelBuilder()
    with b.function("f", [("x", (2, 3))]) as (x,):
        with pytest.raises(BuildError):
            b.matmul(x, x)
        assert not list(x.uses)
        b.ret(b.matmul(x, x, transpose_b=True))
    assert [op.name for op in b.build().walk()][-2:] == ["adir.matmul", "func.return"]


def test_loss_function_must_return_one_scalar() -> None:
    b = ModelBuilder()
    with pytest.raises(BuildError, match="returns one tensor<f32>, got tensor<1x10xf32>"):
        with b.function("loss", [("x", (1, 10))], loss=True) as (x,):
            b.ret(b.log_softmax(x))


def test_function_without_return_is_an_error_and_is_not_kept() -> None:
    b = ModelBuilder()
    with pytest.raises(BuildError, match="@f ends without a return"):
        with b.function("f", [("x", (2,))]) as (x,):
            b.relu(x)
    assert list(b.module.ops) == []


def test_ops_outside_a_function_and_wrong_arguments_are_build_errors() -> None:
    b = ModelBuilder()
    with pytest.raises(BuildError, match=r"adir\.relu: ops are built inside a function"):
        b.relu(1.0)
    with pytest.raises(BuildError, match=r"adir.matmul\(lhs: 'SSAValue', rhs: .*transpose"):
        with b.function("f", [("x", (2, 2))]) as (x,):
            b.matmul(x, x, transpose=True)


def test_param_mistakes_are_build_errors() -> None:
    b = ModelBuilder()
    b.param("w", (2, 3), init=0.0)
    with pytest.raises(BuildError, match="@w is already defined"):
        b.param("w", (2, 3), init=0.0)
    with pytest.raises(
        BuildError, match=r"initial data of shape \[3, 2\] does not match .*\[2, 3\]"
    ):
        b.param("v", (2, 3), init=np.zeros((3, 2)))
    with pytest.raises(BuildError, match=r"adir\.kaiming_uniform needs a tensor of rank 2 or more"):
        b.param("b", (3,), init=kaiming_uniform())
    with pytest.raises(BuildError, match="mode 'fan' must be fan_in or fan_out"):
        b.param("u", (3, 3), init=kaiming_uniform(mode="fan"))


# --- the API --------------------------------------------------------------------------------


def test_every_op_of_the_dialect_is_a_builder_method() -> None:
    b = ModelBuilder()
    ops = dialect_ops()
    assert {"matmul", "cross_entropy", "sum", "relu_grad", "lr_schedule"} <= set(ops)
    assert set(ops) <= set(dir(b))
    with pytest.raises(AttributeError, match=r"the adir dialect has no op adir\.fancy"):
        b.fancy  # noqa: B018


def test_conv_and_normalization_ops_are_builder_methods_too() -> None:
    """Ops of the families written after the builder need no code in it: b.conv2d with its
    optional bias left out, b.maxpool2d, and b.batchnorm's five results as a tuple; a channel
    mistake is a build error at its line."""
    b = ModelBuilder()
    w = b.param("w", (4, 1, 3, 3), init=kaiming_uniform(a=math.sqrt(5)))
    gamma, beta = b.param("gamma", (4,), init=1.0), b.param("beta", (4,), init=0.0)
    mean = b.param("mean", (4,), init=0.0, trainable=False)
    var = b.param("var", (4,), init=1.0, trainable=False)
    with b.function("f", [("x", (2, 1, 8, 8))]) as (x,):
        y = b.conv2d(x, w, padding=1)
        normalized, _, _, new_mean, new_var = b.batchnorm(y, gamma, beta, mean, var)
        b.store(new_mean, mean)
        b.store(new_var, var)
        b.ret(b.maxpool2d(normalized, 2))
    (pooled,) = Session(b.build()).call("f", np.ones((2, 1, 8, 8), np.float32))
    assert pooled.shape == (2, 4, 4, 4)
    with pytest.raises(BuildError, match=r"adir\.conv2d: .*\n    b\.conv2d\(y, w\)"):
        with b.function("g", [("y", (2, 3, 8, 8))]) as (y,):
            b.conv2d(y, w)


def test_generic_op_builds_any_op_class_and_names_results() -> None:
    b = ModelBuilder()
    with b.function("f", [("x", (2, 3))]) as (x,):
        y = b.op(ReluOp, x, name="y")
        b.ret(y)
    assert "%y = adir.relu %x : tensor<2x3xf32>" in b.module_to_text()


def test_initializers_seeds_and_frozen_params() -> None:
    """Seeds count up from 1 for initializers that name none; an explicit seed and an
    attribute instance are kept; a number is a fill; trainable=False freezes."""
    b = ModelBuilder()
    b.param("a", (2, 2), init=kaiming_uniform())
    b.param("b", (2, 2), init=normal(std=0.5, seed=7))
    b.param("c", (2, 2), init=kaiming_uniform())
    attribute = kaiming_uniform(seed=9).attr()
    assert isinstance(attribute, KaimingUniformInit)
    b.param("d", (2, 2), init=attribute)
    b.param("e", (2,), init=0.5, trainable=False)
    b.param("f", (2,), init=fill(2.0))
    text = b.module_to_text()
    for line in [
        "adir.param @a : tensor<2x2xf32> = #adir.kaiming_uniform<seed = 1>",
        "adir.param @b : tensor<2x2xf32> = #adir.normal<std = 0.5, seed = 7>",
        "adir.param @c : tensor<2x2xf32> = #adir.kaiming_uniform<seed = 2>",
        "adir.param @d : tensor<2x2xf32> = #adir.kaiming_uniform<seed = 9>",
        "adir.param @e : tensor<2xf32> = #adir.fill<value = 0.5> {trainable = false}",
        "adir.param @f : tensor<2xf32> = #adir.fill<value = 2.0>",
    ]:
        assert line in text


def test_numbers_are_constants_made_once_per_function() -> None:
    b = ModelBuilder()
    with b.function("f", [("x", (3,))]) as (x,):
        b.ret(b.mul(b.add(x, 1.0), 1.0))
    text = b.module_to_text()
    assert text.count("adir.constant dense<1.000000e+00> : tensor<f32>") == 1
    (y,) = Session(b.build()).call("f", np.array([1.0, 2.0, 3.0], np.float32))
    np.testing.assert_array_equal(y, [2.0, 3.0, 4.0])


def test_callable_form_loads_params_where_used_and_stores() -> None:
    """`b.function(...)(body)`; a Param operand is loaded once, and again after a store."""
    b = ModelBuilder()
    w = b.param("w", (3,), init=np.array([1.0, 2.0, 3.0]))

    def step(x):
        b.store(b.add(w, x), w)
        return b.mul(w, w)

    b.function("step", [("x", (3,))])(step)
    assert b.module_to_text().count("adir.load @w") == 2
    session = Session(b.build())
    (y,) = session.call("step", np.ones(3, np.float32))
    np.testing.assert_array_equal(y, [4.0, 9.0, 16.0])
    np.testing.assert_array_equal(session.params["w"], [2.0, 3.0, 4.0])


def test_ops_are_located_at_the_python_line_that_built_them() -> None:
    b = ModelBuilder()
    with b.function("f", [("x", (2,))]) as (x,):
        line = inspect.currentframe().f_lineno + 1
        y = b.relu(x)
        b.ret(y)
    location = y.owner.location
    assert isinstance(location, FileLineColLoc)
    assert (location.filename.data, location.line.data) == (__file__, line)


def test_array_data_round_trips_through_text_bit_for_bit() -> None:
    """More than 100 values print as hex, fewer as a decimal list; both parse back to the same
    bits (-0.0, denormals and the largest float included; inf and nan only in hex, see
    `dense_data.py`)."""
    finite = np.array([0.0, -0.0, 1e-45, -3.4028235e38, 0.1], np.float32)
    special = np.array([np.inf, -np.inf, np.nan], np.float32)
    rng = np.random.default_rng(5)
    big = np.concatenate([finite, special, rng.standard_normal(199).astype(np.float32)])
    b = ModelBuilder()
    b.param("big", (9, 23), init=big.reshape(9, 23))
    b.param("small", finite.shape, init=finite)
    text = b.module_to_text()
    assert 'adir.param @big : tensor<9x23xf32> = dense<"0x' in text
    assert "adir.param @small : tensor<5xf32> = dense<[0.000000e+00, -0.000000e+00, " in text
    params = Session(parse_module(text)).params
    assert params["big"].tobytes() == big.tobytes()
    assert params["small"].tobytes() == finite.tobytes()


def test_params_precede_functions_whatever_the_order_of_declaration() -> None:
    b = ModelBuilder()
    with b.function("f", [("x", (2,))]) as (x,):
        b.ret(x)
    b.param("late", (2,), init=0.0)
    assert isinstance(next(iter(b.build().ops)), ParamOp)
