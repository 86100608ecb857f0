"""README.md's tables list exactly what adir registers: the tensor dialect's table names every op
of each family (in the row of the family file that defines it) and every initializer, the pass
table every pass `adir-opt` registers, and the flag table every argument `adir-opt` adds to
xDSL's driver, and the importer's table every ATen overload with a handler and every torch.nn
module the examples are built of. An op, pass or flag added without its README line fails
here."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from xdsl.context import Context
from xdsl.transforms import get_all_passes
from xdsl.xdsl_opt_main import xDSLOptMain

from adir.dialects.tensor import ADIR_OPS
from adir.dialects.tensor.initializers import INITIALIZERS
from adir.passes import ADIR_PASSES
from adir.tools.adir_opt import AdirOptMain

README = Path(__file__).parents[2] / "README.md"
CODE = re.compile(r"`([^`]*)`")


def table_rows(heading: str) -> list[list[str]]:
    """The cells of the first table after `heading`, without its header and rule lines."""
    text = README.read_text()
    section = text[text.index(heading) :]
    start = section.index("\n|")
    rows: list[list[str]] = []
    for line in section[start + 1 :].splitlines():
        if not line.startswith("|"):
            break
        # `\|` inside a cell is a literal bar (`sgd\|adam`), not a column break.
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        rows.append(cells)
    return rows[2:]


def family_of(op: type) -> str:
    return op.__module__.rsplit(".", 1)[-1]


def test_op_table_lists_each_family_s_ops_exactly() -> None:
    registered: dict[str, set[str]] = {}
    for op in ADIR_OPS:
        registered.setdefault(family_of(op), set()).add(op.name.removeprefix("adir."))
    listed: dict[str, set[str]] = {}
    for family, ops, _notes in table_rows("## The tensor dialect"):
        (names,) = CODE.findall(ops)  # the ops column is one code span of names
        listed[family] = set(names.split())
    assert listed == registered


def test_op_table_lists_every_initializer() -> None:
    text = " ".join(cell for row in table_rows("## The tensor dialect") for cell in row)
    listed = set(re.findall(r"`#(adir\.\w+)`", text))
    assert listed == {attr.name for attr in INITIALIZERS}


def registered_driver() -> AdirOptMain:
    """adir-opt's driver with its passes and targets registered, as its __init__ does before
    it parses a command line (which this one never does: no pipeline, no input)."""
    driver = AdirOptMain.__new__(AdirOptMain)
    driver.available_frontends, driver.available_passes, driver.available_targets = {}, {}, {}
    driver.ctx = Context()
    driver.register_all_frontends()
    driver.register_all_passes()
    driver.register_all_targets()
    return driver


def test_pass_table_lists_every_registered_pass() -> None:
    """Every one of adir's passes has its row; xDSL's 133 share one row that names a few."""
    adir_listed: set[str] = set()
    xdsl_listed: set[str] = set()
    for name_cell, what in table_rows("## Passes"):
        names = {spec.split("{")[0] for spec in CODE.findall(name_cell)}
        (xdsl_listed if what.startswith("xDSL's") else adir_listed).update(names)
    registered = set(registered_driver().available_passes)
    xdsl_passes = set(get_all_passes())
    assert len(xdsl_passes) == 133  # xdsl==0.74.0's, as the row says
    assert adir_listed == set(ADIR_PASSES)
    assert {"canonicalize", "cse", "dce", "licm"} <= xdsl_listed <= xdsl_passes
    # The test environment has no plugin but adir's: adir-opt offers adir's and xDSL's.
    assert registered == set(ADIR_PASSES) | xdsl_passes


def own_flags() -> set[str]:
    """The long options AdirOptMain.register_all_arguments adds to xDSL's, from the parsers
    the two build."""
    driver = registered_driver()
    ours, theirs = argparse.ArgumentParser(), argparse.ArgumentParser()
    AdirOptMain.register_all_arguments(driver, ours)
    xDSLOptMain.register_all_arguments(driver, theirs)
    return set(ours._option_string_actions) - set(theirs._option_string_actions)


def test_flag_table_lists_exactly_adir_opt_s_own_flags() -> None:
    flags = own_flags()
    assert {"--emit-c", "--optimizer", "--verify-each"} <= flags  # the parsers were built
    listed = set()
    for flag_cell, _what in table_rows("The flags `adir-opt` adds to xDSL's"):
        (spec,) = CODE.findall(flag_cell)
        listed.add(spec.split("=")[0])
    assert listed == flags


def test_importer_table_lists_every_aten_overload_exactly() -> None:
    """The ATen ops column of the importer's table names each overload with a handler
    (`adir/frontends/aten/`), as `torch.ops.aten` spells it, and nothing else."""
    from adir.frontends.aten import ATEN_OPS  # here: it imports torch, which the rest need not

    listed: list[str] = []
    for _family, ops, _what in table_rows("## The PyTorch importer"):
        (names,) = CODE.findall(ops)
        listed += names.split()
    assert len(listed) == len(set(listed))
    assert set(listed) == {str(overload).removeprefix("aten.") for overload in ATEN_OPS}


def test_importer_table_names_every_module_the_examples_use() -> None:
    """Issue 19: the importer's table lists every supported module, not only the ATen ops. Each
    torch.nn class that a model of examples/torch/ is built of (every one imports there) is
    named `nn.<Class>` in the table; containers (`nn.Sequential`, `nn.ModuleList`) and
    `nn.Identity` compute nothing of their own, and classes torch.nn does not export (the
    `Linear` subclass inside `nn.MultiheadAttention`) are not the user's to name."""
    from examples_testing import example_names, load_example  # here: they import torch
    from torch import nn

    text = " ".join(cell for row in table_rows("## The PyTorch importer") for cell in row)
    used = set()
    for name in example_names():
        example = load_example(name)
        for factory in ("model", "model_with_relu"):
            if hasattr(example, factory):
                used |= {type(module) for module in getattr(example, factory)().modules()}
    named = {
        cls.__name__
        for cls in used
        if cls.__module__.startswith("torch.nn") and getattr(nn, cls.__name__, None) is cls
    }
    named -= {"Sequential", "ModuleList", "Identity"}
    assert {"Conv2d", "GRU", "LSTM", "MultiheadAttention", "ZeroPad2d"} <= named
    assert {n for n in named if f"`nn.{n}`" not in text} == set()
