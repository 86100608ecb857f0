"""The normalization family in the interpreter equals PyTorch: batchnorm in training mode
(output, batch statistics and the running-statistics update, over several steps against
torch.nn.BatchNorm2d) and in eval mode, and dropout against a reference with the same mask.

Batchnorm error bound. The reference is PyTorch in float64 on the same inputs; the interpreter
runs in float32 (u = 2^-24) or float64 (u = 2^-53). Both follow the two-pass algorithm, whose
rounding errors are bounded to first order in u per channel of M values as follows (gamma_k =
k u / (1 - k u); Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4 for a
sum in any order, section 2.2 for one operation):

- mean: M - 1 additions and a division: `e_mean = gamma_M sum|x| / M`.
- biased variance: each `(x - mean)^2` is 3 roundings, the sum of M non-negative terms M - 1
  more, the division one: `gamma_{M+3} v` relative; the error of the mean adds `e_mean^2`,
  since `sum (x - m')^2 = M v + M (m - m')^2`. A one-pass (Welford) variance, which PyTorch may
  use, has error about `M u sqrt(v (v + m^2))` (Chan, Golub & LeVeque, 1983); both are within
  `e_var = gamma_{M+3} sum(x^2) / M + e_mean^2`. The unbiased variance is the same sum divided
  by M - 1: `e_var M / (M - 1)`.
- `invstd = 1 / sqrt(var + eps)`: half the relative error of `var + eps` (which adds one
  rounding) plus the roundings of sqrt and of the reciprocal.
- `scale = gamma * invstd`, and the output: PyTorch's `y = x * scale + shift` with
  `shift = beta - mean * scale`, ours `y = (x - mean) * scale + beta`
  (adir/interpreter/normalization.py says why): the errors of the factors carried through,
  plus one rounding of each difference, product and sum, bounded by the magnitudes of its
  operands (`|a + b|` by `|a| + |b|`, where PyTorch's order of operations may differ from
  ours); the larger of the two forms' bounds.
- `new = momentum * stat + (1 - momentum) * running`: the error of the statistic times
  momentum, a rounding of `1 - momentum`, of each product and of the sum; and over several
  steps, the previous step's error of `running` times `1 - momentum`.

Each result is compared within the sum of the bound at the interpreter's u and at float64's
(PyTorch's side), evaluated on the float64 values; second-order terms (below 1e-10 relative
here) are left out. The momentum and eps given to PyTorch are the float32 values the ops hold.

Dropout cannot be compared with PyTorch's, whose mask comes from its own generator: the
reference multiplies by the mask the specification (adir/interpreter/prng.py and
`adir.dropout`'s docstring) gives, computed here from a plain-Python SplitMix64, and the
results must agree bit for bit. PyTorch checks the scaling of the kept elements (also bit for
bit) and the special values; the mask's statistics are checked against the binomial
distribution.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import interpret, tensor_type

from adir.context import parse_module
from adir.interpreter import Session

F = torch.nn.functional

U = {np.float32: 2.0**-24, np.float64: 2.0**-53}
DTYPES = [np.float32, np.float64]


def f32(value: float) -> float:
    """The value a float32 property holds."""
    return float(np.float32(value))


def gamma_(k: int, u: float) -> float:
    return k * u / (1 - k * u)


# --- batchnorm error bounds (see the module docstring) -------------------------------------


def _channels(v: np.ndarray, ndim: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def batch_stats_errors(x: np.ndarray, u: float) -> dict[str, np.ndarray]:
    """Per-channel magnitudes and error bounds of the batch statistics of x (float64)."""
    axes = (0, *range(2, x.ndim))
    count = x.size // x.shape[1]
    mean = x.mean(axis=axes)
    var = np.square(x - _channels(mean, x.ndim)).mean(axis=axes)
    e_mean = gamma_(count, u) * np.abs(x).sum(axis=axes) / count
    e_var = gamma_(count + 3, u) * np.square(x).sum(axis=axes) / count + e_mean**2
    return {"count": count, "mean": mean, "var": var, "e_mean": e_mean, "e_var": e_var}


def affine_error(x, gamma, beta, mean, var, e_mean, e_var, eps: float, u: float) -> np.ndarray:
    """Bound on the error of the output with `scale = gamma / sqrt(var + eps)`, given errors of
    mean and var (per channel): the larger of the bounds of `x * scale + shift` with
    `shift = beta - mean * scale` (PyTorch's) and of `(x - mean) * scale + beta` (ours)."""
    r = 1 / np.sqrt(var + eps)
    e_r = r * (0.5 * (e_var + u * (var + eps)) / (var + eps) + 2 * u)
    scale = gamma * r
    e_scale = np.abs(gamma) * e_r + u * np.abs(scale)
    ms = np.abs(mean * scale)
    shift = beta - mean * scale
    e_shift = np.abs(mean) * e_scale + np.abs(scale) * e_mean + u * ms + u * (np.abs(beta) + ms)
    c = lambda v: _channels(v, x.ndim)  # noqa: E731
    xs = np.abs(x) * c(np.abs(scale))
    theirs = np.abs(x) * c(e_scale) + c(e_shift) + u * xs + u * (xs + c(np.abs(shift)))
    d = np.abs(x - c(mean))
    ds = d * c(np.abs(scale))
    ours = d * c(e_scale) + c(np.abs(scale) * e_mean) + 2 * u * ds + u * (ds + c(np.abs(beta)))
    return np.maximum(theirs, ours)


def update_error(stat, e_stat, running, e_running, momentum: float, u: float) -> np.ndarray:
    """Bound on `momentum * stat + (1 - momentum) * running` (see the docstring)."""
    kept = np.abs((1 - momentum) * running)
    new = np.abs(momentum * stat) + kept
    return (
        momentum * e_stat
        + (1 - momentum) * e_running
        + u * np.abs(momentum * stat)
        + 2 * u * kept
        + u * new
    )


def batchnorm_bounds(x, gamma, beta, rm, rv, momentum, eps, u) -> dict[str, np.ndarray]:
    """Error bounds of the five results of adir.batchnorm at unit roundoff u."""
    s = batch_stats_errors(x, u)
    count, var, e_var = s["count"], s["var"], s["e_var"]
    r = 1 / np.sqrt(var + eps)
    return {
        "output": affine_error(x, gamma, beta, s["mean"], var, s["e_mean"], e_var, eps, u),
        "mean": s["e_mean"],
        "invstd": r * (0.5 * (e_var + u * (var + eps)) / (var + eps) + 2 * u),
        "running_mean": update_error(s["mean"], s["e_mean"], rm, 0.0, momentum, u),
        "running_var": update_error(
            var * count / (count - 1), e_var * count / (count - 1), rv, 0.0, momentum, u
        ),
    }


# --- running the ops ------------------------------------------------------------------------


def batchnorm_ir(shape: tuple[int, ...], props: str = "") -> str:
    t, c = tensor_type(shape), tensor_type((shape[1],))
    types = f"{t}, {c}, {c}, {c}, {c}"
    return f"""
func.func @f(%x: {t}, %g: {c}, %b: {c}, %rm: {c}, %rv: {c}) -> ({types}) {{
  %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %x, %g, %b, %rm, %rv{props} : {types} -> ({types})
  func.return %y, %mean, %invstd, %rm2, %rv2 : {types}
}}"""


def batchnorm_eval_ir(shape: tuple[int, ...], props: str = "") -> str:
    t, c = tensor_type(shape), tensor_type((shape[1],))
    return f"""
func.func @f(%x: {t}, %g: {c}, %b: {c}, %rm: {c}, %rv: {c}) -> {t} {{
  %y = adir.batchnorm_eval %x, %g, %b, %rm, %rv{props} : {t}, {c}, {c}, {c}, {c} -> {t}
  func.return %y : {t}
}}"""


def random_batchnorm_inputs(shape, seed: int, dtype=np.float32) -> list[np.ndarray]:
    """x with a per-channel offset and spread (so the statistics matter), gamma, beta and
    running statistics, all float32 values."""
    rng = np.random.default_rng(seed)
    c = shape[1]
    offset = _channels(rng.uniform(-3, 3, c), len(shape))
    spread = _channels(rng.uniform(0.5, 2, c), len(shape))
    x = offset + spread * rng.standard_normal(shape)
    values = [x, rng.standard_normal(c), rng.standard_normal(c), rng.standard_normal(c)]
    values.append(rng.uniform(0.5, 2, c))
    return [v.astype(np.float32).astype(dtype) for v in values]


def torch_batchnorm(x, gamma, beta, rm, rv, momentum: float, eps: float) -> list[np.ndarray]:
    """PyTorch's (output, save_mean, save_invstd, running_mean, running_var) in float64."""
    t = [torch.tensor(np.asarray(a, np.float64)) for a in (x, gamma, beta, rm, rv)]
    out, mean, invstd = torch.native_batch_norm(t[0], t[1], t[2], t[3], t[4], True, momentum, eps)
    return [out.numpy(), mean.numpy(), invstd.numpy(), t[3].numpy(), t[4].numpy()]


def assert_within(actual: np.ndarray, expected: np.ndarray, bound: np.ndarray, what: str) -> None:
    actual = np.asarray(actual, np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    error = np.abs(actual - expected)
    worst = np.unravel_index(np.argmax(error - bound), error.shape) if error.size else ()
    assert np.all(error <= bound), (
        f"{what}: error {error[worst]:.3g} beyond the bound {bound[worst]:.3g} at {worst}"
    )


RESULTS = ["output", "mean", "invstd", "running_mean", "running_var"]

# Odd sizes: [N, C], [N, C, L], NCHW, the minimum of 2 values per channel, one channel.
SHAPES = [(5, 3), (2, 3), (4, 3, 5), (3, 5, 7, 6), (2, 4, 1, 1), (1, 2, 3, 1), (6, 1, 2, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_batchnorm_training_equals_torch(shape, dtype) -> None:
    inputs = random_batchnorm_inputs(shape, seed=len(shape) * 10 + shape[0], dtype=dtype)
    momentum, eps = f32(0.1), f32(1e-5)
    actual = interpret(batchnorm_ir(shape), "f", *inputs, float_dtype=dtype)
    expected = torch_batchnorm(*inputs, momentum, eps)
    x64 = [np.asarray(a, np.float64) for a in inputs]
    ours = batchnorm_bounds(*x64, momentum, eps, U[dtype])
    theirs = batchnorm_bounds(*x64, momentum, eps, U[np.float64])
    for name, a, e in zip(RESULTS, actual, expected, strict=True):
        assert a.dtype == dtype
        assert_within(a, e, ours[name] + theirs[name], name)


@pytest.mark.parametrize(
    ("momentum", "eps"), [(0.0, 1e-5), (1.0, 1e-5), (0.25, 1e-3), (0.1, 0.0)], ids=str
)
def test_batchnorm_momentum_and_eps(momentum: float, eps: float) -> None:
    """momentum 0 keeps the running statistics, 1 replaces them; eps 0 is allowed."""
    shape = (4, 3, 2, 3)
    inputs = random_batchnorm_inputs(shape, seed=5)
    props = f" {{momentum = {momentum:.6e} : f32, eps = {eps:.6e} : f32}}"
    actual = interpret(batchnorm_ir(shape, props), "f", *inputs)
    expected = torch_batchnorm(*inputs, f32(momentum), f32(eps))
    x64 = [np.asarray(a, np.float64) for a in inputs]
    ours = batchnorm_bounds(*x64, f32(momentum), f32(eps), U[np.float32])
    theirs = batchnorm_bounds(*x64, f32(momentum), f32(eps), U[np.float64])
    for name, a, e in zip(RESULTS, actual, expected, strict=True):
        assert_within(a, e, ours[name] + theirs[name], name)
    if momentum == 0.0:
        np.testing.assert_array_equal(actual[3], inputs[3])
        np.testing.assert_array_equal(actual[4], inputs[4])


def test_batchnorm_constant_channel_is_beta() -> None:
    """A channel whose values are all equal has variance 0: x_hat = 0, the output is beta
    (eps keeps invstd finite), exactly as PyTorch."""
    x = np.full((3, 2, 2, 2), 1.5, np.float32)
    x[:, 1] = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    gamma, beta = np.array([2.0, 1.0], np.float32), np.array([0.25, -1.0], np.float32)
    rm, rv = np.zeros(2, np.float32), np.ones(2, np.float32)
    y, mean, invstd, _, new_var = interpret(batchnorm_ir(x.shape), "f", x, gamma, beta, rm, rv)
    np.testing.assert_array_equal(y[:, 0], np.float32(0.25))
    assert mean[0] == np.float32(1.5) and invstd[0] == np.float32(1 / np.sqrt(np.float32(1e-5)))
    assert new_var[0] == np.float32(0.9)


# --- several training steps against torch.nn.BatchNorm2d -----------------------------------

BN2D_MODULE = """
adir.param @gamma : tensor<{c}xf32> = #adir.normal<seed = 1>
adir.param @beta : tensor<{c}xf32> = #adir.normal<seed = 2>
adir.param @running_mean : tensor<{c}xf32> = #adir.zeros {{trainable = false}}
adir.param @running_var : tensor<{c}xf32> = #adir.fill<value = 1.0> {{trainable = false}}

func.func @train(%x: {t}) -> {t} {{
  %g = adir.load @gamma : {ct}
  %b = adir.load @beta : {ct}
  %rm = adir.load @running_mean : {ct}
  %rv = adir.load @running_var : {ct}
  %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %x, %g, %b, %rm, %rv {{momentum = 0.2 : f32}}
      : {t}, {ct}, {ct}, {ct}, {ct} -> ({t}, {ct}, {ct}, {ct}, {ct})
  adir.store %rm2, @running_mean : {ct}
  adir.store %rv2, @running_var : {ct}
  func.return %y : {t}
}}

func.func @infer(%x: {t}) -> {t} {{
  %g = adir.load @gamma : {ct}
  %b = adir.load @beta : {ct}
  %rm = adir.load @running_mean : {ct}
  %rv = adir.load @running_var : {ct}
  %y = adir.batchnorm_eval %x, %g, %b, %rm, %rv : {t}, {ct}, {ct}, {ct}, {ct} -> {t}
  func.return %y : {t}
}}
"""


def bn2d_module(shape: tuple[int, ...]) -> str:
    c = shape[1]
    return BN2D_MODULE.format(c=c, t=tensor_type(shape), ct=tensor_type((c,)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_running_statistics_follow_batchnorm2d_over_steps(dtype) -> None:
    """Five training steps on batches with a drifting mean, then eval: the stored running
    statistics, each step's output and the eval output agree with torch.nn.BatchNorm2d."""
    shape = (3, 4, 5, 7)
    momentum, eps = f32(0.2), f32(1e-5)
    module = parse_module(bn2d_module(shape), "bn2d.mlir")
    module.verify()
    session = Session(module, dtype)
    bn = torch.nn.BatchNorm2d(shape[1], eps=eps, momentum=momentum).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(np.asarray(session.params["gamma"], np.float64)))
        bn.bias.copy_(torch.tensor(np.asarray(session.params["beta"], np.float64)))
    gamma = np.asarray(session.params["gamma"], np.float64)
    beta = np.asarray(session.params["beta"], np.float64)
    rng = np.random.default_rng(7)
    u = U[dtype]
    e_mean = e_var = np.zeros(shape[1])  # our side's accumulated errors; and PyTorch's
    t_mean = t_var = np.zeros(shape[1])
    for step in range(5):
        x = (2.0 + step + 1.5 * rng.standard_normal(shape)).astype(np.float32)
        rm = bn.running_mean.numpy().copy()
        rv = bn.running_var.numpy().copy()
        bn.train()
        with torch.no_grad():
            expected = bn(torch.tensor(x, dtype=torch.float64)).numpy()
        (y,) = session.call("train", x.astype(dtype))
        x64 = x.astype(np.float64)
        stats, t_stats = batch_stats_errors(x64, u), batch_stats_errors(x64, U[np.float64])
        bound = affine_error(
            x64, gamma, beta, stats["mean"], stats["var"], stats["e_mean"], stats["e_var"], eps, u
        )
        bound += affine_error(
            x64,
            gamma,
            beta,
            t_stats["mean"],
            t_stats["var"],
            t_stats["e_mean"],
            t_stats["e_var"],
            eps,
            U[np.float64],
        )
        assert_within(y, expected, bound, f"step {step} output")
        count = stats["count"]
        unbiased = stats["var"] * count / (count - 1)
        e_mean = update_error(stats["mean"], stats["e_mean"], rm, e_mean, momentum, u)
        t_mean = update_error(stats["mean"], t_stats["e_mean"], rm, t_mean, momentum, U[np.float64])
        e_var = update_error(unbiased, stats["e_var"] * count / (count - 1), rv, e_var, momentum, u)
        t_var = update_error(
            unbiased, t_stats["e_var"] * count / (count - 1), rv, t_var, momentum, U[np.float64]
        )
        assert_within(
            session.params["running_mean"],
            bn.running_mean.numpy(),
            e_mean + t_mean,
            f"step {step} running_mean",
        )
        assert_within(
            session.params["running_var"],
            bn.running_var.numpy(),
            e_var + t_var,
            f"step {step} running_var",
        )
    bn.eval()
    x = (4.0 + 1.5 * rng.standard_normal(shape)).astype(np.float32)
    with torch.no_grad():
        expected = bn(torch.tensor(x, dtype=torch.float64)).numpy()
    (y,) = session.call("infer", x.astype(dtype))
    rm, rv = bn.running_mean.numpy(), bn.running_var.numpy()
    x64 = x.astype(np.float64)
    bound = affine_error(x64, gamma, beta, rm, rv, e_mean + t_mean, e_var + t_var, eps, u)
    bound += affine_error(x64, gamma, beta, rm, rv, 0 * rm, 0 * rv, eps, U[np.float64])
    assert_within(y, expected, bound, "eval output")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", [(5, 3), (1, 3), (2, 3, 4, 5), (1, 2, 1, 1)], ids=str)
def test_batchnorm_eval_equals_torch(shape, dtype) -> None:
    """Eval mode normalises with the running statistics; one value per channel is fine."""
    x, gamma, beta, rm, rv = random_batchnorm_inputs(shape, seed=shape[0], dtype=dtype)
    eps = f32(1e-5)
    (y,) = interpret(batchnorm_eval_ir(shape), "f", x, gamma, beta, rm, rv, float_dtype=dtype)
    t = [torch.tensor(np.asarray(a, np.float64)) for a in (x, rm, rv, gamma, beta)]
    expected = F.batch_norm(*t, training=False, eps=eps).numpy()
    x64, g, b, m, v = (np.asarray(a, np.float64) for a in (x, gamma, beta, rm, rv))
    zero = np.zeros_like(m)
    bound = affine_error(x64, g, b, m, v, zero, zero, eps, U[dtype])
    bound += affine_error(x64, g, b, m, v, zero, zero, eps, U[np.float64])
    assert y.dtype == dtype
    assert_within(y, expected, bound, "output")


# --- dropout --------------------------------------------------------------------------------

MASK = (1 << 64) - 1


def splitmix_raw(seed: int, index: int) -> int:
    """raw(seed, index) of adir/interpreter/prng.py, in plain Python integers."""

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    return mix((mix(seed) + (index + 1) * 0x9E3779B97F4A7C15) & MASK)


def reference_mask(shape, seed: int, counter: int, p: float) -> np.ndarray:
    """The spec's keep mask: uniform(raw(seed, counter), i) >= p, i row-major."""
    stream = splitmix_raw(seed, counter)
    size = int(np.prod(shape))
    uniform = np.array([(splitmix_raw(stream, i) >> 40) * 2.0**-24 for i in range(size)])
    return (uniform >= f32(p)).reshape(shape)


def dropout_ir(shape, step_type: str, p: float, seed: int, op: str = "adir.dropout") -> str:
    t = tensor_type(shape)
    return f"""
func.func @f(%x: {t}, %s: tensor<{step_type}>) -> {t} {{
  %y = {op} %x, %s {{p = {p} : f32, seed = {seed} : i64}} : {t}, tensor<{step_type}> -> {t}
  func.return %y : {t}
}}"""


def dropout(
    x, step, p: float, seed: int, step_type: str = "i64", dtype=np.float32, op="adir.dropout"
):
    (y,) = interpret(dropout_ir(x.shape, step_type, p, seed, op), "f", x, step, float_dtype=dtype)
    return y


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("p", "seed", "step"), [(0.5, 0, 0), (0.25, 7, 3), (0.9, 123, 1000)])
def test_dropout_equals_reference_with_the_spec_mask(p: float, seed: int, step: int, dtype) -> None:
    shape = (3, 5, 7)
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    y = dropout(x, np.int64(step), p, seed, dtype=dtype)
    keep = reference_mask(shape, seed, step, p)
    scale = dtype(1) / (dtype(1) - dtype(f32(p)))
    np.testing.assert_array_equal(y, x * np.where(keep, scale, dtype(0)))
    assert y.dtype == dtype


def test_dropout_scales_kept_elements_as_torch() -> None:
    """The kept elements are x * float32(1 / (1 - p)), bit for bit what torch.nn.functional.
    dropout gives for the elements it keeps."""
    x = np.random.default_rng(1).standard_normal(20000).astype(np.float32)
    for p in (0.1, 0.3, 0.5, 0.75):
        ours = dropout(x, np.int64(0), p, seed=11)
        torch.manual_seed(0)
        theirs = F.dropout(torch.tensor(x), p=f32(p), training=True).numpy()
        both = (ours != 0) & (theirs != 0)
        assert both.sum() > 1000
        np.testing.assert_array_equal(ours[both], theirs[both])


def test_dropout_special_cases_as_torch() -> None:
    """p = 0 is the identity; p = 1 multiplies by 0 (nan and inf give nan, as in PyTorch)."""
    x = np.array([np.nan, np.inf, -np.inf, 1.0, -2.0, 0.0], np.float32)
    np.testing.assert_array_equal(dropout(x, np.int64(5), 0.0, seed=1), x)
    y = dropout(x, np.int64(5), 1.0, seed=1)
    expected = F.dropout(torch.tensor(x), p=1.0, training=True).numpy()
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(expected))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keeps_a_fraction_1_minus_p(p: float) -> None:
    """Over n = 2^17 elements the number kept is binomial(n, 1 - p): within 5 standard
    deviations of n (1 - p) (a false failure has probability below 1e-6)."""
    n = 2**17
    kept = dropout(np.ones(n, np.float32), np.int64(2), p, seed=3) != 0
    sigma = np.sqrt(n * p * (1 - p))
    assert abs(kept.sum() - n * (1 - f32(p))) < 5 * sigma


def test_each_step_draws_a_new_mask_and_the_same_step_the_same() -> None:
    """Masks of different steps (or seeds) agree on about p^2 + (1 - p)^2 of the elements, as
    independent ones would (within 5 sigma); the same (seed, step) gives the same mask."""
    n, p = 2**16, 0.5
    ones = np.ones(n, np.float32)
    masks = [dropout(ones, np.int64(step), p, seed=9) != 0 for step in range(4)]
    masks.append(dropout(ones, np.int64(0), p, seed=10) != 0)
    agreement = p * p + (1 - p) * (1 - p)
    sigma = np.sqrt(n * agreement * (1 - agreement))
    for i in range(len(masks)):
        for j in range(i + 1, len(masks)):
            assert abs((masks[i] == masks[j]).sum() - n * agreement) < 5 * sigma, (i, j)
    np.testing.assert_array_equal(dropout(ones, np.int64(2), p, seed=9) != 0, masks[2])


def test_step_counter_of_each_type() -> None:
    """An i32 and an i64 step of one value give one mask; a negative one is its two's
    complement (-1 is 2^64 - 1); an f32 step counts by its bit pattern (1.0 is 0x3F800000)."""
    x = np.random.default_rng(2).standard_normal((4, 33)).astype(np.float32)
    p, seed = 0.5, 21
    by_i64 = dropout(x, np.int64(6), p, seed)
    np.testing.assert_array_equal(dropout(x, np.int32(6), p, seed, "i32"), by_i64)
    keep = reference_mask(x.shape, seed, (1 << 64) - 1, p)
    scale = np.float32(1) / (np.float32(1) - np.float32(p))
    np.testing.assert_array_equal(
        dropout(x, np.int32(-1), p, seed, "i32"), x * np.where(keep, scale, np.float32(0))
    )
    by_bits = dropout(x, np.int64(0x3F800000), p, seed)
    np.testing.assert_array_equal(dropout(x, np.float32(1.0), p, seed, "f32"), by_bits)
    # A float64 session holds the f32 step as a float64; its counter is still the f32 bits.
    in_float64 = dropout(x, np.float32(1.0), p, seed, "f32", dtype=np.float64)
    np.testing.assert_array_equal(in_float64 != 0, by_bits != 0)


def test_dropout_grad_applies_the_forward_mask() -> None:
    x = np.random.default_rng(4).standard_normal((6, 7)).astype(np.float32)
    dy = np.random.default_rng(5).standard_normal((6, 7)).astype(np.float32)
    for step in (0, 1, 17):
        forward = dropout(x, np.int64(step), 0.3, seed=8)
        backward = dropout(dy, np.int64(step), 0.3, seed=8, op="adir.dropout_grad")
        np.testing.assert_array_equal(backward != 0, forward != 0)
        np.testing.assert_array_equal(backward, dropout(dy, np.int64(step), 0.3, seed=8))
