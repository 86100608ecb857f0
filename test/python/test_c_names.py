"""The C names of symbols (`adir/backends/c/names.py`): two symbols that would give one C name or
macro, and a symbol C cannot take, are an error at the symbol's line that names both (exit 1,
no files written); every other name compiles with -std=c99 -Wall -Wextra -pedantic -Werror and
computes what the interpreter computes. Symbols that are not SSA value names (`@"my weight"`,
`@"1abc"`) do not crash bufferize (they gave an internal error, exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from c_testing import PREFIX, WARNINGS, c_compilers, check_c_against_interpreter

from adir.frontends.torch_import import symbol_names

ADIR_OPT = str(Path(sys.executable).parent / "adir-opt")
SGD = "autodiff,insert-optimizer{kind=sgd lr=0.1}"


def two_params(a: str, b: str, function: str = "loss") -> str:
    """A loss on two parameters @a (line 1) and @b (line 2), symbols as written in the IR."""
    return f"""adir.param @{a} : tensor<2x3xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 1>
adir.param @{b} : tensor<2x3xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 2>
func.func @{function}(%x: tensor<4x3xf32>, %label: tensor<4xi32>) -> tensor<f32> attributes {{adir.loss}} {{
  %a = adir.load @{a} : tensor<2x3xf32>
  %b = adir.load @{b} : tensor<2x3xf32>
  %w = adir.add %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %z = adir.matmul %x, %w {{transpose_b}} : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %l = adir.cross_entropy %z, %label : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}}
"""  # noqa: E501


def two_functions(f: str, g: str) -> str:
    """Functions @f (line 1) and @g (line 5)."""
    body = """(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = adir.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""
    return f"func.func @{f}{body}func.func @{g}{body}"


def emit_c(tmp_path: Path, text: str, *options: str) -> tuple[subprocess.CompletedProcess, Path]:
    """`adir-opt --emit-c` on `text`; with no --c-prefix among `options`, with none at all (not
    the default from the file's name, `model_`)."""
    source = tmp_path / "model.mlir"
    source.write_text(text)
    out = tmp_path / "out"
    if not any(option.startswith("--c-prefix=") for option in options):
        options = ("--c-prefix=", *options)
    completed = subprocess.run(
        [ADIR_OPT, "--plan-memory", "--emit-c", str(out), *options, str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return completed, out


def compile_c(out: Path, prefix: str) -> None:
    """The model's source, with its header, compiles warning-free under every compiler."""
    for compiler in c_compilers():
        completed = subprocess.run(
            [compiler, *WARNINGS, "-I", str(out), "-c", str(out / f"{prefix}model.c"),
             "-o", str(out / "model.o")],
            capture_output=True,
            text=True,
        )  # fmt: skip
        assert completed.returncode == 0, f"{compiler}:\n{completed.stderr}"


# (the IR, the options, the error's line, what the message must name)
CLASHES = {
    # macros are upper-cased, so case-insensitive clashes count
    "w1 and W1": (two_params("w1", "W1"), [], 2, ["@W1", "@w1 (line 1)", "`PARAM_W1`"]),
    "a b and a_b": (two_params('"a b"', "a_b"), [], 2, ['@a_b', '@"a b" (line 1)', "`a_b`"]),
    "a b and a_b, prefixed": (
        two_params('"a b"', "a_b"), ["--c-prefix=net_"], 2, ['@a_b', '@"a b"', "`net_a_b`"]
    ),
    "functions f g and f_g": (two_functions('"f g"', "f_g"), [], 5, ['@f_g', '@"f g" (line 1)']),
    "function init": (two_functions("init", "g"), [], 1, ["@init", "the API's init"]),
    "function param_data": (
        two_functions("g", "param_data"), ["--c-prefix=m_"], 5,
        ["@param_data", "the API's m_param_data"],
    ),
    # a parameter's size macro and a function argument's: both F_X_SIZE
    "param f_x and f(%x)": (
        "adir.param @f_x : tensor<2xf32> = #adir.zeros\n" + two_functions("f", "g"), [], 2,
        ["argument %x of @f", "@f_x (line 1)", "`F_X_SIZE`"],
    ),
    # without a prefix `1w` starts with a digit and `_1w` is reserved at file scope
    "1w without a prefix": (two_params('"1w"', "_1w"), [], 1, ['@"1w"', "`1w`", "digit"]),
    "_1w without a prefix": (two_params("w", "_1w"), [], 2, ["@_1w", "begin with `_`"]),
    "a C library name": (two_params("w", "exp"), [], 2, ["@exp", "`exp`", "C library"]),
    "a GNU-mode library name": (two_params("w", "index"), [], 2, ["@index", "C library"]),
}  # fmt: skip


@pytest.mark.parametrize("case", CLASHES, ids=str)
def test_clashing_or_unmappable_names_are_a_located_error(tmp_path: Path, case: str) -> None:
    text, options, line, named = CLASHES[case]
    completed, out = emit_c(tmp_path, text, *options)
    assert completed.returncode == 1, completed.stderr
    first = completed.stderr.splitlines()[0]
    assert first.startswith(f"{tmp_path / 'model.mlir'}:{line}:1: error: C backend: "), first
    for words in named:
        assert words in first
    assert not out.exists()  # nothing written


# (the IR, the prefix): these names do not clash, so the C compiles (a training step for the
# parameters, the functions themselves for the functions)
DISTINCT = {
    "1w and _1w with a prefix": (two_params('"1w"', "_1w"), "m_"),
    "a b alone": (two_params('"a b"', "w"), ""),
    "quote, backslash, comment end, newline": (two_params('"a\\"b*/"', '"c\\\\d\\0Ae"'), ""),
    "non-ASCII": (two_params('"é"', "w"), "p_"),
    "library names with a prefix": (two_params("exp", "index"), "m_"),
    "functions f g and x*/y": (two_functions('"f g"', '"x*/y"'), ""),
}


@pytest.mark.parametrize("case", DISTINCT, ids=str)
def test_distinct_names_compile_warning_free(tmp_path: Path, case: str) -> None:
    text, prefix = DISTINCT[case]
    train = ["--optimizer=sgd"] if "adir.loss" in text else []
    completed, out = emit_c(tmp_path, text, f"--c-prefix={prefix}", *train)
    assert completed.returncode == 0, completed.stderr
    compile_c(out, prefix)


def test_value_names_that_are_c_names_become_other_locals(tmp_path: Path) -> None:
    """Values named like a macro of <math.h> (`%NAN`), a C keyword, memcpy (which the body
    calls), a macro of the header (`%W_SIZE`, taken: a suffix), a table's (`%dims`), the arena,
    the runtime's, or with a leading `_` get other local names, and the C compiles."""
    names = ["NAN", "int", "memcpy", "W_SIZE", "dims", "dims_1", "arena", "_q"]
    names.append("ADIR_INIT_SEED_STEP")
    lines = ["adir.param @w : tensor<4xf32> = #adir.fill<value = 0.5>"]
    lines.append("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {")
    lines.append("  %w0 = adir.load @w : tensor<4xf32>")
    add = "tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"
    for name in names:  # all live at once, so each gets a buffer of its own
        lines.append(f"  %{name} = adir.mul %x, %w0 : {add}")
    previous = names[0]
    for index, name in enumerate(names[1:]):
        lines.append(f"  %sum{index} = adir.add %{previous}, %{name} : {add}")
        previous = f"sum{index}"
    lines += [f"  func.return %{previous} : tensor<4xf32>", "}"]
    completed, out = emit_c(tmp_path, "\n".join(lines) + "\n")
    assert completed.returncode == 0, completed.stderr
    source = (out / "model.c").read_text()
    # (`%dims_1` is `dims` to xDSL, which drops `_<digits>`; `dims_1` would be a table's name)
    locals_ = ["NAN_", "int_", "memcpy_", "W_SIZE_1", "dims_", "dims__1", "arena_1", "v_q"]
    for name in locals_:
        assert f"float *const {name} = " in source, name
    compile_c(out, "")


@pytest.mark.parametrize("prefix", ["_m", "adir_", "arm_"])
def test_a_prefix_that_gives_reserved_names_is_an_error(tmp_path: Path, prefix: str) -> None:
    completed, out = emit_c(tmp_path, two_functions("f", "g"), f"--c-prefix={prefix}")
    assert completed.returncode == 1, completed.stderr
    assert f"error: C backend: the prefix '{prefix}' gives C names such as" in completed.stderr
    assert not out.exists()


def test_symbols_that_are_not_value_names_train_in_c() -> None:
    """`@"my weight"` and `@"1abc"` (a bias) through autodiff, SGD, bufferize and the C (prefix
    m_: `m_my_weight`, `m_1abc`): the C's loss and parameters after 2 steps are the
    interpreter's."""
    text = """adir.param @"my weight" : tensor<2x3xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 3>
adir.param @"1abc" : tensor<2xf32> = #adir.fill<value = 0.25>
func.func @loss(%x: tensor<4x3xf32>, %label: tensor<4xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @"my weight" : tensor<2x3xf32>
  %b = adir.load @"1abc" : tensor<2xf32>
  %z = adir.matmul %x, %w {transpose_b} : tensor<4x3xf32>, tensor<2x3xf32> -> tensor<4x2xf32>
  %zb = adir.add %z, %b : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  %l = adir.cross_entropy %zb, %label : tensor<4x2xf32>, tensor<4xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""  # noqa: E501
    assert PREFIX == "m_"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    labels = np.array([0, 1, 1, 0], np.int32)
    check_c_against_interpreter(text, "train_step", [[x, labels]] * 2, differentiate=SGD)


def test_param_name_is_the_symbol_exactly(tmp_path: Path) -> None:
    """`<prefix>param_name(i)` returns each symbol's own string, whatever it holds."""
    symbols = ['a"b', "c\\d*/\n??=", "é"]
    escaped = ['"a\\"b"', '"c\\\\d*/\\0A??="', '"é"']
    text = two_params(escaped[0], escaped[1]).replace(
        "func.func", f"adir.param @{escaped[2]} : tensor<1xf32> = #adir.zeros\nfunc.func"
    )
    completed, out = emit_c(tmp_path, text, "--c-prefix=m_")
    assert completed.returncode == 0, completed.stderr
    (out / "main.c").write_text(
        '#include <stdio.h>\n#include "m_model.h"\n'
        "int main(void) { size_t i; for (i = 0; i < M_NUM_PARAMS; ++i) "
        'printf("%s|", m_param_name(i)); return 0; }\n'
    )
    exe = tmp_path / "names"
    sources = [str(p) for p in sorted(out.glob("*.c"))]
    subprocess.run(["cc", *WARNINGS, "-I", str(out), *sources, "-o", str(exe), "-lm"], check=True)
    printed = subprocess.run([str(exe)], capture_output=True, check=True).stdout.decode()
    assert printed == "|".join(symbols) + "|"


def test_bufferize_keeps_symbols_that_are_not_value_names(tmp_path: Path) -> None:
    """The buffers of `@"my weight"` and `@"1abc"` get the name hints `%my_weight` and
    `%_1abc` (xDSL refused the symbols as names: an internal error, exit 2)."""
    text = two_params('"my weight"', '"1abc"')
    source = tmp_path / "model.mlir"
    source.write_text(text)
    completed = subprocess.run(
        [ADIR_OPT, "--optimizer=sgd", "--plan-memory", str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert '%my_weight = adir_kernel.param @"my weight"' in completed.stdout
    assert '%_1abc = adir_kernel.param @"1abc"' in completed.stdout


def test_a_param_named_like_bufferizes_constants(tmp_path: Path) -> None:
    """A param `@__constant_0` and a constant: bufferize names its global otherwise (two
    symbols of one name were an unlocated 'Redefinition of symbol')."""
    text = two_params("__constant_0", "w").replace(
        "  %w = adir.add %a, %b",
        "  %c = adir.constant dense<2.0> : tensor<2x3xf32>\n  %ab = adir.mul %a, %c : "
        "tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>\n  %w = adir.add %ab, %b",
    )
    completed, out = emit_c(tmp_path, text, "--c-prefix=m_", "--optimizer=sgd")
    assert completed.returncode == 0, completed.stderr
    compile_c(out, "m_")


def test_an_unclosed_quoted_symbol_is_an_error_not_a_hang(tmp_path: Path) -> None:
    """xDSL's string-literal pattern backtracked exponentially on a `"` never closed: this line
    took minutes; now it is a parse error at the quote."""
    source = tmp_path / "model.mlir"
    source.write_text('adir.param @"w : tensor<2x3xf32> = #adir.zeros and more text here\n')
    completed = subprocess.run([ADIR_OPT, str(source)], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1
    assert f"{source}:1:13: error: End of file reached before closing string literal" in (
        completed.stderr
    )


def test_imported_symbols_start_with_a_letter_and_differ_ignoring_case() -> None:
    """The importer's symbols are C names as they are: `0.bias` -> `p0_bias` (`_0_bias` is
    reserved in C), `W` and `w` -> `W`, `w_1` (both would give PARAM_W)."""
    assert symbol_names(["0.bias", "W", "w", "_x"]) == {
        "0.bias": "p0_bias",
        "W": "W",
        "w": "w_1",
        "_x": "p_x",
    }
