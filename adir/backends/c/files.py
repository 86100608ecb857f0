"""The files a C build needs: the generated pair and the runtime (`runtime/`). Writing them is
`adir.output_files.write_directory` (all or nothing).

The runtime's folders (`reference/` the plain kernels, `tuned/` the fast ones, `targets/` one
settings header per target) are for people reading it; a build gets every file side by side in
one directory, so that `cc -std=c99 -O2 DIR/*.c -lm` builds it."""

from __future__ import annotations

from pathlib import Path

from adir.backends.c.model import CModel

RUNTIME = Path(__file__).parent / "runtime"


# The wrappers around CMSIS-DSP: only in builds that call it (they need arm_math.h).
CMSIS_DSP_RUNTIME = ("adir_cmsis_dsp.h", "adir_cmsis_dsp.c")


def runtime_files(libraries: frozenset[str] = frozenset()) -> dict[str, str]:
    """The runtime's headers and kernel sources, by file name (names are unique across its
    folders), for a build whose calls use these `libraries` besides adir's own."""
    paths = [
        path
        for path in RUNTIME.rglob("*")
        if path.suffix in (".h", ".c")
        and ("cmsis-dsp" in libraries or path.name not in CMSIS_DSP_RUNTIME)
    ]
    return {path.name: path.read_text() for path in sorted(paths, key=lambda path: path.name)}


def c_files(model: CModel) -> dict[str, str]:
    """Every file of a build of `model`: its header, its source and the runtime."""
    return {
        model.header_name: model.header,
        model.source_name: model.source,
        **runtime_files(model.libraries),
    }
