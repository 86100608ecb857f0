"""adir's op traits: what a pass or a backend needs to know about an op, declared on the op.

In the spirit of MLIR's traits and interfaces (`ElementwiseMappable`,
`DestinationStyleOpInterface`): a pass asks the op (`op.has_trait(Recomputable)`,
`op.get_trait(InPlaceOperands)`, `op.eval_form()`) instead of keeping a list of op names, so a
new op is complete in its own family file. A trait declared on a base class holds for every
subclass (xDSL merges the `traits_def` of the bases), so most ops get theirs from their family's
base (`UnaryElementwiseOp` is `ElementwiseMappable` and `Recomputable`).

    trait                   who asks                      what it says
    ElementwiseMappable     bufferize                     result element i reads only element
                                                          i of each operand: in place over any
    WritesResultOver        bufferize                     these results over these operands
    InPlaceWhenMarked       bufferize                     result 0 over operand 0 if marked
                                                          `in_place` (in-place depthwise)
    Recomputable            recompute-activations         cheap and deterministic: recompute
                                                          it in the backward pass, not keep it
    HasEvalForm             derive-predict                what the op is in inference
    HasBatchInProperties    derive-predict{batch=N}       its properties at another batch
    ResultsOutsideArena     reorder-updates,              its result is a global or a
                            recompute-activations         parameter's own buffer
    ReferenceScratch        select-kernels                its reference kernel's scratch
                                                          bytes, from its operand shapes
    Int8Lookup              quantize-int8                 int8 as a 256-entry table, and the
                                                          output range
    ReadsClassLabels        adir-run                      an operand holds class indices
    LayerWeight             split-partial-updates         an operand is a layer's weight,
                                                          output channels first
    NoKernel                kernel.py (KERNELS), tests    no kernel op, no C kernel, and why
    NotDifferentiable       the completeness test         no VJP rule, and why

Registries keyed by op class (the VJP rules, the interpreter's impls, the C emitters, the int8
and CMSIS-NN rules) stay where they are: those are the op's implementation in a later layer,
not facts about it. `test/python/test_op_traits.py` checks that `adir/passes` and
`adir/backends` keep no op-name lists or isinstance ladders; `test_op_completeness.py` that every
op has its interpreter impl, VJP rule (or `NotDifferentiable`), C emitter and C kernel (or
`NoKernel`), and a textual round trip.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import OpTrait


def _operand_index(op: Operation, name: str) -> int:
    return [n for n, _ in op.get_irdl_definition().operands].index(name)


def _result_name(op: Operation, index: int) -> str:
    return op.get_irdl_definition().results[index][0]


# --- in place: which operand buffers a kernel may write a result over ---------------------


@dataclass(frozen=True)
class InPlaceOperands(OpTrait, ABC):
    """The operands whose buffers the op's kernel may write result #`result` over: it reads
    element i of each only before it writes element i of that result. `bufferize` writes the
    result there when such an operand dies at the op (and has the result's type)."""

    @abstractmethod
    def operands_for(self, op: Operation, result: int) -> Sequence[int]:
        """The indices of those operands (empty: none)."""


@dataclass(frozen=True)
class ElementwiseMappable(InPlaceOperands):
    """MLIR's `ElementwiseMappable`: element i of each result depends only on element i of each
    operand (after broadcasting), so every result may be written over any operand."""

    def operands_for(self, op: Operation, result: int) -> Sequence[int]:
        return range(len(op.operands))


@dataclass(frozen=True, init=False)
class WritesResultOver(InPlaceOperands):
    """Named results may be written over named operands: `WritesResultOver(("new_running_mean",
    "running_mean"))` for a batchnorm, whose kernel reads channel c of the old running mean
    just before it writes channel c of the new one."""

    pairs: tuple[tuple[str, str], ...] = field(default=())

    def __init__(self, *pairs: tuple[str, str]):
        object.__setattr__(self, "pairs", tuple(pairs))

    def operands_for(self, op: Operation, result: int) -> Sequence[int]:
        name = _result_name(op, result)
        return [_operand_index(op, operand) for written, operand in self.pairs if written == name]


# --- recomputation ------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class Recomputable(OpTrait):
    """The op costs at most a few passes over its data (never a matmul or a convolution) and
    gives the same bits every time (dropout's mask included), so `recompute-activations` may
    compute it again in the backward pass instead of keeping its result alive across it.

    `reads_results` names operands that a recomputed copy reads from the original op's results
    instead: `("running_mean", "new_running_mean")` for a batchnorm, whose training-mode output
    normalises with the batch's statistics (the running ones are only updated), so the copy may
    read the new running statistics and the old ones need not be kept."""

    reads_results: tuple[tuple[str, str], ...] = field(default=())

    def __init__(self, *reads_results: tuple[str, str]):
        object.__setattr__(self, "reads_results", tuple(reads_results))

    def recomputed_operands(self, op: Operation) -> list[SSAValue]:
        """The operands a recomputed copy of `op` reads (before its own recomputed inputs)."""
        operands = list(op.operands)
        results = [name for name, _ in op.get_irdl_definition().results]
        for operand, result in self.reads_results:
            operands[_operand_index(op, operand)] = op.results[results.index(result)]
        return operands


# --- sparse updates ---------------------------------------------------------------------


@dataclass(frozen=True)
class LayerWeight(OpTrait):
    """Operand `operand` may be a conv or linear layer's weight whose axis 0 indexes the op's
    output channels (a conv's [O, C / groups, KH, KW]; a linear's [out, in], which a matmul
    reads with `transpose_b`, named by `when`), which are the result's axis `output_axis`.
    `split-partial-updates` splits such a weight into a trained and a frozen block of output
    channels, and the op into one op per block (`splits_by_output`)."""

    operand: str
    when: str | None = None  # a unit property the op must have for axis 0 to be the outputs
    rank: int | None = None  # the rank the weight must have (a matmul's 3-D rhs is batched)
    output_axis: int = 1  # the result's axis of output channels (negative: from the end)
    bias: str | None = None  # the optional operand holding a bias per output channel

    def is_weight(self, op: Operation, index: int) -> bool:
        """Whether operand `index` of `op` is such a weight."""
        if index != _operand_index(op, self.operand):
            return False
        if self.rank is not None and op.operands[index].type.get_num_dims() != self.rank:
            return False
        return self.when is None or op.properties.get(self.when) is not None

    def splits_by_output(self, op: Operation) -> int | None:
        """The result's axis of output channels if the op on a block of the weight's output
        channels (and of the bias) gives that block of the result; None for a grouped conv,
        whose output channels also read only their group's input channels."""
        groups = op.properties.get("groups")
        if groups is not None and groups.value.data != 1:
            return None
        rank = op.results[0].type.get_num_dims()
        return self.output_axis % rank


# --- inference ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalForm:
    """What an op is in inference (eval mode): `ops` to insert before it, the value that takes
    the place of each of its results there (`results[i]` replaces result i; a shorter list or
    None leaves a result to dead-code elimination), and whether the op itself goes (`erase`: an
    op with effects, such as a store, that dead-code elimination would keep)."""

    ops: Sequence[Operation] = ()
    results: Sequence[SSAValue | None] = ()
    erase: bool = False


class HasEvalForm(Operation, ABC):
    """Interface: an op that computes something else in inference than in training (a
    batchnorm uses the running statistics, a dropout is the identity, a store does not happen).
    `derive-predict` asks each op for its `eval_form()`; an op without this interface is the
    same in both modes."""

    @abstractmethod
    def eval_form(self) -> EvalForm:
        """The op's inference form (built fresh: the caller inserts `ops`)."""


@dataclass(frozen=True)
class BatchChange:
    """`derive-predict{batch=N}` changes the batch of an op's operand `input`: its dim `dim`
    was `old` and is now `new`. `operand` and `result` are the shapes the op had before."""

    dim: int
    old: int
    new: int
    operand: tuple[int, ...]
    result: tuple[int, ...]


class HasBatchInProperties(Operation, ABC):
    """Interface: an op whose properties spell out sizes of its operand's dims, the batch
    among them (a reshape's or a broadcast's target shape, a slice's bounds), as the importer
    writes them from a traced batch. `derive-predict{batch=N}` asks it for its properties at
    the new batch; an op without this interface has none to change (its shape rule follows
    its operands)."""

    @abstractmethod
    def properties_at_batch(self, change: BatchChange) -> dict[str, Attribute]:
        """The properties that change (the op keeps the others), or `ValueError(why)` when the
        op does not keep the batch a dim of its own (a reshape that merges it with another)."""


# --- memory -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultsOutsideArena(OpTrait):
    """The op's result takes no arena memory: it is a read-only global (a constant) or a
    parameter's own persistent buffer (a load). `reorder-updates` pulls such ops along freely,
    and `recompute-activations` never recomputes them (there is nothing to save)."""


@dataclass(frozen=True)
class ReferenceScratch(OpTrait):
    """The op's reference kernel needs a scratch buffer of `size(kernel)` bytes (0: none),
    read from its kernel op's `ins` and `outs` buffers: a fused kernel's intermediate one piece
    at a time, or the plane an in-place kernel copies each input channel into. `select-kernels`
    gives the op's kernel that buffer (an extra last `outs`, which `plan-memory` places in the
    arena, live across that op alone) when no library computes the op."""

    size: Callable[[Any], int]


@dataclass(frozen=True)
class InPlaceWhenMarked(InPlaceOperands):
    """Result 0 may be written over operand 0 when the op carries the unit property
    `in_place`, which a pass sets where it trades a library kernel for memory (a depthwise
    convolution whose kernel copies each input channel into a plane before it writes that
    channel of the output: TinyEngine's in-place depthwise convolution)."""

    def operands_for(self, op: Operation, result: int) -> Sequence[int]:
        return [0] if result == 0 and "in_place" in op.properties else []


# --- int8 ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Int8Lookup(OpTrait):
    """`quantize-int8` computes the op on int8 as a 256-entry table (`adir.qlookup`): entry j is
    `function` (on float64 numpy arrays) of the j-th int8 input level, quantized to the output's
    (scale, zero point). `output` fixes those (TFLite's fixed output quantization of LOGISTIC
    and TANH); None takes them from calibration. `of_op` says that `function` takes the op
    too, as `function(x, op)`, for a table that depends on the op's properties (a clamp's
    bounds)."""

    function: Callable[..., Any]
    output: tuple[float, int] | None = None
    of_op: bool = False

    def values(self, op: Operation, x: Any) -> Any:
        """`function` of the levels `x` for this op."""
        return self.function(x, op) if self.of_op else self.function(x)


# --- tools --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadsClassLabels(OpTrait):
    """Operand `operand` holds class indices into dimension `axis` of operand 0 (the last one
    of a loss's logits, the first one of an embedding's table): `adir-run --random-inputs`
    draws labels below that many classes."""

    operand: str = "target"
    axis: int = -1

    def index(self, op: Operation) -> int:
        return _operand_index(op, self.operand)


# --- what an op does not have, and why ------------------------------------------------------


@dataclass(frozen=True)
class NoKernel(OpTrait):
    """The op has no kernel op (`adir_kernel.*`) and no C kernel: `bufferize` lowers it itself
    (`why` says to what). The completeness test accepts this mark instead of a kernel."""

    why: str


@dataclass(frozen=True)
class NotDifferentiable(OpTrait):
    """The op has no VJP rule on purpose (`why` says why: integer results, an op that autodiff
    emits itself, ...); `autodiff` stops with a diagnostic if a gradient has to flow through
    it. The completeness test accepts this mark instead of a rule."""

    why: str


@dataclass(frozen=True)
class IntegerAdjoints(OpTrait):
    """The op's integer results carry f32 adjoints, in integer units (the gradient with respect
    to the integer q itself, not the real value it stands for): `autodiff` varies them when an
    operand is varied, and the op's VJP rule takes and gives such adjoints (level 2 of
    quantized training, docs/quantized_training.md). Without this mark an integer value is
    never varied."""
