"""Build a planned model for a Cortex-M board, run it under QEMU, and build the same program
on the host to compare.

    build = BoardBuild.write(planned, directory, batches, kernels="cmsis-dsp")
    build.make()                     # arm-none-eabi-gcc through the generated Makefile
    steps = build.run()              # qemu-system-arm: each step's loss and instructions
    host = host_run(planned, directory / "host", batches, kernels="cmsis-dsp")

Needs the Debian packages gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm
(`require_arm_tools` fails the test with the command that installs them), for CMSIS-DSP the
sdist that `cmsis_testing.cmsis_dsp_root` fetches, and for CMSIS-NN the checkout that
ADIR_CMSIS_NN names (test_cmsis_nn.py: a test skips without it).

`instrument`, where given, edits the generated files (name -> text) before they are written:
a test that reads more of the program's state than its losses adds the code that prints it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from c_testing import PREFIX, WARNINGS, c_compilers, runtime_objects, selected
from cmsis_testing import cmsis_dsp_include_flags, cmsis_dsp_objects, cmsis_dsp_root
from xdsl.dialects.builtin import ModuleOp

from adir.backends.c.cmake import cmake_files
from adir.backends.c.cortex_m import MPS2_AN386, Board, board_files
from adir.backends.c.embedded_training import embedded_training_source
from adir.backends.c.files import CMSIS_DSP_RUNTIME, c_files
from adir.backends.c.model import print_model
from adir.output_files import write_directory

ARM_TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm", "make")
INSTALL = (
    "apt-get install -y --no-install-recommends "
    "gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm make"
)
RISCV_TOOLS = ("riscv64-unknown-elf-gcc", "riscv64-unknown-elf-size", "qemu-system-riscv32", "make")
RISCV_INSTALL = (
    "apt-get install -y --no-install-recommends "
    "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc make"
)
QEMU_TIMEOUT = 300
Instrument = Callable[[dict[str, str]], None]


def require_arm_tools(board: Board = MPS2_AN386) -> None:
    tools, install = (ARM_TOOLS, INSTALL) if board.isa == "arm" else (RISCV_TOOLS, RISCV_INSTALL)
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found: the {board.name} tests need `{install}`")


@dataclass
class Step:
    """One line of the embedded training program: `step N loss L bits 0x.. [instructions I]`."""

    loss: float
    bits: int
    instructions: int | None


@dataclass
class Run:
    steps: list[Step]
    stack_bytes: int | None
    stdout: str = ""  # what else the program printed (an `instrument`'s lines)

    @property
    def losses(self) -> np.ndarray:
        return np.array([step.loss for step in self.steps], np.float32)

    @property
    def instructions_per_step(self) -> float:
        counts = [step.instructions for step in self.steps if step.instructions is not None]
        return float(np.mean(counts)) if counts else 0.0


STEP = re.compile(r"step (\d+) loss \S+ bits 0x([0-9a-f]{8})(?: instructions (\d+))?")


def parse_run(stdout: str, count: int) -> Run:
    steps = []
    for number, match in enumerate(STEP.finditer(stdout)):
        assert int(match[1]) == number, stdout
        bits = int(match[2], 16)
        loss = float(np.array(bits, np.uint32).view(np.float32))
        steps.append(Step(loss, bits, int(match[3]) if match[3] else None))
    assert len(steps) == count and stdout.rstrip().endswith("done"), stdout
    stack = re.search(r"stack (\d+) bytes", stdout)
    return Run(steps, int(stack[1]) if stack else None, stdout)


@dataclass(frozen=True)
class Sizes:
    """Bytes in flash (code and constants), initialised RAM and zeroed RAM."""

    text: int = 0
    data: int = 0
    bss: int = 0

    def __add__(self, other: Sizes) -> Sizes:
        return Sizes(self.text + other.text, self.data + other.data, self.bss + other.bss)


OUTPUT_SECTION = re.compile(r"^(\.\S+)\s")
INPUT_SIZE = re.compile(r"^\s+(?:\S+\s+)?0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o\)?)$")
KIND = {".text": "text", ".ARM.exidx": "text", ".data": "data", ".bss": "bss"}


def sizes_by_object(map_text: str) -> dict[str, Sizes]:
    """What each object file put into the image, from the linker's map (sections that
    --gc-sections dropped are not in the memory map, so they do not count)."""
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"text": 0, "data": 0, "bss": 0})
    memory_map = map_text.split("Linker script and memory map", 1)[1]
    kind = None
    for line in memory_map.splitlines():
        output = OUTPUT_SECTION.match(line)
        if output:
            kind = KIND.get(output[1])
            continue
        size = INPUT_SIZE.match(line)
        if size and kind is not None:
            totals[Path(size[2]).name][kind] += int(size[1], 16)
    return {name: Sizes(**kinds) for name, kinds in totals.items()}


def library_of(libraries: frozenset[str]) -> str:
    """The kernel set whose sources a build of a model calling `libraries` needs."""
    return next((name for name in ("cmsis-dsp", "cmsis-nn") if name in libraries), "tuned")


@dataclass
class BoardBuild:
    """A directory with the model, the embedded training program and the board's files."""

    directory: Path
    steps: int
    kernels: str | None
    board: Board = MPS2_AN386

    @classmethod
    def write(
        cls,
        planned: ModuleOp,
        directory: Path,
        batches: Sequence[Sequence[np.ndarray]],
        kernels: str | None = "tuned",
        ram_bytes: int = 256 * 1024,
        board: Board = MPS2_AN386,
        select: bool = True,
        instrument: Instrument | None = None,
    ) -> BoardBuild:
        """The build of `planned` for `board` with its kernels selected again from `kernels`
        (None: as planned, e.g. with the scratch buffers of the tuned convolutions;
        `select=False`: as planned too, `kernels` naming the set the plan selected). The
        build's libraries are those the model's calls use."""
        require_arm_tools(board)
        model = print_model(selected(planned, kernels if select else None), PREFIX)
        files = c_files(model)
        library = library_of(model.libraries)
        files.update(board_files(board, ram_bytes, library))
        files.update(cmake_files(model, board=board))  # as --emit-c writes them
        files[f"{PREFIX}train_embedded.c"] = embedded_training_source(planned, PREFIX, batches)
        if instrument is not None:
            instrument(files)
        write_directory(str(directory), files)
        return cls(directory, len(batches), library, board)

    def make(self, *targets: str) -> subprocess.CompletedProcess[str]:
        arguments = ["make", "-j2", "-C", str(self.directory), *targets]
        if self.kernels == "cmsis-dsp":
            arguments.append(f"CMSIS_DSP={cmsis_dsp_root()}")
        elif self.kernels == "cmsis-nn":
            from test_cmsis_nn import CMSIS_NN

            arguments.append(f"CMSIS_NN={CMSIS_NN}")
        return subprocess.run(arguments, capture_output=True, text=True, timeout=QEMU_TIMEOUT)

    def build(self) -> None:
        completed = self.make()
        assert completed.returncode == 0, f"make failed:\n{completed.stdout}{completed.stderr}"

    def run(self) -> Run:
        completed = self.make("-s", "run")
        assert completed.returncode == 0, f"QEMU run failed:\n{completed.stdout}{completed.stderr}"
        return parse_run(completed.stdout, self.steps)

    def image_sizes(self) -> Sizes:
        """text, data and bss of train.elf, as arm-none-eabi-size counts them (bss includes
        the heap and stack that the linker script reserves)."""
        completed = subprocess.run(
            [f"{self.board.toolchain}-size", str(self.directory / "train.elf")],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        text, data, bss = completed.stdout.splitlines()[1].split()[:3]
        return Sizes(int(text), int(data), int(bss))

    def model_sizes(self) -> Sizes:
        """What the model and the kernels it calls take in the image: the generated model and
        the runtime and CMSIS-DSP objects, not the training program's embedded batches, the
        startup code or newlib."""
        objects = sizes_by_object((self.directory / "build" / "train.map").read_text())
        theirs = {f"{PREFIX}train_embedded.o", f"startup_{self.board.file_name}.o"}
        ours = [
            sizes
            for name, sizes in objects.items()
            if name.startswith((PREFIX, "adir_", "arm_")) and name not in theirs
        ]
        return sum(ours, Sizes())


def host_run(
    planned: ModuleOp,
    directory: Path,
    batches: Sequence[Sequence[np.ndarray]],
    kernels: str | None = "tuned",
    select: bool = True,
    instrument: Instrument | None = None,
) -> Run:
    """The same embedded training program, built for and run on the host (gcc -O2); `kernels`,
    `select` and `instrument` as in `BoardBuild.write`. CMSIS-NN builds its portable C here (no
    __ARM_FEATURE_DSP), whose integer results are its DSP code's (test_cmsis_nn.py)."""
    directory.mkdir(parents=True, exist_ok=True)
    model = print_model(selected(planned, kernels if select else None), PREFIX)
    kernels = library_of(model.libraries)
    files = c_files(model)
    files[f"{PREFIX}train_embedded.c"] = embedded_training_source(planned, PREFIX, batches)
    if instrument is not None:
        instrument(files)
    write_directory(str(directory), files)
    compiler = c_compilers()[0]
    flags = [*WARNINGS, "-O2", "-ffp-contract=off"]
    objects = runtime_objects(compiler, tuple(flags))
    sources = [str(directory / f"{PREFIX}model.c"), str(directory / f"{PREFIX}train_embedded.c")]
    # A model that calls no CMSIS-DSP function (on the Cortex-M4F, adir's kernels win the
    # seed MLP's every op) has no wrappers to compile.
    if kernels == "cmsis-dsp" and any(name in files for name in CMSIS_DSP_RUNTIME):
        objects = [*objects, *cmsis_dsp_objects(compiler, tuple(flags))]
        sources += [str(directory / name) for name in CMSIS_DSP_RUNTIME if name.endswith(".c")]
        flags += cmsis_dsp_include_flags(cmsis_dsp_root())
    elif kernels == "cmsis-nn":
        from test_cmsis_nn import cmsis_nn_objects

        include, *cmsis_nn = cmsis_nn_objects(compiler, tuple(flags))
        objects, flags = [*objects, *cmsis_nn], [*flags, include]
    executable = directory / "train"
    completed = subprocess.run(
        [compiler, *flags, "-I", str(directory), *sources, *objects, "-o", str(executable), "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert completed.returncode == 0, f"{compiler} failed:\n{completed.stderr}"
    completed = subprocess.run([str(executable)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return parse_run(completed.stdout, len(batches))
