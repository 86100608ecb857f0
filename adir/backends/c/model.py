"""Print a planned module (after `plan-memory`) as a C99 header/source pair.

    #include "mnist_model.h"
    float mnist_train_step(const float *x, const int32_t *label);

The source holds the model's storage, and nothing else that is mutable: one `static float`
array per parameter and optimizer state in RAM, and the arena, one static buffer of the plan's size
(or a caller's buffer: `-D<PREFIX>CALLER_ARENA` and `<prefix>set_arena`) in which every
transient buffer is a pointer at its planned offset. Each function of the module becomes a C
function whose body is one kernel call per line (`calls/`), with the IR op it came from in a
comment. Constants are `static const` tables, which a device keeps in flash.

The API, per function `@f(%a: memref<..xf32>, %b: memref<..xi32>) -> memref<..>`:
`T f(const float *a, const int32_t *b)` when the result is one f32 scalar (a loss), else
`void f(const float *a, ..., float *out)` writing each result to a caller's buffer. Parameters
are reached by index (`<prefix>param_data`, `_writable`, `_name`, `_size`) and by `#define`d
index and size. `<prefix>init(seed)` gives every parameter in RAM its initial values (a draw
from its initializer, bit-identical to the interpreter's `Session(module, seed=seed)`, or a copy
of its dense data, so that `init` also resets a trained model).

A parameter that no function writes (frozen, `adir/param_storage.py`) is a `static const`
array with its values in place, which a device keeps in flash; nothing of it is copied to RAM,
and the kernels read it through `const float *`. Its `param_writable` is NULL.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float32Type,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Operation

from adir.backends.c.calls import CALL_EMITTERS, CallEmitter, CallSite, c_float, c_type
from adir.backends.c.cmsis_dsp import CMSIS_DSP_HEADER, cmsis_dsp_call
from adir.backends.c.cmsis_nn import CMSIS_NN_HEADER, cmsis_nn_call
from adir.backends.c.header import print_header
from adir.backends.c.literals import (
    bytes_of,
    constant_initializer,
    frozen_initializer,
    literal_list,
    size_of,
)
from adir.backends.c.names import (
    IDENTIFIER,
    c_comment,
    c_names,
    c_string,
    reserved,
    table_name,
)
from adir.backends.c.param_blob import blob_source_lines
from adir.backends.c.size_limits import HOST, StaticBudget, check_sizes
from adir.dense_literals import splat_value
from adir.diagnostics import OpError
from adir.dialects.kernel import KernelOp, ParamBufferOp
from adir.dialects.tensor import params as p
from adir.dialects.tensor.initializers import InitializerAttr
from adir.interpreter.arrays import dense_to_numpy
from adir.interpreter.initializers import seed_of
from adir.param_blob import blob_entries, element_dtype
from adir.param_storage import has_initial_table, read_constants, static_memory


@dataclass
class CModel:
    """The generated pair: `<prefix>model.h` and `<prefix>model.c`."""

    prefix: str
    header: str
    source: str
    libraries: frozenset[str] = frozenset()
    """The kernel libraries its calls use besides adir's (`cmsis-dsp`, `cmsis-nn`)."""

    @property
    def header_name(self) -> str:
        return f"{self.prefix}model.h"

    @property
    def source_name(self) -> str:
        return f"{self.prefix}model.c"


LibraryCall = Callable[[KernelOp, CallSite, str, str], str]
LIBRARY_CALLS: dict[str, LibraryCall] = {
    "cmsis-dsp": lambda op, site, function, build: cmsis_dsp_call(op, site, function),
    "cmsis-nn": cmsis_nn_call,
}
"""How the call of each library besides adir's own is printed: (op, site, function, CMSIS-NN's
build) -> the statement."""


class ModelPrinter:
    """Builds the header and the source of one planned module."""

    def __init__(self, module: ModuleOp, prefix: str):
        self.module = module
        self.prefix = prefix
        self.macro = prefix.upper()
        self.params = [op for op in module.ops if isinstance(op, p.ParamOp)]
        # The parameter API (param_type, param_values, ..., the blob) lists every parameter:
        # f32 ones, and the int8 weights and int32 biases of level-2 int8 layers, which
        # param_data and param_writable (float) give as NULL.
        self.api_params = [op for op in self.params if element_dtype(op.type.element_type)]
        self.blob = blob_entries(module)  # the table of save_params/load_params' blob
        # RAM or flash for each parameter: flash for the frozen ones, which no function writes
        self.memory = static_memory(module)
        self.kinds = self.memory.kinds
        # Constants nothing reads are not printed (an unused static const is a C warning).
        self.globals = read_constants(module)
        self.functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
        self.names = c_names(module, prefix)  # raises at a symbol C cannot name (names.py)
        self.storage = self.names.params
        self.constant_names = self.names.constants
        self.tables: dict[tuple[int, ...], str] = {}
        self.uses_arena = any(
            isinstance(inner, memref.AllocOp) for f in self.functions for inner in f.walk()
        )
        self.prototypes: list[tuple[str, str]] = []  # (doc comment, prototype)
        # What select-kernels recorded: the libraries the calls use, CMSIS-NN's build.
        self.libraries = frozenset(
            library.data
            for f in self.functions
            for inner in f.walk()
            if isinstance(library := inner.attributes.get("adir.kernel"), StringAttr)
        ) & frozenset(LIBRARY_CALLS)
        build = module.attributes.get("adir.cmsis_nn_build")
        self.cmsis_nn_build = build.data if isinstance(build, StringAttr) else ""
        if "cmsis-nn" in self.libraries and not self.cmsis_nn_build:
            raise OpError(module, "C backend: CMSIS-NN calls without adir.cmsis_nn_build")

    # -- checks ---------------------------------------------------------------------------

    def arena_bytes(self) -> int:
        size = self.module.attributes.get("adir.arena_size")
        if not isinstance(size, IntegerAttr):
            raise OpError(
                self.module,
                "C backend: the module has no memory plan; run the C target after "
                "`plan-memory` (e.g. `adir-opt --optimizer=sgd --plan-memory -t c`)",
            )
        return size.value.data

    # -- the source -----------------------------------------------------------------------

    def table(self, values: list[int]) -> str:
        key = tuple(values)
        if key not in self.tables:
            # Tables are shared by value, so the name says only that it holds dimensions.
            self.tables[key] = table_name(self.prefix, len(self.tables))
        return self.tables[key]

    def function(self, op: func.FuncOp) -> list[str]:
        names = self.names.local_names()
        block = op.body.block
        parameters = []
        for arg, name in zip(block.args, self.names.arguments[op.sym_name.data], strict=True):
            if not isinstance(arg.type, MemRefType):
                raise OpError(op, f"C backend: argument of type {arg.type} is not a buffer")
            names.taken.add(name)
            names.bind(arg, name)
            parameters.append(f"const {c_type(arg.type.element_type)} *{name}")
        outputs = list(op.function_type.outputs.data)
        returns_scalar = (
            len(outputs) == 1
            and isinstance(outputs[0], MemRefType)
            and outputs[0].get_shape() == ()
            and isinstance(outputs[0].element_type, Float32Type)
        )
        out_names = []
        if not returns_scalar:
            for index, type_ in enumerate(outputs):
                if not isinstance(type_, MemRefType):
                    raise OpError(op, f"C backend: result of type {type_} is not a buffer")
                name = names.fresh("out" if len(outputs) == 1 else f"out{index}")
                out_names.append(name)
                parameters.append(f"{c_type(type_.element_type)} *{name}")
        result = "float" if returns_scalar else "void"
        signature = (
            f"{result} {self.names.functions[op.sym_name.data]}({', '.join(parameters) or 'void'})"
        )
        self.prototypes.append((self.function_doc(op, returns_scalar), signature))

        body = []
        written_args = set()
        for inner in block.ops:
            if isinstance(inner, memref.AllocOp):
                offset = inner.attributes.get("adir.offset")
                if not isinstance(offset, IntegerAttr):
                    raise OpError(inner, "C backend: buffer without a planned offset")
                type_ = inner.memref.type
                name = names.fresh(inner.memref.name_hint)
                names.bind(inner.memref, name)
                ctype = c_type(type_.element_type)
                body.append(
                    f"{ctype} *const {name} = ({ctype} *)(void *)(arena + {offset.value.data});"
                )
            elif isinstance(inner, ParamBufferOp):
                names.bind(inner.buffer, self.storage[inner.param.root_reference.data])
            elif isinstance(inner, memref.GetGlobalOp):
                names.bind(inner.memref, self.constant_names[inner.name_.root_reference.data])
            elif isinstance(inner, memref.CopyOp):
                body.append(
                    f"memcpy({names.names[inner.destination]}, {names.names[inner.source]}, "
                    f"{bytes_of(inner.source.type)}u);  /* {self.origin(inner)} */"
                )
                written_args.add(inner.destination)
            elif isinstance(inner, KernelOp):
                emitter = CALL_EMITTERS.get(type(inner))
                if emitter is None:
                    raise OpError(inner, f"C backend: no C kernel for {inner.name}")
                site = CallSite(inner, names.names, self.table)
                body.append(f"{self.call(inner, site, emitter)}  /* {self.origin(inner)} */")
                written_args.update(site.outs)
            elif isinstance(inner, func.ReturnOp):
                body.append("ADIR_FLOAT_MODE_LEAVE")
                if returns_scalar:
                    body.append(f"return {names.names[inner.arguments[0]]}[0];")
                else:
                    for name, value in zip(out_names, inner.arguments, strict=True):
                        body.append(
                            f"memcpy({name}, {names.names[value]}, {bytes_of(value.type)}u);"
                        )
            else:
                raise OpError(inner, f"C backend: {inner.name} has no C form")
        for arg in block.args:
            if arg in written_args:
                raise OpError(op, f"C backend: @{op.sym_name.data} writes its argument")
        lines = [signature, "{", "    ADIR_FLOAT_MODE_ENTER"]
        lines += [f"    (void){names.names[arg]};" for arg in block.args if not arg.uses]
        if any(isinstance(inner, memref.AllocOp) for inner in block.ops):
            lines.append(f"    unsigned char *const arena = {self.macro}ARENA_BASE;")
        lines += [f"    {line}" for line in body]
        lines.append("}")
        return lines

    def call(self, op: KernelOp, site: CallSite, emitter: CallEmitter) -> str:
        """The statement of the kernel select-kernels recorded on `op` (adir's own, reference
        or tuned, when it recorded no library call)."""
        library, function = op.attributes.get("adir.kernel"), op.attributes.get("adir.kernel_call")
        if isinstance(library, StringAttr) and library.data in LIBRARY_CALLS:
            if not isinstance(function, StringAttr):
                raise site.error(f"{library.data} chosen without adir.kernel_call")
            return LIBRARY_CALLS[library.data](op, site, function.data, self.cmsis_nn_build)
        return emitter(op, site)

    def origin(self, op: Operation) -> str:
        """The comment of a kernel call: its op and, where known, the source line."""
        text = op.name
        properties = [
            name
            for name, value in op.properties.items()
            if isinstance(value, UnitAttr) and name != "operandSegmentSizes"
        ]
        if properties:
            text += " {" + ", ".join(properties) + "}"
        # select-kernels' choice, and why the libraries it tried first refused the op.
        refused = op.attributes.get("adir.kernel_refused")
        if isinstance(refused, DictionaryAttr):
            reasons = "; ".join(
                f"{name} refused: {reason.data}"
                for name, reason in refused.data.items()
                if isinstance(reason, StringAttr)
            )
            text += f" ({reasons})"
        location = getattr(op, "location", None)
        if isinstance(location, FileLineColLoc):
            file = os.path.basename(location.filename.data)
            text += f" at {file}:{location.line.data}"
        return text

    def function_doc(self, op: func.FuncOp, returns_scalar: bool) -> str:
        name = c_comment(op.sym_name.data)
        if "adir.optimizer" in op.attributes:
            what = (
                "One training step: forward, backward and the parameter update; returns the loss."
            )
        elif name == "predict":
            what = "Inference: the model's prediction for a batch (eval mode); writes it to `out`."
        elif "adir.loss" in op.attributes:
            what = "The loss of one batch, without training."
        elif returns_scalar:
            what = f"The function @{name}; returns its scalar result."
        else:
            what = f"The function @{name}; writes its results to the caller's buffers."
        return f"/* {what} */"

    def init_lines(self) -> list[str]:
        lines = []
        for op in self.params:
            if self.in_flash(op):
                continue  # a frozen parameter: `static const`, its values in place
            name = self.storage[op.sym_name.data]
            size = size_of(op.type)
            init = op.initial_value
            shape = tuple(op.type.get_shape())
            if isinstance(init, DenseIntOrFPElementsAttr):
                splat = splat_value(init)
                integer = not isinstance(op.type.element_type, Float32Type)
                if splat is not None and integer:
                    lines.append(
                        f"{{ size_t i; for (i = 0; i < {size}u; ++i) {name}[i] = {int(splat)}; }}"
                    )
                elif splat is not None:  # a fill, not a table of one number
                    lines.append(f"adir_init_fill({name}, {size}u, {c_float(float(splat))});")
                else:
                    lines.append(f"memcpy({name}, {name}_initial, sizeof {name});")
                continue
            if not isinstance(init, InitializerAttr):
                raise OpError(op, f"C backend: no C initializer for {init}")
            # adir_init_<kind>(data, size, parameters..., stream): the same draw as the
            # interpreter's (adir/interpreter/initializers.py), bit for bit.
            draw = init.draw(shape)
            arguments = [name, f"{size}u", *(c_float(v) for v in draw.parameters)]
            if draw.random:
                arguments.append(
                    f"UINT64_C({seed_of(init, 0)}) + (uint64_t)seed * ADIR_INIT_SEED_STEP"
                )
            lines.append(f"adir_init_{draw.kind}({', '.join(arguments)});")
        return lines

    def in_flash(self, op: p.ParamOp) -> bool:
        return self.kinds[op.sym_name.data].in_flash

    def storage_lines(self) -> list[str]:
        """The parameters in RAM (with the flash copy of their dense data that `init` copies
        from, so that `init` restores them), then the frozen ones as `static const`."""
        ram = []
        for op in self.params:
            if self.in_flash(op):
                continue
            name, size = self.storage[op.sym_name.data], max(size_of(op.type), 1)
            element = c_type(op.type.element_type)
            ram.append(f"static {element} {name}[{size}];")
            init = op.initial_value
            if isinstance(init, DenseIntOrFPElementsAttr) and has_initial_table(
                op, self.kinds[op.sym_name.data]
            ):
                values = dense_to_numpy(init, np.dtype(np.float32))
                ram.append(
                    f"static const {element} {name}_initial[{size}] = "
                    f"{literal_list(values, op.type.element_type)};"
                )
        frozen = [
            f"static const {c_type(op.type.element_type)} "
            f"{self.storage[op.sym_name.data]}[{max(size_of(op.type), 1)}] = "
            f"{frozen_initializer(op)};"
            for op in self.params
            if self.in_flash(op)
        ]
        out = []
        if ram:
            out += [
                "",
                "/* Parameters and optimizer state in RAM: persistent across steps. */",
                *ram,
            ]
        if frozen:
            out += [
                "",
                "/* Frozen parameters: no function writes them, so they are constants (read-only;",
                " * a device keeps them in flash). */",
                *frozen,
            ]
        return out

    def source(self, arena_bytes: int) -> str:
        pre = self.prefix
        functions = [line for op in self.functions for line in [*self.function(op), ""]]
        out = [
            f"/* {pre}model.c: generated by adir from the planned IR; do not edit. */",
            f'#include "{pre}model.h"',
            "",
            "#include <math.h>",
            "#include <string.h>",
            "",
            '#include "adir_float_mode.h"',
            '#include "adir_init.h"',
            '#include "adir_kernels.h"',
            *([f'#include "{CMSIS_DSP_HEADER}"'] if "cmsis-dsp" in self.libraries else []),
            *(self.cmsis_nn_lines() if "cmsis-nn" in self.libraries else []),
            "",
            *self.arena_lines(arena_bytes),
            *self.storage_lines(),
        ]
        if self.globals:
            out += ["", "/* Constants (read-only; a device keeps them in flash). */"]
        for op in self.globals:
            type_ = op.type
            value = op.initial_value
            if not isinstance(value, DenseIntOrFPElementsAttr):
                raise OpError(op, "C backend: a global without dense initial data")
            count = max(size_of(type_), 1)
            out.append(
                f"static const {c_type(type_.element_type)} "
                f"{self.constant_names[op.sym_name.data]}[{count}] = "
                f"{constant_initializer(value, count)};"
            )
        if self.tables:
            out += ["", "/* Shapes, strides; int8 multipliers and shifts. */"]
        for values, name in self.tables.items():
            out.append(
                f"static const int32_t {name}[{max(len(values), 1)}] = "
                f"{{{', '.join(str(v) for v in values) or '0'}}};"
            )
        out += ["", f"void {pre}init(uint32_t seed)", "{"]
        init = self.init_lines()
        if not any("seed" in line for line in init):
            out.append("    (void)seed;")
        out += [f"    {line}" for line in init]
        out += ["}", ""]
        out += self.param_accessors()
        names = [op.sym_name.data for op in self.api_params]
        out += ["", *blob_source_lines(pre, names, self.blob)]
        out += ["", *functions]
        return "\n".join(out).rstrip() + "\n"

    def cmsis_nn_lines(self) -> list[str]:
        return [
            f'#include "{CMSIS_NN_HEADER}"',
            "",
            f"/* CMSIS-NN's {self.cmsis_nn_build!r} build (the scratch buffers are sized for",
            " * it). Each call's status goes to ADIR_CMSIS_NN_CHECK, by default ignored: define",
            " * it (e.g. to assert it equals ARM_CMSIS_NN_SUCCESS) to check. */",
            "#ifndef ADIR_CMSIS_NN_CHECK",
            "#define ADIR_CMSIS_NN_CHECK(status) ((void)(status))",
            "#endif",
        ]

    def arena_lines(self, arena_bytes: int) -> list[str]:
        m, pre = self.macro, self.prefix
        if not self.uses_arena:
            return [
                "/* No function needs transient buffers, so there is no arena. */",
                f"#ifdef {m}CALLER_ARENA",
                f"void {pre}set_arena(void *arena) {{ (void)arena; }}",
                "#endif",
            ]
        return [
            "/* The arena: every transient buffer of every function, at its planned offset. The",
            " * union aligns it for any element type; the plan aligns offsets to 16 bytes. Define",
            f' * {m}ARENA_SECTION (e.g. __attribute__((section(".sram2")))) to place it, or',
            f" * {m}CALLER_ARENA to use a buffer of your own ({pre}set_arena). */",
            f"#ifdef {m}CALLER_ARENA",
            f"static unsigned char *{pre}arena_base;",
            f"void {pre}set_arena(void *arena) {{ {pre}arena_base = (unsigned char *)arena; }}",
            f"#define {m}ARENA_BASE {pre}arena_base",
            "#else",
            f"#ifndef {m}ARENA_SECTION",
            f"#define {m}ARENA_SECTION",
            "#endif",
            f"static union {{ double align; unsigned char bytes[{max(arena_bytes, 1)}]; }}",
            f"    {pre}arena_storage {m}ARENA_SECTION;",
            f"#define {m}ARENA_BASE {pre}arena_storage.bytes",
            "#endif",
        ]

    def param_accessors(self) -> list[str]:
        pre = self.prefix
        count = len(self.api_params)

        def is_f32(op: p.ParamOp) -> bool:
            return isinstance(op.type.element_type, Float32Type)

        data = ", ".join(
            self.storage[op.sym_name.data] if is_f32(op) else "NULL" for op in self.api_params
        )
        writable = ", ".join(
            "NULL" if self.in_flash(op) or not is_f32(op) else self.storage[op.sym_name.data]
            for op in self.api_params
        )
        names = ", ".join(c_string(op.sym_name.data) for op in self.api_params)
        sizes = ", ".join(f"{size_of(op.type)}u" for op in self.api_params)
        if count == 0:
            return [
                f"const float *{pre}param_data(size_t index) {{ (void)index; return NULL; }}",
                f"float *{pre}param_writable(size_t index) {{ (void)index; return NULL; }}",
                f"const char *{pre}param_name(size_t index) {{ (void)index; return NULL; }}",
                f"size_t {pre}param_size(size_t index) {{ (void)index; return 0u; }}",
                *self.typed_accessors(),
            ]
        return [
            f"const float *{pre}param_data(size_t index)",
            "{",
            f"    const float *const data[{count}] = {{{data}}};",
            f"    return index < {count}u ? data[index] : NULL;",
            "}",
            "",
            f"float *{pre}param_writable(size_t index)",
            "{",
            f"    float *const data[{count}] = {{{writable}}};",
            f"    return index < {count}u ? data[index] : NULL;",
            "}",
            "",
            f"const char *{pre}param_name(size_t index)",
            "{",
            f"    static const char *const names[{count}] = {{{names}}};",
            f"    return index < {count}u ? names[index] : NULL;",
            "}",
            "",
            f"size_t {pre}param_size(size_t index)",
            "{",
            f"    static const size_t sizes[{count}] = {{{sizes}}};",
            f"    return index < {count}u ? sizes[index] : 0u;",
            "}",
            *self.typed_accessors(),
        ]

    def typed_accessors(self) -> list[str]:
        """`param_type` and `param_values` / `param_values_writable`: every parameter, of any
        element type (the f32 ones are param_data's too)."""
        pre, macro = self.prefix, self.macro
        count = len(self.api_params)
        if count == 0:
            return [
                "",
                f"int {pre}param_type(size_t index) {{ (void)index; return -1; }}",
                f"const void *{pre}param_values(size_t index) {{ (void)index; return NULL; }}",
                f"void *{pre}param_values_writable(size_t index) {{ (void)index; return NULL; }}",
            ]
        codes = {"f32": "F32", "i8": "I8", "i32": "I32"}
        types = ", ".join(
            f"{macro}TYPE_{codes[str(op.type.element_type)]}" for op in self.api_params
        )
        values = ", ".join(self.storage[op.sym_name.data] for op in self.api_params)
        writable = ", ".join(
            "NULL" if self.in_flash(op) else self.storage[op.sym_name.data]
            for op in self.api_params
        )
        return [
            "",
            f"int {pre}param_type(size_t index)",
            "{",
            f"    static const int data[{count}] = {{{types}}};",
            f"    return index < {count}u ? data[index] : -1;",
            "}",
            "",
            f"const void *{pre}param_values(size_t index)",
            "{",
            f"    const void *const data[{count}] = {{{values}}};",
            f"    return index < {count}u ? data[index] : NULL;",
            "}",
            "",
            f"void *{pre}param_values_writable(size_t index)",
            "{",
            f"    void *const data[{count}] = {{{writable}}};",
            f"    return index < {count}u ? data[index] : NULL;",
            "}",
        ]


def print_model(module: ModuleOp, prefix: str = "", budget: StaticBudget = HOST) -> CModel:
    """The C of a planned module (raises `OpError` at the first op C cannot express, or whose
    sizes do not fit the C or the `budget`: `size_limits.py`), each op calling the kernel
    select-kernels recorded on it."""
    if prefix and not IDENTIFIER.fullmatch(prefix):
        raise ValueError(f"C prefix {prefix!r} is not the start of a C identifier")
    if prefix and (why := reserved(f"{prefix}init")):
        raise OpError(
            module, f"C backend: the prefix {prefix!r} gives C names such as `{prefix}init`: {why}"
        )
    printer = ModelPrinter(module, prefix)
    arena_bytes = printer.arena_bytes()
    check_sizes(module, arena_bytes if printer.uses_arena else 0, budget)
    source = printer.source(arena_bytes)  # also collects the prototypes for the header
    return CModel(prefix, print_header(printer, arena_bytes), source, printer.libraries)
