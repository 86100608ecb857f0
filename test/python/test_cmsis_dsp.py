"""--c-kernels=cmsis-dsp: kernel ops become CMSIS-DSP calls where legal, and the build computes
what the reference build computes.

Each mapped op is built against CMSIS-DSP (from the cmsisdsp sdist, `tools/fetch_cmsis_dsp.sh`)
on the host with gcc -Werror, ASan and UBSan and compared with the interpreter; the cases where
the map must say no (transposed lhs, broadcasting, dims past uint16_t, sums over leading axes)
keep their reference call. The seed MLP and LeNet-5 train 50 steps with CMSIS-DSP exactly like
the reference build: the same loss at every step to 1e-5 relative, and the same parameters.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example, tensor_type
from c_testing import build_c, c_compilers, run_pipeline, selected
from cmsis_testing import build_cmsis_c, check_cmsis_against_interpreter
from test_c_examples import ADAM_PARAM_ATOL, training_steps
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp, f32, i32

from adir.backends.c.model import print_model
from adir.context import parse_module
from adir.dialects.kernel import KERNELS
from adir.dialects.tensor import elementwise as ew
from adir.passes import PLANNING_PIPELINE
from adir.passes.select_kernels.rules import RULES, Refuse, Use
from adir.passes.select_kernels.targets import TARGETS

RNG = np.random.default_rng(0)
PLAN = f"infer-shapes,{PLANNING_PIPELINE}"


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


Case = tuple[str, list[tuple[int, ...]], tuple[int, ...], str]  # op, operands, result, call


def function(op_text: str, inputs: list[np.ndarray], result_shape: tuple[int, ...]) -> str:
    """`@f` of one op: `%y = <op_text with OPERANDS> : types -> result`."""
    return functions([(op_text, [a.shape for a in inputs], result_shape, "")])


def functions(cases: list[Case]) -> str:
    """`@f` computing each case's op on arguments of its own, returning every result."""
    args, lines, results = [], [], []
    for index, (op_text, shapes, result_shape, _) in enumerate(cases):
        names = [f"%a{len(args) + i}" for i in range(len(shapes))]
        types = [tensor_type(shape) for shape in shapes]
        args += [f"{name}: {type_}" for name, type_ in zip(names, types, strict=True)]
        result = tensor_type(result_shape)
        operation = op_text.replace("OPERANDS", ", ".join(names))
        lines.append(f"  %y{index} = {operation} : {', '.join(types)} -> {result}")
        results.append((f"%y{index}", result))
    return "\n".join(
        [
            f"func.func @f({', '.join(args)}) -> ({', '.join(t for _, t in results)}) {{",
            *lines,
            f"  func.return {', '.join(n for n, _ in results)} : "
            f"{', '.join(t for _, t in results)}",
            "}",
        ]
    )


def inputs_of(cases: list[Case]) -> list[np.ndarray]:
    return [normal(*shape) for _, shapes, _, _ in cases for shape in shapes]


def cmsis_source(text: str) -> str:
    """The C of `text`'s functions, planned, with kernels="cmsis-dsp"."""
    planned = run_pipeline(parse_module(text, "test.mlir"), PLAN)
    return print_model(selected(planned, "cmsis-dsp"), "m_").source


def calls_of_f(source: str) -> list[str]:
    """The kernel calls in the body of m_f, one per line."""
    body = source.split(" m_f(", 1)[1]
    return [line.strip() for line in body.splitlines() if "/* adir_kernel." in line]


UPDATES: list[Case] = [
    ("adir.sgd_update OPERANDS", [(4, 70), (4, 70), ()], (4, 70), "adir_cmsis_sgd_update("),
    (
        "adir.matmul_sgd_update OPERANDS {transpose_a}",
        [(4, 70), (1, 4), (1, 70), ()],
        (4, 70),
        "adir_cmsis_matmul_sgd_update(",
    ),
    (
        "adir.matmul_sgd_update OPERANDS {transpose_a}",
        [(5, 130), (3, 5), (3, 130), ()],
        (5, 130),
        "adir_cmsis_matmul_sgd_update(",
    ),
]


MAPPED: list[Case] = [
    ("adir.matmul OPERANDS", [(3, 5), (5, 4)], (3, 4), "adir_cmsis_matmul("),
    ("adir.matmul OPERANDS {transpose_b}", [(3, 5), (4, 5)], (3, 4), "adir_cmsis_matmul_nt("),
    ("adir.matmul OPERANDS {transpose_b}", [(1, 7), (6, 7)], (1, 6), "adir_cmsis_matmul_nt("),
    ("adir.matmul OPERANDS", [(2, 3, 5), (2, 5, 4)], (2, 3, 4), "adir_cmsis_matmul("),
    ("adir.matmul OPERANDS", [(2, 3, 5), (5, 4)], (2, 3, 4), "adir_cmsis_matmul("),
    (
        "adir.matmul OPERANDS {transpose_b}",
        [(2, 3, 5), (2, 4, 5)],
        (2, 3, 4),
        "adir_cmsis_matmul_nt(",
    ),
    ("adir.add OPERANDS", [(3, 4), (3, 4)], (3, 4), "arm_add_f32("),
    ("adir.sub OPERANDS", [(13,), (13,)], (13,), "arm_sub_f32("),
    ("adir.mul OPERANDS", [(2, 3, 4), (2, 3, 4)], (2, 3, 4), "arm_mult_f32("),
    ("adir.neg OPERANDS", [(7, 3)], (7, 3), "arm_negate_f32("),
    ("adir.relu OPERANDS", [(9,)], (9,), "arm_clip_f32("),
    ("adir.reshape OPERANDS {shape = array<i64: -1, 6>}", [(2, 3, 4)], (4, 6), "arm_copy_f32("),
    ("adir.flatten OPERANDS {start_dim = 1}", [(2, 3, 4)], (2, 12), "arm_copy_f32("),
    ("adir.sum OPERANDS", [(3, 4)], (), "arm_accumulate_f32("),
    ("adir.sum OPERANDS {axes = array<i64: 1, 2>}", [(5, 3, 4)], (5,), "adir_cmsis_sum_rows("),
    ("adir.sum OPERANDS {axes = array<i64: 0>}", [(1, 6)], (6,), "arm_copy_f32("),
    *UPDATES,
]


def test_mapped_ops_call_cmsis_and_match_the_interpreter() -> None:
    """Each op becomes its CMSIS-DSP call (in order, no reference kernel left) and the build
    agrees with the interpreter (gcc, ASan, UBSan)."""
    inputs = inputs_of(MAPPED)
    check_cmsis_against_interpreter(functions(MAPPED), "f", [inputs])
    calls = calls_of_f(cmsis_source(functions(MAPPED)))
    assert len(calls) == len(MAPPED)
    for (op_text, _, _, call), line in zip(MAPPED, calls, strict=True):
        assert line.startswith(call), f"{op_text}: {line}"


ILLEGAL: list[Case] = [
    ("adir.matmul OPERANDS {transpose_a}", [(5, 3), (5, 4)], (3, 4), "ADIR_TUNED_MATMUL("),
    (
        "adir.matmul OPERANDS {transpose_a, transpose_b}",
        [(5, 3), (4, 5)],
        (3, 4),
        "ADIR_TUNED_MATMUL(",
    ),
    ("adir.add OPERANDS", [(3, 4), (4,)], (3, 4), "ADIR_ADD_BROADCAST("),
    ("adir.mul OPERANDS", [(3, 1), (1, 4)], (3, 4), "ADIR_MUL_BROADCAST("),
    ("adir.sum OPERANDS {axes = array<i64: 0>}", [(3, 4)], (4,), "ADIR_SUM("),
    ("adir.sum OPERANDS {axes = array<i64: 0, 2>}", [(2, 3, 4)], (3,), "ADIR_SUM_STRIDED("),
    ("adir.max OPERANDS", [(3, 4)], (), "ADIR_MAX("),  # arm_max_no_idx_f32 drops nans
    ("adir.exp OPERANDS", [(5,)], (5,), "ADIR_EXP("),  # an approximation under Helium
    (
        "adir.sgd_update OPERANDS {weight_decay = 0.01 : f32}",
        [(4, 3), (4, 3), ()],
        (4, 3),
        "ADIR_TUNED_SGD_UPDATE(",
    ),
    (
        "adir.matmul_sgd_update OPERANDS",
        [(4, 3), (4, 2), (2, 3), ()],
        (4, 3),
        "ADIR_TUNED_MATMUL_SGD_UPDATE(",
    ),
    (
        "adir.matmul_sgd_update OPERANDS {transpose_a, transpose_b}",
        [(4, 3), (2, 4), (3, 2), ()],
        (4, 3),
        "ADIR_TUNED_MATMUL_SGD_UPDATE(",
    ),
    (
        "adir.matmul_sgd_update OPERANDS {transpose_a, clip_value = 0.5 : f32}",
        [(4, 3), (2, 4), (2, 3), ()],
        (4, 3),
        "ADIR_TUNED_MATMUL_SGD_UPDATE_GENERAL(",
    ),
]


def test_illegal_ops_keep_their_reference_kernels() -> None:
    """Each op CMSIS-DSP refuses calls adir's kernel, tuned where there is one."""
    inputs = inputs_of(ILLEGAL)
    check_cmsis_against_interpreter(functions(ILLEGAL), "f", [inputs])
    calls = calls_of_f(cmsis_source(functions(ILLEGAL)))
    assert len(calls) == len(ILLEGAL)
    for (op_text, _, _, call), line in zip(ILLEGAL, calls, strict=True):
        assert line.startswith(call), f"{op_text}: {line}"


def test_matmul_past_uint16_dims_keeps_its_reference_kernel() -> None:
    """CMSIS-DSP's matrix dims are uint16_t: k = 65536 stays on adir's (tuned) matmul (C only,
    not run)."""
    text = function("adir.matmul OPERANDS {transpose_b}", [np.zeros((1, 65536))] * 2, (1, 1))
    assert "ADIR_TUNED_MATMUL(a0, a1" in cmsis_source(text)
    small = function("adir.matmul OPERANDS {transpose_b}", [np.zeros((1, 65535))] * 2, (1, 1))
    assert "adir_cmsis_matmul_nt(a0, a1" in cmsis_source(small)


def test_buffers_other_than_f32_keep_their_reference_kernel() -> None:
    """CMSIS-DSP's functions here are f32 only: a neg of i32 buffers is not arm_negate_f32,
    nor one with an f32 input and an i32 output; f32 in and out is."""
    x, y = (memref.AllocOp.get(i32, shape=[4]) for _ in range(2))
    rule, host = RULES["cmsis-dsp"][KERNELS[ew.NegOp]], TARGETS["host"]
    assert rule(KERNELS[ew.NegOp]([x.memref], [y.memref]), host) == Refuse("not float32")
    f32_in = memref.AllocOp.get(f32, shape=[4]).memref
    assert rule(KERNELS[ew.NegOp]([f32_in], [y.memref]), host) == Refuse("not float32")
    f32_out = memref.AllocOp.get(f32, shape=[4]).memref
    assert rule(KERNELS[ew.NegOp]([f32_in], [f32_out]), host) == Use("arm_negate_f32")


def test_relu_and_sgd_updates_are_bit_identical_to_the_reference_kernels() -> None:
    """arm_clip_f32(x, 0, +inf) against adir_relu on nan, infinities, -0.0 and denormals, and the
    SGD updates (rows longer than a chunk, batches of 1 and 3): the same bytes out."""
    x = np.array(
        [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 3.5, -2.0, 1e38, -1e38], np.float32
    )
    cases = [("adir.relu OPERANDS", [x.shape], x.shape, "arm_clip_f32("), *UPDATES]
    planned = run_pipeline(parse_module(functions(cases), "test.mlir"), PLAN)
    calls = calls_of_f(print_model(selected(planned, "cmsis-dsp"), "m_").source)
    assert [line.split("(")[0] + "(" for line in calls] == [case[3] for case in cases]
    inputs = [x, *inputs_of(UPDATES)]
    with tempfile.TemporaryDirectory() as directory:
        compiler = c_compilers()[0]
        reference = build_c(planned, "f", 1, Path(directory) / "reference", compiler)
        cmsis = build_cmsis_c(planned, "f", 1, Path(directory) / "cmsis", compiler)
        expected = reference.run(0, [inputs])
        actual = cmsis.run(0, [inputs])
    for got, want in zip(actual, expected, strict=True):
        assert got.tobytes() == want.tobytes()


def test_c_of_the_seed_mlp_names_its_cmsis_calls() -> None:
    planned = run_pipeline(parse_example("mnist_mlp"), "infer-shapes,autodiff,insert-optimizer")
    planned = run_pipeline(planned, PLANNING_PIPELINE)
    source = print_model(selected(planned, "cmsis-dsp"), "m_").source
    assert '#include "adir_cmsis_dsp.h"' in source
    assert "adir_cmsis_matmul_nt(x, m_w1, h, 1, 1, 32, 784, 1);" in source
    assert '#include "adir_cmsis_dsp.h"' not in print_model(planned, "m_").source


SGD = "autodiff,insert-optimizer{kind=sgd lr=0.01}"
ADAM = "autodiff,insert-optimizer{kind=adam lr=0.001}"


def test_on_the_cortex_m4f_cmsis_keeps_only_the_calls_that_win() -> None:
    """select-kernels{kernels=cmsis-dsp target=cortex-m4f} on LeNet-5's SGD step: the calls
    measured slower than adir's kernels on the M4 (docs/cortex_m.md, `ADIR_FASTER`) are
    refused with their figures and go to adir's kernels (tuned where they apply); the adds and
    one-element sums (copies), which CMSIS-DSP wins, stay CMSIS-DSP's. On the host the same
    ops are all mapped (the legal map, which the tests above build and run)."""
    differentiated = run_pipeline(parse_example("lenet5"), f"infer-shapes,{SGD}")
    pipeline = "fuse-weight-updates,reorder-updates,bufferize,select-kernels{kernels=cmsis-dsp"
    m4 = run_pipeline(differentiated.clone(), pipeline + " target=cortex-m4f}")
    host = run_pipeline(differentiated, pipeline + "}")

    def verdicts(module: ModuleOp) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for op in module.walk():
            if "adir.kernel" not in op.attributes:
                continue
            call = op.attributes.get("adir.kernel_call")
            refused = op.attributes.get("adir.kernel_refused")
            if call is not None:
                verdict = f"call {call.data}"  # type: ignore[attr-defined]
            elif refused is not None:
                verdict = f"refused {refused.data['cmsis-dsp'].data}"  # type: ignore[attr-defined]
            else:
                verdict = "no rule"
            found.setdefault(op.name, set()).add(verdict)
        return found

    on_m4, on_host = verdicts(m4), verdicts(host)
    slower = "slower than adir's on cortex-m4f"
    for name, call in [
        ("adir_kernel.matmul", "adir_cmsis_matmul"),
        ("adir_kernel.relu", "arm_clip_f32"),
        ("adir_kernel.reshape", "arm_copy_f32"),
        ("adir_kernel.sgd_update", "adir_cmsis_sgd_update"),
        ("adir_kernel.matmul_sgd_update", "adir_cmsis_matmul_sgd_update"),
    ]:
        assert any(v.startswith(f"refused {call}: {slower}") for v in on_m4[name]), on_m4[name]
        assert f"call {call}" in on_host[name] or f"call {call}_nt" in on_host[name], name
        assert not any(v.startswith("call") for v in on_m4[name]), on_m4[name]
    assert on_m4["adir_kernel.add"] == {"call arm_add_f32"}
    # A sum of one element a row is CMSIS-DSP's copy; the conv biases' rows (6x576, 16x64)
    # are adir's sums.
    assert on_m4["adir_kernel.sum"] == {
        "call arm_copy_f32",
        "refused adir_cmsis_sum_rows: slower than adir's on cortex-m4f: 8,360 against 9,660 "
        "instructions at 6x576, 2,840 against 3,200 at 16x64",
    }
    assert "call adir_cmsis_sum_rows" in on_host["adir_kernel.sum"]


def trains_like_the_reference(example: str, optimizer: str, steps: int) -> None:
    """The CMSIS-DSP build of `example` trains like the reference build: each step's loss to
    1e-5 relative, every parameter and state after them to 1e-5 relative (1e-6 absolute; with
    Adam 1e-5, `ADAM_PARAM_ATOL`: a weight behind a dead unit moves by steps that its rounding
    noise drives, see test_c_examples.py)."""
    batches = training_steps(example, steps)
    tensor_level = run_pipeline(parse_example(example), f"infer-shapes,{optimizer}")
    planned = run_pipeline(tensor_level, PLANNING_PIPELINE)
    compiler = c_compilers()[0]
    with tempfile.TemporaryDirectory() as directory:
        reference = build_c(planned, "train_step", steps, Path(directory) / "ref", compiler)
        cmsis = build_cmsis_c(planned, "train_step", steps, Path(directory) / "cmsis", compiler)
        expected = reference.run(0, batches)
        actual = cmsis.run(0, batches)
    atol = ADAM_PARAM_ATOL if "adam" in optimizer else 1e-6
    losses = np.array(actual[:steps]).reshape(-1)
    np.testing.assert_allclose(losses, np.array(expected[:steps]).reshape(-1), rtol=1e-5)
    for index, (got, want) in enumerate(zip(actual[steps:], expected[steps:], strict=True)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol, err_msg=f"param #{index}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("example", "optimizer"),
    [("mnist_mlp", SGD), ("mnist_mlp", ADAM), ("lenet5", SGD), ("lenet5", ADAM)],
)
def test_example_trains_with_cmsis_like_the_reference_build(example: str, optimizer: str) -> None:
    trains_like_the_reference(example, optimizer, 50)


def test_seed_mlp_with_cmsis_trains_like_the_interpreter() -> None:
    """The origin of truth: 50 SGD steps of the CMSIS-DSP build against the interpreter."""
    module: ModuleOp = parse_example("mnist_mlp")
    check_cmsis_against_interpreter(
        module, "train_step", training_steps("mnist_mlp", 50), differentiate=SGD
    )
