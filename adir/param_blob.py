"""Every parameter of a model as one little-endian blob: what the generated C's
`<prefix>save_params` writes and `<prefix>load_params` reads, what the `--c-main` program writes
after training, and what Python reads back (`read_param_blob`; `load_state_dict` in
`adir/frontends/torch_state.py` makes a `torch` state_dict of it).

The layout (`BLOB_FORMAT`): a table that names and shapes every parameter, then their values.
The table is fixed for a model, so the C keeps it as one constant and checks a blob against it
byte for byte before loading: a blob of another model (other names, shapes or order) is refused.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32

from adir.diagnostics import OpError
from adir.dialects.tensor import params as p

BLOB_FORMAT = """\
An adir parameter blob, all numbers little-endian:
  8 bytes   "ADIRPARM"
  uint32    version, 1
  uint32    count, the number of parameters
  uint32    the byte offset of the values (the end of the table below)
  count entries, in the module's order of `adir.param`:
    uint32  the name's length in bytes, then the name (UTF-8; the parameter's PyTorch name
            when the importer recorded one, `adir.torch_name`, else its symbol), then zero
            bytes to a multiple of 4
    uint32  rank, then rank uint32 dims
  then each parameter's values in the same order: float32, row-major."""

MAGIC = b"ADIRPARM"
VERSION = 1
TORCH_NAME = "adir.torch_name"
"""The attribute on `adir.param` that holds the PyTorch name of an imported parameter."""


@dataclass(frozen=True)
class BlobEntry:
    name: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def blob_name(op: p.ParamOp) -> str:
    """The name a parameter has in a blob: its PyTorch name, else its symbol."""
    torch_name = op.attributes.get(TORCH_NAME)
    return torch_name.data if isinstance(torch_name, StringAttr) else op.sym_name.data


def blob_entries(module: ModuleOp) -> list[BlobEntry]:
    """The table of the module's f32 parameters (the blob holds float32 values; the integer
    parameters of a level-2 int8 layer are not in the C parameter API either); `OpError` at a
    second parameter of one name."""
    entries: dict[str, BlobEntry] = {}
    for op in module.ops:
        if isinstance(op, p.ParamOp) and op.type.element_type == f32:
            name = blob_name(op)
            if name in entries:
                raise OpError(op, f"two parameters have the name {name!r} in a parameter blob")
            entries[name] = BlobEntry(name, tuple(op.type.get_shape()))
    return list(entries.values())


def blob_table(entries: Sequence[BlobEntry]) -> bytes:
    """The blob up to the values: the magic, the header and the table of names and shapes."""
    body = b""
    for entry in entries:
        name = entry.name.encode("utf-8")
        body += struct.pack("<I", len(name)) + name + b"\0" * (-len(name) % 4)
        body += struct.pack(f"<I{len(entry.shape)}I", len(entry.shape), *entry.shape)
    start = len(MAGIC) + 12 + len(body)
    return MAGIC + struct.pack("<III", VERSION, len(entries), start) + body


def blob_bytes(entries: Sequence[BlobEntry]) -> int:
    return len(blob_table(entries)) + 4 * sum(entry.size for entry in entries)


def write_param_blob(values: Mapping[str, np.ndarray]) -> bytes:
    """The blob of these parameters (name -> values, in this order)."""
    entries = [BlobEntry(name, tuple(array.shape)) for name, array in values.items()]
    data = b"".join(np.asarray(a, "<f4").tobytes() for a in values.values())
    return blob_table(entries) + data


def read_param_blob(data: bytes) -> dict[str, np.ndarray]:
    """The parameters in a blob, name -> float32 array of its shape, in the blob's order;
    `ValueError` saying what is wrong with one that is not a blob."""
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
    if version != VERSION:
        raise ValueError(f"blob version {version}; this adir reads version {VERSION}")
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
        entries.append(BlobEntry(name, take(rank)))
    if offset != start:
        raise ValueError(f"the table ends at byte {offset}, the header says {start}")
    expected = start + 4 * sum(entry.size for entry in entries)
    if len(data) != expected:
        raise ValueError(f"the blob has {len(data)} bytes; its table describes {expected}")
    arrays = {}
    for entry in entries:
        arrays[entry.name] = (
            np.frombuffer(data, "<f4", entry.size, offset).astype(np.float32).reshape(entry.shape)
        )
        offset += 4 * entry.size
    return arrays
