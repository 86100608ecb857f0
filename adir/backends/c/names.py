"""The C names of a module's symbols: one mapping, checked to be one-to-one over everything
the C backend exports, with an error at the symbol where it cannot be.

The rule (also in README, "The generated C"):

- A symbol's C name is the prefix (`--c-prefix`, `-t 'c{prefix=...}'`) and the symbol, each
  character that cannot be in a C identifier (anything but ASCII letters, digits and `_`)
  written as `_`: `@w1` -> `w1`, `@"my weight"` -> `my_weight`, `@"1w"` with prefix `net_` ->
  `net_1w`. A parameter also gives its `_initial` table (dense data) and two macros, upper-cased:
  `PARAM_W1` (its index) and `W1_SIZE`; an argument of a function gives `<FUNC>_<ARG>_SIZE`
  (`TRAIN_STEP_X_SIZE`), the argument named as in the function's C parameters. Macros carry the
  upper-cased prefix (`NET_PARAM_W1`).
- Where that is not one-to-one, or not a name C lets the model have, the compiler refuses, with
  an error at the symbol's op (exit code 1), rather than print C that does not compile or that
  means something else:
  - two symbols that give one name or macro: `@"a b"` and `@a_b` (both `a_b`), `@w1` and
    `@W1` (both `PARAM_W1`: macros are upper case), a parameter `@f_x` and a function `@f` with
    an argument `%x` (both `F_X_SIZE`); the error names both, and the line of the first;
  - a name C does not allow: one that starts with a digit (`@"1w"` without a prefix), one that
    starts with `_` (C reserves those at file scope, and C libraries use them: newlib declares
    `_read`, glibc `_exit`), a keyword of C or C++ (the header is C++-includable), a name ending
    in `_t` (POSIX reserves those);
  - a name something else already means: the API's (`init`, `param_data`, `param_writable`,
    `param_name`, `param_size`, `param_type`, `param_values`, `param_values_writable`,
    `param_index`, `param_blob_size`, `save_params`, `load_params`, `set_arena`, with the
    prefix), what the header or the source
    defines for itself (`ARENA_BYTES`, `dims_0`, `arena`), the runtime's (`adir_...`/`ADIR_...`
    in any case), CMSIS's (`arm_...`, `ARM_...`, `cmsis_...`, CMSIS-DSP's macros such as `PI`), a
    name of the C library headers the generated files include (`exp`, `index`, `NAN`: see
    `reserved_names.py`), and the names that `--c-main`'s `main.c`, the embedded program and
    the Cortex-M startup code define (`main`, `read_batch`, `Reset_Handler`, ...).
  Rename the symbol, or give a prefix (which moves every name away from the library's).
  Refusing keeps ordinary names as they are written: an escape that made the mapping one-to-one
  by construction would have to rewrite `_` in every name (`w1_grad`) too, and it still could
  not keep `@w1` and `@W1` apart in upper-case macros.
- Private symbols (the constants bufferize makes) are not exported: each gets the prefix and its
  name without leading `_` (`__constant_0` -> `constant_0`), with a `_N` suffix where that is
  taken. Values (arguments, buffers) get local names from their name hints: the spelling, with
  `_` after it where it is reserved (`%int` -> `int_`, `%NAN` -> `NAN_`) or else `v_` before it
  (`%_q` -> `v_q`), and a `_N` suffix where another name of the file or of the function has it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FileLineColLoc, ModuleOp
from xdsl.ir import Operation, SSAValue

from adir.backends.c.reserved_names import C_LIBRARY, CMSIS_DSP
from adir.diagnostics import OpError
from adir.dialects.tensor import params as p

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OUTSIDE_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")

C_KEYWORDS = frozenset(
    # C99, C11 and C23
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while alignas alignof bool constexpr false nullptr "
    "static_assert thread_local true typeof typeof_unqual "
    # C++ (model.h is included by C++ too)
    "and and_eq asm catch char8_t char16_t char32_t class compl concept consteval constinit "
    "const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export friend "
    "mutable namespace new noexcept not not_eq operator or or_eq private protected public "
    "reinterpret_cast requires static_cast template this throw try typeid typename using virtual "
    "wchar_t xor xor_eq".split()
)

# File-scope names of the other generated files that include the model's header, or link with
# it: main.c (harness.py), the embedded program (embedded_training.py) and the Cortex-M startup
# code and linker script (cortex_m.py). `errno` is a macro of <errno.h>, which <math.h> may use.
PROGRAM_NAMES = frozenset(
    "main dataset open_dataset read_batch rewind_dataset BATCH FEATURES CLASSES STEPS "
    "Reset_Handler SysTick_Handler Default_Handler initialise_monitor_handles end etext edata "
    "errno".split()
)

_RESERVED_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"_"), "C reserves names that begin with `_` at file scope"),
    (re.compile(r"(?i:adir_)"), "names that begin with `adir_` are the runtime's"),
    (re.compile(r"arm_|ARM_|cmsis_|CMSIS_"), "names that begin so are CMSIS's"),
    (re.compile(r".*_t\Z"), "POSIX reserves names that end in `_t`"),
    (re.compile(r"arg[0-9]+\Z"), "the embedded training program names its tables so"),
]


def default_prefix(input_file: str | None) -> str:
    """`--c-prefix`'s default: the input file's name up to its first dot, spelt as C allows,
    and `_` (`examples/mnist_mlp.mlir` -> `mnist_mlp_`), so that two models' C links into one
    program; `model_` before it where the name cannot begin a C name (`1net.mlir` ->
    `model_1net_`, `adir.mlir` -> `model_adir_`). No prefix for standard input."""
    if input_file is None or input_file == "-":
        return ""
    prefix = f"{spelling(Path(input_file).name.split('.')[0])}_"
    if reserved(f"{prefix}init") is not None or prefix == "_":
        prefix = f"model_{prefix}".replace("__", "_")
    return prefix


def spelling(symbol: str) -> str:
    """`symbol` with every character that cannot be in a C identifier written as `_`."""
    return _OUTSIDE_IDENTIFIER.sub("_", symbol)


def reserved(name: str) -> str | None:
    """Why `name` cannot be a file-scope name of the generated C (None if it can), apart from
    the names of the API and of the module's own symbols."""
    if not IDENTIFIER.fullmatch(name):
        return "not a C identifier" + (" (it starts with a digit)" if name else "")
    if name in C_KEYWORDS:
        return "a keyword of C or C++"
    if name in C_LIBRARY:
        return "a name of the C library's headers"
    if name in CMSIS_DSP:
        return "a macro of CMSIS-DSP"
    if name in PROGRAM_NAMES:
        return "a name of the generated programs (main.c, startup code)"
    for pattern, why in _RESERVED_PATTERNS:
        if pattern.match(name):
            return why
    return None


def api_names(prefix: str) -> dict[str, str]:
    """The names the generated C defines for itself, each with what it is."""
    macro = prefix.upper()
    functions = ["init", "param_data", "param_writable", "param_name", "param_size", "set_arena"]
    functions += ["param_index", "param_blob_size", "save_params", "load_params"]
    functions += ["param_type", "param_values", "param_values_writable"]
    names = {f"{prefix}{name}": f"the API's {prefix}{name}" for name in functions}
    names[f"{prefix}params_table"] = "the table of the parameter blob"
    for name in ["arena_base", "arena_storage"]:
        names[f"{prefix}{name}"] = "the arena's storage"
    for name in ["arena", "seed", "index", "data", "names", "sizes"]:
        names[name] = "a local name of the generated functions"
    macros = [
        "ARENA_BYTES",
        "PERSISTENT_BYTES",
        "FROZEN_BYTES",
        "NUM_PARAMS",
        "PARAMS_BLOB_BYTES",
        "TYPE_F32",
        "TYPE_I8",
        "TYPE_I32",
        "MODEL_H",
        "CALLER_ARENA",
        "ARENA_SECTION",
        "ARENA_BASE",
    ]
    names.update({f"{macro}{name}": f"the header's macro {macro}{name}" for name in macros})
    return names


def table_name(prefix: str, index: int) -> str:
    """The name of the source's `index`th table of dimensions (shared by value)."""
    return f"{prefix}dims_{index}"


def is_table_name(prefix: str, name: str) -> bool:
    return re.fullmatch(re.escape(prefix) + r"dims_[0-9]+", name) is not None


def local_base(hint: str | None, prefix: str) -> str:
    """The C name a value with this name hint would like: its spelling, moved off reserved
    names by a `_` suffix (`%int` -> `int_`) or else a `v_` prefix (`%_x` -> `v_x`)."""
    spelled = spelling(hint) if hint else "t"
    for base in (spelled, spelled + "_", "v_" + spelled.lstrip("_")):
        if _local_ok(base, prefix):
            return base
    return "t"


def _local_ok(name: str, prefix: str) -> bool:
    # `dims` is no base either: its suffixed forms `dims_1`, ... are all tables' names
    return reserved(name) is None and not is_table_name(prefix, f"{name}_1")


def where(op: Operation) -> str:
    """` (line N)` of an op that has a source location, for naming the other of two ops."""
    location = op.location
    if isinstance(location, FileLineColLoc):
        return f" (line {location.line.data})"
    return ""


def symbol_text(symbol: str) -> str:
    """A symbol as written in the IR: `@w1`, `@"my weight"`."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", symbol):  # MLIR's bare identifier
        return f"@{symbol}"
    escaped = "".join(f"\\{ord(c):02X}" if c in '"\\' or not c.isprintable() else c for c in symbol)
    return f'@"{escaped}"'


@dataclass
class CNames:
    """The C names of one module (see the module docstring for the rule)."""

    prefix: str
    params: dict[str, str] = field(default_factory=dict[str, str])  # symbol -> storage array
    functions: dict[str, str] = field(default_factory=dict[str, str])
    constants: dict[str, str] = field(default_factory=dict[str, str])  # private globals
    param_macros: dict[str, tuple[str, str]] = field(
        default_factory=dict[str, tuple[str, str]]
    )  # symbol -> (index macro, size macro)
    arguments: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    argument_macros: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    # Every name at file scope and every macro, for locals to stay clear of.
    taken: set[str] = field(default_factory=set[str])

    def local_names(self) -> LocalNames:
        """A fresh set of local names for one function's values."""
        return LocalNames(self.prefix, set(self.taken))


@dataclass
class LocalNames:
    """The C names of one function's values: name hints made valid and unique (see
    `local_base`); `_N` suffixes where a name is taken."""

    prefix: str
    taken: set[str]
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    # The last suffix tried for each base: names are only ever added to `taken`, so the search
    # for a free `base_n` resumes there (starting from 1 each time was quadratic).
    suffixes: dict[str, int] = field(default_factory=dict[str, int])

    def fresh(self, hint: str | None) -> str:
        base = local_base(hint, self.prefix)
        name, n = base, self.suffixes.get(base, 0)
        if n:
            name = f"{base}_{n}"
        while name in self.taken or reserved(name) is not None:  # (`M_SQRT1` -> `M_SQRT1_2`)
            n += 1
            name = f"{base}_{n}"
        self.suffixes[base] = n
        self.taken.add(name)
        return name

    def bind(self, value: SSAValue, name: str) -> None:
        self.names[value] = name


class _Claims:
    """The names handed out so far, each with the op and the words that say what it is."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.owners: dict[str, tuple[Operation | None, str]] = {
            name: (None, what) for name, what in api_names(prefix).items()
        }

    def claim(self, name: str, op: Operation, what: str) -> None:
        why = reserved(name)
        if why is None and is_table_name(self.prefix, name):
            why = "the source's tables of dimensions are named so"
        if why is not None:
            raise OpError(op, f"C backend: {what} would be `{name}`: {why}; rename it")
        if name in self.owners:
            other, other_what = self.owners[name]
            if other is None:
                raise OpError(
                    op, f"C backend: {what} would be `{name}`, which is {other_what}; rename it"
                )
            raise OpError(
                op,
                f"C backend: {what} and {other_what}{where(other)} would both be `{name}`"
                "; rename one",
            )
        self.owners[name] = (op, what)


def c_names(module: ModuleOp, prefix: str) -> CNames:
    """The C name of every symbol of `module` and of every argument of its functions (see the
    module docstring); raises `OpError` at a symbol whose names C cannot take or another
    symbol's names take already."""
    names = CNames(prefix)
    claims = _Claims(prefix)
    macro = prefix.upper()
    params = [op for op in module.ops if isinstance(op, p.ParamOp)]
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for op in params:
        symbol = op.sym_name.data
        text = symbol_text(symbol)
        storage = prefix + spelling(symbol)
        claims.claim(storage, op, f"the C array of parameter {text}")
        if isinstance(op.initial_value, DenseIntOrFPElementsAttr):
            claims.claim(f"{storage}_initial", op, f"the initial values of {text}")
        upper = spelling(symbol).upper()
        index_macro, size_macro = f"{macro}PARAM_{upper}", f"{macro}{upper}_SIZE"
        claims.claim(index_macro, op, f"the index macro of {text}")
        claims.claim(size_macro, op, f"the size macro of {text}")
        names.params[symbol] = storage
        names.param_macros[symbol] = (index_macro, size_macro)
    for op in functions:
        symbol = op.sym_name.data
        names.functions[symbol] = prefix + spelling(symbol)
        claims.claim(names.functions[symbol], op, f"the C function of {symbol_text(symbol)}")
    # A local may shadow a function (no generated body calls one), not anything else.
    names.taken = set(claims.owners) - set(names.functions.values())
    for op in functions:
        symbol = op.sym_name.data
        locals_ = names.local_names()
        arguments = [locals_.fresh(arg.name_hint or f"arg{arg.index}") for arg in _args(op)]
        names.arguments[symbol] = arguments
        upper = spelling(symbol).upper()
        names.argument_macros[symbol] = []
        for arg, argument in zip(_args(op), arguments, strict=True):
            size_macro = f"{macro}{upper}_{argument.upper()}_SIZE"
            named = f"%{arg.name_hint}" if arg.name_hint else f"#{arg.index}"
            what = f"the size macro of argument {named} of {symbol_text(symbol)}"
            claims.claim(size_macro, op, what)
            names.argument_macros[symbol].append(size_macro)
    names.taken = set(claims.owners) - set(names.functions.values())
    for op in functions:  # no argument may be a macro that a later function's defined
        for argument in names.arguments[op.sym_name.data]:
            if argument in claims.owners:
                _, what = claims.owners[argument]
                raise OpError(
                    op,
                    f"C backend: an argument of {symbol_text(op.sym_name.data)} would be "
                    f"`{argument}`, which is {what}; rename it",
                )
    for op in module.ops:
        if isinstance(op, memref.GlobalOp):
            names.constants[op.sym_name.data] = _private_name(names, op.sym_name.data)
    return names


def _args(op: func.FuncOp) -> Iterable[SSAValue]:
    return op.body.block.args if op.body.blocks else ()


def _private_name(names: CNames, symbol: str) -> str:
    base = names.prefix + (spelling(symbol).lstrip("_") or "constant")
    name, n = base, 0
    functions = set(names.functions.values())
    while (
        name in names.taken
        or name in functions
        or reserved(name)
        or is_table_name(names.prefix, name)
    ):
        n += 1
        name = f"{base}_{n}"
    names.taken.add(name)
    return name


def c_string(text: str) -> str:
    """`text` as a C string literal (UTF-8 bytes; octal escapes for what is not printable
    ASCII, so that no escape runs into the next character)."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= byte < 0x7F and char != "?":  # `?` could start a trigraph (`??=`)
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def c_comment(text: str) -> str:
    """`text` made safe inside a C block comment: no `*/`, no newline."""
    return re.sub(r"\s", " ", text).replace("*/", "* /")
