"""`adir.load` and `adir.store` find their parameter through a cached symbol table
(`lookup_symbol`): the cache must never answer for a module that has changed since."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.utils.exceptions import VerifyException

from adir.context import parse_module
from adir.dialects.tensor.params import LoadOp, ParamOp, lookup_param

MODEL = """
adir.param @w : tensor<4xf32> = #adir.zeros
adir.param @v : tensor<2xf32> = #adir.zeros
func.func @f() -> tensor<4xf32> {
  %w = adir.load @w : tensor<4xf32>
  func.return %w : tensor<4xf32>
}
"""


def parts(module: ModuleOp) -> tuple[ParamOp, ParamOp, LoadOp]:
    w, v, function = module.ops
    load = function.body.block.first_op
    assert isinstance(w, ParamOp) and isinstance(v, ParamOp) and isinstance(load, LoadOp)
    return w, v, load


def test_a_parameter_erased_after_a_lookup_is_not_found() -> None:
    module = parse_module(MODEL)
    module.verify()  # fills the cache
    w, _, _ = parts(module)
    module.body.block.erase_op(w)
    with pytest.raises(VerifyException, match=r"no adir\.param named @w"):
        module.verify()


def test_a_parameter_replaced_after_a_lookup_is_the_new_one() -> None:
    module = parse_module(MODEL)
    module.verify()
    w, _, load = parts(module)
    replacement = ParamOp("w", w.type, w.initial_value)
    module.body.block.insert_op_before(replacement, w)
    module.body.block.erase_op(w)
    assert lookup_param(load, load.param) is replacement


def test_a_renamed_parameter_is_found_by_its_new_name_only() -> None:
    module = parse_module(MODEL)
    module.verify()
    _, v, load = parts(module)
    assert lookup_param(load, SymbolRefAttr("v")) is v
    v.sym_name = v.sym_name.__class__("u")
    assert lookup_param(load, SymbolRefAttr("u")) is v
    with pytest.raises(VerifyException, match=r"no adir\.param named @v"):
        lookup_param(load, SymbolRefAttr("v"))


def test_a_parameter_added_after_a_lookup_is_found() -> None:
    module = parse_module(MODEL)
    module.verify()
    _, v, load = parts(module)
    added = ParamOp("x", v.type, v.initial_value)
    module.body.block.add_op(added)
    assert lookup_param(load, SymbolRefAttr("x")) is added
