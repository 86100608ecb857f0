"""Every parameter of a model as one little-endian blob: what the generated C's
`<prefix>save_params` writes and `<prefix>load_params` reads, what the `--c-main` program writes
after training, and what Python reads back (`read_param_blob`; `load_state_dict` in
`adir/frontends/torch_state.py` makes a `torch` state_dict of it).

The layout (`BLOB_FORMAT`): a table that names and shapes every parameter, then their values:
float32, and the int8 weights and int32 biases of level-2 quantized training as integers
(version 2, whose table gives each parameter's element type; a model of f32 parameters only
writes version 1, as before).
The table is fixed for a model, so the C keeps it as one constant and checks a blob against it
byte for byte before loading: a blob of another model (other names, shapes or order) is refused.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32, i8, i32
from xdsl.ir import Attribute

from adir.diagnostics import OpError
from adir.dialects.tensor import params as p

BLOB_FORMAT = """\
An adir parameter blob, all numbers little-endian:
  8 bytes   "ADIRPARM"
  uint32    version: 1 when every parameter is float32, else 2
  uint32    count, the number of parameters
  uint32    the byte offset of the values (the end of the table below)
  count entries, in the module's order of `adir.param`:
    uint32  the name's length in bytes, then the name (UTF-8; the parameter's PyTorch name
            when the importer recorded one, `adir.torch_name`, else its symbol), then zero
            bytes to a multiple of 4
    uint32  rank, then rank uint32 dims
    uint32  version 2 only: the element type, 0 float32, 1 int8, 2 int32
  then each parameter's values in the same order, row-major, each in its element type
  (version 1: all float32): float32 and int32 in 4 bytes (int32 two's complement), int8 in
  one byte (two's complement), with no padding between parameters."""

MAGIC = b"ADIRPARM"
VERSION = 1  # every parameter float32
TYPED_VERSION = 2  # some integer parameter: each entry names its element type
TORCH_NAME = "adir.torch_name"
"""The attribute on `adir.param` that holds the PyTorch name of an imported parameter."""

# The element types a blob holds, by their code in a version-2 table: the f32 parameters, and
# the int8 weights and int32 biases of level-2 quantized training's int8 layers.
DTYPES = {0: np.dtype("<f4"), 1: np.dtype("i1"), 2: np.dtype("<i4")}
CODES = {dtype: code for code, dtype in DTYPES.items()}


@dataclass(frozen=True)
class BlobEntry:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype = DTYPES[0]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


def blob_name(op: p.ParamOp) -> str:
    """The name a parameter has in a blob: its PyTorch name, else its symbol."""
    torch_name = op.attributes.get(TORCH_NAME)
    return torch_name.data if isinstance(torch_name, StringAttr) else op.sym_name.data


def blob_entries(module: ModuleOp) -> list[BlobEntry]:
    """The table of the module's f32, i8 and i32 parameters (i8 and i32: a level-2 int8
    layer's weight and bias; a parameter of another element type is in neither the blob nor
    the C parameter API); `OpError` at a second parameter of one name."""
    entries: dict[str, BlobEntry] = {}
    for op in module.ops:
        if isinstance(op, p.ParamOp) and (dtype := element_dtype(op.type.element_type)):
            name = blob_name(op)
            if name in entries:
                raise OpError(op, f"two parameters have the name {name!r} in a parameter blob")
            entries[name] = BlobEntry(name, tuple(op.type.get_shape()), dtype)
    return list(entries.values())


def element_dtype(element: Attribute) -> np.dtype | None:
    """The blob's little-endian dtype of an element type, None for one it cannot hold."""
    if element == f32:
        return DTYPES[0]
    if element == i8:
        return DTYPES[1]
    if element == i32:
        return DTYPES[2]
    return None


def is_typed(entries: Sequence[BlobEntry]) -> bool:
    """Whether the blob needs version 2's element types (some parameter is not float32)."""
    return any(entry.dtype != DTYPES[0] for entry in entries)


def blob_table(entries: Sequence[BlobEntry]) -> bytes:
    """The blob up to the values: the magic, the header and the table of names and shapes
    (and element types, in version 2)."""
    typed = is_typed(entries)
    body = b""
    for entry in entries:
        name = entry.name.encode("utf-8")
        body += struct.pack("<I", len(name)) + name + b"\0" * (-len(name) % 4)
        body += struct.pack(f"<I{len(entry.shape)}I", len(entry.shape), *entry.shape)
        if typed:
            body += struct.pack("<I", CODES[entry.dtype])
    start = len(MAGIC) + 12 + len(body)
    version = TYPED_VERSION if typed else VERSION
    return MAGIC + struct.pack("<III", version, len(entries), start) + body


def blob_bytes(entries: Sequence[BlobEntry]) -> int:
    return len(blob_table(entries)) + sum(entry.nbytes for entry in entries)


def write_param_blob(values: Mapping[str, np.ndarray]) -> bytes:
    """The blob of these parameters (name -> values, in this order): int8 and int32 arrays
    keep their type (version 2), any other is written as float32."""
    entries = []
    for name, array in values.items():
        dtype = np.asarray(array).dtype.newbyteorder("<")
        dtype = dtype if dtype in CODES else DTYPES[0]
        entries.append(BlobEntry(name, tuple(np.shape(array)), dtype))
    data = b"".join(
        np.asarray(a).astype(entry.dtype).tobytes()
        for a, entry in zip(values.values(), entries, strict=True)
    )
    return blob_table(entries) + data


def read_param_blob(data: bytes) -> dict[str, np.ndarray]:
    """The parameters in a blob, name -> array of its shape, in the blob's order: float32, or
    the integers of an int8 or int32 parameter as int8 and int32 arrays (not dequantized: their
    scales are the compiled model's); `ValueError` saying what is wrong with one that is not a
    blob."""
    if data[: len(MAGIC)] != MAGIC:
        raise ValueError("not an adir parameter blob (it does not start with ADIRPARM)")
    offset = len(MAGIC)

    def take(count: int) -> tuple[int, ...]:
        nonlocal offset
        if offset + 4 * count > len(data):
            raise ValueError(f"the blob ends at byte {len(data)}, inside its table")
        values = struct.unpack_from(f"<{count}I", data, offset)
        offset += 4 * count
        return values

    version, count, start = take(3)
    if version not in (VERSION, TYPED_VERSION):
        raise ValueError(
            f"blob version {version}; this adir reads versions {VERSION} and {TYPED_VERSION}"
        )
    entries = []
    for _ in range(count):
        (length,) = take(1)
        if offset + length > len(data):
            raise ValueError(f"the blob ends at byte {len(data)}, inside its table")
        name = data[offset : offset + length].decode("utf-8")
        offset += length + (-length % 4)
        (rank,) = take(1)
        if name in {entry.name for entry in entries}:
            raise ValueError(f"the blob names {name!r} twice")
        shape = take(rank)
        dtype = DTYPES[0]
        if version == TYPED_VERSION:
            (code,) = take(1)
            if code not in DTYPES:
                raise ValueError(f"{name!r} has element type {code}; known: 0, 1, 2")
            dtype = DTYPES[code]
        entries.append(BlobEntry(name, shape, dtype))
    if offset != start:
        raise ValueError(f"the table ends at byte {offset}, the header says {start}")
    expected = start + sum(entry.nbytes for entry in entries)
    if len(data) != expected:
        raise ValueError(f"the blob has {len(data)} bytes; its table describes {expected}")
    arrays = {}
    for entry in entries:
        values = np.frombuffer(data, entry.dtype, entry.size, offset)
        arrays[entry.name] = values.astype(entry.dtype.newbyteorder("=")).reshape(entry.shape)
        offset += entry.nbytes
    return arrays
