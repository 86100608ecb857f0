"""Files for the command-line tools: read, decode, parse and verify a model, or a located
diagnostic. Outputs are written by `adir.output_files`."""

from __future__ import annotations

import sys

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError

from adir.context import adir_context, parse_module
from adir.tools.error_reporting import DiagnosticError, format_parse_error, locate_failure


def decode(data: bytes, name: str, line_offset: int = 0) -> str:
    """The text of a source file, or a diagnostic at its first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1 + line_offset
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise DiagnosticError(
            f"{name}:{line}:{column}",
            f"the input is not valid UTF-8 (byte 0x{data[error.start]:02x})",
        ) from error


def read_bytes(path: str | None) -> tuple[bytes, str]:
    """The bytes of `path` (stdin for None or "-") and the name to report them under."""
    if path is None or path == "-":
        return sys.stdin.buffer.read(), "stdin"
    try:
        with open(path, "rb") as stream:
            return stream.read(), path
    except OSError as error:
        raise DiagnosticError(path, f"cannot read the input: {error.strerror}") from error


def load_module(path: str | None) -> tuple[ModuleOp, str, list[str]]:
    """Parse and verify a model file: the module, the name it is reported under and its
    source lines (to locate later errors); every failure is a located `DiagnosticError`."""
    data, name = read_bytes(path)
    text = decode(data, name)
    lines = text.split("\n")
    try:
        module = parse_module(text, name, adir_context())
    except ParseError as error:
        raise format_parse_error(error) from error
    try:
        module.verify()
    except DiagnosticException as error:
        raise locate_failure(error, module, name, lines) from error
    return module, name, lines
