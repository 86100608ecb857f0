"""How the command-line tools report errors: `file:line:col: error: message`, then the source
line and a caret under the column, as C compilers do. Exit code 1 is the caller's job."""

from __future__ import annotations

import difflib
import re
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, VerificationContext
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, ParseError, VerifyException

from adir.diagnostics import OpError, PassOptionError
from adir.output_files import OutputError, flush_stdout
from adir.passes import ADIR_PASSES


class DiagnosticError(Exception):
    """An error in what the user gave, with where it is."""

    def __init__(self, location: str, message: str, context: Sequence[str] = ()):
        super().__init__(message)
        self.location = location
        self.message = message
        self.context = list(context)

    def __str__(self) -> str:
        return "\n".join([f"{self.location}: error: {self.message}", *self.context])


def report_errors(tool: str, body: Callable[[], None], debug: bool) -> int:
    """Run a tool's `body` and turn what it raises into an exit code: 0 on success, 1 for a
    diagnostic about the input (printed without a traceback unless `debug`), 2 for a bug in
    adir itself (one line; `--debug` shows the traceback). What the body printed is flushed
    here, so that a full disk or a closed pipe on stdout is a diagnostic too."""
    try:
        body()
        flush_stdout()
    except (DiagnosticError, OutputError) as error:
        if debug:
            traceback.print_exc()
        if isinstance(error, OutputError):
            error = DiagnosticError(error.path, error.message)
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if debug:
            traceback.print_exc()
        print(
            f"{tool}: internal error: {type(error).__name__}: {first_line(error)} "
            "(a bug in adir; --debug shows the traceback)",
            file=sys.stderr,
        )
        return 2
    return 0


def caret_lines(line_text: str, column: int, length: int = 1) -> list[str]:
    """The source line and a caret under `column` (1-based)."""
    marker = " " * (column - 1) + "^" + "~" * max(0, length - 1)
    return [line_text.rstrip("\r\n"), marker]


def format_parse_error(error: ParseError) -> DiagnosticError:
    span = error.span
    where = span.get_location()
    start_of_line = span.input.get_start_of_line(span.start)
    end_of_line = span.input.get_end_of_line(span.start)
    line_text = span.input.content[start_of_line:end_of_line]
    if isinstance(line_text, bytes):
        line_text = line_text.decode("utf-8", "replace")
    column, length = where.col, max(1, min(span.end, end_of_line) - span.start)
    message = error.msg.strip().splitlines()[0] if error.msg.strip() else "parse error"
    line = where.line
    if match := _UNREGISTERED.fullmatch(message):
        # xDSL points after the op name, past the blanks that follow it (on the next line for
        # junk at the end of a line); point at the name itself, and say it plainly.
        name = match.group(1)
        message = f"unknown op '{name}' (no registered dialect defines it)"
        content = span.input.content
        if (index := content.rfind(name, 0, span.end)) >= 0:
            line -= content.count("\n", index, span.start)
            start_of_line = span.input.get_start_of_line(index)
            line_text = content[start_of_line : span.input.get_end_of_line(index)]
            column, length = index - start_of_line + 1, len(name)
    return DiagnosticError(
        f"{where.file}:{line}:{column}", message, caret_lines(line_text, column, length)
    )


_UNREGISTERED = re.compile(r"Operation (\S+) is not registered")


def op_location(op: Operation, fallback: str, source_lines: Sequence[str]) -> tuple[str, list[str]]:
    """`file:line:col` of an op and its caret lines, from the location the parser gave it."""
    location = op.location
    if isinstance(location, FileLineColLoc):
        line, column = location.line.data, location.column.data
        context = []
        if location.filename.data == fallback and 0 < line <= len(source_lines):
            context = caret_lines(source_lines[line - 1], column)
        return f"{location.filename.data}:{line}:{column}", context
    return fallback, []


def first_line(error: BaseException) -> str:
    """The message of an error on one line (xDSL continues some messages after a colon)."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    message = lines[0]
    for line in lines[1:]:
        if not message.endswith(":"):
            break
        message = f"{message} {line}"
    return message


def failing_op(module: ModuleOp) -> tuple[Operation, str] | None:
    """The first op (in program order) whose own verifier fails, and what is wrong."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except Exception as error:  # the verifier of an op may raise more than VerifyException
            return op, bad_property(op) or first_line(error)
    return None


def bad_property(op: Operation) -> str | None:
    """IRDL's message for a property of the wrong kind does not name the property; this does."""
    if not isinstance(op, IRDLOperation):
        return None
    for name, definition in op.get_irdl_definition().properties.items():
        if name not in op.properties:
            continue
        try:
            definition.constr.verify(op.properties[name], VerificationContext())
        except VerifyException as error:
            return f"property '{name}': {first_line(error)}"
    return None


def locate_failure(
    error: Exception, module: ModuleOp | None, input_name: str, source_lines: Sequence[str]
) -> DiagnosticError:
    """Turn a verifier or pass failure into a diagnostic at the op it concerns."""
    op: Operation | None = None
    message = first_line(error)
    if isinstance(error, OpError):
        op, message = error.op, error.message
    elif module is not None and (found := failing_op(module)) is not None:
        op, message = found
    if op is None:
        return DiagnosticError(input_name, message)
    if (redefined := _REDEFINITION.search(message)) is not None and op.regions:
        return redefinition_error(op, redefined.group(1), input_name, source_lines)
    if not isinstance(error, OpError) and not message.startswith(op.name):
        message = f"{op.name}: {message}"  # a verifier message that does not name its op
    location, context = op_location(op, input_name, source_lines)
    return DiagnosticError(location, message, context)


_REDEFINITION = re.compile(r'Redefinition of symbol "(.*)"')


def redefinition_error(
    table: Operation, name: str, input_name: str, source_lines: Sequence[str]
) -> DiagnosticError:
    """xDSL reports a symbol defined twice at the symbol table (the whole module, no line);
    this points at the second definition and notes the first."""
    defining = [
        op
        for op in table.regions[0].ops
        if isinstance(sym := op.get_attr_or_prop("sym_name"), StringAttr) and sym.data == name
    ]
    if len(defining) < 2:
        return DiagnosticError(input_name, f"redefinition of symbol @{name}")
    location, context = op_location(defining[1], input_name, source_lines)
    first, _ = op_location(defining[0], input_name, source_lines)
    return DiagnosticError(
        location,
        f"redefinition of symbol @{name}",
        [*context, f"{first}: note: @{name} is first defined here"],
    )


def pipeline_error(
    spec: str, error: BaseException, passes: Mapping[str, Callable[[], type[ModulePass]]]
) -> DiagnosticError:
    """A bad `-p` pipeline, located at the pass it concerns within the pipeline text."""
    if isinstance(error, ArgSpecParseError):
        column, message = spec_syntax_error(error)
        return at_pipeline(spec, column, f"malformed pass pipeline: {message}")
    if isinstance(error, PassOptionError):
        start = max(spec.find(error.pass_name), 0)
        column = spec.find(f"{error.option}=", start) + 1 or start + 1
        return at_pipeline(spec, column, str(error))
    position = 0
    for arg_spec in parse_pipeline(spec):
        column = spec.find(arg_spec.name, position) + 1
        position = max(column, position)
        if arg_spec.name not in passes:
            return at_pipeline(spec, column, unknown_pass(arg_spec.name, passes))
        options = [f.name for f in fields(passes[arg_spec.name]())]
        for key in arg_spec.normalize_parameter_names().parameters:
            if key not in options:
                takes = ", ".join(options) if options else "none"
                return at_pipeline(
                    spec,
                    column,
                    f"pass '{arg_spec.name}' has no option '{key}' (its options: {takes})",
                )
        try:  # a value of the wrong type: point at its pass, not at the pipeline's start
            passes[arg_spec.name]().from_spec(arg_spec)
        except ValueError as bad_value:
            return at_pipeline(spec, column, f"pass '{arg_spec.name}': {first_line(bad_value)}")
    return at_pipeline(spec, 1, f"bad pass pipeline: {first_line(error)}")


def unknown_pass(name: str, passes: Mapping[str, Callable[[], type[ModulePass]]]) -> str:
    """What to say about a pass `name` that is not among `passes`: the names it may be a typo
    of, and adir's own passes by name; xDSL's (over a hundred) only counted, `--help` lists
    them."""
    close = difflib.get_close_matches(name, list(passes), n=3)
    guess = f"did you mean {' or '.join(repr(n) for n in close)}? " if close else ""
    adir = sorted(n for n in passes if n in ADIR_PASSES)
    others = len(passes) - len(adir)
    return (
        f"unknown pass '{name}' ({guess}adir's: {', '.join(adir)}; and {others} more, xDSL's, "
        "which --help lists)"
    )


def spec_syntax_error(error: ArgSpecParseError) -> tuple[int, str]:
    """The column and the message of xDSL's error about a `name{key=value}` spec."""
    # xDSL's text is "...:\npass-pipeline:1:COL\n<spec>\n<caret>\n<message>".
    lines = str(error).strip().splitlines()
    column = int(lines[1].rsplit(":", 1)[1]) if len(lines) > 1 else 1
    message = lines[-1].strip() if len(lines) > 4 else first_line(error)
    return column, message


def repeated_option(spec: str) -> tuple[str, int] | None:
    """The first option given twice to one pass or target of `spec` and the column of its
    second use. xDSL keeps the last value without a word, so `c{prefix="a" prefix="b"}` would
    silently mean "b"."""
    lexer = PipelineLexer(spec)
    seen: set[str] | None = None  # the keys inside the current braces
    expect_key = False
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        if token.kind is SpecTokenKind.L_BRACE:
            seen, expect_key = set(), True
        elif token.kind is SpecTokenKind.R_BRACE:
            seen = None
        elif token.kind is SpecTokenKind.SPACE:
            expect_key = seen is not None
        elif token.kind is SpecTokenKind.IDENT and expect_key and seen is not None:
            key = token.span.text.replace("-", "_")  # xDSL's normalisation of option names
            if key in seen:
                return token.span.text, token.span.start + 1
            seen.add(key)
            expect_key = False
        else:
            expect_key = False
    return None


def at_pipeline(spec: str, column: int, message: str) -> DiagnosticError:
    return DiagnosticError(f"<pass-pipeline>:1:{column}", message, caret_lines(spec, column))
