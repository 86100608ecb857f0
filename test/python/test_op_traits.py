"""Passes and backends ask the op (its traits, docs in adir/dialects/tensor/traits.py); they
keep no lists of op names and no isinstance ladders over adir ops, so that a new op is complete
in its own family files. Registries keyed by op class (VJP rules, C emitters, int8 and CMSIS
rules) are the allowed form of "one entry per op".

The scan reads the AST of every module under adir/passes and adir/backends and resolves names
(`ew.AddOp`, `LoadOp`, `CONV`) against the imported module's globals, so an alias of an op class
counts too. It flags:
- a string that is the name of a registered op or initializer (`"adir.relu"`,
  `"adir_kernel.add"`), or lists two or more short names that make up at least half of its words
  (`"add sub mul".split()`), outside docstrings;
- a tuple, list or set of two or more op short names (`("add", "sub")`) or dict keys that are;
- a tuple, list, set or `|`-union of two or more adir op classes (`isinstance(op, A | B)`);
- two or more `if`/`elif` tests in one statement list that each ask whether the same value is
  an instance of a registered adir op (a ladder; the separate `if`s of a ladder count too).
  Tests of different values are a pattern match (`fuse-weight-updates`), and a test against a
  base class such as `KernelOp` asks what level an op is at, neither of which a new op changes.

Type annotations are not scanned (`kind: type[QMaxpool2dOp | QAvgpool2dOp]` lists nothing).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation
from xdsl.utils.test_value import create_ssa_value

from adir.dialects.kernel import AdirKernel
from adir.dialects.tensor import ADIR_OPS, Adir
from adir.dialects.tensor.traits import (
    ElementwiseMappable,
    InPlaceOperands,
    Int8Lookup,
    ReadsClassLabels,
    Recomputable,
    ResultsOutsideArena,
    WritesResultOver,
)

ROOT = Path(__file__).parents[2]
SCANNED = ("adir/passes", "adir/backends")

# The ops, and the attributes (initializers), of adir's dialects.
OP_NAMES = {op.name for op in ADIR_OPS} | {op.name for op in AdirKernel.operations}
OP_NAMES |= {attr.name for attr in Adir.attributes}
SHORT_NAMES = {name.split(".", 1)[1] for name in OP_NAMES}


def modules() -> list[Path]:
    return sorted(p for folder in SCANNED for p in (ROOT / folder).rglob("*.py"))


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def is_adir_op_class(value: object) -> bool:
    """An op or attribute class (or base class, or interface) of adir's dialects."""
    return (
        isinstance(value, type)
        and issubclass(value, Operation | Attribute)
        and value.__module__.startswith("adir.dialects")
    )


def is_elif(orelse: list[ast.stmt]) -> bool:
    return len(orelse) == 1 and isinstance(orelse[0], ast.If)


class Scanner(ast.NodeVisitor):
    def __init__(self, module: ModuleType, path: Path):
        self.module = module
        self.path = path
        self.problems: list[str] = []
        self.docstrings: set[int] = set()

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"

    def resolve(self, node: ast.AST) -> object:
        """The module-level object a name or dotted name stands for (None if unknown)."""
        if isinstance(node, ast.Name):
            return getattr(self.module, node.id, None)
        if isinstance(node, ast.Attribute):
            owner = self.resolve(node.value)
            return None if owner is None else getattr(owner, node.attr, None)
        return None

    def op_classes(self, node: ast.AST) -> list[object]:
        """The adir op classes a type expression names (`A`, `A | B`, `(A, B)`)."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.op_classes(node.left) + self.op_classes(node.right)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return [c for e in node.elts for c in self.op_classes(e)]
        value = self.resolve(node)
        return [value] if is_adir_op_class(value) else []

    def tested_subjects(self, test: ast.AST) -> set[str]:
        """The values that `test` checks against registered op classes (as AST dumps)."""
        return {
            ast.dump(call.args[0])
            for call in ast.walk(test)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "isinstance"
            and len(call.args) == 2
            and any(getattr(c, "name", None) in OP_NAMES for c in self.op_classes(call.args[1]))
        }

    # -- docstrings are prose ---------------------------------------------------------------

    def note_docstring(self, body: list[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self.docstrings.add(id(body[0].value))

    def visit_Module(self, node: ast.Module) -> None:
        self.note_docstring(node.body)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.note_docstring(node.body)
        node.returns = None  # annotations name types, they list nothing
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        return

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.note_docstring(node.body)
        self.generic_visit(node)

    # -- the checks ------------------------------------------------------------------------

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.docstrings or not isinstance(node.value, str):
            return
        if node.value in OP_NAMES:
            self.problems.append(f"{self.where(node)}: op name {node.value!r}")
        # A list of op names, not a text that happens to share some (C's library has `exp`,
        # `log` and `div` among its hundreds of names): half its words or more are op names.
        all_words = node.value.replace(",", " ").split()
        words = [w for w in all_words if w in SHORT_NAMES]
        if len(words) >= 2 and 2 * len(words) >= len(all_words):
            self.problems.append(f"{self.where(node)}: a list of op names in a string {words}")

    def check_collection(self, node: ast.AST, elements: list[ast.expr]) -> None:
        names = [
            e.value for e in elements if isinstance(e, ast.Constant) and e.value in SHORT_NAMES
        ]
        if len(names) >= 2:
            self.problems.append(f"{self.where(node)}: a list of op names {names}")
        classes = [c for e in elements for c in self.op_classes(e)]
        if len(classes) >= 2:
            shown = [getattr(c, "__name__", "?") for c in classes]
            self.problems.append(f"{self.where(node)}: a list of op classes {shown}")

    def visit_Tuple(self, node: ast.Tuple) -> None:
        self.check_collection(node, node.elts)
        self.generic_visit(node)

    def visit_List(self, node: ast.List) -> None:
        self.check_collection(node, node.elts)
        self.generic_visit(node)

    def visit_Set(self, node: ast.Set) -> None:
        self.check_collection(node, node.elts)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        keys = [k for k in node.keys if k is not None]
        names = [k.value for k in keys if isinstance(k, ast.Constant) and k.value in SHORT_NAMES]
        if len(names) >= 2:
            self.problems.append(f"{self.where(node)}: a table keyed by op names {names}")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.BitOr) and len(self.op_classes(node)) >= 2:
            self.problems.append(f"{self.where(node)}: a union of op classes")
            return  # the parts of the union are the same finding
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        for body_name in ("body", "orelse", "finalbody"):
            body = getattr(node, body_name, None)
            if not (isinstance(body, list) and body and isinstance(body[0], ast.stmt)):
                continue
            if isinstance(node, ast.If) and body_name == "orelse" and is_elif(body):
                continue  # the chain was counted from its first `if`
            self.check_ladder(body)
        super().generic_visit(node)

    def check_ladder(self, body: list[ast.stmt]) -> None:
        """Count, per tested value, the isinstance-over-op tests of the `if`s of one statement
        list, following each `elif` chain."""
        tests: dict[str, list[ast.If]] = {}
        for statement in body:
            branch: ast.stmt | None = statement
            while isinstance(branch, ast.If):
                for subject in self.tested_subjects(branch.test):
                    tests.setdefault(subject, []).append(branch)
                branch = branch.orelse[0] if is_elif(branch.orelse) else None
        for ladder in tests.values():
            if len(ladder) >= 2:
                lines = ", ".join(str(t.lineno) for t in ladder)
                self.problems.append(
                    f"{self.where(ladder[0])}: an isinstance ladder over op classes (lines {lines})"
                )


def scan(path: Path) -> list[str]:
    module = importlib.import_module(module_name(path))
    scanner = Scanner(module, path)
    scanner.visit(ast.parse(path.read_text(), str(path)))
    return scanner.problems


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_op_lists_or_isinstance_ladders(path: Path) -> None:
    problems = scan(path)
    assert not problems, "ask the op (adir/dialects/tensor/traits.py):\n" + "\n".join(problems)


# --- the scanner finds what it must find ---------------------------------------------------

LADDERS = """
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor.params import LoadOp, StoreOp
CHEAP = {"adir.add", "adir.relu"}
SHORT = ("add", "sub")
WORDS = "relu sigmoid tanh".split()
def f(op):
    if isinstance(op, LoadOp):
        return 1
    elif isinstance(op, StoreOp):
        return 2
    return isinstance(op, ew.AddOp | ew.SubOp)
def g(op):
    if isinstance(op, LoadOp):
        return 1
    if isinstance(op, StoreOp):
        return 2
    return 0
"""


def test_the_scanner_finds_each_kind_of_list(tmp_path: Path) -> None:
    """Seven findings: two op names, a list of short names and one in a string, the elif ladder
    of f, the union in f, the ladder of separate ifs in g."""
    module = ModuleType("sample")
    exec(compile(LADDERS, "sample.py", "exec"), module.__dict__)
    path = ROOT / "adir" / "passes" / "sample.py"
    scanner = Scanner(module, path)
    scanner.visit(ast.parse(LADDERS))
    assert len(scanner.problems) == 7, scanner.problems
    assert sum("op name 'adir." in p for p in scanner.problems) == 2
    assert sum("a list of op names" in p for p in scanner.problems) == 2
    assert sum("isinstance ladder" in p for p in scanner.problems) == 2
    assert sum("union of op classes" in p for p in scanner.problems) == 1


# --- the traits say what the passes used to list -------------------------------------------


def names_with(trait: type) -> set[str]:
    return {op.name for op in ADIR_OPS if op.has_trait(trait)}


def test_recomputable_ops_are_the_cheap_ones() -> None:
    """The 33 ops recompute-activations used to list as CHEAP: elementwise arithmetic,
    activations, batchnorm, dropout, pooling and shape ops; never a matmul, a convolution or a
    gradient op. Since then: clamp, hardswish and hardsigmoid (unary elementwise ops),
    layer_norm (a few passes over each row) and embedding (a copy of rows)."""
    cheap = (
        "add sub mul div pow maximum minimum neg exp log sqrt cmp select "
        "relu leaky_relu sigmoid tanh gelu softplus softmax log_softmax "
        "clamp hardswish hardsigmoid "
        "batchnorm dropout maxpool2d avgpool2d global_avgpool2d pad "
        "reshape flatten transpose broadcast_to slice concat "
        "layer_norm embedding"
    ).split()
    assert names_with(Recomputable) == {f"adir.{name}" for name in cheap}


def test_in_place_operands() -> None:
    """Elementwise ops and the nine elementwise activation gradients write over any operand; a
    batchnorm writes its new running mean over the old one (result 3 over operand 3) and its
    new running variance over the old one (4 over 4); batchnorm_eval its result over its input
    (a frozen batchnorm's backward reads only its scale); a mask's gradient its result over the
    adjoint it masks; nothing else."""
    from adir.dialects.tensor.activations import MaskGradOp
    from adir.dialects.tensor.normalization import BatchnormEvalOp, BatchnormOp

    activations = "relu leaky_relu sigmoid tanh gelu softplus clamp hardswish hardsigmoid"
    grads = {f"adir.{a}_grad" for a in activations.split()}
    assert grads <= names_with(ElementwiseMappable)
    assert "adir.softmax_grad" not in names_with(ElementwiseMappable)
    trait = BatchnormOp.get_trait(InPlaceOperands)
    assert isinstance(trait, WritesResultOver)
    assert trait.pairs == (("new_running_mean", "running_mean"), ("new_running_var", "running_var"))
    for op, pairs in (
        (BatchnormEvalOp, (("result", "input"),)),
        (MaskGradOp, (("result", "grad"),)),
    ):
        trait = op.get_trait(InPlaceOperands)
        assert isinstance(trait, WritesResultOver) and trait.pairs == pairs


def test_int8_lookups_and_their_output_ranges() -> None:
    """sigmoid and tanh have TFLite's fixed int8 outputs (1/256, -128) and (1/128, 0); relu's,
    clamp's, hardswish's and hardsigmoid's come from calibration; clamp's table depends on the
    op's bounds (ReLU6: the levels -1.0, 3.0 and 7.5 become 0, 3 and 6)."""
    from adir.dialects.tensor import activations as act

    lookups = {op.name: op.get_trait(Int8Lookup) for op in (act.SigmoidOp, act.TanhOp)}
    outputs = {name: lookup.output for name, lookup in lookups.items() if lookup is not None}
    assert outputs == {"adir.sigmoid": (1.0 / 256, -128), "adir.tanh": (1.0 / 128, 0)}
    calibrated = {"adir.relu", "adir.clamp", "adir.hardswish", "adir.hardsigmoid"}
    assert names_with(Int8Lookup) == {"adir.sigmoid", "adir.tanh"} | calibrated
    for op in ADIR_OPS:
        if op.name in calibrated:
            lookup = op.get_trait(Int8Lookup)
            assert lookup is not None and lookup.output is None
    relu6 = act.ClampOp(create_ssa_value(TensorType(f32, [3])), 0.0, 6.0)
    lookup = act.ClampOp.get_trait(Int8Lookup)
    levels = np.array([-1.0, 3.0, 7.5])
    np.testing.assert_array_equal(lookup.values(relu6, levels), [0.0, 3.0, 6.0])


def test_small_facts() -> None:
    assert names_with(ResultsOutsideArena) == {"adir.constant", "adir.load"}
    assert {"adir.nll", "adir.cross_entropy"} <= names_with(ReadsClassLabels)
