"""The header of a generated model, `<prefix>model.h`: its sizes as macros, the parameters
by index, and the prototypes of `init`, the accessors and the model's functions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adir.backends.c.literals import size_of
from adir.backends.c.param_blob import blob_header_lines, blob_prototypes
from adir.param_storage import FROZEN

if TYPE_CHECKING:
    from adir.backends.c.model import ModelPrinter


def print_header(printer: ModelPrinter, arena_bytes: int) -> str:
    """`<prefix>model.h`: the API of the model `printer` printed (its source first: printing
    it collects the functions' prototypes)."""
    m, pre = printer.macro, printer.prefix
    guard = f"{m}MODEL_H" if m else "ADIR_MODEL_H"
    persistent = printer.memory.ram_params
    frozen = printer.memory.by_kind[FROZEN]
    out = [
        f"/* {pre}model.h: the API of the generated model (adir); do not edit.",
        " *",
        " * Subnormal floats are kept (IEEE 754, as adir's interpreter and PyTorch compute).",
        " * Built with -DADIR_FLUSH_DENORMALS, each function of the model (not init or the",
        " * accessors) sets the FPU's flush-to-zero mode on entry and restores the caller's",
        " * on return (x86 MXCSR FTZ and DAZ, the Arm FZ bit; adir_float_mode.h): faster",
        " * where subnormals are slow (Adam's decaying moments on x86), and what",
        " * Session(module, flush_denormals=True) computes. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "/* Bytes of the arena (transient buffers), of the parameters and optimizer state in",
        " * RAM, and of the frozen parameters (constants: flash). */",
        f"#define {m}ARENA_BYTES {arena_bytes}",
        f"#define {m}PERSISTENT_BYTES {persistent}",
        f"#define {m}FROZEN_BYTES {frozen}",
        *blob_header_lines(pre, printer.blob),
        "",
        "/* The element types param_type gives: float, and the int8_t weights and int32_t",
        " * biases of int8 layers that train (level 2 of quantized training). */",
        f"#define {m}TYPE_F32 0",
        f"#define {m}TYPE_I8 1",
        f"#define {m}TYPE_I32 2",
        "",
        "/* Parameters and optimizer state, by index: element counts. */",
        f"#define {m}NUM_PARAMS {len(printer.api_params)}",
    ]
    for index, op in enumerate(printer.api_params):
        index_macro, size_macro = printer.names.param_macros[op.sym_name.data]
        out.append(f"#define {index_macro} {index}")
        out.append(f"#define {size_macro} {size_of(op.type)}")
    for op in printer.functions:
        macros = printer.names.argument_macros[op.sym_name.data]
        for arg, size_macro in zip(op.body.block.args, macros, strict=True):
            out.append(f"#define {size_macro} {size_of(arg.type)}")  # type: ignore[arg-type]
    out += [
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "/* Give every parameter in RAM its initial values (its data, or a draw from its",
        " * initializer) and zero the optimizer state; call it again to reset the model. Seed",
        " * 0 gives the values written in the IR (the interpreter's); other seeds shift every",
        " * parameter's stream. Frozen parameters are constants. Call before anything else. */",
        f"void {pre}init(uint32_t seed);",
        "",
        "/* The values of parameter `index` (float32, row-major), read only: read them to save",
        " * a model. Its storage to write, to load a model: NULL for a frozen parameter (no",
        " * function writes it, so it is a constant, in flash), and for an integer one",
        " * (param_values below). Its name and element count. NULL and 0 past the last. */",
        f"const float *{pre}param_data(size_t index);",
        f"float *{pre}param_writable(size_t index);",
        f"const char *{pre}param_name(size_t index);",
        f"size_t {pre}param_size(size_t index);",
        "",
        "/* Every parameter, of any element type: param_data and param_writable give float",
        f" * ones only (NULL for an integer one). Its type ({m}TYPE_F32, {m}TYPE_I8 or",
        f" * {m}TYPE_I32; -1 past the last), its values (float, int8_t or int32_t, row-major)",
        " * to read, and to write (NULL if frozen). */",
        f"int {pre}param_type(size_t index);",
        f"const void *{pre}param_values(size_t index);",
        f"void *{pre}param_values_writable(size_t index);",
        "",
        *blob_prototypes(pre),
        "",
        f"#ifdef {m}CALLER_ARENA",
        f"/* Use `arena` ({m}ARENA_BYTES bytes, 8-byte aligned) for the transient buffers. */",
        f"void {pre}set_arena(void *arena);",
        "#endif",
    ]
    for doc, prototype in printer.prototypes:
        out += ["", doc, prototype + ";"]
    out += ["", "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */"]
    return "\n".join(out) + "\n"
