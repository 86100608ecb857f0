"""The embedding C kernels against the interpreter, bit for bit (a lookup copies floats; the
scatter-add adds in the indices' row-major order on both sides), built with gcc and with clang
under ASan and UBSan:

- embedding and embedding_grad for indices of rank 0, 1 and 2 with repeated rows, with and
  without padding_idx (its row of the gradient stays 0);
- an index outside the table (negative, or num_weights and beyond): the interpreter refuses it,
  the C neither reads nor writes out of bounds (ASan would abort): the lookup gives that
  position a row of nan and the backward skips it;
- a training step, embedding -> layer_norm -> mean -> matmul -> cross_entropy with SGD, over 4
  steps (layer norm's kernels sum in their own order, so 1e-5 relative there).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from adir_testing import tensor_type
from c_testing import build_c, c_compilers, check_c_against_interpreter, run_pipeline
from xdsl.dialects import func

from adir.context import parse_module
from adir.passes import PLANNING_PIPELINE

RNG = np.random.default_rng(5)
COMPILERS = c_compilers()
NUM, DIM = 9, 5


def lookup_ir(index_shape: tuple[int, ...], padding_idx: int | None) -> str:
    """`@f(w, i, dy) = (embedding(w, i), embedding_grad(dy, i))`."""
    w, i = tensor_type((NUM, DIM)), tensor_type(index_shape, "i32")
    e = tensor_type((*index_shape, DIM))
    padding = "" if padding_idx is None else f"padding_idx = {padding_idx} : i64"
    forward = f" {{{padding}}}" if padding else ""
    backward = f"{{num_weights = {NUM} : i64{', ' + padding if padding else ''}}}"
    return f"""
func.func @f(%w: {w}, %i: {i}, %dy: {e}) -> ({e}, {w}) {{
  %e = adir.embedding %w, %i{forward} : {w}, {i} -> {e}
  %dw = adir.embedding_grad %dy, %i {backward} : {e}, {i} -> {w}
  func.return %e, %dw : {e}, {w}
}}"""


INDEX_SHAPES = [(), (7,), (3, 6)]


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("index_shape", INDEX_SHAPES, ids=["scalar", "vector", "matrix"])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_lookup_and_scatter_add_bit_for_bit(
    compiler: str, index_shape: tuple[int, ...], padding_idx: int | None
) -> None:
    """Indices drawn from 4 of the 9 rows, so rows repeat (and row 3, the padding row when
    there is one, is used); two calls with different data."""

    def step() -> list[np.ndarray]:
        indices = RNG.choice([0, 3, 5, 8], index_shape).astype(np.int32)
        weight = RNG.standard_normal((NUM, DIM)).astype(np.float32)
        return [weight, indices, RNG.standard_normal((*index_shape, DIM)).astype(np.float32)]

    steps = [step(), step()]
    results = check_c_against_interpreter(
        lookup_ir(index_shape, padding_idx), "f", steps, rtol=0.0, atol=0.0, compiler=compiler
    )
    if padding_idx is not None:
        assert not results[1][padding_idx].any() and not results[3][padding_idx].any()


@pytest.mark.parametrize("compiler", COMPILERS)
def test_an_index_outside_the_table_reads_and_writes_nothing_outside(compiler: str) -> None:
    """-1, 9 and 2^31 - 1 for a table of 9 rows: nan rows in the lookup, nothing added in the
    backward (row 2 gets only the in-range position's gradient), and ASan/UBSan silent."""
    module = run_pipeline(parse_module(lookup_ir((5,), None), "t.mlir"), "infer-shapes")
    planned = run_pipeline(module, "bufferize,plan-memory")
    weight = RNG.standard_normal((NUM, DIM)).astype(np.float32)
    indices = np.asarray([2, -1, 9, 2**31 - 1, 4], np.int32)
    dy = RNG.standard_normal((5, DIM)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(planned, "f", 1, Path(directory), compiler, sanitize=True)
        looked_up, table = build.run(0, [[weight, indices, dy]])
    np.testing.assert_array_equal(looked_up[[0, 4]], weight[[2, 4]])
    assert np.isnan(looked_up[1:4]).all()
    expected = np.zeros((NUM, DIM), np.float32)
    expected[2], expected[4] = dy[0], dy[4]
    np.testing.assert_array_equal(table, expected)


TINY_TRANSFORMER_STEP = """
adir.param @emb : tensor<12x8xf32> = #adir.normal<std = 1.0, seed = 3>
adir.param @ln_w : tensor<8xf32> = #adir.fill<value = 1.0>
adir.param @ln_b : tensor<8xf32> = #adir.zeros
adir.param @fc_w : tensor<3x8xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 5>

func.func @loss(%tokens: tensor<2x5xi32>, %label: tensor<2xi32>) -> tensor<f32>
    attributes {adir.loss} {
  %emb = adir.load @emb : tensor<12x8xf32>
  %e = adir.embedding %emb, %tokens {padding_idx = 0 : i64}
      : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
  %w = adir.load @ln_w : tensor<8xf32>
  %b = adir.load @ln_b : tensor<8xf32>
  %n, %m, %s = adir.layer_norm %e, %w, %b {normalized_shape = array<i64: 8>}
      : tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>
      -> (tensor<2x5x8xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
  %pooled = adir.mean %n {axes = array<i64: 1>} : tensor<2x5x8xf32> -> tensor<2x8xf32>
  %fc = adir.load @fc_w : tensor<3x8xf32>
  %z = adir.matmul %pooled, %fc {transpose_b} : tensor<2x8xf32>, tensor<3x8xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %z, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


@pytest.mark.parametrize("compiler", COMPILERS)
def test_training_step_through_embedding_and_layer_norm(compiler: str) -> None:
    """Loss and every parameter after 4 SGD steps; token 0 (padding) appears, so its row of
    @emb must stay as initialised."""
    steps = [
        [RNG.integers(0, 12, (2, 5)).astype(np.int32), RNG.integers(0, 3, 2).astype(np.int32)]
        for _ in range(4)
    ]
    steps[0][0][0, 0] = 0
    results = check_c_against_interpreter(
        TINY_TRANSFORMER_STEP,
        "train_step",
        steps,
        differentiate="autodiff,insert-optimizer{kind=sgd lr=0.5}",
        compiler=compiler,
    )
    interpreted = run_pipeline(parse_module(TINY_TRANSFORMER_STEP, "t.mlir"), "infer-shapes")
    from adir.interpreter import Session

    initial = Session(interpreted).params["emb"]
    table = results[4]  # after the 4 losses: @emb, @ln_w, @ln_b, @fc_w
    np.testing.assert_array_equal(table[0], initial[0])
    assert not np.array_equal(table[1:], initial[1:])


SEQUENCE_POOL = """
adir.param @emb : tensor<50x16xf32> = #adir.normal<std = 1.0, seed = 3>
adir.param @ln_w : tensor<16xf32> = #adir.fill<value = 1.0>
adir.param @ln_b : tensor<16xf32> = #adir.zeros
adir.param @fc_w : tensor<4x16xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 5>
func.func @loss(%tokens: tensor<8x32xi32>, %label: tensor<8xi32>) -> tensor<f32>
    attributes {adir.loss} {
  %emb = adir.load @emb : tensor<50x16xf32>
  %e = adir.embedding %emb, %tokens {padding_idx = 0 : i64}
      : tensor<50x16xf32>, tensor<8x32xi32> -> tensor<8x32x16xf32>
  %w = adir.load @ln_w : tensor<16xf32>
  %b = adir.load @ln_b : tensor<16xf32>
  %n, %m, %s = adir.layer_norm %e, %w, %b {normalized_shape = array<i64: 16>}
      : tensor<8x32x16xf32>, tensor<16xf32>, tensor<16xf32>
      -> (tensor<8x32x16xf32>, tensor<8x32xf32>, tensor<8x32xf32>)
  %r = adir.relu %n : tensor<8x32x16xf32>
  %pooled = adir.mean %r {axes = array<i64: 1>} : tensor<8x32x16xf32> -> tensor<8x16xf32>
  %fc = adir.load @fc_w : tensor<4x16xf32>
  %z = adir.matmul %pooled, %fc {transpose_b}
      : tensor<8x16xf32>, tensor<4x16xf32> -> tensor<8x4xf32>
  %l = adir.cross_entropy %z, %label : tensor<8x4xf32>, tensor<8xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def arena(module_text: str, pipeline: str, function: str) -> int:
    planned = run_pipeline(parse_module(module_text, "t.mlir"), pipeline)
    (found,) = [
        op for op in planned.ops if isinstance(op, func.FuncOp) and op.sym_name.data == function
    ]
    return found.attributes["adir.arena_size"].value.data


def test_memory_plans_of_a_sequence_model() -> None:
    """The shortcut pipeline's plans (`adir-opt --plan-memory`, `--recompute`). Inference: the
    layer norm writes over the looked-up rows (in place, its trait), so the arena is one
    [8, 32, 16] buffer and the two [8, 32] statistics: 16,384 + 2,048 bytes. Training:
    the relu keeps a 1-bit mask for its gradient (the mean's backward reads nothing), 512
    bytes instead of its 16,384-byte output: 35,856 bytes; recompute-activations recomputes
    the embedding (a copy of rows, `Recomputable`) in the backward pass instead of keeping its
    16,384 bytes alive: 34,960 bytes (35,344 before the relu kept a mask)."""
    shapes = f"infer-shapes,derive-predict,{PLANNING_PIPELINE}"
    assert arena(SEQUENCE_POOL, shapes, "predict") == 16384 + 2048
    train = "infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.1}"
    assert arena(SEQUENCE_POOL, f"{train},{PLANNING_PIPELINE}", "train_step") == 35856
    recomputed = f"{train},recompute-activations,{PLANNING_PIPELINE}"
    assert arena(SEQUENCE_POOL, recomputed, "train_step") == 34960


def test_recomputed_embedding_trains_the_same_in_c() -> None:
    """The training step with the embedding recomputed, 3 steps, against the interpreter."""
    steps = [
        [RNG.integers(0, 50, (8, 32)).astype(np.int32), RNG.integers(0, 4, 8).astype(np.int32)]
        for _ in range(3)
    ]
    check_c_against_interpreter(
        SEQUENCE_POOL,
        "train_step",
        steps,
        differentiate="autodiff,insert-optimizer{kind=sgd lr=0.5},recompute-activations",
    )
