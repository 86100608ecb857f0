"""Build generated C against CMSIS-DSP on the host, and compare it with the interpreter.

    build = build_cmsis_c(planned, "train_step", steps, directory)      kernels="cmsis-dsp"
    check_cmsis_against_interpreter(TEXT, "f", steps)

CMSIS-DSP's sources come from `tools/fetch_cmsis_dsp.sh` (the cmsisdsp sdist, cached in
~/.cache/adir or `ADIR_CMSIS_DSP_CACHE`), or from `ADIR_CMSIS_DSP` pointing at an unpacked copy;
`cmsis_dsp_root` runs the script (a no-op once cached) and fails the test with what to do when
it cannot. Only the sources that
`adir.backends.c.cmsis_dsp.CMSIS_DSP_SOURCES` lists are compiled, once per compiler and flags, into
a cache next to them. The builds are `c_testing.build_c`'s (same driver, same warnings, ASan and
UBSan on request), with the CMSIS-DSP headers as system headers and its objects linked in.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from c_testing import CBuild, build_c, check_c_against_interpreter
from xdsl.dialects.builtin import ModuleOp

from adir.backends.c.cmsis_dsp import CMSIS_DSP_DEFINES, CMSIS_DSP_INCLUDES, CMSIS_DSP_SOURCES

REPO = Path(__file__).parents[2]
FETCH = REPO / "tools" / "fetch_cmsis_dsp.sh"


@functools.cache
def cmsis_dsp_root() -> Path:
    """The unpacked CMSIS-DSP sources (Include/, PrivateInclude/, Source/)."""
    given = os.environ.get("ADIR_CMSIS_DSP")
    if given:
        root = Path(given)
        if not (root / "Include" / "arm_math.h").is_file():
            pytest.fail(f"ADIR_CMSIS_DSP={given} holds no Include/arm_math.h")
        return root
    completed = subprocess.run(["bash", str(FETCH)], capture_output=True, text=True)
    if completed.returncode != 0:
        pytest.fail(
            "the CMSIS-DSP sources are missing and tools/fetch_cmsis_dsp.sh could not fetch "
            f"them; run it by hand (it needs pip and the package registry):\n{completed.stderr}"
        )
    return Path(completed.stdout.strip().splitlines()[-1])


def cmsis_dsp_include_flags(root: Path) -> list[str]:
    """CMSIS-DSP's headers as system headers (our -Werror is for our code), and its defines."""
    includes = [flag for d in CMSIS_DSP_INCLUDES for flag in ("-isystem", str(root / d))]
    return [*CMSIS_DSP_DEFINES, *includes]


@functools.cache
def cmsis_dsp_objects(compiler: str, flags: tuple[str, ...]) -> list[str]:
    """The CMSIS-DSP sources adir calls, compiled with `flags` (less the warnings, which are
    for our code), cached on disk by compiler and flags."""
    root = cmsis_dsp_root()
    key = hashlib.sha256(repr((compiler, flags, CMSIS_DSP_SOURCES)).encode()).hexdigest()[:16]
    directory = root.parent / f"objects-{compiler}-{key}"
    objects = [directory / (Path(source).stem + ".o") for source in CMSIS_DSP_SOURCES]
    if all(o.is_file() for o in objects):
        return [str(o) for o in objects]
    work = Path(tempfile.mkdtemp(prefix="objects-", dir=root.parent))
    build_flags = [f for f in flags if not f.startswith("-W")]
    for source, target in zip(CMSIS_DSP_SOURCES, objects, strict=True):
        completed = subprocess.run(
            [compiler, *build_flags, *cmsis_dsp_include_flags(root), "-c",
             str(root / "Source" / source), "-o", str(work / target.name)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert completed.returncode == 0, f"{compiler} failed on {source}:\n{completed.stderr}"
    try:
        work.rename(directory)  # whole or not at all
    except OSError:  # another process made it first: use theirs
        shutil.rmtree(work, ignore_errors=True)
    return [str(o) for o in objects]


def cmsis_dsp_library(compiler: str, flags: tuple[str, ...]) -> list[str]:
    """What a build with CMSIS-DSP adds: its headers and its objects compiled with `flags`."""
    return [*cmsis_dsp_include_flags(cmsis_dsp_root()), *cmsis_dsp_objects(compiler, flags)]


def build_cmsis_c(
    module: ModuleOp,
    name: str,
    steps: int,
    directory: Path,
    compiler: str = "cc",
    sanitize: bool = False,
    optimize: str = "-O1",
    state_each_step: bool = False,
) -> CBuild:
    """`c_testing.build_c` with kernels="cmsis-dsp": the model calls CMSIS-DSP where legal."""
    return build_c(
        module,
        name,
        steps,
        directory,
        compiler,
        sanitize,
        optimize,
        kernels="cmsis-dsp",
        library=cmsis_dsp_library,
        state_each_step=state_each_step,
    )


def check_cmsis_against_interpreter(
    text_or_module: str | ModuleOp,
    name: str,
    steps: Sequence[Sequence[np.ndarray]],
    *,
    differentiate: str = "",
) -> list[np.ndarray]:
    """`c_testing.check_c_against_interpreter` for the CMSIS-DSP build: every result of every
    step and every final parameter agree with the interpreter."""
    return check_c_against_interpreter(
        text_or_module,
        name,
        steps,
        differentiate=differentiate,
        build=build_cmsis_c,
    )
