"""Parameter initializers: numpy (the interpreter) and C (`adir_init.h`) draw the same bits,
compiled several ways; the initializers have the ranges, moments and `torch.nn.init` bounds
they claim; they are deterministic and seed-dependent; the interpreter gives each parameter
its initializer's values. The generator itself is tested in test_prng.py.

Statistical thresholds are 5 standard errors of the statistic (stated at each check), on fixed
seeds, so the tests are deterministic and a correct initializer passes with any seed.
"""

from __future__ import annotations

import importlib.resources
import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from xdsl.parser import Parser

from adir.context import adir_context, parse_module
from adir.dialects.tensor import params as p
from adir.dialects.tensor.initializers import (
    FillInit,
    InitializerAttr,
    KaimingUniformInit,
    NormalInit,
    UniformInit,
    XavierUniformInit,
    ZerosInit,
)
from adir.interpreter import Session, prng
from adir.interpreter.initializers import sample, symmetric_bound

RUNTIME = Path(str(importlib.resources.files("adir.backends.c") / "runtime"))
HEADER = RUNTIME / "adir_init.h"
HARNESS = Path(__file__).with_name("init_harness.c")
WARNINGS = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]
SQRT5 = math.sqrt(5.0)


def initializer(text: str) -> InitializerAttr:
    attr = Parser(adir_context(), text).parse_attribute()
    assert isinstance(attr, InitializerAttr), attr
    return attr


def c_compiler() -> str:
    for name in (os.environ.get("CC"), "gcc", "cc", "clang"):
        if name and (path := shutil.which(name)):
            return path
    pytest.skip("no C compiler found")


def bits(values: np.ndarray) -> np.ndarray:
    """The bit patterns of float32/float64 values (uint64 stays as it is)."""
    width = {4: np.uint32, 8: np.uint64}[values.dtype.itemsize]
    return np.ascontiguousarray(values).view(width)


def assert_same_bits(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    differ = np.flatnonzero(bits(actual) != bits(expected))
    assert differ.size == 0, (
        f"{what}: {differ.size} of {expected.size} values differ, first at {differ[0]}: "
        f"{actual.flat[differ[0]]!r} != {expected.flat[differ[0]]!r}"
    )


# --- C and numpy draw the same bits --------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    command: str  # one harness command (see init_harness.c)
    expected: np.ndarray  # numpy's values, in the harness's output type


def f32_hex(value: float | np.floating) -> str:
    return f"{int(np.float32(value).view(np.uint32)):x}"


def fill_command(init: InitializerAttr, shape: tuple[int, ...]) -> str:
    """The harness command for an initializer, with the float32 arguments the C backend gets."""
    n = f"{math.prod(shape):x}"
    if isinstance(init, ZerosInit):
        return f"zeros {n}"
    if isinstance(init, FillInit):
        return f"fill {n} {f32_hex(init.value.data)}"
    seed = f"{init.seed.data:x}"
    if isinstance(init, UniformInit):
        return f"uniform_init {n} {f32_hex(init.low.data)} {f32_hex(init.high.data)} {seed}"
    if isinstance(init, NormalInit):
        return f"normal_init {n} {f32_hex(init.mean.data)} {f32_hex(init.std.data)} {seed}"
    assert isinstance(init, KaimingUniformInit | XavierUniformInit)
    kind = init.name.removeprefix("adir.")
    return f"{kind} {n} {f32_hex(symmetric_bound(init, shape))} {seed}"


FILLS = [
    ("#adir.zeros", (3,)),
    ("#adir.fill<value = 0.1>", (7, 5)),
    ("#adir.uniform<low = -0.1, high = 0.1, seed = 7>", (100_000,)),
    ("#adir.uniform<seed = 0>", (13,)),
    ("#adir.uniform<low = -3.5, high = 0.001, seed = 18446744073709551615>", (4, 25)),
    ("#adir.normal<mean = 1.0, std = 0.02, seed = 3>", (100_000,)),
    ("#adir.normal<seed = 0>", (64,)),
    ("#adir.normal<mean = -2.5, std = 3.0, seed = 11>", (10, 10, 10)),
    ("#adir.kaiming_uniform<a = 2.23606797749979, seed = 1>", (32, 784)),
    ("#adir.kaiming_uniform<a = 2.23606797749979, seed = 2>", (100, 1000)),
    ("#adir.kaiming_uniform<mode = fan_out, seed = 4>", (6, 1, 5, 5)),
    ("#adir.kaiming_uniform<seed = 0>", (16, 3, 3, 3)),
    ("#adir.xavier_uniform<seed = 5>", (10, 32)),
    ("#adir.xavier_uniform<gain = 2.0, seed = 6>", (8, 4, 3, 3)),
    ("#adir.xavier_uniform<seed = 8>", (250, 400)),
]


def hex_list(values: np.ndarray) -> str:
    return " ".join(f"{int(v):x}" for v in values)


def build_cases() -> list[Case]:
    rng = np.random.default_rng(4)
    cases: list[Case] = []
    for seed in (0, 1, 42, 2**64 - 1):
        for start, count in ((0, 1000), (2**40, 10)):
            index = np.arange(start, start + count, dtype=np.uint64)
            command = f"{seed:x} {start:x} {count:x}"
            cases.append(Case(f"u64-{seed}-{start}", f"u64 {command}", prng.raw(seed, index)))
            cases.append(
                Case(f"uniform-{seed}-{start}", f"uniform {command}", prng.uniform(seed, index))
            )
            cases.append(
                Case(f"normal-{seed}-{start}", f"normal {command}", prng.normal(seed, index))
            )
    u = (rng.integers(0, 2**53, 20_000, dtype=np.uint64) + np.uint64(1)).astype(np.float64)
    ln_inputs = np.concatenate(
        [u * 2.0**-53, np.exp(rng.uniform(-700, 700, 5000)), [1.0, prng.SQRT2, 2.0**-53]]
    )
    sqrt_inputs = np.concatenate(
        [rng.uniform(0, 80, 20_000), np.exp(rng.uniform(-700, 700, 5000)), [0.0, 1.0, 2.0]]
    )
    k = np.concatenate(
        [
            rng.integers(0, 2**53, 20_000, dtype=np.uint64),
            np.array([0, 1, 2**50 - 1, 2**50, 2**51, 3 * 2**51 + 1, 2**53 - 1], np.uint64),
        ]
    )
    for name, values, expected in (
        ("ln", bits(ln_inputs), prng.ln(ln_inputs)),
        ("sqrt", bits(sqrt_inputs), prng.sqrt(sqrt_inputs)),
        ("cos_turn", k, prng.cos_turn(k)),
    ):
        cases.append(Case(name, f"{name} {values.size:x} {hex_list(values)}", expected))
    for text, shape in FILLS:
        init = initializer(text)
        cases.append(Case(f"{text}{shape}", fill_command(init, shape), sample(init, shape).ravel()))
    return cases


CASES = build_cases()

# Compiler flags: the documented ones; -O3 with every instruction this machine has (FMA
# included); and GNU C with GCC's default -ffp-contract=fast, where the header itself must keep
# products and sums apart.
C_BUILDS = {
    "c99-O2": ["-std=c99", "-O2", "-ffp-contract=off"],
    "c99-O3-native": ["-std=c99", "-O3", "-march=native", "-ffp-contract=off"],
    "gnu99-O3-native-default-contraction": ["-std=gnu99", "-O3", "-march=native"],
    "c99-O0": ["-std=c99", "-O0"],
}


def run_harness(flags: list[str], directory: Path) -> dict[str, np.ndarray]:
    executable = directory / "init_harness"
    compile_command = [c_compiler(), *flags, *WARNINGS, f"-I{RUNTIME}", str(HARNESS)]
    subprocess.run([*compile_command, "-o", str(executable)], check=True)
    output = directory / "values.bin"
    commands = "\n".join(case.command for case in CASES) + "\n"
    subprocess.run([str(executable), str(output)], input=commands.encode(), check=True)
    data = output.read_bytes()
    results, offset = {}, 0
    for case in CASES:
        size = case.expected.nbytes
        chunk = np.frombuffer(data[offset : offset + size], dtype=case.expected.dtype)
        results[case.name], offset = chunk, offset + size
    assert offset == len(data), f"the harness wrote {len(data)} bytes, expected {offset}"
    return results


@pytest.fixture(scope="module", params=list(C_BUILDS))
def c_values(request, tmp_path_factory) -> dict[str, np.ndarray]:
    directory = tmp_path_factory.mktemp(request.param)
    return run_harness(C_BUILDS[request.param], directory)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_c_matches_numpy(c_values: dict[str, np.ndarray], case: Case) -> None:
    assert_same_bits(c_values[case.name], case.expected, case.name)


def test_header_is_strict_c99_without_libm(tmp_path: Path) -> None:
    source = tmp_path / "only_header.c"
    source.write_text('#include "adir_init.h"\n')
    extra = ["-Wconversion", "-Wshadow", "-Wdouble-promotion", "-Wundef", "-Wcast-qual"]
    command = [c_compiler(), "-std=c99", *WARNINGS, *extra, f"-I{RUNTIME}", "-c", str(source)]
    subprocess.run([*command, "-o", str(tmp_path / "only_header.o")], check=True)
    includes = re.findall(r"^#include <([^>]+)>", HEADER.read_text(), flags=re.MULTILINE)
    assert set(includes) == {"stdint.h", "string.h"}


def test_header_refuses_fast_math(tmp_path: Path) -> None:
    source = tmp_path / "fast.c"
    source.write_text('#include "adir_init.h"\n')
    command = [c_compiler(), "-std=c99", "-ffast-math", f"-I{RUNTIME}", "-c", str(source)]
    result = subprocess.run([*command, "-o", str(tmp_path / "fast.o")], capture_output=True)
    assert result.returncode != 0
    assert b"-ffast-math changes floating-point results" in result.stderr


# --- ranges and moments --------------------------------------------------------------------------

N = 1_000_000


def test_normal_initializer_scales_and_shifts() -> None:
    w = sample(initializer("#adir.normal<mean = 1.0, std = 0.02, seed = 3>"), (N,))
    assert w.dtype == np.float32
    # Standard errors: mean 0.02/sqrt(n) = 2e-5; std 0.02/sqrt(2n) = 1.4e-5.
    assert abs(float(w.mean(dtype=np.float64)) - 1.0) < 5 * 2e-5
    assert abs(float(w.std(dtype=np.float64)) - 0.02) < 5 * 1.4e-5


def test_uniform_initializer_stays_in_its_range() -> None:
    w = sample(initializer("#adir.uniform<low = -2.0, high = 3.0, seed = 12>"), (N,))
    assert w.min() >= -2.0 and w.max() < 3.0
    # U(-2, 3): mean 0.5 with sd 5/sqrt(12 n) = 1.44e-3; variance 25/12.
    assert abs(float(w.mean(dtype=np.float64)) - 0.5) < 5 * 1.44e-3
    assert abs(float(w.var(dtype=np.float64)) - 25 / 12) < 5 * 25 * 7.5e-5


# --- kaiming and xavier bounds are torch.nn.init's -----------------------------------------------


def torch_kaiming_bound(shape: tuple[int, ...], a: float, mode: str) -> float:
    """The bound exactly as `torch.nn.init.kaiming_uniform_` computes it."""
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), mode)
    std = torch.nn.init.calculate_gain("leaky_relu", a) / math.sqrt(fan)
    return math.sqrt(3.0) * std


def torch_xavier_bound(shape: tuple[int, ...], gain: float) -> float:
    """The bound exactly as `torch.nn.init.xavier_uniform_` computes it."""
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    return math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))


def assert_fills_the_bound(values: np.ndarray, bound: float) -> None:
    """Every |value| within the bound and the largest close to it; variance bound^2 / 3."""
    n = values.size
    largest = float(np.abs(values).max())
    assert largest <= bound * (1 + 1e-6)
    # P(all n draws of U(-b, b) have |v| < b (1 - 12/n)) = (1 - 12/n)^n < e^-12 = 6e-6.
    assert largest >= bound * (1 - 12 / n)
    # Variance of U(-b, b) is b^2/3; the sample variance's relative standard error is
    # sqrt(0.8 / n) (mu4 = b^4 / 5).
    ratio = float(np.var(values, dtype=np.float64)) / (bound**2 / 3)
    assert abs(ratio - 1) < 5 * math.sqrt(0.8 / n)


KAIMING_CASES = [
    ((32, 784), SQRT5, "fan_in"),  # nn.Linear(784, 32)
    ((10, 32), SQRT5, "fan_in"),
    ((6, 1, 5, 5), SQRT5, "fan_in"),  # nn.Conv2d(1, 6, 5)
    ((16, 6, 5, 5), 0.0, "fan_in"),
    ((16, 6, 5, 5), 0.0, "fan_out"),
    ((64, 128), 0.01, "fan_out"),
]


@pytest.mark.parametrize(("shape", "a", "mode"), KAIMING_CASES, ids=str)
def test_kaiming_uniform_bound_is_torchs(shape: tuple[int, ...], a: float, mode: str) -> None:
    init = initializer(f"#adir.kaiming_uniform<a = {a!r}, mode = {mode}, seed = 3>")
    expected = torch_kaiming_bound(shape, a, mode)
    assert init.bound(shape) == pytest.approx(expected, rel=1e-15)
    assert_fills_the_bound(sample(init, shape), expected)
    torch.manual_seed(0)
    reference = torch.nn.init.kaiming_uniform_(torch.empty(shape), a=a, mode=mode)
    assert_fills_the_bound(reference.numpy(), expected)


def test_a_sqrt5_is_what_linear_and_conv2d_layers_use() -> None:
    # kaiming_uniform with a = sqrt(5) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    init = initializer("#adir.kaiming_uniform<a = 2.23606797749979, seed = 1>")
    for layer, fan_in in ((torch.nn.Linear(784, 32), 784), (torch.nn.Conv2d(3, 6, 5), 75)):
        shape = tuple(layer.weight.shape)
        assert init.bound(shape) == pytest.approx(1 / math.sqrt(fan_in), rel=1e-15)
        assert float(layer.weight.detach().abs().max()) <= init.bound(shape) * (1 + 1e-6)


XAVIER_CASES = [((10, 32), 1.0), ((32, 784), 1.0), ((8, 4, 3, 3), 2.0), ((16, 6, 5, 5), 0.5)]


@pytest.mark.parametrize(("shape", "gain"), XAVIER_CASES, ids=str)
def test_xavier_uniform_bound_is_torchs(shape: tuple[int, ...], gain: float) -> None:
    init = initializer(f"#adir.xavier_uniform<gain = {gain!r}, seed = 9>")
    expected = torch_xavier_bound(shape, gain)
    assert init.bound(shape) == pytest.approx(expected, rel=1e-15)
    assert_fills_the_bound(sample(init, shape), expected)
    torch.manual_seed(0)
    reference = torch.nn.init.xavier_uniform_(torch.empty(shape), gain=gain)
    assert_fills_the_bound(reference.numpy(), expected)


def test_symmetric_draws_never_reach_the_float32_bound() -> None:
    init = initializer("#adir.xavier_uniform<seed = 8>")
    values = sample(init, (250, 400))
    bound = symmetric_bound(init, (250, 400))
    assert values.min() >= -bound and values.max() < bound


# --- determinism and seeds -----------------------------------------------------------------------


@pytest.mark.parametrize("text", [text for text, _ in FILLS], ids=str)
def test_drawing_twice_gives_the_same_bits(text: str) -> None:
    init = initializer(text)
    assert_same_bits(sample(init, (40, 25)), sample(initializer(text), (40, 25)), text)


def test_shape_only_decides_how_the_draws_are_laid_out() -> None:
    # Element i draws from counter i (row-major), so a uniform's values do not depend on shape.
    init = initializer("#adir.uniform<low = -1.0, high = 1.0, seed = 2>")
    assert_same_bits(sample(init, (4, 5, 6)), sample(init, (120,)).reshape(4, 5, 6), "reshape")


@pytest.mark.parametrize("kind", ["uniform", "normal", "kaiming_uniform", "xavier_uniform"])
def test_different_seeds_give_different_values(kind: str) -> None:
    a = sample(initializer(f"#adir.{kind}<seed = 1>"), (100, 100))
    b = sample(initializer(f"#adir.{kind}<seed = 2>"), (100, 100))
    # Independent 24-bit draws coincide with probability 2^-24 each: 6e-4 expected in 1e4.
    assert np.count_nonzero(a == b) <= 2


# --- the interpreter gives each parameter its initializer's values -------------------------------

MODULE = """
adir.param @zeros : tensor<3xf32> = #adir.zeros
adir.param @constant : tensor<2x2xf32> = #adir.fill<value = 0.25>
adir.param @uniform : tensor<5x4xf32> = #adir.uniform<low = -0.5, high = 0.5, seed = 7>
adir.param @normal : tensor<6xf32> = #adir.normal<mean = 1.0, std = 0.1, seed = 3>
adir.param @kaiming : tensor<8x6xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @xavier : tensor<4x3x2x2xf32> = #adir.xavier_uniform<seed = 5>
adir.param @dense : tensor<2xf32> = dense<[1.5, -2.0]> : tensor<2xf32>
adir.param @empty : tensor<0x4xf32> = #adir.kaiming_uniform<seed = 1>
func.func @step(%x: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %w = adir.load @uniform : tensor<5x4xf32>
  %next = adir.add %w, %x : tensor<5x4xf32>
  adir.store %next, @uniform : tensor<5x4xf32>
  func.return %w : tensor<5x4xf32>
}
"""


@pytest.mark.parametrize("float_dtype", [np.float32, np.float64])
def test_session_gives_each_param_its_initial_value(float_dtype) -> None:
    module = parse_module(MODULE, "params.mlir")
    module.verify()
    session = Session(module, float_dtype)
    params = [op for op in module.ops if isinstance(op, p.ParamOp)]
    assert set(session.params) == {op.sym_name.data for op in params}
    for op in params:
        name, shape = op.sym_name.data, tuple(op.type.get_shape())
        if isinstance(op.initial_value, InitializerAttr):
            expected = sample(op.initial_value, shape)
        else:
            expected = np.array([1.5, -2.0], np.float32)  # @dense
        # Draws are float32 (the bits C reproduces); a float64 session holds them widened.
        value = session.params[name]
        assert value.dtype == float_dtype
        assert_same_bits(value, expected.astype(float_dtype), name)


def test_loads_see_stores_and_keep_their_value() -> None:
    session = Session(parse_module(MODULE, "params.mlir"))
    initial = session.params["uniform"].copy()
    x = np.ones((5, 4), np.float32)
    (first,) = session.call("step", x)
    (second,) = session.call("step", x)
    # The first call returns the initial value although it then stored a new one; the second
    # call loads what the first stored.
    assert_same_bits(first, initial, "first load")
    assert_same_bits(second, initial + x, "second load")
    assert_same_bits(session.params["uniform"], (initial + x) + x, "after two steps")
