"""adir's IR through upstream MLIR and back: what adir-opt prints (generic form) is read by
`mlir-opt` (Debian's mlir-22-tools, `--allow-unregistered-dialect` for adir's own dialects),
and what `mlir-opt` prints back (custom forms of builtin, func, arith and memref, e.g.
`memref.global`; or all generic with `--mlir-print-op-generic`) adir reads as the same IR
(`is_structurally_equivalent`: the same ops, operands, types, properties and attributes; SSA
names and locations, which mlir-opt drops, aside). Every example at every stage of the
pipeline (slow), the seed MLP in the fast suite; the custom forms adir-opt parses: in
adir/upstream_forms.py."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError

from adir.context import adir_context, parse_module
from adir.universe import available_passes

ROOT = Path(__file__).parents[2]
MLIR_OPT = "mlir-opt-22"
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
# The IR levels of the training pipeline, each after the passes that lead to it.
STAGES = {
    "input": [],
    "shapes": ["infer-shapes"],
    "gradient": ["autodiff"],
    "training step": ["insert-optimizer{kind=sgd}"],
    "buffers": ["fuse-weight-updates", "reorder-updates", "bufferize"],
    "planned": ["select-kernels", "plan-memory"],
}


def require_mlir_opt() -> None:
    if shutil.which(MLIR_OPT) is None:
        pytest.fail(f"{MLIR_OPT} not found: apt-get install mlir-22-tools (tools/setup.sh test)")


def through_upstream(module: ModuleOp, *flags: str) -> ModuleOp:
    """`module` printed by adir, read and printed by mlir-opt, and read back by adir."""
    text = io.StringIO()
    Printer(stream=text, print_generic_format=True).print_op(module)
    done = subprocess.run(
        [MLIR_OPT, "--allow-unregistered-dialect", *flags],
        input=text.getvalue(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    back = parse_module(done.stdout, "mlir-opt output")
    back.verify()
    return back


def round_trip_every_stage(example: Path) -> list[str]:
    """The stages at which `example` comes back from mlir-opt as it went in: all of them,
    printed in custom form, and the first and last also in generic form."""
    require_mlir_opt()
    ctx, passes = adir_context(), available_passes()
    module = parse_module(example.read_text(), str(example))
    same = []
    for stage, names in STAGES.items():
        for name in names:
            PassPipeline.parse_spec(passes, name).apply(ctx, module)
        forms = [()] + ([("--mlir-print-op-generic",)] if stage in ("input", "planned") else [])
        if all(
            through_upstream(module, *flags).is_structurally_equivalent(module) for flags in forms
        ):
            same.append(stage)
    return same


def test_the_seed_mlp_comes_back_at_every_stage() -> None:
    assert round_trip_every_stage(ROOT / "examples" / "mnist_mlp.mlir") == list(STAGES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "example", [e for e in EXAMPLES if e.stem != "mnist_mlp"], ids=lambda path: path.stem
)
def test_every_example_comes_back_at_every_stage(example: Path) -> None:
    assert round_trip_every_stage(example) == list(STAGES)


def test_the_planned_ir_uses_memref_global_s_custom_form() -> None:
    """What made the round trip fail before: mlir-opt prints bufferize's constants as
    `memref.global "private" constant @... : memref<...> = dense<...>`."""
    require_mlir_opt()
    module = parse_module((ROOT / "examples" / "mnist_mlp.mlir").read_text())
    pipeline = "infer-shapes,autodiff,insert-optimizer{kind=sgd},bufferize"
    PassPipeline.parse_spec(available_passes(), pipeline).apply(adir_context(), module)
    text = io.StringIO()
    Printer(stream=text, print_generic_format=True).print_op(module)
    upstream = subprocess.run(
        [MLIR_OPT, "--allow-unregistered-dialect"],
        input=text.getvalue(),
        capture_output=True,
        text=True,
    )
    assert 'memref.global "private" constant @' in upstream.stdout


CUSTOM_GLOBALS = """
memref.global "private" constant @c : memref<2xf32> = dense<[1.5, -2.0]> {alignment = 64 : i64}
memref.global @p : memref<f32> = dense<0.25>
memref.global "nested" @u : memref<3xi32> = uninitialized
"""


def test_memref_global_s_custom_forms_parse_as_xdsl_s_op() -> None:
    c, p, u = parse_module(CUSTOM_GLOBALS).ops
    assert all(type(op) is memref.GlobalOp for op in (c, p, u))
    assert str(c.initial_value) == "dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>"
    assert (c.sym_visibility.data, c.constant is not None, c.alignment.value.data) == (
        "private",
        True,
        64,
    )
    # MLIR's public symbols print no visibility; xDSL's op spells it.
    assert (p.sym_visibility.data, p.constant, str(p.initial_value)) == (
        "public",
        None,
        "dense<2.500000e-01> : tensor<f32>",
    )
    assert (u.sym_visibility.data, str(u.initial_value)) == ("nested", "unit")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("memref.global @d : memref<f32>\n", "a global with no initial value"),
        ("memref.global @t : tensor<f32> = dense<0.0>\n", "expected a memref type"),
        ("memref.global @s : memref<f32> = 1.0\n", "expected `dense<...>` or `uninitialized`"),
    ],
)
def test_what_adir_cannot_hold_is_a_located_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_module(text)
