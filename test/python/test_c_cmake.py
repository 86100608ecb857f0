"""The `CMakeLists.txt` that `--emit-c` writes (adir/backends/c/cmake.py) builds what the
README's `cc` line and the board's Makefile build, with the same results:

- On the host, the seed MLP and LeNet-5 with `--c-main`: the library and the training program
  build with `-Wall -Wextra -Wpedantic -Werror`, and the program prints, byte for byte, what
  the program that `cc -std=c99 -O2 DIR/*.c -lm` builds prints (no fast-math and no FMA
  contraction in either, so the -O level does not change a result; its lines carry the losses
  and accuracies of 2 epochs on random data).
- For the Cortex-M4F board, a firmware's own CMake project (a `main` of its own, here the
  embedded training program) links the library and `<name>_board` with the toolchain file, and
  under QEMU prints the same losses as the board's Makefile build, bit for bit (same compiler,
  same flags, `-ffp-contract=off` in both).
- A model that calls CMSIS-DSP names the cache variable it needs when it is not given.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example
from c_testing import PREFIX, runtime_objects
from cmsis_testing import cmsis_dsp_root
from cortex_m_testing import BoardBuild, parse_run, require_arm_tools
from test_c_examples import training_steps
from test_cortex_m import STEPS, planned_example

from adir.backends.c.cmake import library_name
from adir.backends.c.cortex_m import MPS2_AN386, qemu_flags
from adir.backends.c.files import runtime_files
from adir.interpreter.session import Session
from adir.tools.adir_opt import main as adir_opt

ROOT = Path(__file__).parents[2]
WARNINGS = "-Wall -Wextra -Wpedantic -Werror"


def require_cmake() -> None:
    if shutil.which("cmake") is None:
        pytest.fail(
            "cmake not found: the CMake tests need `apt-get install cmake` (tools/setup.sh)"
        )


def cmake(*arguments: str) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(["cmake", *arguments], capture_output=True, text=True)
    assert completed.returncode == 0, (
        f"cmake {' '.join(arguments)}:\n{completed.stdout}{completed.stderr}"
    )
    return completed


def write_dataset(path: Path, count: int, features: int, seed: int) -> None:
    """`count` random records with labels 0..9, as tools/digits.py writes ADIRDATA."""
    spec = importlib.util.spec_from_file_location("digits", ROOT / "tools" / "digits.py")
    assert spec is not None and spec.loader is not None
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)
    rng = np.random.default_rng(seed)
    images = rng.random((count, features), dtype=np.float32)
    digits.write_adirdata(path, images, rng.integers(0, 10, count).astype(np.int32))


@pytest.mark.parametrize("example", ["mnist_mlp", "lenet5"])
def test_host_cmake_build_trains_like_the_cc_build(example: str, tmp_path: Path) -> None:
    require_cmake()
    model = tmp_path / "model"
    arguments = ["--predict", "--optimizer=sgd", "--lr=0.01", f"--emit-c={model}"]
    assert (
        adir_opt(
            [*arguments, "--c-prefix=net_", "--c-main", str(ROOT / "examples" / f"{example}.mlir")]
        )
        == 0
    )
    for name, count, seed in (("train.bin", 32, 1), ("test.bin", 16, 2)):
        write_dataset(tmp_path / name, count, 784, seed)

    cmake("-S", str(model), "-B", str(tmp_path / "build"), f"-DCMAKE_C_FLAGS={WARNINGS}")
    cmake("--build", str(tmp_path / "build"), "-j2")
    assert (tmp_path / "build" / "libnet.a").is_file()
    # The same sources by `cc -O2`: the runtime's compiled once a test run (runtime_objects:
    # the runtime files the directory holds, byte for byte), the model's here.
    plain = tmp_path / "plain"
    flags = ["-std=c99", "-O2", *WARNINGS.split()]
    runtime = runtime_files()
    assert all((model / name).read_text() == text for name, text in runtime.items())
    sources = sorted(str(path) for path in model.glob("*.c") if path.name not in runtime)
    compiled = subprocess.run(
        ["cc", *flags, f"-I{model}", *sources, *runtime_objects("cc", tuple(flags)), "-o",
         str(plain), "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr

    data = [str(tmp_path / "train.bin"), str(tmp_path / "test.bin"), "2"]
    outputs = []
    for program in (tmp_path / "build" / "net_main", plain):
        ran = subprocess.run([str(program), *data], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr
        outputs.append(ran.stdout)
    assert outputs[0].count("epoch") == 2
    assert outputs[0] == outputs[1]


def firmware_project(model: Path, name: str, main: str) -> str:
    """A firmware's own CMakeLists.txt that takes the generated directory as it is."""
    return f"""\
cmake_minimum_required(VERSION 3.13)
project(firmware LANGUAGES C)
add_subdirectory({model} model)
add_executable(train.elf {model / main})
target_link_libraries(train.elf PRIVATE {name} {name}_board)
"""


@pytest.mark.slow
@pytest.mark.parametrize("example", ["mnist_mlp", "lenet5"])
def test_firmware_cmake_build_trains_under_qemu_like_the_makefile(
    example: str, tmp_path: Path
) -> None:
    require_arm_tools()
    require_cmake()
    _, planned = planned_example(example)
    batches = training_steps(example, STEPS[example])
    build = BoardBuild.write(planned, tmp_path / "model", batches)
    build.build()
    make_run = build.run()

    app = tmp_path / "app"
    app.mkdir()
    main = f"{PREFIX}train_embedded.c"
    (app / "CMakeLists.txt").write_text(
        firmware_project(tmp_path / "model", library_name(PREFIX), main)
    )
    toolchain = tmp_path / "model" / "arm-none-eabi.cmake"
    cmake("-S", str(app), "-B", str(tmp_path / "build"), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    cmake("--build", str(tmp_path / "build"), "-j2")
    elf = tmp_path / "build" / "train.elf"
    ran = subprocess.run(
        ["qemu-system-arm", *qemu_flags(MPS2_AN386), "-kernel", str(elf)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    cmake_run = parse_run(ran.stdout, len(batches))
    np.testing.assert_array_equal(cmake_run.losses, make_run.losses)


@pytest.mark.parametrize("example", ["mnist_mlp", "lenet5"])
def test_cmsis_dsp_build_names_its_cache_variable_and_builds_with_it(
    example: str, tmp_path: Path
) -> None:
    """Configuring without ADIR_CMSIS_DSP stops with the variable's name; with it, the
    library and the training program build with CMSIS-DSP's sources on the host."""
    require_cmake()
    model = tmp_path / "model"
    arguments = ["--predict", "--optimizer=sgd", "--lr=0.01", f"--emit-c={model}", "--c-main"]
    source = str(ROOT / "examples" / f"{example}.mlir")
    assert adir_opt([*arguments, "--c-kernels=cmsis-dsp", source]) == 0
    # No --c-prefix: the names come from the file's, `mnist_mlp_` or `lenet5_`.
    assert "adir_cmsis_" in (model / f"{example}_model.c").read_text()  # it calls CMSIS-DSP
    build = str(tmp_path / "build")
    configured = subprocess.run(
        ["cmake", "-S", str(model), "-B", build], capture_output=True, text=True
    )
    assert configured.returncode != 0
    assert "this model calls CMSIS-DSP: cmake -DADIR_CMSIS_DSP=" in configured.stderr
    cmake("-S", str(model), "-B", build, f"-DADIR_CMSIS_DSP={cmsis_dsp_root()}")
    cmake("--build", build, "-j2")
    assert (tmp_path / "build" / f"{example}_main").is_file()


@pytest.mark.skipif(
    not os.environ.get("ADIR_CMSIS_NN"), reason="ADIR_CMSIS_NN does not name a CMSIS-NN checkout"
)
def test_cmsis_nn_build_takes_its_sources_from_the_cache_variable(tmp_path: Path) -> None:
    """An int8 LeNet-5 whose kernels are CMSIS-NN's builds with CMSIS-NN's integer sources."""
    require_cmake()
    model = tmp_path / "model"
    quantized = str(tmp_path / "lenet5_int8.mlir")
    pipeline = "derive-predict,quantize-int8{samples=4 seed=0}"
    assert adir_opt(["-p", pipeline, str(ROOT / "examples" / "lenet5.mlir"), "-o", quantized]) == 0
    assert adir_opt([f"--emit-c={model}", "--c-kernels=cmsis-nn", quantized]) == 0
    assert "arm_convolve" in (model / "lenet5_int8_model.c").read_text()
    build = str(tmp_path / "build")
    cmake("-S", str(model), "-B", build, f"-DADIR_CMSIS_NN={os.environ['ADIR_CMSIS_NN']}")
    cmake("--build", build, "-j2")
    assert (tmp_path / "build" / "liblenet5_int8.a").is_file()


# Zephyr's module functions, as plain CMake: enough to build the module's CMakeLists.txt.
ZEPHYR_STAND_IN = """\
cmake_minimum_required(VERSION 3.13)
project(zephyr_stand_in LANGUAGES C)
function(zephyr_library_named name)
    set(ZEPHYR_CURRENT_LIBRARY ${name} PARENT_SCOPE)
    add_library(${name} STATIC)
endfunction()
function(zephyr_library_sources)
    target_sources(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()
function(zephyr_include_directories)
    include_directories(${ARGN})
endfunction()
set(ZEPHYR_CURRENT_MODULE_DIR {module})
set(CONFIG_NET y)
include({module}/zephyr/CMakeLists.txt)
add_executable(app {module}/net_main.c)
target_link_libraries(app PRIVATE net m)
"""


def test_zephyr_module_builds_with_zephyrs_functions_as_plain_cmake(tmp_path: Path) -> None:
    """The module's files are there, and its CMakeLists.txt, with Zephyr's library functions
    stood in for by plain CMake, builds every source the model needs: the training program
    links against it (a source left out would be an undefined symbol)."""
    require_cmake()
    module = tmp_path / "model"
    arguments = ["--predict", "--optimizer=sgd", "--lr=0.01", f"--emit-c={module}", "--c-main"]
    source = str(ROOT / "examples" / "lenet5.mlir")
    assert adir_opt([*arguments, "--c-prefix=net_", "--c-package=zephyr", source]) == 0
    yml = (module / "zephyr" / "module.yml").read_text()
    assert "name: net\n" in yml and "kconfig: zephyr/Kconfig" in yml
    assert (module / "zephyr" / "Kconfig").read_text().startswith("config NET\n")
    assert "net_main.c" not in (module / "zephyr" / "CMakeLists.txt").read_text()
    app = tmp_path / "app"
    app.mkdir()
    (app / "CMakeLists.txt").write_text(ZEPHYR_STAND_IN.replace("{module}", str(module)))
    cmake("-S", str(app), "-B", str(tmp_path / "build"), f"-DCMAKE_C_FLAGS={WARNINGS}")
    cmake("--build", str(tmp_path / "build"), "-j2")
    assert (tmp_path / "build" / "app").is_file()


SKETCH = """\
// An Arduino sketch's C++ calling the model (its header's declarations are extern "C").
#include "net_model.h"
#include <cstdio>
static float x[NET_TRAIN_STEP_X_SIZE];
static int32_t label[1];
int main() {
    net_init(0);
    std::printf("%.6f\\n", (double)net_train_step(x, label));
    return 0;
}
"""


def test_arduino_library_compiles_from_src_and_a_cpp_sketch_links_it(tmp_path: Path) -> None:
    library = tmp_path / "net"
    arguments = ["--optimizer=sgd", "--lr=0.01", f"--emit-c={library}", "--c-prefix=net_"]
    source = str(ROOT / "examples" / "mnist_mlp.mlir")
    assert adir_opt([*arguments, "--c-package=arduino", source]) == 0
    properties = (library / "library.properties").read_text()
    for field in ("name=net", "version=", "sentence=", "architectures=*", "includes=net_model.h"):
        assert field in properties
    # the sources in src/, as the library format wants; beside them only adir's manifest
    root = sorted(path.name for path in library.iterdir())
    assert root == ["adir-files.sha256", "library.properties", "src"]
    objects = []
    for path in sorted((library / "src").glob("*.c")):
        objects.append(str(tmp_path / f"{path.stem}.o"))
        compiled = subprocess.run(
            ["cc", "-std=c99", "-O2", *WARNINGS.split(), "-c", str(path), "-o", objects[-1]],
            capture_output=True, text=True,
        )  # fmt: skip
        assert compiled.returncode == 0, compiled.stderr
    (tmp_path / "sketch.cpp").write_text(SKETCH)
    program = str(tmp_path / "sketch")
    linked = subprocess.run(
        ["c++", *WARNINGS.split(), f"-I{library / 'src'}", str(tmp_path / "sketch.cpp"),
         *objects, "-o", program, "-lm"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert linked.returncode == 0, linked.stderr
    ran = subprocess.run([program], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    # The loss of x = 0, label 0 from init(0)'s weights, as the interpreter computes it.
    session = Session(parse_example("mnist_mlp"))
    (expected,) = session.call("loss", np.zeros((1, 784), np.float32), np.zeros(1, np.int32))
    assert float(ran.stdout) == pytest.approx(float(expected), rel=1e-5)
