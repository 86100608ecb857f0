"""The registry of kernel rules: for each kernel library and kernel op, whether the library's
kernel computes what the op's reference kernel computes, for this op's shapes and attributes.

A rule is registered for the tensor ops whose kernels it judges and returns a `Use` (with the
function to call where the library has several for one op, and the scratch bytes it needs)
or a `Refuse` that says why; it never changes the op. One file per library in this folder
(`tuned.py`, `cmsis_dsp.py`, `cmsis_nn.py`) registers its rules on import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects.builtin import DenseArrayBase

from adir.dialects.kernel import KERNELS, KernelOp
from adir.dialects.tensor.base import TensorOp
from adir.passes.select_kernels.targets import KernelTarget


@dataclass(frozen=True)
class Use:
    """The library's kernel computes this op."""

    call: str | None = None
    """The function to call, where the library has several for one op (CMSIS-DSP's sum)."""
    scratch: int = 0
    """Bytes of scratch memory the call needs (CMSIS-NN's `*_get_buffer_size`)."""
    scratch_min: int | None = None
    """The fewest bytes of scratch the call also runs with, if fewer than `scratch`:
    plan-memory may then shrink the buffer to the arena's free bytes at the op."""


@dataclass(frozen=True)
class Refuse:
    """The library's kernel would not compute this op; `reason` says why, for the IR."""

    reason: str


Rule = Callable[[KernelOp, KernelTarget], Use | Refuse]
LIBRARIES = ("tuned", "cmsis-dsp", "cmsis-nn")
RULES: dict[str, dict[type[KernelOp], Rule]] = {library: {} for library in LIBRARIES}
"""RULES[library][kernel op class]: the library's rule for the kernels of that op."""

AnyRule = TypeVar("AnyRule", bound=Rule)


def judges(library: str, *tensor_ops: type[TensorOp]) -> Callable[[AnyRule], AnyRule]:
    """Register the decorated rule of `library` for the kernels of these tensor ops."""

    def register(rule: AnyRule) -> AnyRule:
        for tensor_op in tensor_ops:
            RULES[library][KERNELS[tensor_op]] = rule
        return rule

    return register


def ints(op: KernelOp, prop: str) -> list[int]:
    """An integer-array property of a kernel op."""
    array = op.properties[prop]
    assert isinstance(array, DenseArrayBase)
    return [int(v) for v in array.get_values()]


def in_shape(op: KernelOp, index: int) -> tuple[int, ...]:
    return tuple(op.ins[index].type.get_shape())  # type: ignore[attr-defined]


def out_shape(op: KernelOp, index: int = 0) -> tuple[int, ...]:
    return tuple(op.outs[index].type.get_shape())  # type: ignore[attr-defined]
