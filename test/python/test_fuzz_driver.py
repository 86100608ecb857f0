"""The driver survives malformed input: mutated text of the examples and lit tests, odd symbol
names, huge literals, malformed `-t` specs, odd option values, odd output targets and empty files
exit with 0 or 1 (a diagnostic), never 2 (an internal error), never with a traceback and never
hang; what exits 0 with `-t c` compiles with `cc -std=c99 -Wall -Wextra -Werror` (gcc and clang
where present); and the same model compiles to byte-identical output in two separate processes.

The fuzz cases are derandomized and bounded (ADIR_FUZZ_EXAMPLES examples per mutation class,
60 by default, not shrunk), so this file runs in CI in about a minute. A longer run:

    ADIR_FUZZ_EXAMPLES=5000 python -m pytest -q test/python/test_fuzz_driver.py

(it stops at the first failure of each class; `python test/python/fuzz_census.py` counts every
failure instead).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest
from fuzzing import Outcome, compile_c, run_on_text
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from adir.tools.adir_opt import main

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [*ROOT.glob("examples/*.mlir"), *ROOT.glob("test/filecheck/**/*.mlir")],
    key=lambda path: str(path.relative_to(ROOT)),
)
SOURCES = [path for path in SOURCES if "Output" not in path.parts]
C_TARGET = ["-t", "c"]
# The three pipelines of issue 17's "Done when", then two that stop earlier.
PIPELINES = [
    [],
    ["--optimizer=adam", "--plan-memory", *C_TARGET],
    ["--predict", "--optimizer=sgd", "--recompute", "--plan-memory", *C_TARGET],
    ["-p", "infer-shapes"],
    ["--autodiff"],
]
MAX_EXAMPLES = int(os.environ.get("ADIR_FUZZ_EXAMPLES", "60"))
# Compile the C of one in COMPILE_EVERY inputs that exit 0 with `-t c` (by a hash of the input).
COMPILE_EVERY = int(os.environ.get("ADIR_FUZZ_COMPILE_EVERY", "1"))

# Whitespace, SSA/symbol names and words, numbers, then any single character.
_TOKEN = re.compile(rb"\s+|[%@#^!]?[\w.$-]+|.", re.DOTALL)
_NUMBER = re.compile(rb"-?\d+")
_ELEMENT_TYPE = re.compile(rb"\b(f32|f64|f16|i1|i8|i32|i64|index)\b")
_SYMBOL = re.compile(rb'@(?:"[^"\n]*"|[\w$.-]+)')
_DIM = re.compile(rb"(?<=[<x])\d+(?=x)")
ODD_NUMBERS = [b"0", b"-1", b"1", b"99999999999", b"18446744073709551616", b"1e400", b"-0"]
ODD_TYPES = [b"f32", b"i32", b"f64", b"i1", b"index", b"f16", b"none", b"tensor<f32>"]
ODD_BYTES = [b"\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80", b"\x00", b"\xf0\x9f"]
# Symbol names that are not C identifiers, or that map to the same one as another name, or that
# are the C API's own names (`<prefix>init`, `<prefix>param_data`, ...) or C keywords.
ODD_NAMES = [
    b'@"a b"',
    b"@a_b",
    b'@"1w"',
    b"@_1w",
    b'@"x-y"',
    b"@x_y",
    b'@""',
    b'@"a.b"',
    b'@"\xc3\xa9"',
    b"@init",
    b"@param_data",
    b"@param_name",
    b"@param_size",
    b"@param_count",
    b"@main",
    b"@int",
    b"@float",
    b"@for",
    b"@NULL",
    b"@arena",
    b"@PARAM_W",
]
# Dimensions past int32 (2^31, 2^32) and size_t-sized arenas (a 4-byte float times 2^40).
HUGE_DIMS = [b"2147483648", b"4294967296", b"4294967297", b"1099511627776", b"99999999999"]


def _tokens(data: bytes) -> list[bytes]:
    return _TOKEN.findall(data)


@st.composite
def mutated_source(draw: st.DrawFn, kind: str = "text") -> tuple[str, bytes]:
    """The text of one example or lit test with one to three random mutations of a `kind`
    (MUTATIONS)."""
    path = draw(st.sampled_from(SOURCES))
    data = path.read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        data = draw(MUTATIONS[kind](data))
    return str(path.relative_to(ROOT)), data


def _mutation(data: bytes) -> st.SearchStrategy[bytes]:
    tokens = _tokens(data) or [b""]
    lines = data.split(b"\n")
    last_token, last_line = len(tokens) - 1, len(lines) - 1

    def delete_token(i: int) -> bytes:
        return b"".join(tokens[:i] + tokens[i + 1 :])

    def swap_tokens(i: int, j: int) -> bytes:
        swapped = list(tokens)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        return b"".join(swapped)

    def duplicate_line(i: int) -> bytes:
        return b"\n".join(lines[: i + 1] + lines[i:])

    def delete_line(i: int) -> bytes:
        return b"\n".join(lines[:i] + lines[i + 1 :])

    def replace_nth(pattern: re.Pattern[bytes], n: int, new: bytes) -> bytes:
        matches = list(pattern.finditer(data))
        if not matches:
            return data
        match = matches[n % len(matches)]
        return data[: match.start()] + new + data[match.end() :]

    def insert_bytes(at: int, new: bytes) -> bytes:
        return data[:at] + new + data[at:]

    positions = st.integers(0, len(data))
    return st.one_of(
        st.integers(0, last_token).map(delete_token),
        st.tuples(st.integers(0, last_token), st.integers(0, last_token)).map(
            lambda ij: swap_tokens(*ij)
        ),
        st.integers(0, last_line).map(duplicate_line),
        st.integers(0, last_line).map(delete_line),
        st.tuples(st.integers(0, 10_000), st.sampled_from(ODD_NUMBERS)).map(
            lambda nv: replace_nth(_NUMBER, *nv)
        ),
        st.tuples(st.integers(0, 10_000), st.sampled_from(ODD_TYPES)).map(
            lambda nv: replace_nth(_ELEMENT_TYPE, *nv)
        ),
        positions.map(lambda at: data[:at]),
        st.tuples(positions, st.sampled_from(ODD_BYTES)).map(lambda ab: insert_bytes(*ab)),
    )


def _symbol_mutation(data: bytes) -> st.SearchStrategy[bytes]:
    """Every use of one symbol renamed: to an ODD_NAMES name, or to the case twin of another
    symbol (@w2 -> @W1 next to @w1), so that the module still parses and reaches the C."""
    symbols = list(dict.fromkeys(_SYMBOL.findall(data)))
    if not symbols:
        return st.just(data)

    def rename(i: int, new: bytes) -> bytes:
        old = symbols[i % len(symbols)]
        return re.sub(re.escape(old) + rb"(?![\w$.-])", new.replace(b"\\", b"\\\\"), data)

    def case_twin(i: int, j: int) -> bytes:
        other = symbols[j % len(symbols)]
        return rename(i, b"@" + other[1:].swapcase())

    return st.one_of(
        st.tuples(st.integers(0, 10_000), st.sampled_from(ODD_NAMES)).map(lambda iv: rename(*iv)),
        st.tuples(st.integers(0, 10_000), st.integers(0, 10_000)).map(lambda ij: case_twin(*ij)),
    )


def _huge_mutation(data: bytes) -> st.SearchStrategy[bytes]:
    """One dimension of a tensor type (`<2x`, `x4x`) replaced by one of HUGE_DIMS, or every
    dimension equal to it, so that the shapes still agree."""
    dims = _DIM.findall(data)
    if not dims:
        return st.just(data)

    def replace_one(n: int, new: bytes) -> bytes:
        match = list(_DIM.finditer(data))[n % len(dims)]
        return data[: match.start()] + new + data[match.end() :]

    def replace_all(n: int, new: bytes) -> bytes:
        old = dims[n % len(dims)]
        return re.sub(rb"(?<=[<x])" + old + rb"(?=x)", new, data)

    choices = st.tuples(st.integers(0, 10_000), st.sampled_from(HUGE_DIMS))
    return st.one_of(
        choices.map(lambda nv: replace_one(*nv)), choices.map(lambda nv: replace_all(*nv))
    )


MUTATIONS = {"text": _mutation, "names": _symbol_mutation, "huge": _huge_mutation}


def run_driver(data: bytes, options: list[str]) -> Outcome:
    """Run `adir-opt` in this process on `data` (fuzzing.run_tool)."""
    return run_on_text(main, data, options)


def c_failures(data: bytes, options: list[str], source: str) -> list[str]:
    """For an input that exited 0 with `-t c` and printed `source`: the compilers that reject
    it (with the header, printed by a second run with `-t c{file="header"}`)."""
    header_options = [*options[: options.index("-t")], "-t", 'c{file="header"}']
    header = run_driver(data, header_options)
    assert header.code == 0, header.output
    return compile_c(source, header.stdout)


@pytest.mark.parametrize(
    "kind",
    [
        "text",
        "names",
        "huge",
    ],
)
def test_mutated_input_gets_a_diagnostic_not_a_crash(kind: str) -> None:
    """MAX_EXAMPLES mutated inputs of one kind through PIPELINES: no hang, no traceback, exit 0
    or 1, and the C of every `-t c` success (one in COMPILE_EVERY) compiles."""

    @settings(
        derandomize=True,
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: it takes minutes per failure
        suppress_health_check=list(HealthCheck),
    )
    @given(source=mutated_source(kind), options=st.sampled_from(PIPELINES))
    def check(source: tuple[str, bytes], options: list[str]) -> None:
        name, data = source
        outcome = run_driver(data, options)
        problem = outcome.problem()
        assert problem is None, f"{name} mutated, {options}: {problem}\n{outcome.output}\n{data!r}"
        if outcome.code == 0 and "-t" in options and zlib.crc32(data) % COMPILE_EVERY == 0:
            failures = c_failures(data, options, outcome.stdout)
            assert not failures, f"{name} mutated, {options}: C\n{failures[0]}\n{data!r}"

    check()


@pytest.mark.parametrize("target", ["mlir", "c"])
@pytest.mark.parametrize("example", ["mnist_mlp.mlir", "lenet5.mlir", "ds_cnn.mlir"])
def test_training_step_is_byte_identical_across_processes(example: str, target: str) -> None:
    """The planned IR, and the C printed from it, do not depend on string hashing (set or
    dict order) or on anything else that changes between processes."""
    command = [
        sys.executable,
        "-m",
        "adir.tools.adir_opt",
        str(ROOT / "examples" / example),
        "--predict",
        "--optimizer=adam",
        "--lr=0.001",
        "--plan-memory",
        "-t",
        target,
    ]
    first, second = (
        subprocess.run(command, capture_output=True, check=True, env=_hash_seed(seed))
        for seed in ("1", "2")
    )
    assert first.stdout, first.stderr
    assert first.stdout == second.stdout


def _hash_seed(seed: str) -> dict[str, str]:
    """The environment with a different string-hash seed, so set order would differ."""
    return {**os.environ, "PYTHONHASHSEED": seed}


# ---- Hand-written classes: each case is its own test, so a known defect marks only itself. ----

DONE_WHEN_PIPELINES = PIPELINES[:3]


def model_text(w: str = "w", v: str = "v", f: str = "loss", g: str = "forward") -> str:
    """A small valid model with params @w and @v and functions @loss and @forward, renamed."""
    return f"""adir.param @{w} : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.0, seed = 1>
adir.param @{v} : tensor<3xf32> = #adir.zeros
func.func @{f}(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32>
    attributes {{adir.loss}} {{
  %w = adir.load @{w} : tensor<3x4xf32>
  %v = adir.load @{v} : tensor<3xf32>
  %m = adir.matmul %x, %w {{transpose_b}} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %logits = adir.add %m, %v : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}}
func.func @{g}(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {{
  %w = adir.load @{w} : tensor<3x4xf32>
  %m = adir.matmul %x, %w {{transpose_b}} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  func.return %m : tensor<2x3xf32>
}}
"""


def check_outcome(data: bytes, options: list[str]) -> Outcome:
    """No hang, no traceback, exit 0 or 1; and with `-t c`, C that compiles if it exits 0."""
    outcome = run_driver(data, options)
    assert outcome.problem() is None, f"{options}: {outcome.problem()}\n{outcome.output}"
    if outcome.code == 0 and "-t" in options:
        failures = c_failures(data, options, outcome.stdout)
        assert not failures, f"{options}: the C does not compile\n{failures[0]}"
    return outcome


NAME_CASES = [
    {"w": "w1", "v": "W1"},
    {"w": '"a b"', "v": "a_b"},
    {"w": '"1w"', "v": "_1w"},
    {"w": '"my weight"'},
    {"w": '"1abc"'},
    {"f": '"f g"', "g": "f_g"},
    {"f": "init"},
    {"g": "param_data"},
    {"g": "param_name"},
    {"w": "int", "v": "float"},
    {"w": '"\xe9"'},
]


PIPELINE_IDS = ["plain", "adam-c", "predict-sgd-c"]


def with_pipelines(cases: dict[str, object]) -> list[object]:
    """Every case with every DONE_WHEN_PIPELINES pipeline, as `pytest.param`s with the id
    `<case>-<pipeline>`."""
    return [
        pytest.param(case, options, id=f"{case_id}-{pipeline_id}")
        for case_id, case in cases.items()
        for pipeline_id, options in zip(PIPELINE_IDS, DONE_WHEN_PIPELINES, strict=True)
    ]


@pytest.mark.parametrize(
    ("names", "options"),
    with_pipelines({"-".join(case.values()): case for case in NAME_CASES}),
)
def test_odd_symbol_names(names: dict[str, str], options: list[str]) -> None:
    """Names that are no C identifier or that map to the same one: a located error (exit 1) or
    C that compiles; never two C definitions of one name."""
    check_outcome(model_text(**names).encode(), options)


HUGE_CASES = {
    # A splat of 2^31+ elements: xDSL expands splats when it parses them.
    "splat-2x1e11": "%c = adir.constant dense<1.0> : tensor<2x99999999999xf32>",
    "splat-2^31": "%c = adir.constant dense<1.0> : tensor<2147483648xf32>",
    "splat-65536x32768": "%c = adir.constant dense<1.0> : tensor<65536x32768xf32>",
    # A kernel dimension past int32 (an argument of 2^31 rows).
    "log-softmax-2^31": "%c = adir.log_softmax %h : tensor<2147483648x3xf32>",
}


@pytest.mark.parametrize(
    ("line", "options"),
    with_pipelines(HUGE_CASES),
)
def test_huge_literals(line: str, options: list[str]) -> None:
    """The loss of model_text() plus the sum of a huge value: a located error or C that
    compiles."""
    huge_type = line.split(": ")[-1]
    text = model_text().replace(
        "  func.return %l : tensor<f32>",
        f"  {line}\n  %s = adir.sum %c : {huge_type} -> tensor<f32>\n"
        "  %r = adir.add %l, %s : tensor<f32>, tensor<f32> -> tensor<f32>\n"
        "  func.return %r : tensor<f32>",
        1,
    )
    if "%h" in line:
        text = text.replace("(%x:", f"(%h: {huge_type}, %x:", 1)
    check_outcome(text.encode(), options)


@pytest.mark.parametrize(
    ("elements", "options"),
    with_pipelines({"2^31": "2147483648", "2^42": "4398046511104"}),
)
def test_huge_params(elements: str, options: list[str]) -> None:
    """A param past int32 (8 GiB) or of 2^42 elements: a located error or C that compiles."""
    text = model_text() + f"adir.param @huge : tensor<{elements}xf32> = #adir.zeros\n"
    check_outcome(text.encode(), options)


TARGET_SPECS = [
    "c{",
    "c{=}",
    "c{file=}",
    "c{prefix=../x}",
    'c{prefix="a" prefix="b"}',
    'c{file="nope"}',
    "c{unknown=1}",
    "c}",
    "{}",
    "nope",
    'c{prefix="a b"}',
    'c{kernels="x"}',
    'c{file="header" file="source"}',
]


@pytest.mark.parametrize("spec", TARGET_SPECS)
def test_malformed_target_spec_is_an_error(spec: str) -> None:
    """Each spec is wrong (unbalanced, empty key or value, a path or space in the prefix, a
    repeated or unknown key, an unknown target): exit 1 with a diagnostic and no traceback."""
    outcome = check_outcome(model_text().encode(), ["--optimizer=sgd", "--plan-memory", "-t", spec])
    assert outcome.code == 1, f"-t {spec} accepted:\n{outcome.output[:500]}"


BAD_OPTIONS = [
    ["--optimizer=sgd", "--lr=nan"],
    ["--optimizer=sgd", "--lr=inf"],
    ["--optimizer=sgd", "--lr=-inf"],
    ["--optimizer=sgd", "--lr=1e400"],
    ["--optimizer=sgd", "--lr=-1"],
    ["--optimizer=sgd", "--lr=abc"],
    ["-p", "autodiff,insert-optimizer{kind=sgd lr=nan}"],
    ["-p", "autodiff,insert-optimizer{kind=adam beta1=2.0}"],
    ["-p", "autodiff,insert-optimizer{kind=adam beta2=-1.0}"],
    ["-p", "autodiff,insert-optimizer{kind=sgd momentum=-1.0}"],
    ["-p", 'autodiff,insert-optimizer{kind=sgd schedule="step" step_size=0}'],
    ["-p", 'autodiff,insert-optimizer{kind=sgd schedule="cosine" t_max=-1}'],
    ["-p", "autodiff,insert-optimizer{kind=sgd clip_norm=-1.0}"],
    ["-p", 'autodiff,insert-optimizer{kind=sgd schedule="bogus"}'],
    ["-p", "recompute-activations{max_chain=-1}"],
    ["-p", "bufferize,plan-memory,verify-memory-plan{alignment=0}"],
    ["-p", "bufferize,plan-memory,verify-memory-plan{alignment=3}"],
    ["-p", "derive-predict,quantize-int8{samples=-1}"],
    ["-p", 'derive-predict,quantize-int8{calibration="/nonexistent.npy"}'],
    ["-p", 'derive-predict,quantize-int8{calibration="/dev/null"}'],
    ["-p", "bufferize,bufferize"],
    ["-p", "no-such-pass"],
    ["-p", "autodiff{"],
]


@pytest.mark.parametrize(
    "options",
    BAD_OPTIONS,
    ids=[" ".join(options[-1:]) for options in BAD_OPTIONS],
)
def test_bad_option_value_is_an_error(options: list[str]) -> None:
    """Each option value is out of range: exit 1, with a diagnostic that does not blame a
    pipeline the user did not write."""
    outcome = check_outcome(model_text().encode(), options)
    assert outcome.code == 1, f"{options} accepted:\n{outcome.output[:500]}"
    if "-p" not in options:
        assert "<pass-pipeline>" not in outcome.stderr, outcome.stderr


EMPTY_INPUTS = [
    b"",
    b"\n",
    b"   \n\t",
    b"// only a comment\n",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\n" * 10000,
]


@pytest.mark.parametrize("options", DONE_WHEN_PIPELINES, ids=PIPELINE_IDS)
@pytest.mark.parametrize("data", EMPTY_INPUTS, ids=lambda data: repr(data[:20]))
def test_empty_input(data: bytes, options: list[str]) -> None:
    check_outcome(data, options)


def _fifo_reader(path: str, received: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as stream:
            received.append(stream.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("target", ["directory", "fifo", "dash", "missing-parent", "file-in-file"])
def test_output_targets(target: str, tmp_path: Path) -> None:
    """`-o` to a directory, to a path under a missing directory or under a file: exit 1; to a
    FIFO: its reader gets the IR; `-o -`: stdout. Never a traceback."""
    text = model_text().encode()
    expected = run_driver(text, ["--optimizer=sgd"])
    assert expected.code == 0, expected.output
    received: list[bytes] = []
    reader = None
    if target == "directory":
        path = tmp_path / "out"
        path.mkdir()
    elif target == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
        reader = _fifo_reader(str(path), received)
    elif target == "dash":
        path = Path("-")
    elif target == "missing-parent":
        path = tmp_path / "no" / "such" / "out.mlir"
    else:
        (tmp_path / "file").write_text("a file\n")
        path = tmp_path / "file" / "out.mlir"
    try:
        outcome = check_outcome(text, ["--optimizer=sgd", "-o", str(path)])
    finally:
        if reader is not None and reader.is_alive():  # the tool never opened it: end the read
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(10)
    if target == "fifo":
        assert outcome.code == 0, outcome.output
        assert received == [expected.stdout.encode()]
        assert stat.S_ISFIFO(os.lstat(path).st_mode)
    elif target == "dash":
        assert outcome.code == 0, outcome.output
        assert outcome.stdout == expected.stdout
    else:
        assert outcome.code == 1, outcome.output
        assert f"{path}" in outcome.stderr or str(path.parent) in outcome.stderr, outcome.stderr


@pytest.mark.parametrize("target", ["a-file", "header-is-a-directory"])
def test_emit_c_targets(target: str, tmp_path: Path) -> None:
    """`--emit-c` onto a regular file, or into a directory where `model.h` is a directory:
    exit 1, and the directory holds only what it held before."""
    out = tmp_path / "out"
    if target == "a-file":
        out.write_text("mine\n")
    else:
        out.mkdir()
        (out / "model.h").mkdir()
        (out / "model.c").write_text("mine\n")
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    arguments = ["--optimizer=sgd", f"--emit-c={out}", "--c-prefix="]
    outcome = check_outcome(model_text().encode(), arguments)
    assert outcome.code == 1, outcome.output
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    if target != "a-file":
        assert (out / "model.c").read_text() == "mine\n"
