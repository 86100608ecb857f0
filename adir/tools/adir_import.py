"""`adir-import`: a PyTorch model in a Python file to adir IR.

    adir-import model.py:make_model --input-shape 1,1,28,28 --loss cross_entropy -o model.mlir
    adir-import model.py:Net --input-shape 4,784 --input-shape 4:i64 -o model.mlir

`FILE:NAME` names a `torch.nn.Module` in a Python file: a function that returns one, a class
taking no arguments, or an instance. One `--input-shape` per input of `forward` (comma-separated
dims, `:i64`/`:i32` for an integer input; floats are f32). `--loss` adds a loss on the model's
output and a `label` input of `--label-shape` (see `adir.frontends.torch_import`); without it, a
model whose forward returns a scalar is the loss function itself. The model is imported in the
mode its factory leaves it in (training, for a new module: batch statistics, and dropout with a
`%step` argument after the label), or in eval mode with `--eval` (docs/frontends.md).

Errors (a bad file, an op adir cannot import, ...) are `file:line: error: message` with exit
code 1; `-o` is written only on success, as `adir-opt -o` is (`adir.output_files`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import Any

from adir.output_files import STDOUT, write_file
from adir.tools.error_reporting import DiagnosticError, first_line, report_errors

LOSS_NAMES = ("cross_entropy", "nll", "mse", "bce", "bce_with_logits")
DTYPE_NAMES = ("f32", "i32", "i64")


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adir-import", description="Import a PyTorch model into adir IR."
    )
    parser.error = _command_line_error  # type: ignore[method-assign]
    parser.add_argument("model", help="FILE.py:NAME, a function, class or instance of a model")
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="DIMS[:DTYPE]",
        help="the shape of one input of forward, e.g. 1,1,28,28 (repeat for each input)",
    )
    parser.add_argument("--loss", choices=LOSS_NAMES, help="add this loss on the output")
    parser.add_argument("--label-shape", metavar="DIMS", help="the label's shape (with --loss)")
    parser.add_argument("--func", help="the function's name (default: loss or forward)")
    parser.add_argument("--eval", action="store_true", help="import the model in eval mode")
    parser.add_argument(
        "--train",
        metavar="SCHEME",
        help="a sparse update scheme: train only what it selects (bias, last:K, bias+last:1, "
        "channels:0.25@last:2, ...; docs/sparse_updates.md)",
    )
    parser.add_argument("-o", "--output", help="write the IR here (default: stdout)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def parse_shape(text: str, flag: str) -> tuple[tuple[int, ...], str]:
    """`1,1,28,28` or `4:i64` -> (dims, dtype name); an empty DIMS is a scalar."""
    dims_text, _, dtype = text.partition(":")
    dtype = dtype or "f32"
    try:
        dims = tuple(int(d) for d in dims_text.split(",") if d.strip())
    except ValueError:
        dims = (-1,)
    if any(d < 0 for d in dims) or dtype not in DTYPE_NAMES:
        raise DiagnosticError(
            "adir-import",
            f"{flag} '{text}': expected comma-separated non-negative dims and optionally "
            f":{'/:'.join(DTYPE_NAMES)}",
        )
    return dims, dtype


def load_model(spec: str) -> Any:
    """The `torch.nn.Module` that `FILE.py:NAME` names."""
    import torch

    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise DiagnosticError("adir-import", f"'{spec}': expected FILE.py:NAME")
    if not os.path.isfile(path):
        raise DiagnosticError(path, "cannot read the model file: no such file")
    module = _run_file(path)
    if not hasattr(module, name):
        raise DiagnosticError(path, f"the file defines no '{name}'")
    found = getattr(module, name)
    if isinstance(found, torch.nn.Module):
        return found
    model = _in_file(path, lambda: found(), f"calling {name}()")
    if not isinstance(model, torch.nn.Module):
        raise DiagnosticError(
            path, f"{name}() returned a {type(model).__name__}, not a torch.nn.Module"
        )
    return model


def _run_file(path: str) -> Any:
    module_name = "adir_import_model_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DiagnosticError(path, "cannot load the model file as Python")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its own imports
    try:
        _in_file(path, lambda: spec.loader.exec_module(module), "running the file")
    finally:
        sys.path.pop(0)
    return module


def _in_file(path: str, call: Any, doing: str) -> Any:
    """`call()`, with an exception it raises as a diagnostic at the model file's line."""
    try:
        return call()
    except Exception as error:
        raise _at_model_line(path, error, doing) from error


def _at_model_line(path: str, error: Exception, doing: str) -> DiagnosticError:
    """`error` as a diagnostic at the last line of the model file its traceback passes."""
    frames = [
        f
        for f in traceback.extract_tb(error.__traceback__)
        if os.path.abspath(f.filename) == os.path.abspath(path)
    ]
    location = f"{path}:{frames[-1].lineno}" if frames else path
    context = [f"    {frames[-1].line}"] if frames and frames[-1].line else []
    return DiagnosticError(
        location, f"{type(error).__name__} while {doing}: {first_line(error)}", context
    )


@contextlib.contextmanager
def torch_logging_silenced() -> Iterator[None]:
    """No log records while torch traces the model: on an input of the wrong shape, torch
    logs its own traceback ("failed while attempting to run meta for aten.mm") through
    `logging` before it raises the error that this tool reports."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)


def require_torch() -> None:
    """adir's dependencies leave torch out (the compiler does not need it; the `torch` extra
    brings it): without it, say what to install rather than fail on the first `import torch`."""
    try:
        import torch  # noqa: F401
    except ImportError as error:
        if getattr(error, "name", None) == "torch":
            raise DiagnosticError(
                "adir-import",
                "the PyTorch importer needs torch, which is not installed here: "
                "pip install 'adir[torch]'",
            ) from error
        raise DiagnosticError(
            "adir-import", f"torch is installed but does not import: {first_line(error)}"
        ) from error


def run(argv: Sequence[str]) -> None:
    args = argument_parser().parse_args(argv)
    require_torch()
    if not args.input_shape:
        raise DiagnosticError("adir-import", "give the shape of each input with --input-shape")
    shapes = [parse_shape(text, "--input-shape") for text in args.input_shape]
    label_shape = None
    if args.label_shape is not None:
        if args.loss is None:
            raise DiagnosticError("adir-import", "--label-shape needs --loss")
        label_shape, _ = parse_shape(args.label_shape, "--label-shape")

    import torch

    from adir.frontends.builder import module_to_text
    from adir.frontends.torch_import import TorchImportError, import_module

    model = load_model(args.model)
    if args.eval:
        model.eval()
    generator = torch.Generator().manual_seed(0)
    dtypes = {"f32": torch.float32, "i32": torch.int32, "i64": torch.int64}
    try:
        inputs = [
            torch.randn(dims, generator=generator)
            if dtype == "f32"
            else torch.zeros(dims, dtype=dtypes[dtype])
            for dims, dtype in shapes
        ]
    except (RuntimeError, MemoryError) as error:  # torch's allocator: "can't allocate memory"
        raise DiagnosticError(
            "adir-import",
            f"--input-shape {' '.join(args.input_shape)}: cannot make an example input of that "
            f"size ({first_line(error)})",
        ) from error
    path = args.model.rpartition(":")[0]
    with_shapes = f"{args.model} with --input-shape {' '.join(args.input_shape)}"
    try:
        with torch_logging_silenced():
            module = import_module(
                model,
                inputs,
                loss=args.loss,
                label_shape=label_shape,
                func_name=args.func,
                train=args.train,
            )
    except TorchImportError as error:
        location = str(error.site) if error.site else path
        message = error.message
        if error.__cause__ is not None:  # torch failed on these inputs: say which they were
            message = f"{message} (importing {with_shapes})"
        raise DiagnosticError(location, message, [f"  {d}" for d in error.details]) from error
    except Exception as error:  # the model's own code failed on the inputs (outside export)
        raise _at_model_line(path, error, f"running {with_shapes}") from error
    text = module_to_text(module)
    write_file(args.output or STDOUT, text)


def _command_line_error(message: str):
    raise DiagnosticError("adir-import", message)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return report_errors("adir-import", lambda: run(args), debug="--debug" in args)


if __name__ == "__main__":
    sys.exit(main())
