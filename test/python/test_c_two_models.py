"""Two models in one program: `adir-opt --emit-c` without `--c-prefix` names each model's C after
its input file (`mnist_mlp_`, `lenet5_`), every global symbol of a model carries its prefix and
every one of the runtime `adir_`, and the generated CMake projects share one `adir_runtime`
library, so the seed MLP and LeNet-5 link into one program (no symbol defined twice) and each
trains there exactly as it does alone: the same C, compiler and flags give the same bits.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from c_testing import WARNINGS

from adir.tools.adir_opt import main as adir_opt_main

ROOT = Path(__file__).parents[2]
MODELS = {"mnist_mlp": "mnist_mlp_", "lenet5": "lenet5_"}
STEPS = 3


def emit(example: str, directory: Path) -> None:
    source = str(ROOT / "examples" / f"{example}.mlir")
    assert adir_opt_main(["--optimizer=sgd", "--lr=0.01", f"--emit-c={directory}", source]) == 0


def training_loop(prefix: str) -> str:
    """A function that trains the model `prefix` for STEPS steps on fixed inputs and prints each
    loss's bits."""
    upper = prefix.upper()
    return f"""
static void train_{prefix}(void)
{{
    static float x[{upper}TRAIN_STEP_X_SIZE];
    int32_t label[{upper}TRAIN_STEP_LABEL_SIZE];
    size_t i;
    int step;
    {prefix}init(7u);
    for (step = 0; step < {STEPS}; ++step) {{
        float loss;
        uint32_t bits;
        for (i = 0; i < sizeof x / sizeof x[0]; ++i) {{
            x[i] = (float)((i * 7u + (size_t)step * 13u) % 29u) / 29.0f - 0.5f;
        }}
        for (i = 0; i < sizeof label / sizeof label[0]; ++i) {{
            label[i] = (int32_t)((i + (size_t)step * 3u) % 10u);
        }}
        loss = {prefix}train_step(x, label);
        memcpy(&bits, &loss, sizeof bits);
        printf("{prefix} step %d loss bits 0x%08lx\\n", step, (unsigned long)bits);
    }}
}}
"""


def main_source(prefixes: list[str]) -> str:
    includes = "".join(f'#include "{prefix}model.h"\n' for prefix in prefixes)
    loops = "".join(training_loop(prefix) for prefix in prefixes)
    calls = "".join(f"    train_{prefix}();\n" for prefix in prefixes)
    return f"""\
#include <stdint.h>
#include <stdio.h>
#include <string.h>

{includes}{loops}
int main(void)
{{
{calls}    return 0;
}}
"""


def cmake_program(directory: Path, models: dict[str, Path]) -> str:
    """A program's CMake project that adds each model's --emit-c directory; its output."""
    directory.mkdir(parents=True)
    prefixes = [MODELS[name] for name in models]
    (directory / "main.c").write_text(main_source(prefixes))
    subdirectories = "".join(f"add_subdirectory({path} {name})\n" for name, path in models.items())
    (directory / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(program LANGUAGES C)\n"
        f"{subdirectories}add_executable(program main.c)\n"
        f"target_link_libraries(program PRIVATE {' '.join(models)})\n"
    )
    build = directory / "build"
    for arguments in (
        ["-S", str(directory), "-B", str(build), f"-DCMAKE_C_FLAGS={' '.join(WARNINGS)}"],
        ["--build", str(build), "-j2"],
    ):
        completed = subprocess.run(["cmake", *arguments], capture_output=True, text=True)
        assert completed.returncode == 0, completed.stdout + completed.stderr
    ran = subprocess.run([str(build / "program")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def defined_globals(archive: Path) -> set[str]:
    completed = subprocess.run(
        ["nm", "-g", "--defined-only", "--format=posix", str(archive)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    # A symbol's line is "name type value size"; a member's is "archive[member.o]:".
    lines = [line.split() for line in completed.stdout.splitlines()]
    return {fields[0] for fields in lines if len(fields) >= 2}


@pytest.mark.slow
def test_two_models_link_into_one_program_and_train_as_alone(tmp_path: Path) -> None:
    if shutil.which("cmake") is None:
        pytest.fail("cmake not found: `apt-get install cmake` (bash tools/setup.sh test)")
    directories = {name: tmp_path / name for name in MODELS}
    for name, directory in directories.items():
        emit(name, directory)
        assert (directory / f"{MODELS[name]}model.c").is_file()
        assert f"add_library({name} STATIC" in (directory / "CMakeLists.txt").read_text()

    together = cmake_program(tmp_path / "together", directories)
    alone = "".join(
        cmake_program(tmp_path / f"alone_{name}", {name: directory})
        for name, directory in directories.items()
    )
    assert together == alone
    assert together.count("loss bits") == STEPS * len(MODELS)

    # Every global a model's library defines carries its prefix; the runtime's carry adir_.
    for name, prefix in MODELS.items():
        symbols = defined_globals(tmp_path / "together" / "build" / name / f"lib{name}.a")
        assert symbols and all(symbol.startswith(prefix) for symbol in symbols), symbols
    runtime = tmp_path / "together" / "build" / "mnist_mlp" / "libadir_runtime.a"
    symbols = defined_globals(runtime)
    assert symbols and all(symbol.startswith("adir_") for symbol in symbols), symbols
    # One runtime library in the build: the second directory reused the first's.
    assert not (tmp_path / "together" / "build" / "lenet5" / "libadir_runtime.a").exists()


@pytest.mark.slow
def test_two_models_link_with_plain_cc_and_one_runtime(tmp_path: Path) -> None:
    """Without CMake: one directory's runtime and each model's own source."""
    directories = {name: tmp_path / name for name in MODELS}
    for name, directory in directories.items():
        emit(name, directory)
    (tmp_path / "main.c").write_text(main_source(list(MODELS.values())))
    runtime = sorted(str(path) for path in directories["mnist_mlp"].glob("adir_*.c"))
    models = [str(directories[name] / f"{prefix}model.c") for name, prefix in MODELS.items()]
    includes = [f"-I{directory}" for directory in directories.values()]
    program = tmp_path / "program"
    completed = subprocess.run(
        ["cc", "-O2", *WARNINGS, *includes, str(tmp_path / "main.c"),
         *models, *runtime, "-o", str(program), "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    ran = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("loss bits") == STEPS * len(MODELS)
