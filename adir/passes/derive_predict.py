"""`derive-predict`: the inference function of a model, derived from its loss function.

    func.func @loss(%x, %label) -> tensor<f32> attributes {adir.loss} {
      ... %logits = ... ; %l = adir.cross_entropy %logits, %label ; func.return %l }
becomes also
    func.func @predict(%x) -> tensor<1x10xf32> { ... func.return %logits }

The loss function's body up to the loss, returning the loss's `input` (the logits or
log-probabilities the model predicts), in eval mode: each `adir.batchnorm` normalises with the
running statistics (`adir.batchnorm_eval`) and updates nothing, each `adir.dropout` is the
identity, and no parameter is stored. Arguments it no longer reads (the labels, a dropout's step
counter) are dropped. A module that already has a function of that name is left as it is (a
hand-written `@predict`, as in `examples/ds_cnn.mlir`), but for its batch.

`batch=N` gives `@predict` inputs of batch N, independent of the training batch (dim 0 of every
input; `change_batch.py` says how the shapes follow and what is refused); the default, 0, keeps
the loss function's. `adir-opt --predict` asks for `--predict-batch`, by default 1: a model
trained at batch 16 predicts one sample at a time.

Runs on the tensor level, before `autodiff` (`adir-opt --predict`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from adir.diagnostics import OpError, PassOptionError
from adir.dialects.tensor import LOSS_MARKER
from adir.dialects.tensor.losses import LossOp
from adir.dialects.tensor.traits import HasEvalForm
from adir.passes.change_batch import change_batch
from adir.passes.infer_shapes import InferShapesPass


def loss_function(module: ModuleOp, name: str) -> func.FuncOp:
    """The function marked `adir.loss` (or the one called `name`, when given)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name:
        marked = [f for f in functions if f.sym_name.data == name]
    else:
        marked = [f for f in functions if LOSS_MARKER in f.attributes]
    if len(marked) != 1:
        what = f"a function @{name}" if name else f"exactly one function marked {{{LOSS_MARKER}}}"
        raise OpError(module, f"derive-predict: the module needs {what}, found {len(marked)}")
    return marked[0]


def to_eval_mode(function: func.FuncOp) -> None:
    """Each op that `HasEvalForm` becomes its eval form: batchnorm with running statistics,
    dropout as the identity, no stores (the training-mode ops lose their uses here and go with
    dead-code elimination)."""
    for op in list(function.body.block.ops):
        if not isinstance(op, HasEvalForm):
            continue
        form = op.eval_form()
        for new in form.ops:
            Rewriter.insert_op(new, InsertPoint.before(op))
        for result, value in zip(op.results, form.results, strict=False):
            if value is not None:
                result.replace_all_uses_with(value)
        if form.erase:
            Rewriter.erase_op(op)


def drop_unused_arguments(function: func.FuncOp) -> None:
    block = function.body.block
    for arg in reversed(block.args):
        if not arg.uses:
            block.erase_arg(arg)
    function.function_type = FunctionType.from_lists(
        [arg.type for arg in block.args], function.function_type.outputs.data
    )


@dataclass(frozen=True)
class DerivePredictPass(ModulePass):
    """Add `@<name>`: the loss function's prediction, in eval mode (see the module docstring)."""

    name = "derive-predict"

    func: str = ""  # the loss function; by default the one marked {adir.loss}
    predict: str = "predict"  # the name of the new function
    batch: int = 0  # the batch of @predict's inputs; 0 keeps the loss function's

    def __post_init__(self) -> None:
        if self.batch < 0:
            raise PassOptionError(
                self.name,
                "batch",
                f"batch must be 0 (the loss function's) or more, got {self.batch}",
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        existing = [
            f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == self.predict
        ]
        predict = existing[0] if existing else self.derive(op)
        if self.batch:
            InferShapesPass().apply(ctx, op)  # change_batch compares known shapes
            change_batch(predict, self.batch, f"{self.name}{{batch={self.batch}}}")

    def derive(self, op: ModuleOp) -> func.FuncOp:
        source = loss_function(op, self.func)
        returned = source.body.block.last_op
        assert isinstance(returned, func.ReturnOp)
        loss = returned.arguments[0].owner if len(returned.arguments) == 1 else None
        if not isinstance(loss, LossOp):
            raise OpError(
                returned,
                f"derive-predict: @{source.sym_name.data} must return the result of a loss op "
                "(its input is the prediction)",
            )
        predict = source.clone()
        predict.sym_name = StringAttr(self.predict)
        predict.attributes.pop(LOSS_MARKER, None)
        new_return = predict.body.block.last_op
        assert isinstance(new_return, func.ReturnOp)
        prediction = new_return.arguments[0].owner.operands[0]  # type: ignore[union-attr]
        Rewriter.replace_op(new_return, func.ReturnOp(prediction))
        predict.function_type = FunctionType.from_lists(
            predict.function_type.inputs.data, [prediction.type]
        )
        to_eval_mode(predict)
        region_dce(predict.body)
        drop_unused_arguments(predict)
        op.body.block.insert_op_after(predict, source)
        return predict
