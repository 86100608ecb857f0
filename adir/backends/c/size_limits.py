"""What the C backend checks before it prints anything: that every size the C holds fits the C
type that holds it, and that the static data fits where the build puts it.

- Every buffer the C touches (function arguments, arena buffers, parameters, constants): each
  dimension, and the product of its nonzero dimensions, at most INT32_MAX. The kernels take
  dims, counts and strides as `int32_t` and derive the others (an outer count, a row, a stride)
  as products of dims, each at most that product; a size past it would wrap to a negative
  `int32_t` in C that compiles clean and computes the wrong thing.
- Integer properties have C types of their own (a dropout seed is `uint64_t`, a schedule's
  step size `int64_t`); the emitters that pass one as `int32_t` check what they derive from
  it (`calls/conv_and_pool.py`: padded sizes and windows; `calls/data_movement.py`: the
  dims and strides of a strided walk).
- The static data (the arena, the parameters and optimizer state in RAM, the frozen
  parameters, constant tables and initial values in flash: `adir/param_storage.py`) at most
  `StaticBudget` allows: 2 GiB on a host (`adir/limits.py` says why),
  the board's RAM budget and flash with `--c-board`.

The buffer checks derive from the types on the IR, not from a list of kernels, so a new
kernel is covered the day it is added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from adir.diagnostics import OpError
from adir.dialects.tensor import params as p
from adir.limits import INT32_MAX, MAX_STATIC_BYTES, human_bytes
from adir.param_storage import has_initial_table, read_constants, static_memory


@dataclass(frozen=True)
class Limit:
    """A number of bytes, and what it is the most of (for the message)."""

    size: int
    what: str


@dataclass(frozen=True)
class StaticBudget:
    """Where a build keeps its static data: `ram` bounds what is written (the arena, the
    parameters and optimizer state that functions write), `flash` what is only read (frozen
    parameters, constant tables, initial values), `total` all of it."""

    total: Limit
    ram: Limit | None = None
    flash: Limit | None = None


HOST = StaticBudget(Limit(MAX_STATIC_BYTES, "a host build's static data"))


def element_bytes(type_: MemRefType) -> int:
    return type_.element_type.compile_time_size  # type: ignore[attr-defined]


def check_buffer(type_: Attribute, at: Operation, what: str) -> None:
    """A buffer's dims and element count fit `int32_t` (zero dims aside: a product of the
    others is still a count a kernel computes)."""
    if not isinstance(type_, MemRefType | TensorType):
        return
    shape = type_.get_shape()
    count = math.prod(d for d in shape if d != 0)
    if max(shape, default=0) > INT32_MAX or count > INT32_MAX:
        raise OpError(
            at,
            f"C backend: {what} ({type_}) has {count} elements; the C kernels take sizes as "
            f"int32_t, at most {INT32_MAX}",
        )


def check_function(function: func.FuncOp) -> None:
    block = function.body.block
    for op in block.ops:
        for result in op.results:
            check_buffer(result.type, op, "the buffer")
        for index, operand in enumerate(op.operands):
            check_buffer(operand.type, op, f"operand {index} of {op.name}")
    for arg in block.args:
        check_buffer(arg.type, function, f"argument {arg.index} of @{function.sym_name.data}")


def check_sizes(module: ModuleOp, arena_bytes: int, budget: StaticBudget = HOST) -> None:
    """Every check of this file, in the module's order (raises `OpError` at the first)."""
    arena: tuple[int, Operation] = (arena_bytes, module)
    writable: list[tuple[int, Operation]] = []  # parameters and optimizer state in RAM
    read_only: list[tuple[int, Operation]] = []  # frozen parameters, tables, initial values
    memory = static_memory(module)
    read = {op.sym_name.data for op in read_constants(module)}
    for op in module.ops:
        if isinstance(op, p.ParamOp):
            type_ = op.type
            check_buffer(type_, op, f"the parameter @{op.sym_name.data}")
            size = 4 * max(math.prod(type_.get_shape()), 1)
            kind = memory.kinds[op.sym_name.data]
            (read_only if kind.in_flash else writable).append((size, op))
            if has_initial_table(op, kind):
                read_only.append((size, op))
        elif isinstance(op, memref.GlobalOp) and op.sym_name.data in read:
            check_buffer(op.type, op, f"the constant @{op.sym_name.data}")
            type_ = op.type
            elements = max(math.prod(type_.get_shape()), 1)
            read_only.append((element_bytes(type_) * elements, op))
        elif isinstance(op, func.FuncOp) and op.body.blocks:
            check_function(op)
            size = op.attributes.get("adir.arena_size")
            if isinstance(size, IntegerAttr) and size.value.data == arena_bytes:
                arena = (arena_bytes, op)
    check_static_data(arena, writable, read_only, budget)


def check_static_data(
    arena: tuple[int, Operation],
    writable: list[tuple[int, Operation]],
    read_only: list[tuple[int, Operation]],
    budget: StaticBudget,
) -> None:
    """The static data fits the budget; the error points at the op that holds the most."""
    ram = arena[0] + sum(size for size, _ in writable)
    flash = sum(size for size, _ in read_only)

    def refuse(total: int, kind: str, limit: Limit, held: list[tuple[int, Operation]]) -> None:
        size, op = max(held, key=lambda part: part[0])
        raise OpError(
            op,
            f"C backend: the model needs {total} bytes of {kind} ({human_bytes(total)}), more "
            f"than the {limit.size} ({human_bytes(limit.size)}) of {limit.what} (arena "
            f"{arena[0]}, parameters and optimizer state {ram - arena[0]}, frozen parameters, "
            f"constant tables and initial values {flash}); this op holds {size} of them",
        )

    if ram + flash > budget.total.size:
        refuse(ram + flash, "static data", budget.total, [arena, *writable, *read_only])
    if budget.ram is not None and ram > budget.ram.size:
        refuse(ram, "RAM", budget.ram, [arena, *writable])
    if budget.flash is not None and flash > budget.flash.size:
        refuse(flash, "flash", budget.flash, read_only)
