"""`adir-opt -t c`: the C of a planned module on the output stream.

    adir-opt --optimizer=sgd --plan-memory -t c model.mlir                  model.c
    adir-opt --optimizer=sgd --plan-memory -t 'c{prefix="mnist_" file="header"}' model.mlir
    adir-opt --optimizer=sgd --plan-memory --c-kernels=cmsis-dsp -t c model.mlir

`file` picks the part: "source" (`<prefix>model.c`, the default) or "header"
(`<prefix>model.h`). Each op calls the kernel that the `select-kernels` pass recorded on it
(`--c-kernels` and `--c-target` set its options). `adir-opt --emit-c=DIR` writes both and the
runtime to a directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from adir.backends.c.model import IDENTIFIER, print_model
from adir.diagnostics import OpError

FILES = ("source", "header")


@dataclass(frozen=True)
class CTarget(Target):
    name: ClassVar[str] = "c"

    prefix: str = ""
    file: str = "source"

    def __post_init__(self) -> None:
        """Options are checked when the spec is read, before any pass runs."""
        if self.file not in FILES:
            raise ValueError(f"C target: file={self.file!r} is not one of {', '.join(FILES)}")
        if self.prefix and not IDENTIFIER.fullmatch(self.prefix):
            raise ValueError(
                f"C target: prefix={self.prefix!r} is not the start of a C identifier "
                "(it begins every name and file the backend writes)"
            )

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        try:
            model = print_model(module, self.prefix)
        except ValueError as error:
            raise OpError(module, f"C target: {error}") from error
        output.write(model.source if self.file == "source" else model.header)
