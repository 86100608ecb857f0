"""`Session` and `run`: a module's functions interpreted on numpy (see the package's doc)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from adir.function_structure import check_no_recursion, check_single_blocks
from adir.interpreter.activations import ActivationsFunctions
from adir.interpreter.arrays import exact_cast, to_numpy_dtype
from adir.interpreter.conv_and_pool import ConvAndPoolFunctions
from adir.interpreter.data_movement import DataMovementFunctions
from adir.interpreter.elementwise import ElementwiseFunctions
from adir.interpreter.embedding import EmbeddingFunctions
from adir.interpreter.family import FamilyFunctions
from adir.interpreter.flush_denormals import FlushingInterpreter
from adir.interpreter.kernel import BufferFunctions, kernel_functions
from adir.interpreter.losses import LossesFunctions
from adir.interpreter.matmul import MatmulFunctions
from adir.interpreter.normalization import NormalizationFunctions
from adir.interpreter.optimizers import OptimizersFunctions
from adir.interpreter.params import ParamFunctions, initial_params
from adir.interpreter.quantized import QuantizedFunctions
from adir.interpreter.reductions import ReductionsFunctions

FAMILY_FUNCTIONS: list[type[FamilyFunctions]] = [
    ElementwiseFunctions,
    MatmulFunctions,
    DataMovementFunctions,
    ReductionsFunctions,
    ActivationsFunctions,
    LossesFunctions,
    ConvAndPoolFunctions,
    NormalizationFunctions,
    EmbeddingFunctions,
    OptimizersFunctions,
    QuantizedFunctions,
]


class Session:
    """A module's parameters and functions, interpreted on numpy."""

    def __init__(
        self,
        module: ModuleOp,
        float_dtype: type[np.floating] = np.float32,
        seed: int = 0,
        flush_denormals: bool = False,
    ):
        """Parameters start from their initializers; `seed` shifts every initializer's stream
        as the generated C's `init(seed)` does (0: the streams written in the IR).
        `flush_denormals`: compute as the C built with -DADIR_FLUSH_DENORMALS does, subnormal
        operands and results of every op flushed to zero (`adir.interpreter.flush_denormals`)."""
        check_single_blocks(module)
        self.module = module
        self._acyclic: set[str] = set()  # functions checked to reach no call cycle
        self.float_dtype = np.dtype(float_dtype)
        self.params: dict[str, np.ndarray] = initial_params(module, self.float_dtype, seed)
        self.flush_denormals = flush_denormals
        self._interpreter = (FlushingInterpreter if flush_denormals else Interpreter)(module)
        self._interpreter.register_implementations(FuncFunctions())
        self._interpreter.register_implementations(ParamFunctions(self.params))
        families = [functions(self.float_dtype) for functions in FAMILY_FUNCTIONS]
        for family in families:
            self._interpreter.register_implementations(family)
        # The kernel level, after bufferization: buffers are arrays written in place.
        self._interpreter.register_implementations(
            BufferFunctions(module, self.params, self.float_dtype)
        )
        self._interpreter.register_implementations(kernel_functions(families))

    def function(self, name: str) -> FuncOp:
        for op in self.module.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == name:
                return op
        names = [op.sym_name.data for op in self.module.ops if isinstance(op, FuncOp)]
        raise KeyError(f"no function @{name} in the module (it has: {', '.join(names)})")

    def call(self, name: str, *args: np.ndarray | float | int) -> tuple[np.ndarray, ...]:
        """Call `@name` with numpy arguments; returns its results as numpy arrays."""
        func = self.function(name)
        if name not in self._acyclic:
            check_no_recursion(self.module, name)
            self._acyclic.add(name)
        inputs = func.function_type.inputs.data
        if len(args) != len(inputs):
            raise TypeError(f"@{name} takes {len(inputs)} arguments, got {len(args)}")
        converted = [
            self._argument(name, i, t, a) for i, (t, a) in enumerate(zip(inputs, args, strict=True))
        ]
        # IEEE special values are defined behaviour (log(0) = -inf, 0/0 = nan, as in PyTorch),
        # not warnings.
        with np.errstate(all="ignore"):
            results = self._interpreter.call_op(name, tuple(converted))
        return tuple(np.asarray(r) for r in results)

    def _argument(self, func: str, index: int, type_: object, value: object) -> np.ndarray:
        array = np.asarray(value)
        dtype = to_numpy_dtype(type_, self.float_dtype)
        if isinstance(type_, TensorType | MemRefType) and type_.has_static_shape():
            expected = tuple(type_.get_shape())
            if array.shape != expected:
                raise ValueError(
                    f"@{func} argument #{index}: expected shape {expected}, got {array.shape}"
                )
        try:
            converted = exact_cast(array, dtype)
            # Flushing writes the operands it reads in place: never the caller's arrays.
            return converted.copy() if self.flush_denormals else converted
        except ValueError as error:
            raise ValueError(f"@{func} argument #{index} ({type_}): {error}") from error


def run(
    module: ModuleOp,
    func: str,
    *args: np.ndarray | float | int,
    float_dtype: type[np.floating] = np.float32,
) -> tuple[np.ndarray, ...]:
    """Call one function of `module` with freshly initialised parameters."""
    return Session(module, float_dtype).call(func, *args)


__all__ = ["FAMILY_FUNCTIONS", "Session", "run"]
