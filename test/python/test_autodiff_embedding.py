"""adir.embedding and its VJP (`adir.embedding_grad`, a scatter-add) in float64 against
PyTorch (gradient_testing.py states the tolerance: 1e-5 relative to each gradient's largest
entry, float64 on both sides; a lookup and a sum of copies are exact, so these agree closer):

- the gradient of the table against torch.autograd of `sum(F.embedding(indices, weight) * r)`
  for indices of rank 0, 1 and 2 with repeated rows, with and without padding_idx (whose row
  gets no gradient, though it is looked up), and against central finite differences;
- the interpreter's error for an index outside the table, naming the element;
- the scatter-add accumulates in index order: a float32 case where another order would round
  differently;
- `adir-run --random-inputs` draws an embedding's indices below its table's row count (the
  op's `ReadsClassLabels("indices", axis=0)`), not below `--num-classes`.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import tensor_type
from gradient_testing import check_op_gradients

from adir.context import parse_module
from adir.interpreter import Session
from adir.interpreter.embedding import embedding_grad

F = torch.nn.functional

INDICES = {
    "scalar": np.asarray(3, np.int32),
    "vector": np.asarray([1, 4, 1, 0, 4, 4], np.int32),
    "matrix": np.asarray([[2, 0, 2], [5, 2, 1]], np.int32),
}


@pytest.mark.parametrize("indices", INDICES.values(), ids=INDICES.keys())
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_table_gradient_matches_autograd(indices: np.ndarray, padding_idx: int | None) -> None:
    weight = np.random.default_rng(0).standard_normal((6, 5))
    properties = "" if padding_idx is None else f" {{padding_idx = {padding_idx} : i64}}"
    check_op_gradients(
        f"adir.embedding OPERANDS{properties}",
        [weight.shape, indices.shape],
        lambda w, i: F.embedding(i.long(), w, padding_idx=padding_idx),
        wrt_args=[0],
        inputs=[weight, indices],
        elem_types=["f32", "i32"],
        # padding_idx's zero gradient is PyTorch's convention, not the derivative.
        finite_differences=padding_idx is None,
    )


def test_padding_row_gets_no_gradient_but_is_looked_up() -> None:
    """Row 2 is read like any other, and its gradient is 0 although it is used 3 times."""
    indices = INDICES["matrix"]
    grad = np.ones((2, 3, 4))
    table = embedding_grad("adir.embedding_grad", grad, indices, 6, 2)
    assert not table[2].any()
    np.testing.assert_array_equal(table[:, 0], [1, 1, 0, 0, 0, 1])


def test_an_index_outside_the_table_is_an_error_naming_it() -> None:
    w, i, e = tensor_type((4, 2)), tensor_type((2, 3), "i32"), tensor_type((2, 3, 2))
    text = f"""
func.func @f(%w: {w}, %i: {i}) -> {e} {{
  %e = adir.embedding %w, %i : {w}, {i} -> {e}
  func.return %e : {e}
}}"""
    module = parse_module(text, "t.mlir")
    module.verify()
    indices = np.asarray([[0, 1, 2], [3, 4, -1]], np.int32)
    message = r"indices\[1, 1\] = 4 is not a row of the table, in \[0, 4\)"
    with pytest.raises(ValueError, match=message):
        Session(module).call("f", np.zeros((4, 2), np.float32), indices)


def test_duplicates_accumulate_in_index_order() -> None:
    """1 + 2^-24 + 2^-24 in float32: in index order each small term rounds away (ties to
    even), giving 1; summing the small terms first would give 1 + 2^-23."""
    small = np.float32(2.0**-24)
    grad = np.asarray([[1.0], [small], [small]], np.float32)
    table = embedding_grad("adir.embedding_grad", grad, np.zeros(3, np.int32), 1, None)
    assert table.dtype == np.float32
    assert table[0, 0] == np.float32(1.0)


def test_adir_run_draws_indices_inside_the_table(tmp_path, capsys) -> None:
    """A table of 3 rows of 5 and 200 indices: drawn below --num-classes' 10 or the row width
    5, some would fall outside the table (and the interpreter would refuse them); drawn below
    3, none does."""
    from adir.tools.adir_run import main

    w, i, e = tensor_type((3, 5)), tensor_type((200,), "i32"), tensor_type((200, 5))
    model = tmp_path / "lookup.mlir"
    model.write_text(f"""
func.func @f(%w: {w}, %i: {i}) -> {e} {{
  %e = adir.embedding %w, %i : {w}, {i} -> {e}
  func.return %e : {e}
}}""")
    assert main([str(model), "--func", "f", "--random-inputs", "0"]) == 0
    assert "error" not in capsys.readouterr().err
