"""`split-partial-updates`: a weight that trains only its first output channels becomes two
parameters, the trained block and a frozen one, joined where the weight is read.

    adir.param @w : tensor<64x32x3x3xf32> = dense<...> {update_fraction = 0.25 : f32}
    %w = adir.load @w : tensor<64x32x3x3xf32>
    %y = adir.conv2d %x, %w ...

becomes

    adir.param @w : tensor<16x32x3x3xf32> = dense<first 16 channels>
    adir.param @w_frozen : tensor<48x32x3x3xf32> = dense<the other 48>
        {trainable = false, adir.frozen_part_of = @w}
    %w_0 = adir.load @w : tensor<16x32x3x3xf32>
    %w_1 = adir.load @w_frozen : tensor<48x32x3x3xf32>
    %w = adir.concat %w_0, %w_1 {adir.rematerialize} : ... -> tensor<64x32x3x3xf32>
    %y = adir.conv2d %x, %w ...

This is TTE's sub-layer update (Lin et al., NeurIPS 2022) said with ops every pass already
knows: `autodiff` gives @w the gradient of its block (concat's adjoint is a slice of the
weight's), the optimizer updates and stores @w alone, and @w_frozen is never written, so the
C holds it as `static const` data (flash) while @w is in RAM (`adir/param_storage.py`). The
trained block keeps the symbol, so the gradient is still `@w_grad` and the optimizer state
`@w_m`...; the frozen block names its owner with `adir.frozen_part_of`. The concat is marked
`adir.rematerialize`: `autodiff` joins the blocks again where the backward pass reads the
weight (a conv's input gradient) instead of keeping a weight-sized buffer alive across the step.

The weight must be read only as the weight of a conv or linear op (an operand the op declares
`LayerWeight`: axis 0 indexes its output channels), and its initial values must be known at
compile time (dense data, `#adir.zeros`, `#adir.fill`): a seeded initializer draws the whole
tensor from one stream, which no block can reproduce. Runs before `autodiff` (the `--autodiff`
shortcut runs it; without a partial update it changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adir.diagnostics import OpError
from adir.dialects.tensor.data_movement import ConcatOp, SliceOp
from adir.dialects.tensor.initializers import InitializerAttr
from adir.dialects.tensor.params import LoadOp, ParamOp
from adir.dialects.tensor.traits import LayerWeight
from adir.param_blob import TORCH_NAME

PARTIAL_UPDATE_ATTRS = ("update_fraction", "update_channels")
FROZEN_PART_OF = "adir.frozen_part_of"
REMATERIALIZE = "adir.rematerialize"  # autodiff computes the op again where backward reads it


def _block_values(op: ParamOp, trained: int) -> tuple[Attribute, Attribute]:
    """The initial values of the trained block (the first `trained` rows of axis 0) and of the
    frozen rest."""
    shape = op.type.get_shape()
    init = op.initial_value
    types = [
        TensorType(op.type.element_type, [rows, *shape[1:]])
        for rows in (trained, shape[0] - trained)
    ]
    if isinstance(init, InitializerAttr):
        if init.draw(tuple(shape)).random:
            raise OpError(
                op,
                f"split-partial-updates: @{op.sym_name.data} is drawn from the seeded "
                f"initializer {init.name}, which gives no block of its own; give it dense data "
                "(pretrained weights) to train part of its channels",
            )
        return init, init
    assert isinstance(init, DenseIntOrFPElementsAttr)
    data = init.data.data
    if len(data) == op.type.element_type.compile_time_size and shape[0] > 1:
        # A splat kept as one element's bytes (dense<0.5>): the same value in each block.
        return DenseIntOrFPElementsAttr(types[0], init.data), DenseIntOrFPElementsAttr(
            types[1], init.data
        )
    cut = len(data) * trained // shape[0]
    return (
        DenseIntOrFPElementsAttr(types[0], BytesAttr(data[:cut])),
        DenseIntOrFPElementsAttr(types[1], BytesAttr(data[cut:])),
    )


def _check_uses(param: ParamOp, loads: list[LoadOp]) -> None:
    """Every load of `param` must feed only layer weights (`LayerWeight`)."""
    name = param.sym_name.data
    for load in loads:
        for use in load.result.uses:
            user = use.operation
            trait = user.get_trait(LayerWeight)
            if trait is None or not trait.is_weight(user, use.index):
                raise OpError(
                    user,
                    f"split-partial-updates: @{name} has a partial update, but {user.name} reads "
                    "it as something other than the weight of a conv or linear layer (output "
                    "channels first; a linear's weight is read by adir.matmul {transpose_b})",
                )


def split_param(module: ModuleOp, param: ParamOp, loads: list[LoadOp]) -> None:
    """Split `param` into its trained first channels and a frozen rest (module docstring)."""
    trained = param.updated_channels()
    assert trained is not None
    for attr in PARTIAL_UPDATE_ATTRS:
        param.attributes.pop(attr, None)
    shape = param.type.get_shape()
    if trained == shape[0]:
        return  # every channel trains: the parameter as it is
    _check_uses(param, loads)
    name = param.sym_name.data
    trained_value, frozen_value = _block_values(param, trained)
    frozen_name = _free_name(module, f"{name}_frozen")
    frozen = ParamOp(
        frozen_name,
        TensorType(param.type.element_type, [shape[0] - trained, *shape[1:]]),
        frozen_value,
    )
    # Not the PyTorch name: that stays with the trained block, the symbol (the C's parameter
    # blob names each parameter once; the frozen block is saved under its own symbol).
    skipped = ("trainable", TORCH_NAME)
    frozen.attributes.update({k: v for k, v in param.attributes.items() if k not in skipped})
    frozen.attributes["trainable"] = IntegerAttr(0, i1)
    frozen.attributes[FROZEN_PART_OF] = SymbolRefAttr(name)
    frozen.location = param.location
    Rewriter.insert_op(frozen, InsertPoint.after(param))
    trained_param = ParamOp(
        name, TensorType(param.type.element_type, [trained, *shape[1:]]), trained_value
    )
    trained_param.attributes.update(param.attributes)
    trained_param.location = param.location
    Rewriter.replace_op(param, trained_param)
    for load in loads:
        first, rest = LoadOp(trained_param), LoadOp(frozen)
        joined = ConcatOp([first.result, rest.result], axis=0)
        joined.attributes[REMATERIALIZE] = UnitAttr()
        for new in (first, rest, joined):
            new.location = load.location
        if load.result.name_hint:
            first.result.name_hint = load.result.name_hint
            rest.result.name_hint = f"{load.result.name_hint}_frozen"
        Rewriter.insert_op([first, rest, joined], InsertPoint.before(load))
        load.result.replace_all_uses_with(joined.result)
        for use in list(joined.result.uses):
            _split_layer(use.operation, use.index, first, rest, trained)
        if not joined.result.uses:
            Rewriter.erase_op(joined)
        if load.result.name_hint:
            joined.result.name_hint = load.result.name_hint
        Rewriter.erase_op(load)


def _split_layer(layer: Operation, index: int, first: LoadOp, rest: LoadOp, trained: int) -> None:
    """Where the layer allows it (`LayerWeight.splits_by_output`), the layer on the trained
    block and the layer on the frozen one, their results joined along the output channels, in
    place of the layer on the joined weight: no weight-sized copy at all, and the backward pass
    computes the input gradient as the sum of the two blocks' (each reads its own block)."""
    trait = layer.get_trait(LayerWeight)
    assert trait is not None
    axis = trait.splits_by_output(layer)
    if axis is None:
        return  # the joined weight (a grouped conv)
    names = [name for name, _ in layer.get_irdl_definition().operands]
    bias_index = names.index(trait.bias) if trait.bias in names else None
    result = layer.results[0]
    shape = list(result.type.get_shape())
    total = shape[axis]
    new_ops: list[Operation] = []
    halves = []
    for weight, start, stop in ((first, 0, trained), (rest, trained, total)):
        operands = list(layer.operands)
        operands[index] = weight.result
        if bias_index is not None and bias_index < len(operands):
            bias = operands[bias_index]
            cut = SliceOp(bias, [start], [stop])
            new_ops.append(cut)
            operands[bias_index] = cut.result
        block_shape = [stop - start if d == axis else n for d, n in enumerate(shape)]
        half = layer.create(
            operands=operands,
            properties=dict(layer.properties),
            attributes=dict(layer.attributes),
            result_types=[TensorType(result.type.element_type, block_shape)],
        )
        new_ops.append(half)
        halves.append(half.results[0])
    joined = ConcatOp(halves, axis=axis)
    new_ops.append(joined)
    for op in new_ops:
        op.location = layer.location
    Rewriter.insert_op(new_ops, InsertPoint.before(layer))
    if result.name_hint:
        joined.result.name_hint = result.name_hint
    result.replace_all_uses_with(joined.result)
    Rewriter.erase_op(layer)


def _free_name(module: ModuleOp, wanted: str) -> str:
    taken = {
        str(name.data) for op in module.ops if (name := op.properties.get("sym_name")) is not None
    }
    name, index = wanted, 1
    while name in taken:
        name, index = f"{wanted}_{index}", index + 1
    return name


def _loads_by_param(module: ModuleOp) -> dict[str, list[LoadOp]]:
    loads: dict[str, list[LoadOp]] = {}
    for op in module.walk():
        if isinstance(op, LoadOp):
            loads.setdefault(op.param.root_reference.data, []).append(op)
    return loads


def has_partial_update(op: Operation) -> bool:
    return isinstance(op, ParamOp) and any(a in op.attributes for a in PARTIAL_UPDATE_ATTRS)


@dataclass(frozen=True)
class SplitPartialUpdatesPass(ModulePass):
    """Split every parameter with `update_fraction` / `update_channels` into a trained block of
    its first output channels and a frozen rest (module docstring)."""

    name = "split-partial-updates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        split_partial_updates(op)


def split_partial_updates(module: ModuleOp) -> None:
    """What the pass does, as a function `autodiff` calls first."""
    partial = [p for p in module.ops if has_partial_update(p)]
    if not partial:
        return
    loads = _loads_by_param(module)
    for param in partial:
        assert isinstance(param, ParamOp)
        split_param(module, param, loads.get(param.sym_name.data, []))
