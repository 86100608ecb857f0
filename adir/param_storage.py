"""Where each parameter of a module lives on a device, RAM or flash, decided from the IR.

A parameter is *frozen* when no function of the module writes it. On the kernel level (after
`bufferize`) a function writes a parameter when its buffer (`adir_kernel.param @w`) is one of a
kernel's `outs` or the target of a `memref.copy`; a kernel's `ins`, a copy's source and a
function's results only read it, and any other use counts as a write, so an op this file does
not know keeps the parameter in RAM (the safe side). On the tensor level an `adir.store` writes.
`{trainable = false}` alone does not freeze a parameter: a batchnorm's running statistics and
the optimizer state are marked so and the training step writes them.

    kind                    where  what
    trainable parameters    RAM    written by a function, not `{trainable = false}`
    optimizer state         RAM    written; `adir.state_of = @w` or `adir.optimizer_state`
    other mutable state     RAM    written; `{trainable = false}` (running statistics)
    frozen, drawn at init   RAM    frozen, but drawn from a seeded initializer: `init(seed)`
                                   picks its values, so the C cannot hold them as constants
    frozen parameters       flash  frozen, with dense data or a seedless initializer
                                   (`#adir.zeros`, `#adir.fill`): the C's `static const`

Flash also holds the dense data of the parameters in RAM (one `static const` copy that `init`
copies from, so `init` restores them after training) and the constants that functions read
(`memref.global`). `plan-memory`'s report, the C backend's storage and its size checks all
read `static_memory`, so they agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation

from adir.dense_literals import splat_value
from adir.dialects.kernel import KernelOp, ParamBufferOp
from adir.dialects.tensor.initializers import InitializerAttr
from adir.dialects.tensor.params import ParamOp, StoreOp

# The unit attribute insert-optimizer puts on state that belongs to no one parameter (the step
# counter); per-parameter state names its owner with `adir.state_of`.
OPTIMIZER_STATE = "adir.optimizer_state"


@dataclass(frozen=True)
class ParamKind:
    """What a parameter is, as the memory report names it, and whether it lives in flash."""

    label: str
    in_flash: bool


TRAINABLE = ParamKind("trainable parameters", in_flash=False)
STATE = ParamKind("optimizer state", in_flash=False)
OTHER_STATE = ParamKind("other mutable state", in_flash=False)
DRAWN_AT_INIT = ParamKind("frozen, drawn at init", in_flash=False)
FROZEN = ParamKind("frozen parameters", in_flash=True)
KINDS = (TRAINABLE, STATE, OTHER_STATE, DRAWN_AT_INIT, FROZEN)


def _reads(op: Operation, index: int) -> bool:
    """Whether operand `index` of `op` is only read."""
    if isinstance(op, KernelOp):
        return index < len(op.ins)
    if isinstance(op, memref.CopyOp):
        return index == 0  # the source
    return isinstance(op, func.ReturnOp)


def written_params(module: ModuleOp) -> set[str]:
    """The symbols of the parameters some function of `module` writes (module docstring)."""
    written = set()
    for op in module.walk():
        if isinstance(op, StoreOp):
            written.add(op.param.root_reference.data)
        elif isinstance(op, ParamBufferOp):
            if any(not _reads(use.operation, use.index) for use in op.buffer.uses):
                written.add(op.param.root_reference.data)
    return written


def is_marked_frozen(op: ParamOp) -> bool:
    flag = op.attributes.get("trainable")
    return isinstance(flag, IntegerAttr) and not flag.value.data


def known_at_compile_time(op: ParamOp) -> bool:
    """Whether the C can hold the parameter's initial values as constants: dense data, or an
    initializer that reads no seed."""
    init = op.initial_value
    if isinstance(init, InitializerAttr):
        return not init.draw(tuple(op.type.get_shape())).random
    return isinstance(init, DenseIntOrFPElementsAttr)


def param_kind(op: ParamOp, written: set[str]) -> ParamKind:
    if op.sym_name.data not in written:
        return FROZEN if known_at_compile_time(op) else DRAWN_AT_INIT
    if "adir.state_of" in op.attributes or OPTIMIZER_STATE in op.attributes:
        return STATE
    return OTHER_STATE if is_marked_frozen(op) else TRAINABLE


def has_initial_table(op: ParamOp, kind: ParamKind) -> bool:
    """Whether a parameter in RAM keeps its dense data in flash for `init` to copy (a splat is
    a fill at `init`, and a frozen parameter's data is the parameter itself)."""
    init = op.initial_value
    return (
        not kind.in_flash
        and isinstance(init, DenseIntOrFPElementsAttr)
        and splat_value(init) is None
    )


def bytes_of(type_: object) -> int:
    return math.prod(type_.get_shape()) * type_.element_type.compile_time_size  # type: ignore[attr-defined]


def read_constants(module: ModuleOp) -> list[memref.GlobalOp]:
    """The constants (`memref.global`) some function reads, in module order."""
    read = {
        op.name_.root_reference.data for op in module.walk() if isinstance(op, memref.GetGlobalOp)
    }
    return [op for op in module.ops if isinstance(op, memref.GlobalOp) and op.sym_name.data in read]


@dataclass
class StaticMemory:
    """Every parameter's kind, and the bytes of static data by what they hold."""

    kinds: dict[str, ParamKind] = field(default_factory=dict[str, ParamKind])
    by_kind: dict[ParamKind, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    initial_values: int = 0  # flash: the dense data of parameters in RAM
    constants: int = 0  # flash: the constants functions read

    @property
    def ram_params(self) -> int:
        """Bytes of the parameters and state in RAM (the arena comes on top)."""
        return sum(size for kind, size in self.by_kind.items() if not kind.in_flash)

    @property
    def flash(self) -> int:
        return self.by_kind[FROZEN] + self.initial_values + self.constants


def static_memory(module: ModuleOp) -> StaticMemory:
    """Where every parameter of `module` lives, and the bytes of each kind."""
    written = written_params(module)
    memory = StaticMemory()
    for op in module.ops:
        if isinstance(op, ParamOp):
            kind = param_kind(op, written)
            memory.kinds[op.sym_name.data] = kind
            memory.by_kind[kind] += bytes_of(op.type)
            if has_initial_table(op, kind):
                memory.initial_values += bytes_of(op.type)
    memory.constants = sum(bytes_of(op.type) for op in read_constants(module))
    return memory
