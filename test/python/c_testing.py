"""Compile a model to C, build it, run it, and compare it with the interpreter.

    result = check_c_against_interpreter(TEXT, "train_step", steps, pipeline="...")

The C is built by a test driver generated from the function's signature: it calls
`<prefix>init(seed)`, then the function once per step with the arguments read from a binary
file, and writes every result and, at the end, every parameter. The same steps run in the
interpreter (`Session`, same seed) on the tensor-level module, and the results and parameters
must agree to `rtol` (float32 on both sides; the C sums in its own order, so not bit for bit).
Builds use `-std=c99 -Wall -Wextra -Wpedantic -Werror`, and with `sanitize=True` ASan and UBSan
abort on the first report.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, f32, i8, i32

from adir.backends.c.calls import c_type
from adir.backends.c.files import c_files, runtime_files
from adir.backends.c.model import print_model
from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.interpreter.arrays import to_numpy_dtype
from adir.output_files import write_directory
from adir.passes import PLANNING_PIPELINE

WARNINGS = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
# -g1: line tables, so that a sanitizer's report names file and line; full -g doubled the
# sanitized builds' compile time (the AVX-512 versions of the tuned kernels: 82 s -> 43 s).
SANITIZERS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g1"]
PREFIX = "m_"


def c_compilers() -> list[str]:
    """The C compilers on this machine among gcc and clang (at least `cc`)."""
    found = [name for name in ("gcc", "clang") if shutil.which(name)]
    return found or ["cc"]


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply a `-p` pipeline (xDSL syntax) to a clone of `module`."""
    from xdsl.passes import PassPipeline

    from adir.universe import available_passes

    result = module.clone()
    PassPipeline.parse_spec(available_passes(), pipeline).apply(adir_context(), result)
    return result


def selected(planned: ModuleOp, kernels: str | None) -> ModuleOp:
    """`planned` with its kernels selected again from the set `kernels` (None: as they are).
    Sets without scratch buffers may be chosen after planning; CMSIS-NN is selected by the
    pipeline before plan-memory, so it is taken as it is."""
    if kernels is None or kernels == "cmsis-nn":
        return planned
    return run_pipeline(planned, f"select-kernels{{kernels={kernels}}}")


def function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(name)


def api_params(module: ModuleOp) -> list:
    """The parameters the C model's parameter API lists (and the driver dumps): the f32 ones
    and the int8 weights and int32 biases of trainable int8 layers."""
    elements = (f32, i8, i32)
    return [
        op
        for op in module.ops
        if op.name == "adir.param" and op.type.element_type in elements  # type: ignore[attr-defined]
    ]


def driver_source(planned: ModuleOp, name: str, steps: int, state_each_step: bool = False) -> str:
    """A main() that runs `name` for `steps` steps on inputs read from argv[1], writing its
    results and then every parameter to argv[2] (raw little-endian bytes); with
    `state_each_step`, every parameter after each step's results instead of once at the end."""
    fn = function(planned, name)
    args = fn.function_type.inputs.data
    outputs = fn.function_type.outputs.data
    scalar = (
        len(outputs) == 1 and outputs[0].get_shape() == () and c_type(outputs[0].element_type)
    ) == "float"
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        f'#include "{PREFIX}model.h"',
        "static void get(void *p, size_t n, FILE *f) { if (n && fread(p, 1, n, f) != n) exit(3); }",
        "static void put(const void *p, size_t n, FILE *f) { if (n) fwrite(p, 1, n, f); }",
        "int main(int argc, char **argv)",
        "{",
        "    FILE *in, *out; unsigned seed; size_t i, step;",
        "    if (argc != 3) return 2;",
        '    in = fopen(argv[1], "rb"); out = fopen(argv[2], "wb");',
        "    if (!in || !out) return 2;",
        "    get(&seed, sizeof seed, in);",
        f"    {PREFIX}init(seed);",
        f"    for (step = 0; step < {steps}u; ++step) {{",
    ]
    for index, type_ in enumerate(args):
        assert isinstance(type_, MemRefType)
        count = int(np.prod(type_.get_shape()))
        lines.append(f"        static {c_type(type_.element_type)} a{index}[{max(count, 1)}];")
        lines.append(f"        get(a{index}, {count}u * sizeof *a{index}, in);")
    call_args = [f"a{i}" for i in range(len(args))]
    if scalar:
        lines.append(f"        float r0 = {PREFIX}{name}({', '.join(call_args)});")
        lines.append("        put(&r0, sizeof r0, out);")
    else:
        counts = [int(np.prod(type_.get_shape())) for type_ in outputs]
        for index, (type_, count) in enumerate(zip(outputs, counts, strict=True)):
            lines.append(f"        static {c_type(type_.element_type)} r{index}[{max(count, 1)}];")
            call_args.append(f"r{index}")
        lines.append(f"        {PREFIX}{name}({', '.join(call_args)});")
        for index, count in enumerate(counts):
            lines.append(f"        put(r{index}, {count}u * sizeof *r{index}, out);")
    dump_state = [
        f"    for (i = 0; {PREFIX}param_name(i); ++i)",
        f"        put({PREFIX}param_values(i), {PREFIX}param_size(i) *",
        f"            ({PREFIX}param_type(i) == {PREFIX.upper()}TYPE_I8 ? 1u : 4u), out);",
    ]
    if state_each_step:
        lines += ["    " + line for line in dump_state] + ["    }"]
    else:
        lines += ["    }", *dump_state]
    lines += ["    return fclose(out) != 0;", "}"]
    return "\n".join(lines) + "\n"


def process_directory(prefix: str) -> Path:
    """A new temporary directory for what this test process shares between its tests, removed
    when the process exits."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


def c_flags(optimize: str = "-O1", sanitize: bool = False, multiversion: bool = False) -> list[str]:
    """The tests' C flags (`build_c`'s). One version of the tuned kernels unless `multiversion`,
    SSE2 and no fused multiply-add on x86-64, the numbers every tolerance here was measured
    with: a multiversioned build's AVX versions fuse (ADIR_FMA is fmaf there, whatever
    -ffp-contract says), which moves the ill-conditioned examples' runs (ResNet-8 with Adam at
    batch 1 puts a ReLU on its kink) as far from PyTorch float64 as any other float32 program.
    test_c_multiversion.py builds both."""
    flags = [*WARNINGS, optimize, "-ffp-contract=off", *(SANITIZERS if sanitize else [])]
    return flags + ([] if multiversion else ["-DADIR_NO_MULTIVERSION"])


@functools.cache
def runtime_objects(compiler: str, flags: tuple[str, ...]) -> list[str]:
    """The runtime's kernels compiled once per compiler and flags in this test run (each
    model's build then compiles only its own source and driver), in the directory the run's
    processes share (conftest.py's ADIR_TEST_SHARED_DIR; this process's own outside a pytest
    run): the first process to need them compiles them under a lock, the others wait for it and
    link them. The directory is named by a hash of the compiler, the flags and the sources."""
    files = runtime_files()
    key = hashlib.sha256(repr((compiler, flags, sorted(files.items()))).encode()).hexdigest()
    shared = os.environ.get("ADIR_TEST_SHARED_DIR")
    root = Path(shared) if shared else process_directory("adir-c-runtime-")
    directory = root / f"runtime-{key[:16]}"
    with open(root / f"runtime-{key[:16]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        sources = [directory / name for name in sorted(files) if name.endswith(".c")]
        objects = [str(source.with_suffix(".o")) for source in sources]
        if (directory / "complete").exists():
            return objects
        write_directory(str(directory), files)
        for source, target in zip(sources, objects, strict=True):
            completed = subprocess.run(
                [compiler, *flags, "-c", str(source), "-o", target], capture_output=True, text=True
            )
            assert completed.returncode == 0, (
                f"{compiler} failed on {source.name}:\n{completed.stderr}"
            )
        (directory / "complete").touch()
    return objects


PORTABLE_FLAGS = (*WARNINGS, "-O2")
"""A user's portable build (`cc -O2`, multiversioned on x86-64), as test_c_multiversion.py and
test_c_kernels_vs_reference.py compile the runtime for it (`runtime_objects`)."""


@dataclass
class CBuild:
    """A built test driver for one function of a planned module."""

    planned: ModuleOp
    name: str
    directory: Path
    executable: Path
    state_each_step: bool = False
    timeout: float = 120  # seconds; a big model under ASan at batch 8 needs more

    def run(self, seed: int, steps: Sequence[Sequence[np.ndarray]]) -> list[np.ndarray]:
        """The results of every step, then every parameter, as float32/int arrays (with
        `state_each_step`: each step's results followed by every parameter after it)."""
        fn = function(self.planned, self.name)
        inputs = fn.function_type.inputs.data
        outputs = fn.function_type.outputs.data
        with open(self.directory / "in.bin", "wb") as stream:
            stream.write(np.uint32(seed).tobytes())
            for args in steps:
                for type_, value in zip(inputs, args, strict=True):
                    dtype = to_numpy_dtype(type_, np.float32)
                    stream.write(np.ascontiguousarray(value, dtype).tobytes())
        completed = subprocess.run(
            [str(self.executable), str(self.directory / "in.bin"), str(self.directory / "out.bin")],
            capture_output=True,
            text=True,
            timeout=self.timeout,
        )
        assert completed.returncode == 0, f"the C failed:\n{completed.stdout}{completed.stderr}"
        assert completed.stderr == "", completed.stderr  # sanitizer reports, warnings
        data = (self.directory / "out.bin").read_bytes()
        results, offset = [], 0

        def take(type_: object, shape: tuple[int, ...]) -> np.ndarray:
            nonlocal offset
            dtype = to_numpy_dtype(type_, np.float32)
            count = int(np.prod(shape))
            array = np.frombuffer(data, dtype, count, offset).reshape(shape)
            offset += array.nbytes
            return array

        params = api_params(self.planned)
        for _ in steps:
            for type_ in outputs:
                results.append(take(type_, tuple(type_.get_shape())))
            if self.state_each_step:
                results += [take(op.type, tuple(op.type.get_shape())) for op in params]
        if not self.state_each_step:
            results += [take(op.type, tuple(op.type.get_shape())) for op in params]
        assert offset == len(data)
        return results


def function_body(object_file: Path, name: str) -> list[str]:
    """objdump's lines of one function of an object file (static ones included)."""
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(object_file)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    body = listing.split(f"<{name}>:\n", 1)[1]
    return body.split("\n\n", 1)[0].splitlines()


def build_c(
    module: ModuleOp,
    name: str,
    steps: int,
    directory: Path,
    compiler: str = "cc",
    sanitize: bool = False,
    optimize: str = "-O1",
    extra_flags: Sequence[str] = (),
    kernels: str | None = None,
    library: Callable[[str, tuple[str, ...]], Sequence[str]] | None = None,
    state_each_step: bool = False,
    driver: str | None = None,
    multiversion: bool = False,
) -> CBuild:
    """Emit the C of a planned module with a driver for `name`, and build it. `library`
    gives, for the compiler and flags, more arguments for the build: the include flags and
    objects of a kernel library (CMSIS-DSP for kernels="cmsis-dsp"). `kernels`, if given,
    selects the kernels again (`selected`). `state_each_step`: the driver writes every
    parameter after each step (`driver_source`). `driver`: the C of a main of the caller's own
    instead (then `CBuild.run` does not read its output). `multiversion`: the portable build as
    a user's `cc -O2 DIR/*.c` makes it on x86-64 Linux (AVX2 and AVX-512 versions of the tuned
    kernels, targets/adir_multiversion.h), not the single version the tests' tolerances assume."""
    directory.mkdir(parents=True, exist_ok=True)
    module = selected(module, kernels)
    write_directory(str(directory), c_files(print_model(module, PREFIX)))
    if driver is None:
        driver = driver_source(module, name, steps, state_each_step)
    (directory / "driver.c").write_text(driver)
    flags = [*c_flags(optimize, sanitize, multiversion), *extra_flags]
    runtime = set(runtime_files())
    sources = sorted(str(p) for p in directory.glob("*.c") if p.name not in runtime)
    objects = [
        *runtime_objects(compiler, tuple(flags)),
        *(library(compiler, tuple(flags)) if library else []),
    ]
    executable = directory / "driver"
    completed = subprocess.run(
        [compiler, *flags, "-I", str(directory), *sources, *objects, "-o", str(executable), "-lm"],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, f"{compiler} failed:\n{completed.stderr}"
    return CBuild(module, name, directory, executable, state_each_step)


def interpreter_run(
    module: ModuleOp, name: str, seed: int, steps: Sequence[Sequence[np.ndarray]]
) -> list[np.ndarray]:
    """What `CBuild.run` returns, from the interpreter."""
    session = Session(module, np.float32, seed=seed)
    results = []
    for args in steps:
        results += list(session.call(name, *args))
    results += [session.params[op.sym_name.data] for op in api_params(module)]
    return results


def check_c_against_interpreter(
    text_or_module: str | ModuleOp,
    name: str,
    steps: Sequence[Sequence[np.ndarray]],
    *,
    differentiate: str = "",
    seed: int = 0,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    sanitize: bool = True,
    compiler: str | None = None,
    param_atol: float | None = None,
    unchecked_params: Sequence[str] = (),
    params_to_tensor_scale: bool = False,
    each_step_from_c_state: bool = False,
    build: Callable[..., CBuild] = build_c,
) -> list[np.ndarray]:
    """Compile `name` to C (after the `differentiate` passes, then bufferize and plan), run
    it for `steps` and check every result and final parameter against the interpreter
    (parameters with `param_atol` when given; `unchecked_params` not at all).

    `params_to_tensor_scale` compares each parameter element to rtol of its tensor's largest
    magnitude instead of its own: state accumulated over many steps (a momentum buffer) holds
    elements that are the small residue of cancelling sums, whose own relative error says
    nothing about the kernels.

    `each_step_from_c_state` checks every step on its own: the interpreter runs step k from
    the C's parameters after step k-1 (bit for bit), and the results and every parameter after
    each step are compared. For a training run whose trajectory is discontinuous in float32 (a
    ReLU input within rounding of 0 switches a gradient), so that two correct float32 runs of
    the same steps part; each single step still has to agree."""
    module = (
        parse_module(text_or_module, "test.mlir")
        if isinstance(text_or_module, str)
        else text_or_module
    )
    tensor_level = run_pipeline(module, ",".join(p for p in ["infer-shapes", differentiate] if p))
    planned = run_pipeline(tensor_level, PLANNING_PIPELINE)
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        built = build(
            planned,
            name,
            len(steps),
            Path(directory),
            compiler or c_compilers()[0],
            sanitize=sanitize,
            **({"state_each_step": True} if each_step_from_c_state else {}),
        )
        actual = built.run(seed, steps)
    params = [op.sym_name.data for op in api_params(tensor_level)]
    if each_step_from_c_state:
        expected, labels = interpreter_steps_from(actual, tensor_level, name, seed, steps)
    else:
        expected = interpreter_run(tensor_level, name, seed, steps)
        results = len(expected) - len(params)
        labels = [(f"result #{i}", None) for i in range(results)] + [(p, p) for p in params]
    assert len(actual) == len(expected)
    for (label, param), got, want in zip(labels, actual, expected, strict=True):
        if param in unchecked_params:
            continue
        tolerance = atol if param_atol is None or param is None else param_atol
        if params_to_tensor_scale and param is not None and want.size:
            tolerance = max(tolerance, rtol * float(np.max(np.abs(want))))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=tolerance, err_msg=label)
    return actual


def interpreter_steps_from(
    c_run: Sequence[np.ndarray],
    module: ModuleOp,
    name: str,
    seed: int,
    steps: Sequence[Sequence[np.ndarray]],
) -> tuple[list[np.ndarray], list[tuple[str, str | None]]]:
    """What a `state_each_step` C run of `steps` returns, from the interpreter started at
    each step from the C's parameters after the step before; with a (label, parameter name or
    None) for each array."""
    session = Session(module, np.float32, seed=seed)
    params = [op.sym_name.data for op in api_params(module)]
    results = len(function(module, name).function_type.outputs.data)
    expected, labels = [], []
    for index, args in enumerate(steps):
        start = index * (results + len(params))
        if index > 0:
            c_state = c_run[start - len(params) : start]
            for param, value in zip(params, c_state, strict=True):
                session.params[param][...] = value
        expected += list(session.call(name, *args))
        expected += [session.params[p].copy() for p in params]
        labels += [(f"step {index}: result #{i}", None) for i in range(results)]
        labels += [(f"step {index}: {p}", p) for p in params]
    return expected, labels
