"""Every registered op is a full citizen: an interpreter impl, a VJP rule (or the
`NotDifferentiable` trait saying why not), a C emitter whose kernel macros name functions the C
runtime declares (or the `NoKernel` trait saying why there is none), and a textual round trip.

The instances come from the dialect's round-trip tests (`test/filecheck/dialects/adir/*.mlir`)
and from the examples through the pipelines that make gradient, optimizer and int8 ops; an op
with no instance of static shape there fails the test (give it one in its family's lit test).
A new op that misses any of these fails here, naming the op and what it misses. Each
initializer attribute says how it draws, and the runtime has the C function of that draw.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from c_testing import run_pipeline
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType, i8
from xdsl.ir import Block, Operation
from xdsl.printer import Printer
from xdsl.traits import HasParent

from adir.backends.c.calls import CALL_EMITTERS, CallSite
from adir.context import parse_module
from adir.dialects.kernel import KERNELS
from adir.dialects.tensor import ADIR_OPS
from adir.dialects.tensor.initializers import INITIALIZERS, InitializerAttr
from adir.dialects.tensor.traits import NoKernel, NotDifferentiable, ReferenceScratch
from adir.interpreter.params import ParamFunctions
from adir.interpreter.session import FAMILY_FUNCTIONS
from adir.passes.autodiff.rules import VJP_RULES

ROOT = Path(__file__).parents[2]
DIALECT_TESTS = ROOT / "test" / "filecheck" / "dialects" / "adir"
RUNTIME = ROOT / "adir" / "backends" / "c" / "runtime"
PIPELINES = (
    "infer-shapes,derive-predict,autodiff,insert-optimizer{kind=adam schedule=cosine t_max=10}",
    "infer-shapes,autodiff,insert-optimizer{kind=sgd momentum=0.9},fuse-weight-updates",
    "infer-shapes,derive-predict,quantize-int8{samples=2}",
)

OP_IDS = [op.name for op in ADIR_OPS]


def printed(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


@functools.cache
def modules() -> list[tuple[str, ModuleOp]]:
    """The dialect's round-trip tests (each `// -----` part), then the examples after each
    pipeline, all verified."""
    found = []
    for path in sorted(DIALECT_TESTS.glob("*.mlir")):
        if "invalid" in path.name or "errors" in path.name:
            continue
        for index, part in enumerate(path.read_text().split("// -----")):
            module = parse_module(part, str(path))
            module.verify()
            found.append((f"{path.name}#{index}", module))
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        example = parse_module(path.read_text(), str(path))
        for pipeline in PIPELINES:
            module = run_pipeline(example, pipeline)
            module.verify()
            found.append((f"{path.name} | {pipeline}", module))
    return found


def is_static(op: Operation) -> bool:
    return all(
        isinstance(v.type, TensorType) and v.type.has_static_shape()
        for v in (*op.operands, *op.results)
    )


def instances() -> Iterator[tuple[str, Operation]]:
    for source, module in modules():
        for op in module.walk():
            yield source, op


@functools.cache
def static_instance() -> dict[type[Operation], Operation]:
    """The first instance of each op whose operands and results all have static shapes."""
    found: dict[type[Operation], Operation] = {}
    for _, op in instances():
        if type(op) not in found and is_static(op):
            found[type(op)] = op
    return found


# --- the interpreter ----------------------------------------------------------------------


def interpreted_ops() -> set[type[Operation]]:
    return {op for family in [*FAMILY_FUNCTIONS, ParamFunctions] for op, _ in family._impls()}


@pytest.mark.parametrize("op", ADIR_OPS, ids=OP_IDS)
def test_interpreter_runs_it(op: type[Operation]) -> None:
    """An op that runs has an impl; a module-level declaration (`adir.param`) the session
    reads when it starts."""
    if op.has_trait(HasParent(ModuleOp)):
        return
    assert op in interpreted_ops(), f"{op.name} has no impl in adir/interpreter/<family>.py"


# --- autodiff -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ADIR_OPS, ids=OP_IDS)
def test_vjp_rule_or_not_differentiable(op: type[Operation]) -> None:
    rule = op in VJP_RULES
    marked = op.has_trait(NotDifferentiable)
    assert rule or marked, (
        f"{op.name} has no VJP rule (adir/passes/autodiff/rules/<family>.py) and no "
        "NotDifferentiable trait saying why"
    )
    assert not (rule and marked), f"{op.name} has a VJP rule and is marked NotDifferentiable"


# --- the C backend ------------------------------------------------------------------------


@functools.cache
def runtime_headers() -> str:
    return "\n".join(path.read_text() for path in sorted(RUNTIME.rglob("*.h")))


def kernel_functions(statement: str) -> list[str]:
    """The C functions behind the `ADIR_<KERNEL>(` macros a statement calls, via their
    `#define ADIR_<KERNEL> adir_<kernel>` in the runtime's headers (None: not defined)."""
    functions = []
    for macro in re.findall(r"\b(ADIR_[A-Z0-9_]+)\(", statement):
        define = re.search(rf"#define {macro}\s+(\w+)", runtime_headers())
        assert define is not None, f"the runtime defines no macro {macro}"
        functions.append(define.group(1))
    return functions


def kernel_call(op: Operation) -> str:
    """The C statement of `op`'s kernel twin, on buffers named b0, b1, ..."""
    kernel_type = KERNELS[type(op)]
    values = (*op.operands, *op.results)
    types = [MemRefType(v.type.element_type, v.type.get_shape()) for v in values]  # type: ignore[attr-defined]
    block = Block(arg_types=types)
    ins, outs = block.args[: len(op.operands)], block.args[len(op.operands) :]
    kernel = kernel_type(list(ins), list(outs), dict(op.properties))
    scratch = op.get_trait(ReferenceScratch)
    if scratch is not None and scratch.size(kernel):  # as select-kernels adds it
        plane = block.insert_arg(MemRefType(i8, [scratch.size(kernel)]), len(block.args))
        kernel = kernel_type(list(ins), [*outs, plane], dict(op.properties))
    names = {arg: f"b{index}" for index, arg in enumerate(block.args)}
    return CALL_EMITTERS[kernel_type](kernel, CallSite(kernel, names, lambda values: "table"))


@pytest.mark.parametrize("op", ADIR_OPS, ids=OP_IDS)
def test_c_emitter_and_kernel(op: type[Operation]) -> None:
    """A kernel op, an emitter for it, and a C kernel in the runtime for every macro the
    emitter prints; or the `NoKernel` trait, and then no kernel op."""
    if op.has_trait(NoKernel):
        assert op not in KERNELS, f"{op.name} is marked NoKernel but has a kernel op"
        return
    assert op in KERNELS, f"{op.name} has no kernel op and no NoKernel trait saying why"
    assert KERNELS[op] in CALL_EMITTERS, f"{op.name}: no emitter in adir/backends/c/calls/"
    instance = static_instance().get(op)
    assert instance is not None, f"{op.name}: no instance of static shape to emit"
    statement = kernel_call(instance)
    functions = kernel_functions(statement)
    assert functions, f"{op.name}: its emitter calls no kernel macro: {statement}"
    for function in functions:
        assert re.search(rf"\b{function}\s*\(", runtime_headers()), (
            f"{op.name}: the runtime declares no {function} (called as {statement})"
        )


# --- the textual form ---------------------------------------------------------------------


@pytest.mark.parametrize("op", ADIR_OPS, ids=OP_IDS)
def test_textual_round_trip(op: type[Operation]) -> None:
    """print -> parse -> print gives the same text, for a module holding an instance of op."""
    source = next((source for source, instance in instances() if type(instance) is op), None)
    assert source is not None, f"{op.name}: no instance in the dialect's lit tests or examples"
    module = dict(modules())[source]
    text = printed(module)
    again = parse_module(text, source)
    again.verify()
    assert printed(again) == text


def test_every_statement_names_one_kernel_per_macro() -> None:
    """The check itself: a statement's macros map to their functions (matmul's ADIR_MATMUL is
    adir_matmul), and a macro the runtime does not define fails."""
    assert kernel_functions("ADIR_MATMUL(b0, b1, b2);") == ["adir_matmul"]
    with pytest.raises(AssertionError, match="no macro ADIR_NO_SUCH_KERNEL"):
        kernel_functions("ADIR_NO_SUCH_KERNEL(b0);")


@pytest.mark.parametrize("init", INITIALIZERS, ids=lambda i: i.name)
def test_initializer_has_a_draw_and_a_c_function(init: type[InitializerAttr]) -> None:
    """Each initializer says how it draws (`draw`), and the runtime has `adir_init_<kind>`."""
    parameters = [kind(init.DEFAULTS.get(name, 1.0)) for name, kind in init.param_kinds().items()]
    draw = init.new(parameters).draw((4, 3))
    assert re.search(rf"\badir_init_{draw.kind}\s*\(", runtime_headers()), draw.kind
