"""Import a `torch.nn.Module` into adir's tensor dialect through `torch.export`.

    from adir.frontends.torch_import import import_module
    module = import_module(model, (torch.randn(1, 784),), loss="cross_entropy")
    # @loss(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<f32> attributes {adir.loss}

What becomes what:

- The model is exported with `torch.export` and decomposed to core ATen, except the ops adir
  has whole (linear, the losses, softmax, ...). Each ATen op becomes the adir ops its handler
  in `aten/<family>.py` builds; every op is located at the model's source line.
- Each parameter and buffer the function uses becomes an `adir.param` whose initial data is its
  current value (so a pretrained model is fine-tuned from where it is; `dense_data.py` says how
  the values are stored): `model.l1.weight` is `@l1_weight {adir.torch_name = "l1.weight"}`,
  the attribute keeping its name in the model's `state_dict` (the C's `param_index` and
  parameter blob use it, and `load_state_dict` maps trained values back by it). Buffers and
  parameters with `requires_grad=False` are `{trainable = false}`; a buffer the forward pass
  updates is stored back (`adir.store`), as the running statistics of a batch norm in training
  mode are. Each parameter names its layer, the module that owns it (`adir.layer = "l1"`, and
  `adir.bias` on a bias), which sparse update schemes select layers by (`train=`,
  `adir/update_scheme.py`).
- The loss: a model whose forward returns a scalar (e.g. it calls `F.cross_entropy` on its
  output and a label input) is a loss function already. Otherwise `loss=` adds one, applied to
  the model's output and a new last input `label`: a name (`"cross_entropy"`, `"nll"`, `"mse"`,
  `"bce"`, `"bce_with_logits"`), a `torch.nn` loss module (`nn.CrossEntropyLoss(reduction=
  "sum")`), or any callable `(output, label) -> scalar`, traced with the model. The loss
  function is `@loss`, marked `attributes {adir.loss}` for `autodiff`; without a loss, the
  model is `@forward`, returning its outputs.
- Inputs keep the names of `forward`'s parameters; integer inputs (class labels) are `i32`.
- A model in training mode is imported for training: batch norm with the batch's statistics;
  dropout as `adir.dropout`, for which the function takes one more argument, `step` (a
  `tensor<i64>` counter the caller increments each step), and each dropout a seed, 1, 2, ...
  in the order the model runs them. `derive-predict` gives the inference function (eval
  forms). A model in eval mode is imported as it computes then (running statistics, no
  dropout).

Every ATen op that cannot be imported is reported at once in an `UnsupportedOpsError`, each
with the model's source line and the submodule it is in (`torch_errors.py`).
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import operator
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import fx, nn
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, InputSpec, OutputKind
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.transforms.dead_code_elimination import region_dce

from adir.frontends.aten import ATEN_OPS, Lowering, Unsupported, arguments, static_shape
from adir.frontends.aten.normalization import is_training_dropout
from adir.frontends.builder import ModelBuilder, Param
from adir.frontends.constant_folding import fold, reads_non_float_constant
from adir.frontends.sites import BuildError, SourceSite
from adir.frontends.torch_errors import (
    TorchImportError,
    UnsupportedOp,
    UnsupportedOpsError,
    first_line,
    node_module,
    node_site,
    traceback_frames,
    user_site,
)
from adir.frontends.torch_state import load_state_dict
from adir.param_blob import TORCH_NAME
from adir.update_scheme import SchemeError, apply_scheme, mark_layer

LOSSES: dict[str, tuple[Callable[..., torch.Tensor], bool]] = {
    "cross_entropy": (F.cross_entropy, True),
    "nll": (F.nll_loss, True),
    "mse": (F.mse_loss, False),
    "bce": (F.binary_cross_entropy, False),
    "bce_with_logits": (F.binary_cross_entropy_with_logits, False),
}
"""Loss name -> (the function, whether its label holds class indices)."""

CLASS_INDEX_LOSSES = (nn.CrossEntropyLoss, nn.NLLLoss)

DTYPES = {torch.float32: "f32", torch.int64: "i32", torch.int32: "i32", torch.bool: "i1"}
"""torch dtype of an input -> adir element type (labels are i32 on a 32-bit device)."""


def import_module(
    model: nn.Module,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    loss: str | nn.Module | Callable[..., torch.Tensor] | None = None,
    *,
    label_shape: Sequence[int] | None = None,
    label_dtype: torch.dtype | None = None,
    func_name: str | None = None,
    train: str | None = None,
) -> ModuleOp:
    """The adir module of `model` traced on `example_inputs` (their shapes are the function's).

    `loss` (see the module docstring) adds a label input of `label_shape` (default: the
    output's shape without its last dim for class-index losses, else the output's shape) and
    `label_dtype` (default int64 class indices for cross_entropy and nll, else float32).
    `train` is a sparse update scheme (`adir/update_scheme.py`: `"bias+last:1"`,
    `"channels:0.25@last:2"`, ...): the parameters it leaves out are `{trainable = false}`.
    """
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    inputs = tuple(example_inputs)
    names = input_names(model, len(inputs))
    module: nn.Module = model
    prefix = ""
    if loss is not None:
        loss_fn, label = loss_and_label(model, inputs, loss, label_shape, label_dtype)
        module, inputs, prefix = WithLoss(model, loss_fn), (*inputs, label), "model."
        names.append("label")
    result = lower_program(export(module, inputs), names, prefix, func_name)
    if train is not None:
        try:
            apply_scheme(result, train)
        except SchemeError as error:
            raise TorchImportError(str(error)) from None
    return result


class WithLoss(nn.Module):
    """`loss_fn(model(*inputs), label)`: a loss given apart from the model, traced with it."""

    def __init__(self, model: nn.Module, loss_fn: Callable[..., torch.Tensor]):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        *inputs, label = args
        return self.loss_fn(self.model(*inputs), label)


def loss_and_label(
    model: nn.Module,
    inputs: tuple[torch.Tensor, ...],
    loss: str | nn.Module | Callable[..., torch.Tensor],
    label_shape: Sequence[int] | None,
    label_dtype: torch.dtype | None,
) -> tuple[Callable[..., torch.Tensor], torch.Tensor]:
    """The loss function and an example label for it."""
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise TorchImportError(f"unknown loss '{loss}', expected one of {', '.join(LOSSES)}")
        loss_fn, class_indices = LOSSES[loss]
    elif callable(loss):
        loss_fn, class_indices = loss, isinstance(loss, CLASS_INDEX_LOSSES)
    else:
        raise TorchImportError(f"loss must be a name, a torch.nn loss or a callable, got {loss!r}")
    if label_shape is None:
        # The output's shape, from a copy (a model in training mode updates its buffers).
        with torch.no_grad():
            try:
                output = copy.deepcopy(model)(*inputs)
            except ValueError as error:
                if BATCH_STATISTICS_LIMIT not in str(error):
                    raise  # the model's own error, which adir-import locates as it is
                raise model_error("the model fails on the example inputs", error) from error
        label_shape = tuple(output.shape[:-1] if class_indices else output.shape)
    if label_dtype is None:
        label_dtype = torch.int64 if class_indices else torch.float32
    return loss_fn, torch.zeros(tuple(label_shape), dtype=label_dtype)


def input_names(model: nn.Module, count: int) -> list[str]:
    """The names of `forward`'s first `count` positional parameters (`input<i>` past them)."""
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        parameters = []
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return [positional[i] if i < len(positional) else f"input{i}" for i in range(count)]


def export(module: nn.Module, inputs: tuple[torch.Tensor, ...]) -> ExportedProgram:
    """`torch.export` to core ATen, keeping whole the ops adir maps directly (`ATEN_OPS`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch's own deprecations
        try:
            program = torch.export.export(module, inputs)
        except Exception as error:
            raise model_error("torch.export cannot trace the model", error) from error
        table = torch.export.default_decompositions()
        for overload in ATEN_OPS:
            table.pop(overload, None)
        return program.run_decompositions(table)


BATCH_STATISTICS_LIMIT = "Expected more than 1 value per channel when training"
"""PyTorch's error for a batch norm in training mode over one value per channel (BatchNorm1d on
an (N, C) input at N = 1): the running variance is unbiased, a sum over M - 1 = 0 values."""


def model_error(doing: str, error: Exception) -> TorchImportError:
    """`error`, which PyTorch raised running the model, at the model's line."""
    message = f"{doing}: {first_line(error)}"
    if BATCH_STATISTICS_LIMIT in str(error):
        message += (
            " (PyTorch's batch norm in training mode needs 2 or more values per channel, "
            "N x spatial size: train at batch >= 2, or import the model in eval mode)"
        )
    return TorchImportError(message, user_site(traceback_frames(error)))


def lower_program(
    program: ExportedProgram, names: Sequence[str], prefix: str, func_name: str | None
) -> ModuleOp:
    """The adir module of an exported program: params, then one function."""
    graph = program.graph
    specs = {spec.arg.name: spec for spec in program.graph_signature.input_specs}
    output = next(node for node in graph.nodes if node.op == "output")
    returned: list[fx.Node] = []
    mutations: list[tuple[fx.Node, str]] = []
    for node, spec in zip(output.args[0], program.graph_signature.output_specs, strict=True):
        if spec.kind == OutputKind.USER_OUTPUT:
            returned.append(node)
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            if node.meta["val"].dtype == torch.float32:
                # An integer buffer (batch norm's num_batches_tracked, which only its
                # momentum=None mode reads) is not kept.
                mutations.append((node, spec.target))
        else:
            raise TorchImportError(f"the model's {spec.kind.name.lower()} output is not supported")
    needed = _ancestors([*returned, *(node for node, _ in mutations)])
    mutated = {target for _, target in mutations}

    builder = ModelBuilder()
    values: dict[fx.Node, Any] = {}
    symbols = symbol_names(
        [_state_name(specs[n.name].target, prefix) for n in graph.nodes if _is_state(n, specs)]
    )
    params_by_target: dict[str, Param] = {}
    user_inputs: list[tuple[fx.Node, tuple[str, tuple[int, ...], str]]] = []
    constants: list[fx.Node] = []
    folded: dict[fx.Node, torch.Tensor] = {}
    for node in graph.nodes:
        if node.op != "placeholder":
            continue
        spec = specs[node.name]
        if spec.kind == InputKind.USER_INPUT:
            user_inputs.append((node, _input_spec(node, names[len(user_inputs)])))
        elif node not in needed and spec.target not in mutated:
            continue
        elif _is_state(node, specs) and _is_boolean_constant(program, spec, mutated):
            folded[node] = _state_tensor(program, spec.target)  # a mask: constant_folding.py
        elif _is_state(node, specs):
            name = _state_name(spec.target, prefix)
            values[node] = params_by_target[spec.target] = _declare(
                builder, program, spec, symbols[name], prefix
            )
        elif spec.kind == InputKind.CONSTANT_TENSOR and program.constants[spec.target].dtype == (
            torch.bool
        ):
            folded[node] = program.constants[spec.target]  # a mask: constant_folding.py
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            constants.append(node)
        else:
            raise TorchImportError(f"the model's {spec.kind.name.lower()} input is not supported")

    loss = (
        len(returned) == 1
        and returned[0].meta["val"].shape == ()
        and (returned[0].meta["val"].dtype == torch.float32)
    )
    name = func_name or ("loss" if loss else "forward")
    inputs = [spec for _, spec in user_inputs]
    if any(is_training_dropout(node) for node in graph.nodes if node in needed):
        taken = {input_name for input_name, _, _ in inputs}
        inputs.append((_unique("step", taken), (), "i64"))
    with builder.function(name, inputs, loss=loss) as function:
        for (node, _), arg in zip(user_inputs, function.args[: len(user_inputs)], strict=True):
            values[node] = arg
        step = function.args[len(user_inputs)] if len(inputs) > len(user_inputs) else None
        for node in constants:
            values[node] = builder.constant(_constant_value(program, specs[node.name].target))
        _lower_nodes(builder, graph, needed, values, prefix, step, folded)
        for node, target in mutations:
            builder.store(values[node], params_by_target[target])
        builder.ret(*(values[node] for node in returned))
    region_dce(function.op.body)  # the transposes that matmuls read through their flags
    return builder.build()


def _lower_nodes(
    builder: ModelBuilder,
    graph: fx.Graph,
    needed: set[fx.Node],
    values: dict[fx.Node, Any],
    prefix: str,
    step: Any = None,
    folded: dict[fx.Node, torch.Tensor] | None = None,
) -> None:
    """Lower every needed call in order; raise one error listing all that cannot be. `step`:
    the function's step counter, which training-mode dropouts read; `folded`: the constants
    computed so far at import (constant_folding.py), which this extends."""
    lowering = Lowering(builder, values, step)
    folded = {} if folded is None else folded
    unsupported: dict[tuple[str, SourceSite | None, str], UnsupportedOp] = {}
    for node in graph.nodes:
        if node.op != "call_function" or node not in needed:
            continue
        site = node_site(node)
        if node.target is operator.getitem:  # an element of a handler's tuple of results
            source, index = node.args
            if source in values and values[source][index] is not None:
                values[node] = values[source][index]
                if values[node].name_hint is None:
                    values[node].name_hint = node.name
            elif source in values:
                target = str(source.target)
                op = UnsupportedOp(target, site, node_module(node, prefix), f"result #{index}")
                unsupported.setdefault((target, site, op.reason), op)
            continue
        target = str(node.target)
        if (constant := fold(node, folded)) is not None:
            folded[node] = constant
            if not constant.is_floating_point():
                continue  # a boolean mask: only what it becomes enters the IR
            if reads_non_float_constant(node, folded):
                values[node] = builder.constant(constant.detach().numpy())
                values[node].name_hint = node.name
                continue
        elif reads_non_float_constant(node, folded):
            reason = "a boolean or integer constant (adir computes in float32)"
            op = UnsupportedOp(target, site, node_module(node, prefix), reason)
            unsupported.setdefault((target, site, reason), op)
            continue
        handler = ATEN_OPS.get(node.target)
        if handler is None:
            op = UnsupportedOp(target, site, node_module(node, prefix))
            unsupported.setdefault((target, site, ""), op)
            continue
        if any(arg not in values for arg in node.all_input_nodes):
            continue  # depends on an op already reported
        try:
            # Without a recorded line, the ops are located at the call of import_module.
            with builder.at(site) if site else contextlib.nullcontext():
                result = handler(lowering, node, arguments(node))
        except (Unsupported, BuildError) as error:
            reason = error.message if isinstance(error, BuildError) else str(error)
            op = UnsupportedOp(target, site, node_module(node, prefix), reason)
            unsupported.setdefault((target, site, reason), op)
            continue
        if not isinstance(result, tuple | list) and result.name_hint is None:
            result.name_hint = node.name
        values[node] = result
    if unsupported:
        raise UnsupportedOpsError(list(unsupported.values()))


def _declare(
    builder: ModelBuilder, program: ExportedProgram, spec: InputSpec, symbol: str, prefix: str
) -> Param:
    """The `adir.param` of a parameter or buffer, holding its current values, with its name in
    the model's `state_dict` as `adir.torch_name`."""
    tensor = _state_tensor(program, spec.target)
    if tensor.dtype == torch.bool:
        raise TorchImportError(
            f"{spec.target} is torch.bool; adir's parameters are float32: give a boolean "
            "attention mask as a float one (0.0 where attending, -inf where masked), which "
            "scaled-dot-product attention adds to the scores"
        )
    if tensor.dtype != torch.float32:
        raise TorchImportError(
            f"{spec.target} is {tensor.dtype}; adir's parameters are float32 (model.float())"
        )
    trainable = spec.kind == InputKind.PARAMETER and tensor.requires_grad
    data = tensor.detach().cpu().numpy()
    torch_name = {TORCH_NAME: StringAttr(_state_name(spec.target, prefix))}
    param = builder.param(symbol, data.shape, init=data, trainable=trainable, attributes=torch_name)
    if spec.kind == InputKind.PARAMETER:
        # The layer of a sparse update scheme is the module that owns the parameter ("model"
        # for the model's own parameters).
        layer, _, leaf = _state_name(spec.target, prefix).rpartition(".")
        mark_layer(param.op, layer or "model", bias=leaf == "bias")
    return param


def _state_tensor(program: ExportedProgram, target: str) -> torch.Tensor:
    if target in program.state_dict:
        return program.state_dict[target]
    return program.constants[target]  # a non-persistent buffer


def _constant_value(program: ExportedProgram, target: str):
    tensor = program.constants[target]
    if tensor.dtype != torch.float32:
        raise TorchImportError(f"the model's constant {target} is {tensor.dtype}, not float32")
    return tensor.detach().cpu().numpy()


def _is_boolean_constant(program: ExportedProgram, spec: InputSpec, mutated: set[str]) -> bool:
    """A boolean buffer that the model never writes (an attention mask): folded, not a param."""
    return spec.target not in mutated and _state_tensor(program, spec.target).dtype == torch.bool


def _is_state(node: fx.Node, specs: dict[str, Any]) -> bool:
    return node.op == "placeholder" and specs[node.name].kind in (
        InputKind.PARAMETER,
        InputKind.BUFFER,
    )


def _input_spec(node: fx.Node, name: str) -> tuple[str, tuple[int, ...], str]:
    value = node.meta["val"]
    if value.dtype not in DTYPES:
        raise TorchImportError(
            f"input '{name}' is {value.dtype}; adir takes float32, integer and bool inputs"
        )
    try:
        shape = static_shape(value)
    except Unsupported as error:
        raise TorchImportError(f"input '{name}': {error}") from None
    return (_identifier(name), shape, DTYPES[value.dtype])


def _ancestors(roots: Sequence[fx.Node]) -> set[fx.Node]:
    seen: set[fx.Node] = set()
    stack = [r for r in roots if isinstance(r, fx.Node)]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.all_input_nodes)
    return seen


def _state_name(target: str, prefix: str) -> str:
    return target.removeprefix(prefix)


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name_1`, `name_2`, ... if an input already has it."""
    candidate, suffix = name, 1
    while candidate in taken:
        candidate, suffix = f"{name}_{suffix}", suffix + 1
    return candidate


def _identifier(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return name if re.match(r"[A-Za-z]", name) else f"p{name}"


def symbol_names(state_names: Sequence[str]) -> dict[str, str]:
    """The symbol of each parameter or buffer: its name with `.` (and anything that is not an
    ASCII letter, digit or `_`) as `_` (`layers.0.weight` -> `layers_0_weight`), `p` before a
    name that does not start with a letter (`0.bias` -> `p0_bias`: C reserves names that begin
    with `_`), made unique with a suffix if two names collide, ignoring case, so that the C
    backend can use the symbols as identifiers and upper-case them in macros."""
    symbols: dict[str, str] = {}
    taken: set[str] = set()
    for name in state_names:
        symbol = base = _identifier(name)
        suffix = 1
        while symbol.lower() in taken:
            symbol, suffix = f"{base}_{suffix}", suffix + 1
        symbols[name] = symbol
        taken.add(symbol.lower())
    return symbols


__all__ = [
    "LOSSES",
    "TorchImportError",
    "UnsupportedOp",
    "UnsupportedOpsError",
    "import_module",
    "load_state_dict",
    "symbol_names",
]
