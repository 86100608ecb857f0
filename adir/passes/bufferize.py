"""`bufferize`: from values (tensors) to buffers (memrefs) and destination-passing kernels.

    %h = adir.relu %z : tensor<8x16xf32>
becomes
    %h = memref.alloc() : memref<8x16xf32>
    adir_kernel.relu ins(%z : memref<8x16xf32>) outs(%h : memref<8x16xf32>)
or, when `%z` dies at the relu, the relu writes over `%z`'s buffer and no buffer is allocated.

- Parameters and optimizer state are persistent: `adir.load @w` becomes the parameter's own
  buffer (`adir_kernel.param @w`), not a copy, unless the loaded value is still read after a
  store to `@w`: then the load copies the parameter into a transient buffer.
- Constants become read-only globals (`memref.global constant`), which a device keeps in flash.
- Every other value gets a transient buffer (`memref.alloc`), which `plan-memory` places in the
  arena, unless an elementwise op may write over an operand's buffer: the operand has the same
  type as the result and dies at this op (this op is its last use, and it is not returned).
- A parameter update `p_new = f(p, ...)` stored to `@p` writes straight into `@p`'s buffer when
  `f` reads each element of `p` only before writing the same element (an elementwise op, or an
  update op such as `adir.adam_update`, whose results also go straight into the buffers of the
  optimizer state they are stored to) and no load of `@p` is used after it: the store then
  needs no copy.
- Function arguments and results become memrefs of the same shapes (the caller's buffers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adir.diagnostics import OpError
from adir.dialects.kernel import KERNELS, ParamBufferOp
from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.data_movement import ConstantOp
from adir.dialects.tensor.params import LoadOp, StoreOp
from adir.dialects.tensor.traits import InPlaceOperands
from adir.function_structure import check_single_blocks
from adir.name_hints import name_hint_of


def in_place_operands(op: Operation, result: int) -> list[int]:
    """The indices of the operands that the op's kernel may write result #`result` over, as
    the op's `InPlaceOperands` trait says (all of an `ElementwiseMappable` op's; a parameter
    update's parameter, state and, unless it is a matmul's operands, gradient; a batchnorm's
    running mean and variance, each by its new value)."""
    trait = op.get_trait(InPlaceOperands)
    return [] if trait is None else list(trait.operands_for(op, result))


@functools.lru_cache(maxsize=4096)  # building a type verifies it: once per distinct type
def memref_of(type_: Attribute) -> MemRefType:
    if not (isinstance(type_, TensorType) and type_.has_static_shape()):
        raise ValueError(f"cannot bufferize {type_}: static shapes only (run infer-shapes)")
    return MemRefType(type_.element_type, type_.get_shape())


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Turn every function on tensors into kernels on buffers (see the module docstring)."""

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_single_blocks(op)
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        for function in functions:  # all checked before any changes: all or nothing
            check_tensor_level(function)
        constants = ConstantPool(op)
        for function in functions:
            FunctionBufferizer(function, constants).run()


def check_tensor_level(function: func.FuncOp) -> None:
    """Every value of `function` is a tensor of static shape, else an error at the value's op:
    bufferize needs each buffer's size, and runs once (on buffers, it has nothing to do)."""
    name = function.sym_name.data
    for arg in function.body.block.args:
        if isinstance(arg.type, MemRefType):
            raise OpError(
                function,
                f"bufferize: @{name} takes buffers already (argument #{arg.index} is "
                f"{arg.type}); bufferize runs once, on tensors",
            )
        if isinstance(arg.type, TensorType | UnrankedTensorType) and not is_static(arg.type):
            raise OpError(
                function,
                f"bufferize: argument #{arg.index} of @{name} is {arg.type}: static shapes "
                "only (run infer-shapes)",
            )
    for op in function.body.block.ops:
        if any(isinstance(v.type, MemRefType) for v in (*op.operands, *op.results)):
            raise OpError(
                op,
                f"bufferize: {op.name} works on buffers already; bufferize runs once, on tensors",
            )
        for result in op.results:
            if isinstance(result.type, TensorType | UnrankedTensorType) and not is_static(
                result.type
            ):
                raise OpError(
                    op,
                    f"bufferize: {op.name} result #{result.index} is {result.type}: static "
                    "shapes only (run infer-shapes)",
                )


def is_static(type_: Attribute) -> bool:
    return isinstance(type_, TensorType) and type_.has_static_shape()


class ConstantPool:
    """Constants as private read-only globals, one per distinct value."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.globals: dict[DenseIntOrFPElementsAttr, str] = {}
        # The module's own symbols (a param may be called `@__constant_0`) are not reused.
        self.taken = {
            name.data
            for op in module.ops
            if isinstance(name := op.properties.get("sym_name"), StringAttr)
        }
        self.count = 0

    def get(self, value: DenseIntOrFPElementsAttr) -> str:
        if value not in self.globals:
            name = f"__constant_{self.count}"
            while name in self.taken:
                self.count += 1
                name = f"__constant_{self.count}"
            self.count += 1
            self.taken.add(name)
            type_ = memref_of(value.type)
            global_ = memref.GlobalOp.get(StringAttr(name), type_, value, constant=UnitAttr())
            Rewriter.insert_op(global_, InsertPoint.at_start(self.module.body.block))
            self.globals[value] = name
        return self.globals[value]


class FunctionBufferizer:
    def __init__(self, function: func.FuncOp, constants: ConstantPool):
        self.function = function
        self.constants = constants
        self.block: Block = function.body.block
        self.ops = list(self.block.ops)
        self.position = {op: index for index, op in enumerate(self.ops)}
        self.buffer: dict[SSAValue, SSAValue] = {}
        self.param_buffers: dict[str, SSAValue] = {}
        self.transient: set[SSAValue] = set()
        self.returned = {v for v in self.ops[-1].operands} if self.ops else set()
        # The loads and stores of each parameter, in program order (for in-place updates).
        self.loads: dict[str, list[LoadOp]] = {}
        for load in (op for op in self.ops if isinstance(op, LoadOp)):
            self.loads.setdefault(load.param.root_reference.data, []).append(load)
        self.stores: dict[str, list[StoreOp]] = {}
        for store in (op for op in self.ops if isinstance(op, StoreOp)):
            self.stores.setdefault(store.param.root_reference.data, []).append(store)
        # The ops that have no kernel (`NoKernel`) or that become no kernel, by class.
        self.lowerings: dict[type[Operation], Callable[[Any], None]] = {
            LoadOp: self.load,
            StoreOp: self.store,
            ConstantOp: self.constant,
            func.ReturnOp: self.return_,
        }

    def last_use(self, value: SSAValue) -> int:
        return max((self.position[use.operation] for use in value.uses), default=-1)

    def run(self) -> None:
        new_block = Block(arg_types=[memref_of(a.type) for a in self.block.args])
        for old, new in zip(self.block.args, new_block.args, strict=True):
            new.name_hint = old.name_hint
            self.buffer[old] = new
        self.out = new_block
        for op in self.ops:
            self.bufferize(op)
        self.function.body.detach_block(self.block)
        self.function.body.add_block(new_block)
        inputs = [a.type for a in new_block.args]
        results = [v.type for v in new_block.last_op.operands] if new_block.last_op else []
        self.function.function_type = FunctionType.from_lists(inputs, results)

    def emit(self, op: Operation, location: Attribute) -> Operation:
        op.location = location
        Rewriter.insert_op(op, InsertPoint.at_end(self.out))
        return op

    def param_buffer(self, name: str, type_: Attribute, location: Attribute) -> SSAValue:
        if name not in self.param_buffers:
            op = self.emit(ParamBufferOp(name, memref_of(type_)), location)
            op.results[0].name_hint = name_hint_of(name)  # a symbol may be any string
            self.param_buffers[name] = op.results[0]
        return self.param_buffers[name]

    def bufferize(self, op: Operation) -> None:
        if (lowering := self.lowerings.get(type(op))) is not None:
            lowering(op)
        elif isinstance(op, TensorOp) and type(op) in KERNELS:
            location = op.location
            outs: list[SSAValue] = []
            for result in op.results:
                outs.append(self.destination(op, result, outs))
            for result, out in zip(op.results, outs, strict=True):
                self.buffer[result] = out
            kernel = KERNELS[type(op)](
                [self.buffer[v] for v in op.operands], outs, dict(op.properties)
            )
            kernel.attributes.update(op.attributes)
            self.emit(kernel, location)
        else:
            raise OpError(op, f"bufferize: {op.name} has no kernel")

    def load(self, op: LoadOp) -> None:
        """The parameter's own buffer, or a copy of it if the value outlives the parameter's."""
        param = self.param_buffer(op.param.root_reference.data, op.result.type, op.location)
        if self.read_after_a_store(op):
            snapshot = self.new_buffer(op.result, op.location)
            self.emit(memref.CopyOp(param, snapshot), op.location)
            self.buffer[op.result] = snapshot
        else:
            self.buffer[op.result] = param

    def store(self, op: StoreOp) -> None:
        """Nothing where the value was computed into the parameter's buffer, else a copy."""
        target = self.param_buffer(op.param.root_reference.data, op.value.type, op.location)
        if self.buffer[op.value] is not target:
            self.emit(memref.CopyOp(self.buffer[op.value], target), op.location)

    def constant(self, op: ConstantOp) -> None:
        name = self.constants.get(op.value)
        get = self.emit(memref.GetGlobalOp(name, memref_of(op.result.type)), op.location)
        self.buffer[op.result] = get.results[0]

    def return_(self, op: func.ReturnOp) -> None:
        self.emit(func.ReturnOp(*[self.buffer[v] for v in op.operands]), op.location)

    def destination(self, op: Operation, result: SSAValue, taken: list[SSAValue]) -> SSAValue:
        """Where `result` is written: into the parameter it updates, over a dying operand
        (not one that another result of `op` is `taken` to), or a new transient buffer."""
        if (param := self.updated_param(op, result)) is not None:
            return param
        in_place = in_place_operands(op, result.index)
        for index in in_place:
            operand = op.operands[index]
            buffer = self.buffer[operand]
            if (
                buffer in self.transient
                and buffer not in taken
                and operand.type == result.type
                and operand not in self.returned
                and self.last_use(operand) == self.position[op]
                and all(u.index in in_place for u in operand.uses if u.operation is op)
            ):
                return buffer
        return self.new_buffer(result, op.location)

    def new_buffer(self, value: SSAValue, location: Attribute) -> SSAValue:
        """A transient buffer for `value`, which `plan-memory` places in the arena."""
        type_ = memref_of(value.type)
        alloc = self.emit(memref.AllocOp([], [], type_), location)
        buffer = alloc.results[0]
        buffer.name_hint = value.name_hint
        self.transient.add(buffer)
        return buffer

    def read_after_a_store(self, load: LoadOp) -> bool:
        """Whether the loaded value is read (or returned) after a later store to its
        parameter has overwritten the parameter's buffer."""
        here = self.position[load]
        later = [
            self.position[s]
            for s in self.stores.get(load.param.root_reference.data, [])
            if self.position[s] > here
        ]
        return bool(later) and self.last_use(load.result) > min(later)

    def updated_param(self, op: Operation, result: SSAValue) -> SSAValue | None:
        """The buffer of `@p` if `result` may be computed straight into it: `result` is the
        last value stored to `@p`, and nothing reads the old `@p` after `op` (nor at `op`,
        unless as an operand that `op` reads each element of before writing it)."""
        stores = [use.operation for use in result.uses if isinstance(use.operation, StoreOp)]
        if len(stores) != 1 or result in self.returned:
            return None
        name = stores[0].param.root_reference.data
        if name not in self.param_buffers or self.stores[name][-1] is not stores[0]:
            return None
        here = self.position[op]
        in_place = in_place_operands(op, result.index)
        store_position = self.position[stores[0]]
        for load in self.loads.get(name, []):
            loaded = self.position[load]
            if loaded < here and any(
                self.position[use.operation] > here
                or (use.operation is op and use.index not in in_place)
                for use in load.result.uses
            ):
                return None  # the old value is still read after it is overwritten
            if here < loaded < store_position:
                return None  # a load before the store must still see the old value
        return self.param_buffers[name]
