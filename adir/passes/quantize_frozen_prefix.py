"""`quantize-frozen-prefix`: the frozen backbone of a training step on int8 kernels.

    adir-opt model.mlir -p 'infer-shapes,apply-update-scheme{scheme="last:1"},freeze-batchnorm,
        autodiff,insert-optimizer{kind=sgd},quantize-frozen-prefix{samples=32 seed=0}'

Level 1 of quantized training (TTE: Lin et al., "On-Device Training Under 256KB Memory",
NeurIPS 2022): where a sparse update scheme freezes the first layers, their forward pass is
post-training quantized exactly as `quantize-int8` quantizes `@predict` (its `Quantizer`, its
calibration, its arithmetic: docs/int8.md), and its output is dequantized into the float tail,
which trains as before. The frozen int8 weights and int32 biases are constants (`static const`,
flash); the float copies that no function reads any more are removed from the module.

- The frozen prefix of a function: the ops with no side effect whose operands are all
  determined by the function's first argument (the input) and the frozen parameters (marked
  `{trainable = false}` and written by no function, so constants). Nothing a trainable
  parameter, the label or the step counter reaches (a dropout's mask, a batch norm in training
  mode whose statistics are written) is in it; none of its values is read by the backward
  pass except through the float value that enters the tail, so no int8 activation is kept for
  backward.
- Its ops become int8 where `quantize-int8` has a rule for them (conv2d with a folded batchnorm
  and relu, matmul by a parameter, the pools, reshapes, table lookups such as relu6's clamp);
  any other op of the prefix stays f32 between a dequantize and a quantize, and every op after
  it is untouched.
- Calibration: `func` (the training step) and every other function with the same first
  argument type (its `@loss`, so that `loss()` evaluates the network the step trains) are each
  run on the calibration inputs (a .npy stack of first arguments, or `samples` standard-normal
  draws from `seed`), their other arguments zero (the prefix reads none of them); the same
  computation gives the same ranges, scales and int8 weights in each, which the C then shares
  (equal constants are one table). Functions with another first argument stay f32.

Run it after `insert-optimizer` (the stores tell what trains) and before `bufferize`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import is_side_effect_free

from adir.diagnostics import OpError
from adir.dialects.tensor.params import LoadOp, ParamOp
from adir.interpreter import Session
from adir.interpreter.arrays import to_numpy_dtype
from adir.interpreter.params import initial_params
from adir.param_storage import FROZEN, is_marked_frozen, param_kind, written_params
from adir.passes.quantize_int8 import (
    Quantizer,
    calibration_inputs,
    observed_ranges,
)
from adir.passes.quantize_trainable_layers import TrainableLayerQuantizer, loaded_param


def frozen_params(module: ModuleOp) -> set[str]:
    """The parameters whose values are constants: marked frozen, written by no function, and
    known at compile time (dense data or a seedless initializer)."""
    written = written_params(module)
    return {
        op.sym_name.data
        for op in module.ops
        if isinstance(op, ParamOp) and is_marked_frozen(op) and param_kind(op, written) is FROZEN
    }


def frozen_prefix(function: func.FuncOp, frozen: set[str]) -> list[Operation]:
    """The ops of `function` that its first argument and the frozen parameters determine,
    loads excluded (the quantizer reads their data), in program order."""
    determined: set[SSAValue] = {function.body.block.args[0]}
    prefix = []
    for op in function.body.block.ops:
        if isinstance(op, LoadOp):
            if op.param.root_reference.data in frozen:
                determined.add(op.result)
            continue
        if not op.results or not is_side_effect_free(op) or isinstance(op, func.ReturnOp):
            continue
        if all(operand in determined for operand in op.operands):
            prefix.append(op)
            determined.update(op.results)
    return prefix


def prefix_ranges(
    module: ModuleOp, function: func.FuncOp, prefix: list[Operation], inputs: np.ndarray
) -> dict[SSAValue, tuple[float, float]]:
    """(min, max) of the input and of every f32 value of the prefix over the calibration
    inputs: the interpreter runs a copy of `function` cut down to the prefix (its loads kept)
    that returns those values."""
    ops = list(function.body.block.ops)
    kept = {ops.index(op) for op in prefix} | {
        i for i, op in enumerate(ops) if isinstance(op, LoadOp)
    }
    copy = module.clone()
    probe = list(copy.ops)[list(module.ops).index(function)]
    assert isinstance(probe, func.FuncOp)
    copied = list(probe.body.block.ops)
    for index in reversed(range(len(copied))):
        if index not in kept:
            Rewriter.erase_op(copied[index], safe_erase=False)

    def is_f32(value: SSAValue) -> bool:
        return isinstance(value.type, TensorType) and value.type.element_type == f32

    values = [function.body.block.args[0]] + [r for op in prefix for r in op.results if is_f32(r)]
    mapped = [probe.body.block.args[0]] + [
        r
        for i in sorted(kept)
        if not isinstance(copied[i], LoadOp)
        for r in copied[i].results
        if is_f32(r)
    ]
    probe.body.block.add_op(func.ReturnOp(*mapped))
    probe.function_type = probe.function_type.from_lists(
        probe.function_type.inputs.data, [v.type for v in mapped]
    )
    others = [
        np.zeros(t.get_shape(), to_numpy_dtype(t, np.float32))  # type: ignore[attr-defined]
        for t in function.function_type.inputs.data[1:]
    ]
    return observed_ranges(Session(copy), probe.sym_name.data, inputs, values, others)


@dataclass(frozen=True)
class QuantizeFrozenPrefixPass(ModulePass):
    """Run the frozen prefix of the training step on int8 kernels (see the module docstring)."""

    name = "quantize-frozen-prefix"

    func: str = "train_step"  # the training step (insert-optimizer's)
    calibration: str = ""  # a .npy of calibration inputs (first arguments) stacked on axis 0
    samples: int = 32  # without a file: this many standard-normal inputs
    seed: int = 0
    # 1: the frozen prefix only (after insert-optimizer); 2: also the trainable conv and linear
    # layers, on integer parameters (before autodiff, on the loss: quantize_trainable_layers).
    level: int = 1
    qas: bool = True  # level 2: quantization-aware scaling of the integer gradients

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.level == 2:
            self.apply_level_2(op)
            return
        if self.level != 1:
            raise OpError(op, f"{self.name}: level={self.level}: must be 1 or 2")
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        step = functions.get(self.func)
        if step is None:
            raise OpError(op, f"{self.name}: no function @{self.func} (run insert-optimizer first)")
        shape = self.input_shape(step, "the input the frozen prefix computes from")
        args = step.function_type.inputs.data
        inputs = calibration_inputs(
            self.name, step, shape, self.calibration, self.samples, self.seed
        )
        frozen = frozen_params(op)
        params = initial_params(op, np.dtype(np.float32))
        for function in functions.values():
            types = function.function_type.inputs.data
            if "adir.quantized" in function.attributes or not types or types[0] != args[0]:
                continue
            prefix = frozen_prefix(function, frozen)
            if not prefix:
                continue
            ranges = prefix_ranges(op, function, prefix, inputs)
            block = Quantizer(function, params, ranges, int8_ops=set(prefix)).run()
            function.body.detach_block(function.body.block)
            function.body.add_block(block)
            function.attributes["adir.quantized_prefix"] = StringAttr("int8")
        loaded = {load.param.root_reference.data for load in op.walk() if isinstance(load, LoadOp)}
        for param in [p for p in op.ops if isinstance(p, ParamOp)]:
            if param.sym_name.data in frozen and param.sym_name.data not in loaded:
                Rewriter.erase_op(param)

    def input_shape(self, function: func.FuncOp, what: str) -> tuple[int, ...]:
        """The shape of `function`'s first argument, the input calibration draws, which must be
        an f32 tensor of static shape (a located error otherwise)."""
        args = function.function_type.inputs.data
        if not args or not (
            isinstance(args[0], TensorType)
            and args[0].element_type == f32
            and args[0].has_static_shape()
        ):
            raise OpError(
                function,
                f"{self.name}: @{function.sym_name.data}'s first argument must be an f32 "
                f"tensor of static shape ({what})",
            )
        return tuple(args[0].get_shape())

    def apply_level_2(self, module: ModuleOp) -> None:
        """The frozen prefix and the trainable conv and linear layers of the loss (and of every
        function with its first argument) int8, before autodiff."""
        functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
        losses = [f for f in functions if "adir.loss" in f.attributes]
        if not losses:
            raise OpError(
                module,
                f"{self.name}{{level=2}}: no function marked adir.loss (run it before autodiff)",
            )
        loss = losses[0]
        # After autodiff, the gradient functions differentiate the float layers this would
        # replace: their gradients would name parameters that no longer exist.
        for function in functions:
            if function.sym_name.data == self.func or "adir.gradient_of" in function.attributes:
                raise OpError(
                    function,
                    f"{self.name}{{level=2}}: @{function.sym_name.data} exists: level 2 runs "
                    "before autodiff (autodiff then differentiates the int8 layers)",
                )
        shape = self.input_shape(loss, "the input the quantized layers compute from")
        args = loss.function_type.inputs.data
        inputs = calibration_inputs(
            self.name, loss, shape, self.calibration, self.samples, self.seed
        )
        frozen = frozen_params(module)
        trainable = {
            p.sym_name.data
            for p in module.ops
            if isinstance(p, ParamOp) and not is_marked_frozen(p)
        }
        params = initial_params(module, np.dtype(np.float32))
        created: dict[str, ParamOp] = {}
        for function in functions:
            types = function.function_type.inputs.data
            if not types or types[0] != args[0]:
                continue
            prefix = frozen_prefix(function, frozen)
            # What the input and the parameters determine: its ranges are calibrated (an op
            # between trainable layers stays f32, and the next layer quantizes its result).
            forward = frozen_prefix(function, frozen | trainable)
            layers = trainable_layers(forward)
            if not prefix and not layers:
                continue
            int8_ops = set(prefix) | layers
            ranges = prefix_ranges(module, function, forward, inputs)
            quantizer = TrainableLayerQuantizer(
                function,
                params,
                ranges,
                int8_ops=int8_ops,
                forward=set(forward),
                module=module,
                trainable=trainable,
                qas=self.qas,
                created=created,
            )
            block = quantizer.run()
            for new in block.ops:
                name = loaded_param(new.results[0]) if isinstance(new, LoadOp) else None
                if name in trainable:
                    reader = next(
                        o
                        for o in function.body.block.ops
                        if any(loaded_param(v) == name for v in o.operands)
                    )
                    raise OpError(reader, self.float_reader_message(name, reader, set(forward)))
            function.body.detach_block(function.body.block)
            function.body.add_block(block)
            function.attributes["adir.quantized_prefix"] = StringAttr("int8")
        loaded = {
            load.param.root_reference.data for load in module.walk() if isinstance(load, LoadOp)
        }
        for param in [p for p in module.ops if isinstance(p, ParamOp)]:
            name = param.sym_name.data
            if (name in frozen or name in trainable) and name not in loaded:
                Rewriter.erase_op(param)

    def float_reader_message(self, name: str, reader: Operation, forward: set[Operation]) -> str:
        """Why `reader` of the trainable `@name` stayed float: an input that the model's input
        and parameters do not determine alone (a training-mode op before it, which only the
        eval-mode model removes), or an op level 2 has no int8 form for."""
        cause = stochastic_ancestor(reader, forward)
        if cause is not None:
            hint = cause.results[0].name_hint if cause.results else None
            through = f"{cause.name} %{hint}" if hint else cause.name
            return (
                f"{self.name}{{level=2}}: the trainable parameter @{name} is read by an op whose "
                f"input depends on more than the model's input and the parameters (through "
                f"{through}); level 2 quantizes a fixed function of the input: import the model "
                "in eval mode (adir-import --eval: dropout off, batch norms on running statistics)"
            )
        return (
            f"{self.name}{{level=2}}: the trainable parameter @{name} is read by an op with no "
            "int8 training form (level 2 trains the weight and bias of conv2d and matmul "
            "layers, a frozen batch norm folded in); train it in float with level=1 after "
            "insert-optimizer"
        )


def stochastic_ancestor(op: Operation, forward: set[Operation]) -> Operation | None:
    """The op, walking back from `op`'s operands, that made its input more than a function of
    the model's input and the parameters: the first one outside `forward` whose own operands
    are all inside it (a dropout reads the step's seed, a training-mode batch norm writes its
    statistics); the ops between it and `op` are outside `forward` only because of it. None
    when every operand of `op` is in `forward`."""

    def outside(value: SSAValue) -> Operation | None:
        owner = value.owner
        if isinstance(owner, Operation) and owner not in forward and not isinstance(owner, LoadOp):
            return owner
        return None

    pending = [owner for v in op.operands if (owner := outside(v)) is not None]
    seen: set[Operation] = set()
    while pending:
        owner = pending.pop()
        if owner in seen:
            continue
        seen.add(owner)
        before = [o for v in owner.operands if (o := outside(v)) is not None]
        if not before:
            return owner
        pending.extend(before)
    return None


def trainable_layers(forward: list[Operation]) -> set[Operation]:
    """The ops of `forward` whose weight (operand 1: a conv2d's weight, a matmul's right-hand
    side) is a load of a parameter: the candidates for level-2 layers. The Quantizer makes
    those it has a conv or fully-connected form for int8 layers (fusing the batch norm, bias
    add and activation that alone read their result): on integer parameters where the weight
    trains, on a constant weight and an integer bias parameter where only a bias or a beta
    trains (TTE's bias-only update), and on constants where nothing of the layer trains (a
    frozen layer between trained ones, which the gradient crosses in integer units). Any other
    reader of a trainable parameter stays f32 and is then an error."""
    return {op for op in forward if len(op.operands) > 1 and loaded_param(op.operands[1])}
