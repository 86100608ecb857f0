"""What the fuzz tests share: running a tool in this process under a time and memory limit, the
outcome classes they check, and compiling the C that `-t c` printed.

    outcome = run_tool(main, [path, *options])   # exit code, output, hang
    problem = outcome.problem()                  # None, or what is wrong (a traceback, exit 2)
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from c_testing import c_compilers

from adir.backends.c.files import runtime_files
from adir.output_files import write_directory

# A run longer than this is a hang (the slowest valid example takes ~5 s on a loaded machine).
TIMEOUT_SECONDS = float(os.environ.get("ADIR_FUZZ_TIMEOUT", "60"))
# Address space a run may add to the test process: a huge literal that is expanded before it
# is checked fails with MemoryError (exit 2, a finding) instead of taking the machine's memory.
MEMORY_HEADROOM = 3 << 30
TRACEBACK = "Traceback (most recent call last)"
C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"]


ESCAPED = -1  # Outcome.code when an exception left the tool's main (it printed no diagnostic)


class Hang(BaseException):
    """Raised in a run that took longer than TIMEOUT_SECONDS (a BaseException, so that the tools'
    `report_errors` does not turn it into exit 2)."""


@dataclass
class Outcome:
    code: int | None  # None: the run hung
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def problem(self) -> str | None:
        """What is wrong with this outcome, or None: a hang, an exit code other than 0 and 1
        (2 is an internal error), or a Python traceback (even with exit 1)."""
        if self.code is None:
            return f"hang (over {TIMEOUT_SECONDS:g} s)"
        if self.code == ESCAPED:
            return "an exception escaped the tool's main"
        if self.code not in (0, 1):
            return f"exit {self.code}"
        # The full header: a mutation may move the word "Traceback" from a lit test into a name.
        if TRACEBACK in self.output:
            return "traceback"
        return None


@contextlib.contextmanager
def limits() -> Iterator[None]:
    """At most TIMEOUT_SECONDS of wall time and MEMORY_HEADROOM more address space."""

    def timed_out(signum: int, frame: object) -> None:
        raise Hang()

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    previous = signal.signal(signal.SIGALRM, timed_out)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, previous)


def _address_space() -> int:
    with open("/proc/self/status") as stream:
        for line in stream:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def run_tool(main: Callable[[list[str]], int], argv: Sequence[str]) -> Outcome:
    """Run a tool's `main(argv)` in this process under `limits()`; its exit code and all that
    it printed."""
    out, err = io.StringIO(), io.StringIO()
    code: int | None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with limits():
                code = main(list(argv))
        except Hang:
            code = None
        except Exception:
            code = ESCAPED
            traceback.print_exc()
    return Outcome(code, out.getvalue(), err.getvalue())


def run_on_text(
    main: Callable[[list[str]], int], data: bytes, options: Sequence[str], name: str = "fuzz.mlir"
) -> Outcome:
    """`run_tool` on `data` written to a file in a fresh directory (the run's working
    directory too, so that relative outputs land there)."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, name)
        Path(path).write_bytes(data)
        with contextlib.chdir(directory):
            return run_tool(main, [path, *options])


def compile_c(source: str, header: str) -> list[str]:
    """Compile `model.c` (with its `model.h` and the runtime headers) with every C compiler on
    the machine, `-std=c99 -Wall -Wextra -Werror`; the error output of each that failed."""
    failures = []
    with tempfile.TemporaryDirectory() as directory:
        write_directory(directory, runtime_files())
        Path(directory, "model.c").write_text(source)
        Path(directory, "model.h").write_text(header)
        for compiler in c_compilers():
            completed = subprocess.run(
                [compiler, *C_FLAGS, "-I", directory, "model.c", "-o", "model.o"],
                cwd=directory,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if completed.returncode != 0:
                failures.append(f"{compiler}:\n{completed.stderr}")
    return failures
