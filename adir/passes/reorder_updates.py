"""`reorder-updates`: each parameter update runs as soon as its gradient is complete and the old
value is no longer read, instead of at the end of the step (TTE's operator reordering: Lin et
al., "On-Device Training Under 256KB Memory", 2022).

    %dx = adir.conv2d_grad_input %dy, %w ...          (the last read of the old %w)
    %gw = adir.conv2d_grad_weight %x, %dy ...
    ... the rest of the backward pass, %gw alive all along ...
    %w1 = adir.sgd_update %w, %gw, %lr
    adir.store %w1, @w
becomes
    %dx = adir.conv2d_grad_input %dy, %w ...
    %gw = adir.conv2d_grad_weight %x, %dy ...
    %w1 = adir.sgd_update %w, %gw, %lr
    adir.store %w1, @w
    ... the rest of the backward pass ...

so the weight gradient (and the activations only its update reads) die at once instead of
living across the rest of the backward pass. An update is a store with the ops that only it
needs (its *group*: the update op, the gradient computed only for it, e.g. a convolution's
weight gradient or a bias's sum; several stores when one op updates a parameter and its
optimizer state). A group runs as soon as

- every value it reads from outside is computed, and
- every read of the old value of a parameter it stores has happened (so that bufferization
  can still write the parameter in place), and every earlier store to it,

which may be in the middle of another group: a group that becomes ready there runs at once,
before the rest of that group (so the output layer's update runs right after the gradient of
its input is computed from the old weights, before the hidden layer's gradient). Ops that cost
no arena memory — constants, parameter loads, scalars such as the step counter and the bias
corrections of Adam — are pulled along where a group needs them (a load never above an earlier
store to its parameter). Everything else keeps its order.

On by default in `adir-opt`'s shortcut pipeline (it runs after `fuse-weight-updates`, before
`bufferize`): it only moves an update earlier when the update is already legal there, and
never changes a number (each op reads the same values). Measured with `--memory-report`:
LeNet-5's SGD arena at batch 1 from 44,352 to 34,448 bytes, the 784-256-128-10 relu MLP's Adam
arena at batch 32 from 101,216 to 81,968 bytes (test/python/test_reorder_updates.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, ShapedType
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from adir.dialects.tensor.params import LoadOp, StoreOp
from adir.dialects.tensor.traits import ResultsOutsideArena


def costs_no_arena(op: Operation) -> bool:
    """An op whose results take no arena memory to speak of: `ResultsOutsideArena` (a
    constant's global, a load's parameter buffer), or one whose results are scalars."""
    if op.has_trait(ResultsOutsideArena):
        return True
    if not op.results:  # a store, a return
        return False
    return all(isinstance(r.type, ShapedType) and _elements(r.type) <= 1 for r in op.results)


def _elements(type_: ShapedType) -> int:
    count = 1
    for dim in type_.get_shape():
        count *= dim
    return count


def param_name(op: LoadOp | StoreOp) -> str:
    return op.param.root_reference.data


@dataclass(eq=False)
class UpdateGroup:
    """One or more stores and the ops only they need, in program order; `waiting` counts the
    ops outside that must run first and have not yet."""

    members: list[Operation]
    pulled: list[Operation] = field(default_factory=list)  # no-arena ops it needs
    waiting: int = 0

    def ops_in_order(self, position: dict[Operation, int]) -> list[Operation]:
        return sorted(self.pulled + self.members, key=position.__getitem__)


class UpdateScheduler:
    """The new order of one block (see the module docstring)."""

    def __init__(self, block: Block):
        self.ops = list(block.ops)
        self.position = {op: index for index, op in enumerate(self.ops)}
        self.free = {op for op in self.ops if costs_no_arena(op)}
        self.loads: dict[str, list[LoadOp]] = {}
        self.stores: dict[str, list[StoreOp]] = {}
        for load in (op for op in self.ops if isinstance(op, LoadOp)):
            self.loads.setdefault(param_name(load), []).append(load)
        for store in (op for op in self.ops if isinstance(op, StoreOp)):
            self.stores.setdefault(param_name(store), []).append(store)
        self.group_of: dict[Operation, UpdateGroup] = {}
        self.groups = self._groups()
        self.dependents: dict[Operation, list[UpdateGroup]] = {}
        for group in self.groups:
            self._count_dependencies(group)
        self.emitted: set[Operation] = set()
        self.order: list[Operation] = []

    def _groups(self) -> list[UpdateGroup]:
        """Each store with the ops whose every result is used only inside its group."""
        groups = []
        for store in (op for op in self.ops if isinstance(op, StoreOp)):
            if store in self.group_of:
                continue
            members = {store}
            frontier: list[Operation] = [store]
            while frontier:
                op = frontier.pop()
                for operand in op.operands:
                    producer = operand.owner
                    if (
                        not isinstance(producer, Operation)
                        or producer in members
                        or producer in self.free
                        or producer in self.group_of
                        or producer.parent_block() is not store.parent_block()
                    ):
                        continue
                    users = {use.operation for r in producer.results for use in r.uses}
                    if all(u in members or isinstance(u, StoreOp) for u in users):
                        new = {producer} | (users - members)
                        members |= new
                        frontier += new
            group = UpdateGroup(sorted(members, key=self.position.__getitem__))
            for op in members:
                self.group_of[op] = group
            groups.append(group)
        return groups

    def _count_dependencies(self, group: UpdateGroup) -> None:
        """Find the ops outside `group` that must run before it, and what it pulls along."""
        members = set(group.members)
        before: set[Operation] = set()
        pulled: set[Operation] = set()
        frontier = list(group.members)
        while frontier:
            op = frontier.pop()
            if isinstance(op, LoadOp):  # it must see every store above it
                before.update(self._stores_above(param_name(op), op))
            for operand in op.operands:
                producer = operand.owner
                if not isinstance(producer, Operation) or producer in members:
                    continue
                if producer in self.free:
                    if producer not in pulled:
                        pulled.add(producer)
                        frontier.append(producer)
                else:
                    before.add(producer)
        for store in (op for op in group.members if isinstance(op, StoreOp)):
            name = param_name(store)
            before.update(self._stores_above(name, store))
            # The old value's readers, so that the update may write the parameter in place.
            for load in self.loads.get(name, []):
                if self.position[load] < self.position[store]:
                    for use in load.result.uses:
                        reader = use.operation
                        if self.position.get(reader, len(self.ops)) < self.position[store]:
                            before.add(reader)
        before -= members | pulled
        group.pulled = sorted(pulled, key=self.position.__getitem__)
        group.waiting = len(before)
        for op in before:
            self.dependents.setdefault(op, []).append(group)

    def _stores_above(self, name: str, op: Operation) -> Iterable[Operation]:
        here = self.position[op]
        return (s for s in self.stores.get(name, []) if self.position[s] < here)

    def schedule(self) -> list[Operation]:
        # A stack of op sequences: the block's own order at the bottom, and above it every
        # group that became ready while the sequence below it ran (it runs first).
        stack: list[Iterator[Operation]] = [iter(self.ops)]
        for group in reversed(self.groups):  # those that need nothing from the block run first
            if group.waiting == 0:
                stack.append(iter(group.ops_in_order(self.position)))
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
            elif op not in self.emitted:
                self.emitted.add(op)
                self.order.append(op)
                ready = []
                for group in self.dependents.get(op, []):
                    group.waiting -= 1
                    if group.waiting == 0:
                        ready.append(group)
                for group in sorted(ready, key=lambda g: -self.position[g.members[0]]):
                    stack.append(iter(group.ops_in_order(self.position)))
        return self.order


@dataclass(frozen=True)
class ReorderUpdatesPass(ModulePass):
    """Move every parameter update to right after its gradient is complete (see the module
    docstring)."""

    name = "reorder-updates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            block = function.body.block
            order = UpdateScheduler(block).schedule()
            for moved in order:
                moved.detach()
            block.add_ops(order)
