"""Where a front-end's ops come from: a line of the user's Python program, and the error that
names it.

The builder gives every op the location of the Python line that built it (an importer, the
line of the model's source), so a shape mistake is reported at that line when the op is built,
and a pass's diagnostic about the op later points there too.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

FRONTEND_DIR = os.path.dirname(os.path.abspath(__file__))
"""Frames in this folder (and below) are adir's own, never the user's call site."""


def is_frontend_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(FRONTEND_DIR + os.sep)


@dataclass(frozen=True)
class SourceSite:
    """A line of the user's Python program (or of a model an importer reads)."""

    filename: str
    line: int
    column: int = 1
    text: str = ""

    def location(self) -> FileLineColLoc:
        return FileLineColLoc(StringAttr(self.filename), IntAttr(self.line), IntAttr(self.column))

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"


class BuildError(ValueError):
    """A mistake in the model being built, with the Python line that made it:

    model.py:12: adir.matmul: inner dimensions 32 and 784 do not match
        logits = b.matmul(h, w1, transpose_b=True)
    """

    def __init__(self, message: str, site: SourceSite | None = None):
        self.message = message
        self.site = site
        text = message if site is None else f"{site}: {message}"
        if site is not None and site.text:
            text += f"\n    {site.text.strip()}"
        super().__init__(text)


def caller_site() -> SourceSite | None:
    """The innermost frame outside adir's front-ends: the line that called the builder."""
    frame = sys._getframe(1)
    while frame is not None and is_frontend_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    summary = traceback.extract_stack(frame, limit=1)[-1]
    column = (summary.colno or 0) + 1
    return SourceSite(summary.filename, summary.lineno or 0, column, summary.line or "")
