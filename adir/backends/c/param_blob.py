"""The C of the parameters' names and blob (`adir/param_blob.py` says the format):

    int net_param_index(const char *name);            /* the symbol or the PyTorch name; -1 */
    size_t net_param_blob_size(void);                 /* NET_PARAMS_BLOB_BYTES */
    int net_save_params(void *blob, size_t size);     /* 0, or -1 if size is too small */
    int net_load_params(const void *blob, size_t size);   /* 0, or -1: not this model's */

The blob's table (names, shapes) is one `static const` byte array; `save_params` copies it and
then each parameter's values, `load_params` compares it and then copies the values into every
parameter in RAM. A frozen parameter (a `static const` array) is in the blob, so that a saved
blob is the whole model, and `load_params` skips its values: they are compiled in, and a blob
of this model holds the same ones. The values are written and read byte by byte as
little-endian IEEE-754 float32 (and, in a model with integer parameters, int32 as its 4
bytes and int8 as one byte: version 2 of the format), so the blob is the same on a
big-endian device; it needs no alignment.
"""

from __future__ import annotations

from collections.abc import Sequence

from adir.backends.c.names import c_string
from adir.param_blob import BlobEntry, blob_bytes, blob_table, is_typed


def blob_header_lines(prefix: str, entries: Sequence[BlobEntry]) -> list[str]:
    """The macro of the blob's size (with the other sizes at the top of the header)."""
    return [
        "/* Bytes of the blob of every parameter that save_params writes and load_params reads",
        " * (little-endian; the format is in adir/param_blob.py). */",
        f"#define {prefix.upper()}PARAMS_BLOB_BYTES {blob_bytes(entries)}",
    ]


def blob_prototypes(prefix: str) -> list[str]:
    return [
        "/* The index of the parameter of this name (its symbol, as param_name gives it, or else",
        " * the PyTorch name the importer recorded), -1 if there is none. */",
        f"int {prefix}param_index(const char *name);",
        "",
        f"/* Every parameter as one blob of {prefix}param_blob_size() bytes: a table of names and",
        " * shapes, then the values, little-endian: float32 (int8 and int32 for integer",
        " * parameters, whose table gives their types: adir/param_blob.py). save_params",
        " * writes it (frozen parameters too) and returns 0, or -1 if `size` is too small;",
        " * load_params checks the table (-1 for a blob of another model, nothing changed),",
        " * then sets every parameter in RAM (frozen ones are constants: skipped) and returns 0.",
        " * Optimizer state is in it too: a loaded blob resumes training where it was saved. */",
        f"size_t {prefix}param_blob_size(void);",
        f"int {prefix}save_params(void *blob, size_t size);",
        f"int {prefix}load_params(const void *blob, size_t size);",
    ]


def blob_source_lines(
    prefix: str, symbols: Sequence[str], entries: Sequence[BlobEntry]
) -> list[str]:
    """`param_index`, the blob's table and the save and load functions (`symbols`: each
    parameter's symbol, in the order of `entries`)."""
    pre, macro = prefix, prefix.upper()
    count = len(entries)
    table = blob_table(entries)
    items = [str(byte) for byte in table]
    rows = [", ".join(items[i : i + 16]) for i in range(0, len(items), 16)]
    lines = [
        f"int {pre}param_index(const char *name)",
        "{",
    ]
    if any(e.name != symbol for e, symbol in zip(entries, symbols, strict=True)):
        lines += [
            f"    static const char *const torch_names[{count}] = "
            f"{{{', '.join(c_string(e.name) for e in entries)}}};",
        ]
    if count:
        lines += [
            "    size_t i;",
            f"    for (i = 0; i < {count}u; ++i) {{",
            f"        if (strcmp(name, {pre}param_name(i)) == 0) return (int)i;",
            "    }",
        ]
    else:
        lines.append("    (void)name;")
    if any(e.name != symbol for e, symbol in zip(entries, symbols, strict=True)):
        lines += [
            f"    for (i = 0; i < {count}u; ++i) {{",
            "        if (strcmp(name, torch_names[i]) == 0) return (int)i;",
            "    }",
        ]
    lines += [
        "    return -1;",
        "}",
        "",
        "/* The blob's table: magic, version, count, values' offset, each name and shape. */",
        f"static const unsigned char {pre}params_table[{len(table)}] = {{",
        *(f"    {row}," for row in rows),
        "};",
        "",
        f"size_t {pre}param_blob_size(void) {{ return {macro}PARAMS_BLOB_BYTES; }}",
        "",
        f"int {pre}save_params(void *blob, size_t size)",
        "{",
        "    unsigned char *out = (unsigned char *)blob;",
        *(["    size_t i, j;"] if count else []),
        f"    if (size < {macro}PARAMS_BLOB_BYTES) return -1;",
        f"    memcpy(out, {pre}params_table, sizeof {pre}params_table);",
    ]
    if count and is_typed(entries):
        lines += typed_save_lines(pre, count)
    elif count:
        lines += [
            f"    out += sizeof {pre}params_table;",
            f"    for (i = 0; i < {count}u; ++i) {{",
            f"        const float *values = {pre}param_data(i);",
            f"        for (j = 0; j < {pre}param_size(i); ++j, out += 4) {{",
            "            uint32_t bits;",
            "            memcpy(&bits, &values[j], 4);",
            "            out[0] = (unsigned char)(bits & 0xffu);",
            "            out[1] = (unsigned char)(bits >> 8 & 0xffu);",
            "            out[2] = (unsigned char)(bits >> 16 & 0xffu);",
            "            out[3] = (unsigned char)(bits >> 24);",
            "        }",
            "    }",
        ]
    lines += [
        "    return 0;",
        "}",
        "",
        f"int {pre}load_params(const void *blob, size_t size)",
        "{",
        "    const unsigned char *in = (const unsigned char *)blob;",
        *(["    size_t i, j;"] if count else []),
        f"    if (size != {macro}PARAMS_BLOB_BYTES ||",
        f"        memcmp(in, {pre}params_table, sizeof {pre}params_table) != 0) {{",
        "        return -1;",
        "    }",
    ]
    if count and is_typed(entries):
        lines += typed_load_lines(pre, count)
    elif count:
        lines += [
            f"    in += sizeof {pre}params_table;",
            f"    for (i = 0; i < {count}u; ++i) {{",
            f"        float *values = {pre}param_writable(i);",
            f"        size_t n = {pre}param_size(i);",
            "        if (values == NULL) {  /* frozen: a constant */",
            "            in += 4 * n;",
            "            continue;",
            "        }",
            "        for (j = 0; j < n; ++j, in += 4) {",
            "            uint32_t bits = (uint32_t)in[0] | (uint32_t)in[1] << 8 |",
            "                            (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;",
            "            memcpy(&values[j], &bits, 4);",
            "        }",
            "    }",
        ]
    lines += ["    return 0;", "}"]
    return lines


def typed_save_lines(pre: str, count: int) -> list[str]:
    """save_params' values of a version-2 blob: each parameter in its element type (float and
    int32_t as 4 bytes of their bits, int8_t as one byte), little-endian."""
    macro = pre.upper()
    return [
        f"    out += sizeof {pre}params_table;",
        f"    for (i = 0; i < {count}u; ++i) {{",
        f"        const unsigned char *values = (const unsigned char *){pre}param_values(i);",
        f"        if ({pre}param_type(i) == {macro}TYPE_I8) {{",
        f"            for (j = 0; j < {pre}param_size(i); ++j) {{",
        "                int8_t value;",
        "                memcpy(&value, values + j, 1);",
        "                *out++ = (unsigned char)(value < 0 ? value + 256 : value);",
        "            }",
        "            continue;",
        "        }",
        "        /* float and int32_t: the 32 bits of each value */",
        f"        for (j = 0; j < {pre}param_size(i); ++j, out += 4) {{",
        "            uint32_t bits;",
        "            memcpy(&bits, values + 4 * j, 4);",
        "            out[0] = (unsigned char)(bits & 0xffu);",
        "            out[1] = (unsigned char)(bits >> 8 & 0xffu);",
        "            out[2] = (unsigned char)(bits >> 16 & 0xffu);",
        "            out[3] = (unsigned char)(bits >> 24);",
        "        }",
        "    }",
    ]


def typed_load_lines(pre: str, count: int) -> list[str]:
    """load_params' values of a version-2 blob (typed_save_lines' inverse); frozen parameters
    (constants) are skipped."""
    macro = pre.upper()
    return [
        f"    in += sizeof {pre}params_table;",
        f"    for (i = 0; i < {count}u; ++i) {{",
        f"        unsigned char *values = (unsigned char *){pre}param_values_writable(i);",
        f"        size_t n = {pre}param_size(i);",
        f"        int byte = {pre}param_type(i) == {macro}TYPE_I8;",
        "        if (values == NULL) {  /* frozen: a constant */",
        "            in += byte ? n : 4 * n;",
        "            continue;",
        "        }",
        "        if (byte) {",
        "            for (j = 0; j < n; ++j, ++in) {",
        "                int8_t value = (int8_t)(in[0] >= 128u ? (int)in[0] - 256 : (int)in[0]);",
        "                memcpy(values + j, &value, 1);",
        "            }",
        "            continue;",
        "        }",
        "        for (j = 0; j < n; ++j, in += 4) {",
        "            uint32_t bits = (uint32_t)in[0] | (uint32_t)in[1] << 8 |",
        "                            (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;",
        "            memcpy(values + 4 * j, &bits, 4);",
        "        }",
        "    }",
    ]
