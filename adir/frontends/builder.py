"""Build adir IR from Python: parameters, functions, and every op of the tensor dialect.

    import math
    from adir.frontends.builder import ModelBuilder, kaiming_uniform

    b = ModelBuilder()
    w1 = b.param("w1", (32, 784), init=kaiming_uniform(a=math.sqrt(5)))
    w2 = b.param("w2", (10, 32), init=kaiming_uniform(a=math.sqrt(5)))
    inputs = [("x", (1, 784), "f32"), ("label", (1,), "i32")]
    with b.function("loss", inputs, loss=True) as (x, label):
        h = b.sigmoid(b.matmul(x, w1, transpose_b=True))
        logits = b.matmul(h, w2, transpose_b=True)
        b.ret(b.nll(b.log_softmax(logits), label))
    print(b.module_to_text())

That is `examples/mnist_mlp.mlir` (give the ops `name="h"`, ... to get its SSA names too).

- `b.<op>(...)` exists for every op of the adir dialect, named as the op without `adir.`
  (`b.matmul`, `b.cross_entropy`, `b.sum`, `b.relu_grad`, ...), with the arguments of the op
  class's constructor; `b.op(OpClass, ...)` builds any op class. An op added to the dialect is
  a builder method at once. Every op helper also takes `name=`, the SSA name it prints with.
- Operands may be values, `Param`s (loaded in the current function at first use, as
  `%w1 = adir.load @w1`), Python numbers or numpy arrays (`adir.constant`s).
- Initializers: `zeros()`, `fill(v)`, `uniform(...)`, `normal(...)`, `kaiming_uniform(...)`,
  `xavier_uniform(...)` (or `initializer(AnyInitializerAttr, ...)`; an attribute instance
  works too); a seed left out is the builder's next one (1, 2, ...). A numpy array gives
  dense data (`dense_data.py` says how it is printed).
- Every op is checked as it is built: a shape mistake raises `BuildError` with the op's
  message and the Python line that called the builder, which also becomes the op's location.

No global state: everything lives in the `ModelBuilder`, and `b.module` is an ordinary xDSL
`ModuleOp`.
"""

from __future__ import annotations

import functools
import inspect
import io
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor import LOSS_MARKER, Adir
from adir.dialects.tensor import params as p
from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.data_movement import ConstantOp
from adir.dialects.tensor.elementwise import AddOp
from adir.dialects.tensor.initializers import InitializerAttr
from adir.dialects.tensor.matmul import MatmulOp
from adir.frontends.dense_data import dense_f32
from adir.frontends.initializers import (
    Init,
    fill,
    initializer,
    kaiming_uniform,
    normal,
    uniform,
    xavier_uniform,
    zeros,
)
from adir.frontends.sites import BuildError, SourceSite, caller_site
from adir.name_hints import name_hint_of
from adir.update_scheme import SchemeError, apply_scheme, mark_layer

"""The attribute that marks a loss function for `autodiff` (as `attributes {adir.loss}`)."""

DTYPES: dict[str, Attribute] = {"f32": f32, "i32": i32, "i64": i64, "i1": i1}

InitLike = Init | InitializerAttr | np.ndarray | Sequence[float] | float


# --- the dialect's ops, by short name -------------------------------------------------------


@functools.cache
def dialect_ops() -> dict[str, type[TensorOp]]:
    """Every tensor op of the adir dialect by its name without `adir.` (`matmul`, ...)."""
    return {
        op.name.removeprefix("adir."): op
        for op in Adir.operations
        if issubclass(op, TensorOp) and op.name.startswith("adir.")
    }


@functools.cache
def _signature(op_class: type[Operation]) -> inspect.Signature:
    return inspect.signature(op_class.__init__)


def _is_operand(parameter: inspect.Parameter) -> bool:
    """Whether a constructor parameter takes values (annotated `SSAValue`, or a sequence of)."""
    return "SSAValue" in str(parameter.annotation)


# --- the builder ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A module-level parameter; use it as an operand and it is loaded where it is used."""

    op: p.ParamOp

    @property
    def name(self) -> str:
        return self.op.sym_name.data

    @property
    def type(self) -> TensorType:
        return self.op.type


Operand = SSAValue | Param | np.ndarray | float | int


class Function:
    """A function being built: `with b.function(...) as (x, y):` ... `b.ret(value)`, or
    `b.function(...)(body)` with `body(x, y)` returning the result(s)."""

    def __init__(
        self,
        builder: ModelBuilder,
        name: str,
        inputs: Sequence[tuple[str, Sequence[int], str] | tuple[str, Sequence[int]]],
        loss: bool,
    ):
        self.builder = builder
        self.name = name
        self.loss = loss
        types, names = [], []
        for spec in inputs:
            arg_name, shape, dtype = (*spec, "f32") if len(spec) == 2 else spec
            if dtype not in DTYPES:
                raise BuildError(
                    f"@{name}: input '{arg_name}' has dtype '{dtype}', expected one of "
                    + ", ".join(DTYPES),
                    caller_site(),
                )
            types.append(TensorType(DTYPES[dtype], list(shape)))
            names.append(arg_name)
        self.block = Block(arg_types=types)
        for arg, arg_name in zip(self.block.args, names, strict=True):
            arg.name_hint = name_hint_of(arg_name)
        self.op = FuncOp(name, (types, []), Region(self.block))
        if loss:
            self.op.attributes[LOSS_MARKER] = UnitAttr()
        self.returned = False
        self.loads: dict[str, SSAValue] = {}
        self.constants: dict[tuple[bytes, tuple[int, ...]], SSAValue] = {}

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.block.args)

    def __iter__(self) -> Iterator[SSAValue]:
        return iter(self.block.args)

    def __enter__(self) -> Function:
        self.builder._open(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.builder._close(self, keep=False)
            return
        if not self.returned:
            self.builder._close(self, keep=False)
            raise BuildError(f"@{self.name} ends without a return: call b.ret(...)", caller_site())
        self.builder._close(self, keep=True)

    def __call__(self, body: Callable[..., Operand | Sequence[Operand]]) -> Function:
        with self:
            results = body(*self.block.args)
            self.builder.ret(*(results if isinstance(results, tuple | list) else (results,)))
        return self

    def ret(self, *values: Operand) -> None:
        self.builder.ret(*values)


class ModelBuilder:
    """Builds one adir module: `param`, `function`, the op helpers, `ret`, `module_to_text`."""

    def __init__(self) -> None:
        self.module = ModuleOp([])
        self.next_seed = 1
        """The seed given to the next initializer that needs one and names none."""
        self._function: Function | None = None
        self._site: SourceSite | None = None

    # --- where ops come from -------------------------------------------------------------

    @contextmanager
    def at(self, site: SourceSite) -> Iterator[None]:
        """Attribute the ops built inside to `site` instead of the Python caller (an importer
        uses this to point at the model's source)."""
        outer, self._site = self._site, site
        try:
            yield
        finally:
            self._site = outer

    def _where(self) -> SourceSite | None:
        return self._site or caller_site()

    # --- parameters ------------------------------------------------------------------------

    def param(
        self,
        name: str,
        shape: Sequence[int],
        init: InitLike,
        trainable: bool = True,
        attributes: Mapping[str, Attribute] | None = None,
        layer: str | None = None,
        bias: bool = False,
    ) -> Param:
        """Declare `adir.param @name : tensor<shape x f32> = init`. `layer` names the layer it
        belongs to (and `bias` marks the layer's bias) for sparse update schemes (`train`)."""
        if self._symbol(name) is not None:
            raise BuildError(f"@{name} is already defined in the module", self._where())
        if any(not isinstance(d, int | np.integer) or d < 0 for d in shape):
            raise BuildError(
                f"adir.param @{name}: shape {list(shape)} must be non-negative integers",
                self._where(),
            )
        type_ = TensorType(f32, [int(d) for d in shape])
        op = p.ParamOp(name, type_, self._initial_value(name, type_, init))
        if not trainable:
            op.attributes["trainable"] = IntegerAttr(0, i1)
        if layer is not None:
            mark_layer(op, layer, bias)
        elif bias:
            raise BuildError(f"adir.param @{name}: bias=True needs a layer=", self._where())
        op.attributes.update(attributes or {})
        self._check(op)
        params = [o for o in self.module.ops if isinstance(o, p.ParamOp)]
        where = InsertPoint.after(params[-1]) if params else InsertPoint.at_start(self._body)
        Rewriter.insert_op(op, where)
        return Param(op)

    def _initial_value(self, name: str, type_: TensorType, init: InitLike) -> Attribute:
        try:
            if isinstance(init, InitializerAttr):
                return init
            if isinstance(init, Init):
                seed = None
                if init.needs_seed():
                    seed, self.next_seed = self.next_seed, self.next_seed + 1
                return init.attr(seed)
            if isinstance(init, float | int):
                return fill(float(init)).attr()
            data = dense_f32(init)
        except BuildError as error:
            raise BuildError(f"adir.param @{name}: {error.message}", self._where()) from None
        except (TypeError, ValueError) as error:
            raise BuildError(
                f"adir.param @{name}: init must be an initializer, a number or an array, got "
                f"{type(init).__name__} ({error})",
                self._where(),
            ) from None
        if data.type != type_:
            shape = list(type_.get_shape())
            raise BuildError(
                f"adir.param @{name}: initial data of shape {list(data.get_shape())} does not "
                f"match the shape {shape}",
                self._where(),
            )
        return data

    # --- functions -------------------------------------------------------------------------

    def function(
        self,
        name: str,
        inputs: Sequence[tuple[str, Sequence[int], str] | tuple[str, Sequence[int]]] = (),
        loss: bool = False,
    ) -> Function:
        """A function `@name` taking `inputs`, `(name, shape, dtype)` each (dtype f32, i32, i64
        or i1; f32 if left out). `loss=True` marks it `{adir.loss}`: it must return one
        `tensor<f32>`, and `autodiff` differentiates it."""
        if self._symbol(name) is not None:
            raise BuildError(f"@{name} is already defined in the module", self._where())
        return Function(self, name, inputs, loss)

    def _open(self, function: Function) -> None:
        if self._function is not None:
            raise BuildError(
                f"@{function.name} is opened inside @{self._function.name}; functions do not nest",
                self._where(),
            )
        self._body.add_op(function.op)
        self._function = function

    def _close(self, function: Function, keep: bool) -> None:
        self._function = None
        if not keep:
            function.op.detach()

    def ret(self, *values: Operand) -> None:
        """Return `values` from the current function (its result types are theirs)."""
        function = self._current("func.return")
        results = [self._value(v, "func.return", f"value #{i}") for i, v in enumerate(values)]
        types = [r.type for r in results]
        if function.loss and (len(types) != 1 or types[0] != TensorType(f32, [])):
            shown = ", ".join(str(t) for t in types) or "nothing"
            raise BuildError(
                f"@{function.name} is a loss function, so it returns one tensor<f32>, got {shown}",
                self._where(),
            )
        function.op.function_type = FunctionType.from_lists(
            function.op.function_type.inputs.data, types
        )
        self._insert(ReturnOp(*results))
        function.returned = True

    # --- ops -----------------------------------------------------------------------------

    def op(self, op_class: type[Operation], *args: Any, name: str | None = None, **kwargs: Any):
        """Build `op_class(*args, **kwargs)` at the end of the current function and return its
        result (a tuple for several, None for none). Arguments that the constructor annotates
        as `SSAValue` also take Params, numbers and arrays; `name` is the result's SSA name."""
        op_name = getattr(op_class, "name", op_class.__name__)
        self._current(op_name)
        signature = _signature(op_class)
        try:
            bound = signature.bind(None, *args, **kwargs)
        except TypeError as error:
            parameters = list(signature.parameters.values())[1:]
            shown = ", ".join(str(parameter) for parameter in parameters)
            raise BuildError(f"{op_name}({shown}): {error}", self._where()) from None
        for key, value in list(bound.arguments.items())[1:]:
            parameter = signature.parameters[key]
            if _is_operand(parameter) and value is not None:  # None: an optional operand
                if isinstance(value, list | tuple):
                    value = [self._value(v, op_name, f"{key}[{i}]") for i, v in enumerate(value)]
                else:
                    value = self._value(value, op_name, key)
                bound.arguments[key] = value
        try:
            op = op_class(*bound.args[1:], **bound.kwargs)
        except (VerifyException, ValueError) as error:
            _drop_uses_of_unbuilt_ops(bound.arguments.values())
            message = str(error)
            if not message.startswith(op_name):
                message = f"{op_name}: {message}"
            raise BuildError(message, self._where()) from None
        self._insert(op)
        if name is not None:
            for result in op.results:
                result.name_hint = name_hint_of(name)
        if not op.results:
            return None
        return op.results[0] if len(op.results) == 1 else tuple(op.results)

    def __getattr__(self, attr: str) -> Callable[..., Any]:
        if attr.startswith("_"):
            raise AttributeError(attr)
        op_class = dialect_ops().get(attr)
        if op_class is None:
            raise AttributeError(
                f"'ModelBuilder' has no attribute '{attr}', and the adir dialect has no op "
                f"adir.{attr}"
            )
        return functools.partial(self.op, op_class)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *dialect_ops()})

    def load(self, param: Param | str, name: str | None = None) -> SSAValue:
        """`adir.load @param` (once per function until the next store to it)."""
        function = self._current("adir.load")
        param = self._param(param)
        if param.name not in function.loads:
            value = self.op(p.LoadOp, param.op, name=name or param.name)
            function.loads[param.name] = value
        return function.loads[param.name]

    def store(self, value: Operand, param: Param | str) -> None:
        """`adir.store %value, @param`."""
        function = self._current("adir.store")
        param = self._param(param)
        self._insert(p.StoreOp(self._value(value, "adir.store", "value"), param.op))
        function.loads.pop(param.name, None)

    def constant(
        self, value: np.ndarray | Sequence[float] | float, name: str | None = None
    ) -> SSAValue:
        """`adir.constant` of f32 data (made once per function and value)."""
        function = self._current("adir.constant")
        data = np.array(value, dtype="<f4", order="C")  # 0-d stays 0-d
        key = (data.tobytes(), data.shape)
        if key not in function.constants or name is not None:
            function.constants[key] = self.op(ConstantOp, dense_f32(data), name=name)
        return function.constants[key]

    def linear(
        self, x: Operand, weight: Operand, bias: Operand | None = None, name: str | None = None
    ) -> SSAValue:
        """`torch.nn.functional.linear`: `x @ weight^T (+ bias)`, weight laid out [out, in]."""
        y = self.op(MatmulOp, x, weight, transpose_b=True, name=name if bias is None else None)
        return y if bias is None else self.op(AddOp, y, bias, name=name)

    # --- the module ----------------------------------------------------------------------

    def train(self, scheme: str) -> None:
        """Train only what the sparse update `scheme` selects (`adir/update_scheme.py`:
        `"bias+last:1"`, `"channels:0.25@last:2"`, ...) among the parameters declared with a
        `layer`, in the order they were declared; the others become `{trainable = false}`."""
        try:
            apply_scheme(self.module, scheme)
        except SchemeError as error:
            raise BuildError(str(error), self._where()) from None

    def build(self) -> ModuleOp:
        """The module, verified."""
        if self._function is not None:
            raise BuildError(f"@{self._function.name} is still open", self._where())
        try:
            self.module.verify()
        except VerifyException as error:
            raise BuildError(f"the module does not verify: {error}", self._where()) from None
        return self.module

    def module_to_text(self) -> str:
        """The module, verified, as `adir-opt` prints it."""
        return module_to_text(self.build())

    # --- helpers -------------------------------------------------------------------------

    @property
    def _body(self) -> Block:
        return self.module.body.block

    def _symbol(self, name: str) -> Operation | None:
        for op in self.module.ops:
            sym = op.properties.get("sym_name")
            if isinstance(sym, StringAttr) and sym.data == name:
                return op
        return None

    def _param(self, param: Param | str) -> Param:
        if isinstance(param, Param):
            return param
        op = self._symbol(param)
        if not isinstance(op, p.ParamOp):
            raise BuildError(f"no adir.param named @{param} in the module", self._where())
        return Param(op)

    def _current(self, op_name: str) -> Function:
        if self._function is None:
            raise BuildError(
                f"{op_name}: ops are built inside a function (`with b.function(...):`)",
                self._where(),
            )
        if self._function.returned:
            raise BuildError(
                f"{op_name}: @{self._function.name} has already returned", self._where()
            )
        return self._function

    def _value(self, value: Any, op_name: str, operand: str) -> SSAValue:
        if isinstance(value, SSAValue):
            return value
        if isinstance(value, Param):
            return self.load(value)
        if isinstance(value, float | int | np.ndarray | np.number) and not isinstance(value, bool):
            return self.constant(value)
        raise BuildError(
            f"{op_name}: operand {operand} must be a value, a Param, a number or an array, got "
            f"{type(value).__name__}",
            self._where(),
        )

    def _insert(self, op: Operation) -> None:
        function = self._current(op.name)
        if (site := self._where()) is not None:
            op.location = site.location()
        function.block.add_op(op)
        self._check(op)

    def _check(self, op: Operation) -> None:
        """Verify an op as soon as it is built, so the mistake is reported where it is made."""
        try:
            op.verify_()  # the op's own constraints and verifier, not its place in the block
        except VerifyException as error:
            if op.parent is not None:
                op.detach()
            op.erase()
            message = str(error).strip().splitlines()[0]
            if not message.startswith(op.name):
                message = f"{op.name}: {message}"
            raise BuildError(message, self._where()) from None


def _drop_uses_of_unbuilt_ops(arguments: Iterable[Any]) -> None:
    """A constructor that raises has already registered its op as a user of its operands; drop
    those uses (of an op in no block), so the values do not keep a user that does not exist."""
    for argument in arguments:
        for value in argument if isinstance(argument, list) else [argument]:
            if isinstance(value, SSAValue):
                for use in list(value.uses):
                    if use.operation.parent is None:
                        value.remove_use(use)


def module_to_text(module: ModuleOp) -> str:
    """The module as `adir-opt` prints it."""
    stream = io.StringIO()
    Printer(stream).print_op(module)
    return stream.getvalue() + "\n"


__all__ = [
    "LOSS_MARKER",
    "BuildError",
    "Function",
    "Init",
    "ModelBuilder",
    "Param",
    "SourceSite",
    "fill",
    "initializer",
    "kaiming_uniform",
    "module_to_text",
    "normal",
    "uniform",
    "xavier_uniform",
    "zeros",
]
