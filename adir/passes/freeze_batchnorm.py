"""`freeze-batchnorm`: a batchnorm whose layer is frozen runs with its running statistics.

    adir-opt --optimizer=sgd --lr=0.01 model.mlir         (on by default before autodiff)
    adir-opt --train-frozen-batchnorm --optimizer=sgd ...  (keeps train-mode batchnorm)
    adir-opt -p 'freeze-batchnorm{fold=false},autodiff' model.mlir
    adir-opt -p 'freeze-batchnorm{trained_beta=false},autodiff' model.mlir

When a model is fine-tuned with its lower layers frozen, their batchnorms are put in eval mode
too (`bn.eval()` in PyTorch; TTE, Lin et al., "On-Device Training Under 256KB Memory", NeurIPS
2022, does the same): they normalise with the running statistics and update nothing, so the
frozen layers compute the function they were trained to. For memory this matters twice: the
backward pass of an eval-mode batchnorm is `dx = dy * scale` (a per-channel affine reads no
activation), where the train-mode one keeps its input for `batchnorm_grad`; and the running
statistics are no longer written, so they are flash, not RAM.

A batchnorm is frozen when its gamma is an `adir.load` of a parameter marked
`{trainable = false}` and its beta is a load of a parameter, frozen or not. Such an
`adir.batchnorm` becomes its eval form (`batchnorm_eval`, `HasEvalForm`, as `derive-predict`
uses it) and the stores of its new running statistics go. A trained beta (TTE's bias-only
update, `--train=bias`) keeps it in eval form too, as TTE and common fine-tuning do: the beta
is then the bias of a per-channel affine, its gradient the sum of the output's gradient over
all but the channel axis, and the backward pass keeps nothing of the batchnorm, where the
train-mode backward reads the batchnorm's input (the batch statistics' normalised values).
`trained_beta=false` keeps a batchnorm whose beta trains in training mode (only the fully
frozen ones change). A trainable gamma keeps the batchnorm in training mode: it is the
user's choice to train the layer. A batchnorm without affine parameters (gamma and beta
constants) says nothing about whether the user froze it and stays as it is. The option
`--train-frozen-batchnorm` of `adir-opt` (or not running this pass) keeps train-mode batchnorm.

`fold=true` (the default) then folds each `batchnorm_eval` into the `conv2d` before it when
nothing of the two can change: the conv's result has no other use, and its weight and bias and
the batchnorm's four operands are loads of `{trainable = false}` parameters whose values are
known at compile time (dense data or a seedless initializer) and that no function stores.
As `torch.nn.utils.fuse_conv_bn_eval` computes it, in float32:

    factor = gamma / sqrt(running_var + eps)
    weight' = weight * factor[o]          bias' = (bias - running_mean) * factor + beta

The folded weight and bias are new frozen parameters (`@<weight>_bn`, `@<weight>_bn_bias`),
with dense data, and the parameters only the folded ops read are removed. The folded conv
equals the conv and the batchnorm up to float32 rounding (not bit for bit: the products are
rounded in another order). Where the conv is trainable, the `batchnorm_eval` stays: a per-channel
affine whose backward reads only its scale.

Measured with 1-bit relu masks and in-place `batchnorm_eval` (`adir-opt --optimizer=sgd
--lr=0.01 --plan-memory --memory-report`, batch 1, @train_step's arena), with every parameter
but the conv biases and the classifier frozen: ResNet-8 641,424 -> 200,720 bytes,
MobileNetV1-0.25 1,885,584 -> 225,808; with all but the classifier frozen: ResNet-8 196,736 ->
196,608, MobileNetV1-0.25 295,040 -> 221,184, DS-CNN 64,512 -> 64,000. With the betas
trained too (`--train=bias+last:1`, host kernels), the eval form of the batchnorms whose beta
trains takes the arena from 501,632 to 238,080 bytes for ResNet-8 and from 365,696 to 98,496
for DS-CNN (`trained_beta=false` against the default).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    f32,
)
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adir.dialects.tensor.conv_and_pool import Conv2dOp
from adir.dialects.tensor.normalization import BatchnormEvalOp, BatchnormOp
from adir.dialects.tensor.params import LoadOp, ParamOp, StoreOp
from adir.interpreter.params import initial_value
from adir.param_storage import is_marked_frozen, known_at_compile_time


def loaded_param(value: SSAValue | None, params: dict[str, ParamOp]) -> ParamOp | None:
    """The parameter `value` loads, trainable or not, else None."""
    owner = value.owner if value is not None else None
    if not isinstance(owner, LoadOp):
        return None
    return params.get(owner.param.root_reference.data)


def frozen_param(value: SSAValue | None, params: dict[str, ParamOp]) -> ParamOp | None:
    """The `{trainable = false}` parameter `value` loads, else None."""
    param = loaded_param(value, params)
    return param if param is not None and is_marked_frozen(param) else None


def to_eval_form(op: BatchnormOp, params: dict[str, ParamOp], trained_beta: bool) -> bool:
    """Replace a frozen train-mode batchnorm (frozen gamma; beta frozen, or trained if
    `trained_beta`) by its eval form; False if it is not frozen, or if a result other than its
    output and the stores of its running statistics is used."""
    if frozen_param(op.gamma, params) is None:
        return False
    beta = frozen_param(op.beta, params) if not trained_beta else loaded_param(op.beta, params)
    if beta is None:
        return False
    statistics = (op.new_running_mean, op.new_running_var)
    if op.batch_mean.uses or op.batch_invstd.uses:
        return False
    if any(not isinstance(use.operation, StoreOp) for r in statistics for use in r.uses):
        return False
    for result in statistics:
        for use in list(result.uses):
            Rewriter.erase_op(use.operation)
    form = op.eval_form()
    for new in form.ops:
        new.location = op.location
        Rewriter.insert_op(new, InsertPoint.before(op))
    op.output.replace_all_uses_with(form.results[0])  # type: ignore[arg-type]
    Rewriter.erase_op(op)
    return True


@dataclass
class Folder:
    """Folds `batchnorm_eval` into the frozen conv2d before it, one pair at a time."""

    module: ModuleOp
    params: dict[str, ParamOp]
    stored: set[str]
    folded: dict[tuple[str, ...], tuple[ParamOp, ParamOp]]

    def constant_param(self, value: SSAValue | None) -> ParamOp | None:
        param = frozen_param(value, self.params)
        if param is None or param.sym_name.data in self.stored:
            return None
        return param if known_at_compile_time(param) else None

    def fold(self, bn: BatchnormEvalOp) -> bool:
        conv = bn.input.owner
        if not isinstance(conv, Conv2dOp) or conv.result.uses.get_length() != 1:
            return False
        parts = [self.constant_param(v) for v in (conv.weight, *bn.operands[1:])]
        bias = self.constant_param(conv.bias) if conv.bias is not None else None
        if any(p is None for p in parts) or (conv.bias is not None and bias is None):
            return False
        weight_param = parts[0]
        assert weight_param is not None
        key = tuple(p.sym_name.data for p in [*parts, bias] if p is not None)
        key += (repr(bn.eps.value.data),)
        if key not in self.folded:
            self.folded[key] = self.new_params(parts, bias, bn)  # type: ignore[arg-type]
        new_weight, new_bias = self.folded[key]
        loads = [LoadOp(new_weight), LoadOp(new_bias)]
        loads[0].result.name_hint = conv.weight.name_hint
        loads[1].result.name_hint = f"{conv.weight.name_hint or 'weight'}_bias"
        properties = {name: conv.properties[name] for name in conv.properties}
        folded = Conv2dOp.create(
            operands=[conv.input, loads[0].result, loads[1].result],
            result_types=[conv.result.type],
            properties=properties,
        )
        folded.result.name_hint = bn.result.name_hint
        for new in (*loads, folded):
            new.location = conv.location
            Rewriter.insert_op(new, InsertPoint.before(conv))
        bn.result.replace_all_uses_with(folded.result)
        inputs = [conv.weight, conv.bias, *bn.operands[1:]]
        Rewriter.erase_op(bn)
        Rewriter.erase_op(conv)
        for value in inputs:  # the loads only the folded pair read
            if value is not None and not value.uses:
                Rewriter.erase_op(value.owner)  # type: ignore[arg-type]
        return True

    def new_params(
        self, parts: list[ParamOp], bias: ParamOp | None, bn: BatchnormEvalOp
    ) -> tuple[ParamOp, ParamOp]:
        w, gamma, beta, mean, var = (initial_value(p, np.dtype(np.float32)) for p in parts)
        b = np.zeros(w.shape[0], np.float32) if bias is None else initial_value(bias, w.dtype)
        factor = gamma / np.sqrt(var + np.float32(bn.eps.value.data))
        folded_w = (w * factor.reshape(-1, 1, 1, 1)).astype(np.float32)
        folded_b = ((b - mean) * factor + beta).astype(np.float32)
        name = self.unused_name(f"{parts[0].sym_name.data}_bn")
        made: list[ParamOp] = []
        for symbol, data in ((name, folded_w), (self.unused_name(f"{name}_bias"), folded_b)):
            type_ = TensorType(f32, data.shape)
            dense = DenseIntOrFPElementsAttr.from_list(type_, data.reshape(-1).tolist())
            param = ParamOp(symbol, type_, dense)
            param.attributes["trainable"] = IntegerAttr.from_bool(False)
            param.location = parts[0].location
            Rewriter.insert_op(param, InsertPoint.after(made[-1] if made else parts[0]))
            self.params[symbol] = param
            made.append(param)
        return made[0], made[1]

    def unused_name(self, base: str) -> str:
        name, index = base, 0
        while name in self.params:
            index += 1
            name = f"{base}{index}"
        return name


def remove_unread_params(module: ModuleOp, candidates: set[str]) -> None:
    """Remove the parameters of `candidates` that no op of the module names any more (by a
    symbol reference in any property or attribute: a load, a store, an optimizer's
    `adir.state_of`)."""
    named = {
        attr.root_reference.data
        for op in module.walk()
        for attr in (*op.properties.values(), *op.attributes.values())
        if isinstance(attr, SymbolRefAttr)
    }
    for op in list(module.ops):
        if isinstance(op, ParamOp) and op.sym_name.data in candidates - named:
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class FreezeBatchnormPass(ModulePass):
    """Frozen batchnorms in eval mode, folded into frozen convs (see the module docstring)."""

    name = "freeze-batchnorm"

    fold: bool = True
    """Fold an eval-mode batchnorm into the frozen conv before it."""

    trained_beta: bool = True
    """Also put a batchnorm whose gamma is frozen and whose beta trains in eval form."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        params = {p.sym_name.data: p for p in op.ops if isinstance(p, ParamOp)}
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        for function in functions:
            for bn in [o for o in function.body.walk() if isinstance(o, BatchnormOp)]:
                to_eval_form(bn, params, self.trained_beta)
        if not self.fold:
            return
        stored = {o.param.root_reference.data for o in op.walk() if isinstance(o, StoreOp)}
        folder = Folder(op, params, stored, {})
        read: set[str] = set()
        for function in functions:
            for bn in [o for o in function.body.walk() if isinstance(o, BatchnormEvalOp)]:
                conv = bn.input.owner
                names = (
                    [
                        v.owner.param.root_reference.data
                        for v in (*conv.operands[1:], *bn.operands[1:])
                        if isinstance(v.owner, LoadOp)
                    ]
                    if isinstance(conv, Conv2dOp)
                    else []
                )
                if folder.fold(bn):
                    read.update(names)
        remove_unread_params(op, read)
