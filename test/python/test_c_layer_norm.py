"""The layer norm C kernels against the interpreter, built with gcc and with clang under ASan
and UBSan (c_testing.py: float32 on both sides, 1e-5 relative, since the C sums each row in
one running sum and numpy pairwise):

- layer_norm with a weight and a bias, a weight only and neither, over one and two trailing
  dims, eps 1e-5 and 1e-3: its output, mean and rstd;
- layer_norm_grad fed by a real forward pass, with and without a weight;
- in place: bufferize writes layer_norm's output over a dying input and layer_norm_grad's
  input adjoint over the dying output adjoint (through the ops' `WritesResultOver` traits), and
  the C computes the same numbers that way.
"""

from __future__ import annotations

import numpy as np
import pytest
from adir_testing import tensor_type
from c_testing import c_compilers, check_c_against_interpreter, run_pipeline

from adir.context import parse_module

RNG = np.random.default_rng(3)

COMPILERS = c_compilers()


def rows_with_offsets(shape: tuple[int, ...], rank: int) -> np.ndarray:
    """Each normalised row with its own mean and scale (what a layer norm usually sees)."""
    lead = shape[: len(shape) - rank] + (1,) * rank
    scale, offset = RNG.uniform(0.5, 3, lead), RNG.uniform(-2, 2, lead)
    return (RNG.standard_normal(shape) * scale + offset).astype(np.float32)


def normal(shape: tuple[int, ...], offset: float = 0.0) -> np.ndarray:
    return (RNG.standard_normal(shape) + offset).astype(np.float32)


def forward_and_grad_ir(shape: tuple[int, ...], rank: int, affine: int, eps: str) -> str:
    """`@f(x, [w, [b,]] dy) = (layer_norm(x), its mean and rstd, layer_norm_grad(dy))`."""
    t, w = tensor_type(shape), tensor_type(shape[len(shape) - rank :])
    rows = tensor_type(shape[: len(shape) - rank])
    names = ["%w", "%b"][:affine]
    args = "".join(f", {name}: {w}" for name in names)
    operands = "".join(f", {name}" for name in names)
    types = "".join(f", {w}" for _ in names)
    weight = ", %w" if affine else ""
    weight_type = f", {w}" if affine else ""
    normalized = f"normalized_shape = array<i64: {', '.join(str(d) for d in shape[-rank:])}>"
    return f"""
func.func @f(%x: {t}{args}, %dy: {t}) -> ({t}, {rows}, {rows}, {t}, {w}, {w}) {{
  %y, %m, %s = adir.layer_norm %x{operands} {{{normalized}, eps = {eps} : f32}}
      : {t}{types} -> ({t}, {rows}, {rows})
  %dx, %dw, %db = adir.layer_norm_grad %x, %m, %s, %dy{weight} {{{normalized}}}
      : {t}, {rows}, {rows}, {t}{weight_type} -> ({t}, {w}, {w})
  func.return %y, %m, %s, %dx, %dw, %db : {t}, {rows}, {rows}, {t}, {w}, {w}
}}"""


CASES = [
    # (shape, normalized rank, affine operands, eps)
    ((6, 16), 1, 2, "1.0e-5"),
    ((2, 5, 12), 1, 2, "1.0e-3"),
    ((3, 4, 5), 2, 2, "1.0e-5"),
    ((4, 10), 1, 1, "1.0e-5"),
    ((2, 3, 8), 1, 0, "1.0e-5"),
]


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize(("shape", "rank", "affine", "eps"), CASES)
def test_layer_norm_and_its_grad(
    compiler: str, shape: tuple[int, ...], rank: int, affine: int, eps: str
) -> None:
    """Forward results and the three adjoints, over two calls with different data."""
    normalized = shape[len(shape) - rank :]

    def step() -> list[np.ndarray]:
        affine_args = [RNG.uniform(0.5, 1.5, normalized).astype(np.float32), normal(normalized)]
        return [rows_with_offsets(shape, rank), *affine_args[:affine], normal(shape)]

    ir = forward_and_grad_ir(shape, rank, affine, eps)
    check_c_against_interpreter(ir, "f", [step(), step()], compiler=compiler)


IN_PLACE = """
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8xf32>, %g: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) {
  %x = adir.add %a, %b : tensor<4x8xf32>
  %y, %m, %s = adir.layer_norm %x, %w {normalized_shape = array<i64: 8>}
      : tensor<4x8xf32>, tensor<8xf32> -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %dy = adir.mul %g, %b : tensor<4x8xf32>
  %z = adir.add %a, %b : tensor<4x8xf32>
  %dx, %dw, %db = adir.layer_norm_grad %z, %m, %s, %dy, %w {normalized_shape = array<i64: 8>}
      : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<8xf32>
      -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  func.return %y, %dx, %dw : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
}"""


def test_bufferize_writes_results_over_dying_operands() -> None:
    """layer_norm's output goes into the buffer of %x (which dies there), layer_norm_grad's
    input adjoint into that of %dy or %z (both die there; the trait lists dy first)."""
    planned = run_pipeline(parse_module(IN_PLACE, "t.mlir"), "infer-shapes,bufferize")
    kernels = {op.name: op for op in planned.walk() if op.name.startswith("adir_kernel.")}
    forward, backward = kernels["adir_kernel.layer_norm"], kernels["adir_kernel.layer_norm_grad"]
    assert forward.outs[0] is forward.ins[0]
    assert backward.outs[0] is backward.ins[3]
    assert backward.outs[1] is not backward.ins[0]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_in_place_kernels_compute_the_same(compiler: str) -> None:
    shapes = [(4, 8), (4, 8), (8,), (4, 8)]
    steps = [[normal(s) for s in shapes] for _ in range(2)]
    check_c_against_interpreter(IN_PLACE, "f", steps, compiler=compiler)
