"""The builder VJP rules use: a `TensorBuilder` appending backward ops to the gradient
function, plus the idioms rules share (`unbroadcast`, adjoint accumulation)."""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from adir.dialects.tensor.op_builder import TensorBuilder, is_float, name_value, static_shape


class BackwardBuilder(TensorBuilder):
    """Builds the backward ops at the end of the gradient function, each located at the forward
    op it differentiates; tracks the adjoint of every active value."""

    def __init__(
        self, block: Block, active: set[SSAValue], forward: frozenset[Operation] = frozenset()
    ):
        super().__init__(block)
        self.active = active
        self.forward = forward  # the forward ops, before the backward ones in the block
        self.adjoints: dict[SSAValue, SSAValue] = {}

    def read_by_backward(self, value: SSAValue) -> bool:
        """Whether a backward op emitted so far, and not dead, reads `value`. Rules run from
        the last forward op to the first, so when the rule of `value`'s producer runs, every
        backward op of its consumers is there: a value none of them reads dies after the
        forward pass unless this rule keeps it."""
        pending = set(self.adjoints.values())
        live: dict[Operation, bool] = {}

        def is_live(op: Operation) -> bool:
            # A backward op is live if an adjoint still to be used, or a live op, reads what it
            # computes; rules emit the adjoints of inactive operands too (a frozen weight's),
            # which dead-code elimination removes at the end.
            if op not in live:
                live[op] = False  # no cycles in a block, but guard the recursion anyway
                live[op] = any(
                    result in pending or any(is_live(use.operation) for use in result.uses)
                    for result in op.results
                )
            return live[op]

        return any(
            use.operation not in self.forward and is_live(use.operation) for use in value.uses
        )

    def emit_after(self, op: Operation, after: Operation) -> SSAValue:
        """Insert `op` in the forward pass right after `after` (located there): a small value
        the backward pass needs, computed while the big one it comes from is still live."""
        op.location = after.location
        Rewriter.insert_op(op, InsertPoint.after(after))
        return op.results[0]

    def unbroadcast(self, grad: SSAValue, like: SSAValue) -> SSAValue:
        """Sum `grad` over the axes along which `like` was broadcast in the forward op (the
        leading axes it lacks, and its size-1 axes), giving `like`'s shape."""
        target, shape = static_shape(like), static_shape(grad)
        lead = len(shape) - len(target)
        axes = [*range(lead)] + [
            lead + i for i, d in enumerate(target) if d == 1 and shape[lead + i] != 1
        ]
        if axes:
            grad = self.sum(grad, axes)
        return self.reshape(grad, target)

    def wants(self, value: SSAValue) -> bool:
        """Whether `value` gets an adjoint at all (a rule may skip work for it)."""
        return value in self.active

    def add_adjoint(self, value: SSAValue, grad: SSAValue) -> None:
        """Accumulate `grad` into the adjoint of `value` (fan-out sums)."""
        if value not in self.active:
            return
        if static_shape(grad) != static_shape(value):
            raise AssertionError(
                f"a VJP rule gave an adjoint of shape {static_shape(grad)} for a value of "
                f"shape {static_shape(value)}"
            )
        previous = self.adjoints.get(value)
        total = grad if previous is None else self.add(previous, grad)
        if value.name_hint is not None:
            name_value(total, f"{value.name_hint}_grad")
        self.adjoints[value] = total


__all__ = ["BackwardBuilder", "is_float", "name_value", "static_shape"]
