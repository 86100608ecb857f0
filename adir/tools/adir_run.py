"""`adir-run`: call a function of a model in the numpy interpreter and print its results.

    adir-run model.mlir --func loss x.npy labels.npy        one .npy file per argument
    adir-run model.mlir --func loss --random-inputs 0       seeded random arguments
    adir-run model.mlir --func train_step --random-inputs 0 --repeat 20

Random arguments: floats are standard normal; integer arguments used as class labels (by an op
that `ReadsClassLabels`: `adir.nll`, `adir.cross_entropy` and their gradients, `adir.embedding`)
are uniform over the class count of that op's input, or an embedding's row count (else over
`--num-classes`). Parameters start from their initializers and persist across `--repeat`
calls. `--save out.npz` stores the results (`result<i>`) and the final parameters
(`param_<symbol>`), written only on success, as `adir-opt -o` is (`adir.output_files`);
`adir.frontends.torch_import.load_state_dict("out.npz", "model.mlir")` reads the parameters
back into a torch state_dict by their PyTorch names.

A `.npy` argument is converted to its argument's type only where no value changes (int64
labels that fit an i32 argument, integral floats as labels); a value that would change is an
error naming the file, the argument and the value. Float arguments take floats of any width
and integers, rounded to the model's float type.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType, MemRefType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument

from adir.diagnostics import OpError
from adir.dialects.tensor.traits import ReadsClassLabels
from adir.function_structure import check_no_recursion, check_single_blocks
from adir.interpreter import Session
from adir.interpreter.arrays import exact_cast, to_numpy_dtype
from adir.interpreter.npy_files import read_npy
from adir.output_files import write_file, write_stdout
from adir.tools.error_reporting import (
    DiagnosticError,
    first_line,
    locate_failure,
    op_location,
    report_errors,
)
from adir.tools.files import load_module


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adir-run",
        description="Run a function of an adir model in the interpreter.",
        epilog="A .npy argument is converted to its argument's type only where no value "
        "changes (int64 labels that fit i32, integral float labels); floats of any width "
        "for a float argument are rounded to the model's float type.",
    )
    parser.error = _command_line_error  # type: ignore[method-assign]
    parser.add_argument("input_file", help="the model (.mlir); - for stdin")
    parser.add_argument("inputs", nargs="*", help="one .npy file per function argument (see below)")
    parser.add_argument("--func", default=None, help="the function to call (default: the only one)")
    parser.add_argument(
        "--random-inputs", type=int, metavar="SEED", help="draw the arguments from this seed"
    )
    parser.add_argument(
        "--num-classes", type=int, default=10, help="label range when it cannot be inferred"
    )
    parser.add_argument("--repeat", type=int, default=1, help="call the function N times")
    parser.add_argument(
        "--float64", action="store_true", help="compute in float64 instead of float32"
    )
    parser.add_argument("--save", metavar="NPZ", help="save results and parameters here")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def select_function(module: ModuleOp, name: str | None) -> FuncOp:
    functions = [op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks]
    if name is None:
        if len(functions) != 1:
            names = ", ".join(f.sym_name.data for f in functions) or "none"
            raise DiagnosticError(
                "adir-run", f"choose a function with --func (the model has: {names})"
            )
        return functions[0]
    for function in functions:
        if function.sym_name.data == name:
            return function
    names = ", ".join(f.sym_name.data for f in functions) or "none"
    raise DiagnosticError("adir-run", f"no function @{name} (the model has: {names})")


def class_count(argument: BlockArgument, default: int) -> int:
    """The number of classes of the first op that reads `argument` as class labels."""
    for use in argument.uses:
        labels = use.operation.get_trait(ReadsClassLabels)
        if labels is not None and use.index == labels.index(use.operation):
            logits = use.operation.operands[0].type
            if isinstance(logits, TensorType) and logits.get_shape()[labels.axis] > 0:
                return logits.get_shape()[labels.axis]
    return default


def random_arguments(function: FuncOp, seed: int, num_classes: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arguments = []
    for argument in function.body.block.args:
        type_ = argument.type
        if not isinstance(type_, TensorType | MemRefType) or not type_.has_static_shape():
            raise DiagnosticError(
                "adir-run",
                f"--random-inputs needs static shapes; argument #{argument.index} is {type_}",
            )
        shape = tuple(type_.get_shape())
        if isinstance(type_.element_type, IntegerType):
            high = class_count(argument, num_classes)
            arguments.append(rng.integers(0, high, shape).astype(np.int64))
        else:
            arguments.append(rng.standard_normal(shape).astype(np.float32))
    return arguments


def load_arguments(
    paths: Sequence[str], function: FuncOp, float_dtype: np.dtype
) -> list[np.ndarray]:
    """One array per argument of `function`, each of its argument's shape and dtype, or a
    diagnostic naming the file: only exact casts (see `exact_cast`)."""
    name = function.sym_name.data
    types = function.function_type.inputs.data
    if len(paths) != len(types):
        raise DiagnosticError(
            "adir-run", f"@{name} takes {len(types)} arguments, got {len(paths)} .npy files"
        )
    arrays = []
    for index, (path, type_) in enumerate(zip(paths, types, strict=True)):
        try:
            array = read_npy(path)
        except ValueError as error:
            raise DiagnosticError(path, f"cannot read a .npy array: {error}") from error
        where = f"argument #{index} of @{name} ({type_})"
        if isinstance(type_, TensorType | MemRefType) and type_.has_static_shape():
            if array.shape != tuple(type_.get_shape()):
                raise DiagnosticError(path, f"{where}: the array has shape {array.shape}")
        try:
            arrays.append(exact_cast(array, to_numpy_dtype(type_, float_dtype)))
        except (TypeError, ValueError) as error:
            raise DiagnosticError(path, f"{where}: {error}") from error
    return arrays


def format_result(index: int, value: np.ndarray) -> str:
    if value.ndim == 0:
        return f"result #{index}: {value.item():.9g}"
    with np.printoptions(precision=6, threshold=20, edgeitems=3):
        return f"result #{index}: shape {tuple(value.shape)} {value.dtype}\n{value}"


def run(argv: Sequence[str]) -> None:
    # Intermixed: `.npy` files may follow the options (`--func loss x.npy y.npy`).
    args = argument_parser().parse_intermixed_args(argv)
    for flag, value, least in (
        ("--random-inputs", args.random_inputs, 0),
        ("--repeat", args.repeat, 1),
        ("--num-classes", args.num_classes, 1),
    ):
        if value is not None and value < least:
            raise DiagnosticError("adir-run", f"{flag} {value}: must be at least {least}")
    module, source_name, source_lines = load_module(args.input_file)
    function = select_function(module, args.func)
    name = function.sym_name.data
    float_dtype = np.dtype(np.float64 if args.float64 else np.float32)
    try:
        check_single_blocks(module)
        check_no_recursion(module, name)
    except OpError as error:
        raise locate_failure(error, module, source_name, source_lines) from error
    if args.random_inputs is not None:
        if args.inputs:
            raise DiagnosticError("adir-run", "give either .npy inputs or --random-inputs")
        arguments = random_arguments(function, args.random_inputs, args.num_classes)
    else:
        arguments = load_arguments(args.inputs, function, float_dtype)
    try:
        session = Session(module, float_dtype.type)
    except OpError as error:  # a parameter too large to hold
        location, _ = op_location(error.op, args.input_file, [])
        raise DiagnosticError(location, error.message) from error
    results: tuple[np.ndarray, ...] = ()
    for step in range(args.repeat):
        try:
            results = session.call(name, *arguments)
        except (TypeError, ValueError) as error:
            raise DiagnosticError("adir-run", first_line(error)) from error
        prefix = f"[{step + 1}/{args.repeat}] " if args.repeat > 1 else ""
        for index, value in enumerate(results):
            write_stdout(f"{prefix}{format_result(index, value)}\n")
    if args.save:
        buffer = io.BytesIO()
        arrays = {f"result{i}": r for i, r in enumerate(results)}
        arrays.update({f"param_{k}": v for k, v in session.params.items()})
        np.savez(buffer, **arrays)
        write_file(args.save, buffer.getvalue())


def _command_line_error(message: str):
    raise DiagnosticError("adir-run", message)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return report_errors("adir-run", lambda: run(args), debug="--debug" in args)


if __name__ == "__main__":
    sys.exit(main())
