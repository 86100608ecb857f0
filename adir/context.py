"""The xDSL context adir works in, and a parser that records where each op came from.

Every op parsed from text gets a `loc("file":line:col)` location (unless the text gave one),
so diagnostics from the verifier and from passes can point at the source, and ops created by
passes can inherit the location of the op they came from.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from xdsl.context import Context
from xdsl.dialects.builtin import UNKNOWN_LOC, FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Dialect, Operation, TypeAttribute
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from adir.dense_literals import DenseLiteralParser
from adir.upstream_forms import CUSTOM_FORMS


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _memref() -> Dialect:
    from xdsl.dialects.memref import MemRef

    return MemRef


def _test() -> Dialect:
    from xdsl.dialects.test import Test

    return Test


def _adir() -> Dialect:
    from adir.dialects.tensor import Adir

    return Adir


def _adir_kernel() -> Dialect:
    from adir.dialects.kernel import AdirKernel

    return AdirKernel


DIALECTS = {
    "builtin": _builtin,
    "func": _func,
    "arith": _arith,
    "memref": _memref,
    "test": _test,
    "adir": _adir,
    "adir_kernel": _adir_kernel,
}


def register_dialects(ctx: Context) -> None:
    """Register (lazily) the dialects adir uses, and no others."""
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)


def adir_context() -> Context:
    ctx = Context()
    register_dialects(ctx)
    return ctx


# The text of a tensor or memref type with nothing but a shape and an element type.
PLAIN_SHAPED_TYPE = re.compile(r"(?:tensor|memref)<(?:\*x|(?:[0-9]+x|\?x)*)[a-z]+[0-9]*>")


class StringSafeLexer(MLIRLexer):
    """xDSL 0.74's string-literal pattern nests `+` in `*`: on a `"` that is never closed it
    backtracks exponentially in the rest of the line (`adir.param @"w : tensor<...>` hung, and
    a file whose first character is `"`). Possessive quantifiers match the same strings and
    fail at once."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class LocatedParser(DenseLiteralParser):
    """A parser that gives every op the `file:line:col` of its first token, and that parses
    each distinct plain tensor or memref type once: a model spells the same few types over
    and over, and xDSL's type parser (which builds and verifies a new attribute each time) was
    half of the time to parse one. Dense literals: `dense_literals.py`."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        # xDSL's Parser lexes the first token as it is made: made on no text, then given the
        # lexer with the safe string pattern (StringSafeLexer), so a first token `"...` is safe.
        super().__init__(ctx, "", name)
        self._resume_from(ParserState(StringSafeLexer(Input(text, name))))
        self._file = StringAttr(name)
        self._line_offset = line_offset
        # Start offset of every line, so an op's line is a binary search, not a scan.
        self._line_starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]
        self._text = text
        self._types: dict[str, TypeAttribute] = {}

    def parse_optional_type(self) -> TypeAttribute | None:
        token = self._current_token
        if token.text not in ("tensor", "memref"):
            return super().parse_optional_type()
        plain = PLAIN_SHAPED_TYPE.match(self._text, token.span.start)
        if plain is None:
            return super().parse_optional_type()
        known = self._types.get(plain[0])
        if known is None:  # the first time: parsed (and checked) as usual
            known = super().parse_optional_type()
            if known is not None and self.pos >= plain.end():
                self._types[plain[0]] = known
            return known
        self._resume_from(plain.end())
        return known

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        # An input of nothing but blanks and comments is an empty module, as mlir-opt reads
        # it (xDSL: "Could not parse entire input!").
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])
        return super().parse_module(allow_implicit_module)

    def _get_op_by_name(self, name: str) -> type[Operation]:
        # After a bare op name (a custom form; a generic one is followed by its operands' `(`),
        # the custom forms upstream MLIR prints that xDSL's ops do not parse.
        custom = CUSTOM_FORMS.get(name)
        if custom is not None and self._current_token.kind != MLIRTokenKind.L_PAREN:
            return custom
        return super()._get_op_by_name(name)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if op.location == UNKNOWN_LOC:
            line = bisect_right(self._line_starts, start)
            column = start - self._line_starts[line - 1] + 1
            op.location = FileLineColLoc(
                self._file, IntAttr(line + self._line_offset), IntAttr(column)
            )
        return op


def parse_module(
    text: str, name: str = "<stdin>", ctx: Context | None = None, line_offset: int = 0
) -> ModuleOp:
    """Parse adir IR (not verified: call `module.verify()`)."""
    parser = LocatedParser(ctx or adir_context(), text, name, line_offset)
    return parser.parse_module()
