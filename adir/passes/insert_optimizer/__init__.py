"""`insert-optimizer`: turn a gradient function into `@train_step`, the function the device
runs, one call per training step.

    adir-opt --autodiff --optimizer=adam --lr=0.001 model.mlir
    adir-opt -p 'autodiff,insert-optimizer{kind=sgd lr=0.01 momentum=0.9 nesterov=true}' m.mlir

`@train_step` replaces the gradient function. It takes the loss function's arguments (and,
with `runtime_lr=true`, the learning rate as one more `tensor<f32>` argument, last), computes
the loss and the gradients (the gradient function's ops, copied in), then writes every updated
parameter and optimizer state with `adir.store`, and returns the loss. Semantics are PyTorch's:

- `kind=sgd`: `torch.optim.SGD` with `momentum`, `nesterov`, `weight_decay`;
- `kind=adam` / `kind=adamw`: `torch.optim.Adam` / `AdamW` with `beta1`, `beta2`, `eps`,
  `weight_decay` (L2 for Adam, decoupled for AdamW; the default is 0 for sgd and adam, 0.01
  for adamw, as PyTorch's);
- `clip_norm=X`: `torch.nn.utils.clip_grad_norm_(params, X)` before the update, or
  `clip_value=X`: `clip_grad_value_`;
- `schedule=step|exponential|cosine` with `step_size`, `gamma`, `t_max`, `eta_min`: the
  learning rate of `StepLR`, `ExponentialLR`, `CosineAnnealingLR` stepped once per step.

Each parameter's update is one op: `adir.sgd_update` (SGD), `adir.momentum_update` (SGD with
momentum) or `adir.adam_update` (Adam, AdamW), which returns the new parameter and state, with
weight decay and `clip_value` as its properties and the learning rate (scheduled, scaled, or the
runtime argument) as an operand. `fuse-weight-updates` then computes a matmul gradient inside
its update, so the gradient never needs a buffer; `clip_norm` needs every gradient before any
update, so its scaled gradients stay ordinary values (their updates are not fused).
`update_ops=false` writes each update as the elementwise ops it stands for instead (the same
float32 operations in the same order, so the same numbers bit for bit).

Optimizer state is declared as parameters next to the model's, zero-initialised and marked
`{trainable = false, adir.state_of = @w}`: `@w_momentum_buffer` (SGD with momentum),
`@w_exp_avg` and `@w_exp_avg_sq` (Adam), and one step counter `@optimizer_step` (when Adam or a
schedule needs it), `{trainable = false, adir.optimizer_state}` (`adir/param_storage.py` reads
both marks). Per parameter, `{lr_scale = 0.1 : f32}` multiplies its learning rate and
`{weight_decay = 0.0 : f32}` overrides the weight decay; `{trainable = false}` freezes it (it
gets no gradient, no state and no update). A parameter the loss does not read is left alone,
as PyTorch leaves a parameter whose `.grad` is None.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f32,
    i1,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from adir.diagnostics import OpError, PassOptionError
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import reductions as red
from adir.dialects.tensor.initializers import ZerosInit
from adir.dialects.tensor.op_builder import TensorBuilder, name_value
from adir.dialects.tensor.optimizers import SCHEDULES, LrScheduleOp
from adir.dialects.tensor.params import LoadOp, ParamOp, StoreOp
from adir.dialects.tensor.quantized import QSgdUpdateOp
from adir.param_storage import OPTIMIZER_STATE
from adir.passes.insert_optimizer.updates import (
    BiasCorrections,
    Hyper,
    adam,
    adam_arithmetic,
    sgd,
    sgd_arithmetic,
)

KINDS = ("sgd", "adam", "adamw")
STEP_COUNTER = "optimizer_step"
# On an integer parameter (level 2 of quantized training): its update's `qsgd_update` factors,
# one per slice along `adir.step_axis` (default 0) or one for all.
STEP_SCALE, STEP_AXIS = "adir.step_scale", "adir.step_axis"


def is_integer(param: ParamOp) -> bool:
    return isinstance(param.type.element_type, IntegerType)


@dataclass(frozen=True)
class InsertOptimizerPass(ModulePass):
    """Build `@train_step` from the gradient function: gradients, then the optimizer update."""

    name = "insert-optimizer"

    kind: str = "sgd"
    lr: float = 0.001
    momentum: float = 0.0
    nesterov: bool = False
    weight_decay: float | None = None
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    clip_norm: float = 0.0
    clip_value: float = 0.0
    schedule: str = "none"
    step_size: int = 1
    gamma: float = 0.1
    t_max: int = 1
    eta_min: float = 0.0
    runtime_lr: bool = False
    update_ops: bool = True
    """One op per parameter update (false: the elementwise arithmetic it stands for)."""
    func: str | None = None
    """The gradient function; by default the one `autodiff` made (`adir.gradient_of`)."""

    def __post_init__(self) -> None:
        checks = [
            ("kind", self.kind in KINDS, f"kind must be one of {', '.join(KINDS)}"),
            ("lr", self.lr >= 0, "lr must not be negative"),
            ("momentum", self.momentum >= 0, "momentum must not be negative"),
            (
                "weight_decay",
                self.weight_decay is None or self.weight_decay >= 0,
                "weight_decay must not be negative",
            ),
            ("beta1", 0 <= self.beta1 < 1, "beta1 must be in [0, 1)"),
            ("beta2", 0 <= self.beta2 < 1, "beta2 must be in [0, 1)"),
            ("eps", self.eps >= 0, "eps must not be negative"),
            ("nesterov", not self.nesterov or self.momentum > 0, "nesterov needs a momentum"),
            (
                "momentum",
                self.kind == "sgd" or self.momentum == 0,
                "momentum is an sgd option (adam has beta1)",
            ),
            ("clip_norm", self.clip_norm >= 0, "clip_norm must not be negative"),
            ("clip_value", self.clip_value >= 0, "clip_value must not be negative"),
            (
                "clip_value",
                not (self.clip_norm and self.clip_value),
                "give clip_norm or clip_value, not both",
            ),
            (
                "schedule",
                self.schedule in ("none", *SCHEDULES),
                f"schedule must be one of none, {', '.join(SCHEDULES)}",
            ),
            ("step_size", self.step_size >= 1, "step_size must be at least 1"),
            ("t_max", self.t_max >= 1, "t_max must be at least 1"),
            ("gamma", self.gamma > 0, "gamma must be positive"),
        ]
        for option, ok, message in checks:
            if not ok:
                value = getattr(self, option)
                shown = str(value).lower() if isinstance(value, bool) else value
                raise PassOptionError(self.name, option, f"{message}, got {shown}")

    @property
    def default_weight_decay(self) -> float:
        if self.weight_decay is not None:
            return self.weight_decay
        return 0.01 if self.kind == "adamw" else 0.0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        gradient_function = self.find_gradient_function(op)
        TrainStepBuilder(self, op, gradient_function).build()

    def find_gradient_function(self, module: ModuleOp) -> func.FuncOp:
        functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
        if self.func is not None:
            found = [f for f in functions if f.sym_name.data == self.func]
        else:
            found = [f for f in functions if "adir.gradient_of" in f.attributes]
        if len(found) != 1:
            what = f"@{self.func}" if self.func else "a gradient function (run autodiff first)"
            if len(found) > 1:
                what = "one gradient function; name it with insert-optimizer{func=NAME}"
            raise PassFailedException(f"insert-optimizer: expected {what}")
        gradient_function = found[0]
        if not isinstance(gradient_function.attributes.get("adir.gradients"), ArrayAttr):
            raise OpError(
                gradient_function, "insert-optimizer: not a gradient function of autodiff"
            )
        return gradient_function


class TrainStepBuilder:
    """Copies the gradient function into `@train_step` and appends the updates."""

    def __init__(self, options: InsertOptimizerPass, module: ModuleOp, gradient: func.FuncOp):
        self.options = options
        self.module = module
        self.gradient = gradient
        self.params = {op.sym_name.data: op for op in module.ops if isinstance(op, ParamOp)}
        self.last_param: Operation | None = next(
            (op for op in reversed(list(module.ops)) if isinstance(op, ParamOp)), None
        )

    def build(self) -> func.FuncOp:
        options = self.options
        if any(
            isinstance(f, func.FuncOp) and f.sym_name.data == "train_step" for f in self.module.ops
        ):
            raise OpError(self.gradient, "insert-optimizer: @train_step already exists")
        step = self.gradient.clone()
        step.sym_name = StringAttr("train_step")
        step.location = self.gradient.location
        for key in ("adir.gradient_of", "adir.gradients", "adir.arg_gradients"):
            step.attributes.pop(key, None)
        step.attributes["adir.optimizer"] = StringAttr(options.kind)
        Rewriter.insert_op(step, InsertPoint.after(self.gradient))

        block = step.body.block
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        loss, *grads = ret.arguments
        names = [s.root_reference.data for s in self.gradient.attributes["adir.gradients"]]
        Rewriter.erase_op(ret)
        b = TensorBuilder(block, self.gradient.location)

        first_load: dict[str, SSAValue] = {}
        for op in block.ops:
            if isinstance(op, LoadOp):
                first_load.setdefault(op.param.root_reference.data, op.result)
        # PyTorch skips a parameter whose .grad is None: one the loss never reads. (Gradients of
        # arguments, if autodiff was asked for some, follow the parameters' and are ignored.)
        param_grads = zip(names, grads[: len(names)], strict=True)
        updated = [(n, first_load[n], g) for n, g in param_grads if n in first_load]
        updated = self.clip(b, updated)

        param_stores: list[tuple[SSAValue, str]] = []
        stores: list[tuple[SSAValue, str]] = []  # the optimizer state's
        needs_counter = options.kind != "sgd" or options.schedule != "none"
        t = t_next = None
        if needs_counter:
            t = b.emit(LoadOp(self.declare_state(STEP_COUNTER, TensorType(f32, []), None)))
            t_next = name_value(b.add(t, b.constant(1.0)), "step")
            stores.append((t_next, STEP_COUNTER))
        lr = b.constant(options.lr)
        if options.runtime_lr:
            lr = block.insert_arg(TensorType(f32, []), len(block.args))
        if options.schedule != "none":
            assert t is not None
            lr = b.emit(
                LrScheduleOp(
                    lr,
                    t,
                    options.schedule,
                    options.step_size,
                    options.gamma,
                    options.t_max,
                    options.eta_min,
                )
            )

        corrections = None
        if options.kind != "sgd" and updated:
            assert t_next is not None
            corrections = BiasCorrections.at(b, t_next, options.beta1, options.beta2)
        for name, p, g in updated:
            param = self.params[name]
            hyper = Hyper(
                lr=self.scaled_lr(b, lr, param),
                weight_decay=self.param_float(param, "weight_decay", options.default_weight_decay),
                momentum=options.momentum,
                nesterov=options.nesterov,
                beta1=options.beta1,
                beta2=options.beta2,
                eps=options.eps,
                clip_value=options.clip_value,
            )
            if is_integer(param):
                new_p = self.integer_sgd(b, param, p, g, hyper)
            elif options.kind == "sgd":
                buf = None
                if options.momentum:
                    buf = self.load_state(b, f"{name}_momentum_buffer", param)
                new_p, new_buf = (sgd if options.update_ops else sgd_arithmetic)(
                    b, p, g, buf, hyper
                )
                if new_buf is not None:
                    stores.append((new_buf, f"{name}_momentum_buffer"))
            else:
                m = self.load_state(b, f"{name}_exp_avg", param)
                v = self.load_state(b, f"{name}_exp_avg_sq", param)
                assert corrections is not None
                new_p, new_m, new_v = (adam if options.update_ops else adam_arithmetic)(
                    b, p, g, m, v, corrections, hyper, options.kind == "adamw"
                )
                stores += [(new_m, f"{name}_exp_avg"), (new_v, f"{name}_exp_avg_sq")]
            param_stores.append((new_p, name))

        for value, name in param_stores + stores:
            Rewriter.insert_op(StoreOp(value, name), InsertPoint.at_end(block))
        Rewriter.insert_op(func.ReturnOp(loss), InsertPoint.at_end(block))
        step.function_type = FunctionType.from_lists([a.type for a in block.args], [loss.type])
        # The gradient function was a means to this end: the step replaces it, so later stages
        # (and the device's arena) see only the functions that run.
        Rewriter.erase_op(self.gradient)
        return step

    def integer_sgd(
        self, b: TensorBuilder, param: ParamOp, p: SSAValue, g: SSAValue, hyper: Hyper
    ) -> SSAValue:
        """An int8 weight or int32 bias (level 2 of quantized training) steps by
        `qsgd_update`, its step scales (QAS's s^-2, or 1) recorded on the parameter by the pass
        that quantized it: plain SGD only, as TTE trains its int8 layers."""
        options = self.options
        name = param.sym_name.data
        if options.kind != "sgd" or options.momentum or hyper.weight_decay or hyper.clip_value:
            raise OpError(
                param,
                f"insert-optimizer: @{name} is an integer parameter (a trainable int8 layer), "
                "which trains with plain SGD only (no momentum, weight decay or clipping)",
            )
        scales = param.attributes.get(STEP_SCALE)
        if not isinstance(scales, ArrayAttr) or not all(
            isinstance(v, FloatAttr) for v in scales.data
        ):
            raise OpError(
                param,
                f"insert-optimizer: integer parameter @{name} has no `{STEP_SCALE}` (an array "
                "of f32: its gradient's factors per output channel, QAS's s^-2, or 1)",
            )
        axis = param.attributes.get(STEP_AXIS)
        update = QSgdUpdateOp(
            p,
            g,
            hyper.lr,
            [float(v.value.data) for v in scales.data],  # type: ignore[attr-defined]
            axis.value.data if isinstance(axis, IntegerAttr) else 0,
        )
        return b.emit(update)

    def clip(
        self, b: TensorBuilder, updated: list[tuple[str, SSAValue, SSAValue]]
    ) -> list[tuple[str, SSAValue, SSAValue]]:
        """`clip_grad_norm_`: every gradient times `min(1, c / (total_norm + 1e-6))`, the norm
        taken over all of them. (`clip_grad_value_` is elementwise: each update does it.)"""
        options = self.options
        if options.clip_norm and updated:
            squares = [b.emit(red.SumOp(b.mul(g, g))) for _, _, g in updated]
            total = squares[0]
            for square in squares[1:]:
                total = b.add(total, square)
            norm = b.emit(ew.SqrtOp(total))
            coefficient = b.div(b.constant(options.clip_norm), b.add(norm, b.constant(1e-6)))
            coefficient = b.emit(ew.MinimumOp(coefficient, b.constant(1.0)))
            return [(n, p, b.mul(g, coefficient)) for n, p, g in updated]
        return updated

    def declare_state(self, name: str, type_: TensorType, owner: ParamOp | None) -> ParamOp:
        """Declare a zero-initialised state parameter after the model's parameters."""
        if name in self.params:
            raise OpError(
                self.params[name], f"insert-optimizer: @{name} is needed for optimizer state"
            )
        state = ParamOp(name, type_, ZerosInit())
        state.attributes["trainable"] = IntegerAttr(0, i1)
        if owner is not None:
            state.attributes["adir.state_of"] = SymbolRefAttr(owner.sym_name.data)
        else:  # the step counter: optimizer state of no one parameter (`param_storage.py`)
            state.attributes[OPTIMIZER_STATE] = UnitAttr()
        state.location = owner.location if owner is not None else self.gradient.location
        point = (
            InsertPoint.after(self.last_param)
            if self.last_param
            else InsertPoint.at_start(self.module.body.block)
        )
        Rewriter.insert_op(state, point)
        self.last_param = state
        self.params[name] = state
        return state

    def load_state(self, b: TensorBuilder, name: str, owner: ParamOp) -> SSAValue:
        """Declare the state parameter `@name` of `owner` and load it, named after it."""
        return name_value(b.emit(LoadOp(self.declare_state(name, owner.type, owner))), name)

    def scaled_lr(self, b: TensorBuilder, lr: SSAValue, param: ParamOp) -> SSAValue:
        scale = self.param_float(param, "lr_scale", 1.0)
        return lr if scale == 1.0 else b.mul(lr, b.constant(scale))

    @staticmethod
    def param_float(param: ParamOp, key: str, default: float) -> float:
        value = param.attributes.get(key)
        if value is None:
            return default
        if not isinstance(value, FloatAttr) or value.value.data < 0:
            raise OpError(
                param, f"insert-optimizer: {key} must be a non-negative float, got {value}"
            )
        return value.value.data
