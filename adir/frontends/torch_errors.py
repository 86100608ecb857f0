"""What the PyTorch importer reports, and where in the model's source: an error names the
line of the user's code that made the ATen op (from the stack trace `torch.export` records on
each node, skipping torch's and adir's own frames) and the submodule it is in."""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import fx

from adir.frontends.sites import SourceSite, is_frontend_file

TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))


class TorchImportError(ValueError):
    """The model cannot be imported; `site` is the model's line it concerns, if one does."""

    def __init__(self, message: str, site: SourceSite | None = None, details: Sequence[str] = ()):
        self.message = message
        self.site = site
        self.details = list(details)
        head = message if site is None else f"{site}: {message}"
        super().__init__("\n".join([head, *(f"  {line}" for line in self.details)]))


@dataclass(frozen=True)
class UnsupportedOp:
    """An ATen op of the model that adir cannot import, and where the model uses it."""

    target: str
    site: SourceSite | None
    module: str
    reason: str = ""

    def __str__(self) -> str:
        where = f"{self.site}: " if self.site else ""
        why = f" ({self.reason})" if self.reason else ""
        inside = f" in {self.module}" if self.module else ""
        code = f": {self.site.text.strip()}" if self.site and self.site.text else ""
        return f"{where}{self.target}{why}{inside}{code}"


class UnsupportedOpsError(TorchImportError):
    """Every ATen op of the model that adir cannot import, one line each."""

    def __init__(self, ops: Sequence[UnsupportedOp]):
        self.ops = list(ops)
        count = f"{len(ops)} ATen op{'s' if len(ops) > 1 else ''}"
        super().__init__(
            f"the model uses {count} that adir cannot import:",
            ops[0].site,
            [str(op) for op in ops],
        )


def _frames(stack_trace: str) -> list[tuple[str, int, str]]:
    """(file, line, code) of each frame of a Python traceback text."""
    frames = []
    lines = stack_trace.splitlines()
    for index, line in enumerate(lines):
        if match := re.match(r'\s*File "([^"]+)", line (\d+)', line):
            code = lines[index + 1] if index + 1 < len(lines) else ""
            code = "" if code.lstrip().startswith("File ") else code
            frames.append((match.group(1), int(match.group(2)), code))
    return frames


def user_site(frames: Sequence[tuple[str, int, str]]) -> SourceSite | None:
    """The innermost frame of the user's code (not torch's, not adir's front-ends)."""
    for file, line, code in reversed(frames):
        if not os.path.abspath(file).startswith(TORCH_DIR + os.sep) and not is_frontend_file(file):
            return SourceSite(file, line, 1, code)
    return None


def traceback_frames(error: BaseException) -> list[tuple[str, int, str]]:
    return [
        (frame.filename, frame.lineno or 0, frame.line or "")
        for frame in traceback.extract_tb(error.__traceback__)
    ]


def node_site(node: fx.Node) -> SourceSite | None:
    """The model's source line that made an exported node (from its recorded stack trace)."""
    return user_site(_frames(node.meta.get("stack_trace") or ""))


def node_module(node: fx.Node, prefix: str) -> str:
    """The submodule a node comes from, as `'l1' (Linear)`; '' for the model itself."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path, kind = list(stack.values())[-1]
    path = path.removeprefix(prefix.rstrip(".")).removeprefix(".")
    kind = getattr(kind, "__name__", str(kind)).rsplit(".", 1)[-1]
    return f"'{path}' ({kind})" if path else ""


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
