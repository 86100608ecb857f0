"""`CMakeLists.txt` for `--emit-c`: the generated model as a static library that a firmware's
CMake build takes as it is.

    adir-opt --optimizer=sgd --emit-c=model --c-prefix=mnist_ model.mlir
    # in the firmware's CMakeLists.txt:
    add_subdirectory(model)
    target_link_libraries(app PRIVATE mnist)

or on its own: `cmake -S model -B build && cmake --build build`.

- The library is named after the prefix without its trailing underscore (`mnist_` gives
  `mnist`; no prefix gives `adir_model`), so two models live in one build under two prefixes.
  It holds the model's source (the generated header is found through its public include
  directory) and links `adir_runtime`, the runtime's kernels, which the first model directory
  a build adds defines and the others reuse (one definition of each kernel), C99, with libm
  (but with MSVC, whose C library holds the math functions) as `-lm`: a flag, not a library
  target, so a model whose target is named `m` does not link itself.
- Calls into CMSIS libraries take their sources from cache variables: `ADIR_CMSIS_DSP` (the
  unpacked cmsisdsp sdist, as `tools/fetch_cmsis_dsp.sh` prints) and `ADIR_CMSIS_NN` (a
  CMSIS-NN checkout); configuring fails with a message naming the variable when it is empty.
- With `--c-main`, an executable `<name>_main` (the training program) beside the library.
- With `--c-board`, an interface library `<name>_board` carries the board's startup code,
  linker script and link options, and `arm-none-eabi.cmake` is a toolchain file with the
  board's CPU flags; the firmware adds its own `main`:

      cmake -S app -B build -DCMAKE_TOOLCHAIN_FILE=model/arm-none-eabi.cmake
      # app/CMakeLists.txt: add_subdirectory(../model model)
      #   add_executable(train.elf main.c)
      #   target_link_libraries(train.elf PRIVATE mnist mnist_board)

Sources are listed by name, not globbed, so a `main.c` the user drops into the directory (as
the board's Makefile wants it) is not compiled into the library.
"""

from __future__ import annotations

from collections.abc import Iterable

from adir.backends.c.cmsis_dsp import CMSIS_DSP_DEFINES, CMSIS_DSP_INCLUDES, CMSIS_DSP_SOURCES
from adir.backends.c.cortex_m import BOARD_COMPILE_FLAGS, Board, board_link_flags
from adir.backends.c.files import CMSIS_DSP_RUNTIME, c_files, runtime_files
from adir.backends.c.model import CModel

CMAKE_MINIMUM = "3.13"  # target_link_options

# adir's own kernel sources, which every model's directory holds alike (the CMSIS-DSP wrappers
# are built with the model that calls CMSIS-DSP, beside CMSIS-DSP's sources).
RUNTIME_SOURCES = frozenset(
    name for name in runtime_files() if name.endswith(".c") and name not in CMSIS_DSP_RUNTIME
)


def library_name(prefix: str) -> str:
    """The CMake target of a model printed with `prefix`."""
    return prefix.rstrip("_") or "adir_model"


def cmake_files(
    model: CModel, main_source: str | None = None, board: Board | None = None
) -> dict[str, str]:
    """`CMakeLists.txt` for the files `c_files(model)` gives, optionally with a training program
    `main_source` (a file name) and the files of `board`, plus the board's toolchain file."""
    sources = [name for name in c_files(model) if name.endswith(".c")]
    files = {
        "CMakeLists.txt": cmake_lists(model.prefix, sources, model.libraries, main_source, board)
    }
    if board is not None:
        files[f"{board.toolchain}.cmake"] = toolchain_file(board)
    return files


def cmake_lists(
    prefix: str,
    sources: Iterable[str],
    libraries: frozenset[str],
    main_source: str | None = None,
    board: Board | None = None,
) -> str:
    """The `CMakeLists.txt` of a build whose library compiles `sources` (file names in the
    directory), calls into `libraries` besides adir's, and optionally has a training program
    `main_source` and the files of `board`."""
    name = library_name(prefix)
    shared = sorted(source for source in sources if source in RUNTIME_SOURCES)
    own = sorted(source for source in sources if source not in RUNTIME_SOURCES)
    files = "\n".join(f"    {source}" for source in own)
    runtime = "\n".join(f"        {source}" for source in shared)
    sections = [
        f"""\
# CMakeLists.txt: the generated model as the static library `{name}` (adir).
#   add_subdirectory(<this directory>) and target_link_libraries(<app> PRIVATE {name}),
#   or on its own: cmake -S <this directory> -B build && cmake --build build
cmake_minimum_required(VERSION {CMAKE_MINIMUM})
project({name} LANGUAGES C)
if(CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR AND NOT CMAKE_BUILD_TYPE
   AND NOT CMAKE_CONFIGURATION_TYPES)
    set(CMAKE_BUILD_TYPE Release CACHE STRING "Debug, Release, RelWithDebInfo or MinSizeRel" FORCE)
endif()

# adir's kernels, one library `adir_runtime` however many models a build adds: every model's
# directory holds the same runtime, the first one added compiles it, so that two models link
# into one program without two definitions of a kernel.
if(NOT TARGET adir_runtime)
    add_library(adir_runtime STATIC
{runtime}
    )
    target_include_directories(adir_runtime PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})
    set_target_properties(adir_runtime PROPERTIES
        C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    if(NOT MSVC)
        target_link_libraries(adir_runtime PUBLIC -lm)
    endif()
endif()

add_library({name} STATIC
{files}
)
target_include_directories({name} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})
set_target_properties({name} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries({name} PUBLIC adir_runtime)
"""
    ]
    if "cmsis-dsp" in libraries:
        sections.append(cmsis_dsp_section(name))
    if "cmsis-nn" in libraries:
        sections.append(cmsis_nn_section(name))
    if main_source is not None:
        sections.append(
            f"""
add_executable({name}_main {main_source})
target_link_libraries({name}_main PRIVATE {name})
"""
        )
    if board is not None:
        sections.append(board_section(name, board))
    return "".join(sections)


def cmsis_dsp_section(name: str) -> str:
    sources = "\n".join(f"    ${{ADIR_CMSIS_DSP}}/Source/{source}" for source in CMSIS_DSP_SOURCES)
    includes = " ".join(f"${{ADIR_CMSIS_DSP}}/{include}" for include in CMSIS_DSP_INCLUDES)
    defines = " ".join(define.removeprefix("-D") for define in CMSIS_DSP_DEFINES)
    return f"""
# CMSIS-DSP: the unpacked cmsisdsp sdist (bash tools/fetch_cmsis_dsp.sh prints where).
set(ADIR_CMSIS_DSP "" CACHE PATH "the unpacked cmsisdsp sdist")
if(NOT ADIR_CMSIS_DSP)
    message(FATAL_ERROR
        "this model calls CMSIS-DSP: cmake -DADIR_CMSIS_DSP=<the unpacked cmsisdsp sdist>")
endif()
target_sources({name} PRIVATE
{sources}
)
target_include_directories({name} SYSTEM PUBLIC {includes})
target_compile_definitions({name} PUBLIC {defines})
"""


def cmsis_nn_section(name: str) -> str:
    # The integer kernels and their support code, as the board's Makefile takes them: the f16
    # and f32 sources need Arm's floating-point headers and no int8 model calls them.
    return f"""
# CMSIS-NN: a checkout of the CMSIS-NN repository.
set(ADIR_CMSIS_NN "" CACHE PATH "a CMSIS-NN checkout")
if(NOT ADIR_CMSIS_NN)
    message(FATAL_ERROR "this model calls CMSIS-NN: cmake -DADIR_CMSIS_NN=<a CMSIS-NN checkout>")
endif()
file(GLOB {name}_cmsis_nn_sources ${{ADIR_CMSIS_NN}}/Source/*/*.c)
list(FILTER {name}_cmsis_nn_sources EXCLUDE REGEX "(f16|f32)[^/]*$")
target_sources({name} PRIVATE ${{{name}_cmsis_nn_sources}})
target_include_directories({name} SYSTEM PUBLIC ${{ADIR_CMSIS_NN}}/Include)
"""


def board_section(name: str, board: Board) -> str:
    script = f"${{CMAKE_CURRENT_SOURCE_DIR}}/{board.file_name}.ld"
    options = " ".join(board_link_flags(board, script))
    return f"""
# {board.name}: link a firmware with `{name}_board` (and the toolchain file
# {board.toolchain}.cmake).
add_library({name}_board INTERFACE)
target_sources({name}_board INTERFACE ${{CMAKE_CURRENT_SOURCE_DIR}}/startup_{board.file_name}.c)
target_compile_definitions({name}_board INTERFACE ADIR_BOARD)
target_include_directories({name}_board INTERFACE ${{CMAKE_CURRENT_SOURCE_DIR}})
target_link_options({name}_board INTERFACE {options})
"""


def toolchain_file(board: Board) -> str:
    """A CMake toolchain file for `board`'s cross compiler (arm-none-eabi-gcc or
    riscv64-unknown-elf-gcc) with its CPU."""
    flags = " ".join((*board.cpu_flags, *BOARD_COMPILE_FLAGS))
    return f"""\
# {board.toolchain}.cmake: {board.toolchain}-gcc for {board.name} (adir).
#   cmake -S <app> -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR {board.isa})
set(CMAKE_C_COMPILER {board.toolchain}-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "{flags}")
"""
