"""adir's C runtime compiled once for a tool's run (bench.py, transfer_demo.py,
qas_convergence.py).

Every program such a tool builds links the same runtime files, and a portable `cc -O2` of them
takes about 23 s (most of it the AVX2 and AVX-512 versions of the tuned kernels): a tool
compiles them once for each compiler and flags, and each model's program compiles its own
files and links the objects.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from adir.backends.c.files import runtime_files


@functools.cache
def runtime_objects(work: Path, command: tuple[str, ...]) -> list[str]:
    """The runtime compiled by `command` (a compiler and its flags) into a folder of `work`:
    its objects. A compiler's error raises CalledProcessError, its output in `stderr`."""
    label = "_".join(part.strip("-").replace("/", "_") for part in command)
    directory = work / f"runtime_{label}"
    directory.mkdir(parents=True, exist_ok=True)
    files = runtime_files()
    for name, text in files.items():
        (directory / name).write_text(text)
    objects = []
    for name in sorted(files):
        if name.endswith(".c"):
            objects.append(str(directory / name.replace(".c", ".o")))
            subprocess.run(
                [*command, "-I", str(directory), "-c", str(directory / name), "-o", objects[-1]],
                capture_output=True,
                text=True,
                check=True,
            )
    return objects


def model_sources(directory: Path) -> list[str]:
    """The C files of an emitted directory that are not the runtime's: the model's own."""
    runtime = set(runtime_files())
    return sorted(str(path) for path in directory.glob("*.c") if path.name not in runtime)
