"""A board build of the generated C: startup code, a linker script with a RAM budget, and a
Makefile, for a board that QEMU emulates (`BOARDS`): Cortex-M4F, M7, M3 (no FPU) and M55 on
QEMU's MPS2/MPS3 machines, and RV32 cores without and with the F extension on QEMU's virt
(their startup code and linker script are `riscv.py`'s; picolibc instead of newlib).

    adir-opt --optimizer=sgd --emit-c=out --c-board=mps2-an386 --c-ram=256K model.mlir
    cp my_main.c out/ && make -C out          # arm-none-eabi-gcc; prints the image's sizes
    make -C out run                           # under qemu-system-arm; exit(n) is its status

The files (`board_files`):

- `startup_<board>.c`: the vector table and the reset handler (copy .data from flash, zero
  .bss, turn the FPU on, fill the stack with a pattern, start newlib's semihosting, call
  `main`, `exit` with its result), and what a program may ask the board (`adir_board.h`): an
  instruction counter and the stack's high-water mark.
- `<board>.ld`: flash for code and constants (the model's constant tables and initial values
  stay there), RAM of the stated budget for .data, .bss (parameters, optimizer state, the
  arena), a heap for newlib's stdio and the stack. A model that does not fit fails to link:
  "region `RAM' overflowed by N bytes". QEMU itself does not bound RAM; the script does.
- `Makefile`: every `.c` of the directory (and with --c-kernels=cmsis-dsp the CMSIS-DSP sources
  of `cmsis_dsp.py`, from `make CMSIS_DSP=<unpacked sdist>`; with --c-kernels=cmsis-nn CMSIS-NN's
  integer sources, from `make CMSIS_NN=<a CMSIS-NN checkout>`), newlib-nano with rdimon
  semihosting (printf and exit reach the host), `-ffp-contract=off` as the host builds.

Instructions are counted with QEMU's `-icount shift=0` (one instruction per virtual
nanosecond) and SysTick on the CPU clock: on mps2 boards that is 25 MHz, one tick per 40
instructions, so counts are good to 40 instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from adir.backends.c.cmsis_dsp import CMSIS_DSP_DEFINES, CMSIS_DSP_INCLUDES, CMSIS_DSP_SOURCES
from adir.backends.c.riscv import riscv_linker_script, riscv_startup_source
from adir.backends.c.size_limits import Limit, StaticBudget
from adir.limits import parse_size  # noqa: F401  (re-exported: --c-ram reads sizes here)

KIB = 1024


@dataclass(frozen=True)
class Board:
    """A board that QEMU emulates: its CPU, memory map and instruction clock."""

    name: str  # as --c-board takes it (for Arm boards also QEMU's -M)
    kernel_target: str  # its CPU as select-kernels{target=...} names it
    cpu_flags: tuple[str, ...]
    flash_origin: int
    flash_bytes: int
    ram_origin: int
    ram_bytes: int  # the board's own RAM: the most a budget may ask for
    clock_hz: int  # the CPU clock, which SysTick counts (one instruction per ns under -icount)
    has_fpu: bool = True  # the reset handler turns it on; without, every float is a library call
    isa: str = "arm"  # "arm": a Cortex-M, arm-none-eabi-gcc; "riscv": riscv64-unknown-elf-gcc
    machine: str = ""  # QEMU's -M where it is not the name
    qemu_cpu: str = ""  # QEMU's -cpu where the machine's default is not the core

    @property
    def file_name(self) -> str:
        return self.name.replace("-", "_")

    @property
    def instructions_per_tick(self) -> Fraction:
        """Instructions per SysTick count under `-icount shift=0` (one per virtual ns)."""
        return Fraction(10**9, self.clock_hz)

    @property
    def toolchain(self) -> str:
        return "arm-none-eabi" if self.isa == "arm" else "riscv64-unknown-elf"

    @property
    def qemu(self) -> str:
        return "qemu-system-arm" if self.isa == "arm" else "qemu-system-riscv32"


# The MPS2 boards (AN385, AN386, AN500) share a memory map: code in ZBT SSRAM1 at 0 (4 MiB, the
# "flash" here), data in ZBT SSRAM2/3 at 0x20000000 (4 MiB); SYSCLK 25 MHz.
MPS2_MEMORY = {
    "flash_origin": 0x00000000,
    "flash_bytes": 4 * KIB * KIB,
    "ram_origin": 0x20000000,
    "ram_bytes": 4 * KIB * KIB,
    "clock_hz": 25_000_000,
}
# QEMU's mps2-an386: a Cortex-M4F (FPv4, single precision, 32 S registers).
MPS2_AN386 = Board(
    name="mps2-an386",
    kernel_target="cortex-m4f",
    cpu_flags=("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
    **MPS2_MEMORY,
)
# mps2-an500: a Cortex-M7 with FPv5 double precision (QEMU's M7 has it); the model is float32,
# so the double-precision half only serves the printf of each loss.
MPS2_AN500 = Board(
    name="mps2-an500",
    kernel_target="cortex-m7",
    cpu_flags=("-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"),
    **MPS2_MEMORY,
)
# mps2-an385: a Cortex-M3, no FPU: every float operation is a call into libgcc's soft-float
# routines (__aeabi_fadd, __aeabi_fmul, ...), which round as IEEE 754 does.
MPS2_AN385 = Board(
    name="mps2-an385",
    kernel_target="cortex-m3",
    cpu_flags=("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"),
    has_fpu=False,
    **MPS2_MEMORY,
)
# mps3-an547: a Cortex-M55 (Armv8.1-M, Helium with floating point) on the SSE-300; code in the
# ITCM at 0 (512 KiB, where the secure vector table is at reset), data in the DTCM at 0x20000000
# (512 KiB); SYSCLK 32 MHz (31.25 instructions per SysTick count).
MPS3_AN547 = Board(
    name="mps3-an547",
    kernel_target="cortex-m55",
    cpu_flags=("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
    flash_origin=0x00000000,
    flash_bytes=512 * KIB,
    ram_origin=0x20000000,
    ram_bytes=512 * KIB,
    clock_hz=32_000_000,
)
# QEMU's RISC-V virt machine with an RV32 core, without and with the F extension (the RV32IMC
# cores of the ESP32-C3 class, and those with a single-precision FPU). virt has no flash: the
# image's code and constants take the first 4 MiB of its DRAM at 0x80000000, the RAM budget
# starts after them. Instructions are the core's instret counter (exact under -icount).
RISCV_MEMORY = {
    "flash_origin": 0x80000000,
    "flash_bytes": 4 * KIB * KIB,
    "ram_origin": 0x80400000,
    "ram_bytes": 4 * KIB * KIB,
    "clock_hz": 1_000_000_000,
    "isa": "riscv",
    "machine": "virt",
}
VIRT_RV32IMAC = Board(
    name="virt-rv32imac",
    kernel_target="rv32imac",
    cpu_flags=("-march=rv32imac", "-mabi=ilp32", "-mcmodel=medany", "--specs=picolibc.specs"),
    has_fpu=False,
    qemu_cpu="rv32,f=false,d=false",  # an F or D instruction would trap: the build has none
    **RISCV_MEMORY,
)
VIRT_RV32IMAFC = Board(
    name="virt-rv32imafc",
    kernel_target="rv32imafc",
    cpu_flags=("-march=rv32imafc", "-mabi=ilp32f", "-mcmodel=medany", "--specs=picolibc.specs"),
    qemu_cpu="rv32,d=false",
    **RISCV_MEMORY,
)
BOARDS = {
    board.name: board
    for board in (MPS2_AN386, MPS2_AN500, MPS2_AN385, MPS3_AN547, VIRT_RV32IMAC, VIRT_RV32IMAFC)
}

STACK_BYTES = 16 * KIB  # the fused weight-gradient kernels keep a row of the gradient on it
HEAP_BYTES = 4 * KIB  # newlib's stdio buffers
LIBC_DATA_BYTES = 1 * KIB  # the C library's own .data and .bss (newlib here: 672 bytes)


def model_ram(ram_bytes: int) -> int:
    """The bytes of a board's RAM budget the model's static data (arena, trainable parameters,
    optimizer state) may take: what the stack, the heap and the C library's own data leave.
    `--train=suggested` with `--c-board` and no `--sram` suggests a scheme for this much."""
    return ram_bytes - STACK_BYTES - HEAP_BYTES - LIBC_DATA_BYTES


# How every object of a board build is compiled besides the CPU flags, and how it is linked:
# the Makefile and the CMake build (`cmake.py`) say the same. `-ffp-contract=off` as the host
# builds, so that the board's losses are the host's; sections per function and object so that
# the linker drops the kernels a model does not call.
BOARD_COMPILE_FLAGS = ("-ffp-contract=off", "-ffunction-sections", "-fdata-sections")


def board_link_flags(board: Board, linker_script: str) -> tuple[str, ...]:
    """The board's own startup code and `linker_script`, with a C library whose printf and exit
    reach the host through semihosting: on Arm newlib-nano with rdimon, on RISC-V picolibc
    (whose crt0 starts the program: it copies .data, zeroes .bss, sets up TLS and the FPU, and
    its "hosted" variant calls exit with what main returns)."""
    if board.isa == "riscv":
        return ("--crt0=hosted", "--oslib=semihost", f"-T{linker_script}", "-Wl,--gc-sections")
    return (
        "-nostartfiles",
        "--specs=nano.specs",
        "--specs=rdimon.specs",
        "-Wl,-u,_printf_float",
        f"-T{linker_script}",
        "-Wl,--gc-sections",
    )


def qemu_flags(board: Board) -> tuple[str, ...]:
    """How QEMU runs a program for `board` (`-kernel` the ELF): no display or serial port,
    semihosting (the program's printf and exit reach the host), one instruction per virtual
    nanosecond (`-icount shift=0`, so SysTick and instret count instructions)."""
    machine = ("-M", board.machine or board.name)
    if board.qemu_cpu:
        machine += ("-cpu", board.qemu_cpu)
    semihosting = ("-semihosting-config", "enable=on,target=native")
    if board.isa == "riscv":
        machine += ("-bios", "none")  # no firmware: the ELF's entry runs at reset, in M mode
        # picolibc writes to the semihosting console (SYS_WRITEC), which QEMU sends to its
        # stderr unless it has a character device; newlib's rdimon writes to a host file.
        semihosting = (
            "-chardev", "stdio,id=semihosting",
            "-semihosting-config", "enable=on,target=native,chardev=semihosting",
        )  # fmt: skip
    return (
        *machine, "-nographic", "-monitor", "none", "-serial", "none", *semihosting,
        "-icount", "shift=0",
    )  # fmt: skip


def static_budget(board: Board, ram_bytes: int, flash_bytes: int | None = None) -> StaticBudget:
    """What the C's static data may take on `board` with a RAM budget of `ram_bytes`: the
    parameters, optimizer state and arena (.data and .bss) share the budget with the stack and
    the heap; the constant tables and initial values stay in flash. The C backend checks it,
    so a model that would overflow a region is an error at the op that holds the most, not
    the linker's "region `RAM' overflowed"."""
    ram = ram_bytes - STACK_BYTES - HEAP_BYTES
    flash = (
        Limit(board.flash_bytes, f"{board.name}'s flash")
        if flash_bytes is None
        else Limit(flash_bytes, f"flash that --c-flash={flash_bytes} allows")
    )
    return StaticBudget(
        total=Limit(ram + flash.size, f"{board.name}'s RAM budget and flash"),
        ram=Limit(ram, f"RAM that --c-ram={ram_bytes} leaves after the stack and heap"),
        flash=flash,
    )


def board_files(
    board: Board,
    ram_bytes: int,
    kernels: str = "tuned",
    stack_bytes: int = STACK_BYTES,
    heap_bytes: int = HEAP_BYTES,
    flash_bytes: int | None = None,
) -> dict[str, str]:
    """The startup code, board header, linker script and Makefile of a build for `board` with
    `ram_bytes` of RAM and `flash_bytes` of flash (by default all of it; the board must have
    both), so the link fails for a model that does not fit either."""
    flash = board.flash_bytes if flash_bytes is None else flash_bytes
    if flash > board.flash_bytes:
        raise ValueError(f"{board.name} has {board.flash_bytes} bytes of flash, not {flash}")
    if ram_bytes > board.ram_bytes:
        raise ValueError(f"{board.name} has {board.ram_bytes} bytes of RAM, not {ram_bytes}")
    if ram_bytes < stack_bytes + heap_bytes:
        raise ValueError(
            f"a RAM budget of {ram_bytes} bytes does not hold the stack and heap "
            f"({stack_bytes} + {heap_bytes} bytes)"
        )
    if board.isa == "riscv":
        startup = riscv_startup_source(board.file_name, board.name)
        script = riscv_linker_script(
            board.name, board.flash_origin, flash, board.ram_origin, ram_bytes, stack_bytes
        )
    else:
        startup = startup_source(board)
        script = linker_script(board, ram_bytes, stack_bytes, heap_bytes, flash)
    return {
        "adir_board.h": BOARD_HEADER,
        f"startup_{board.file_name}.c": startup,
        f"{board.file_name}.ld": script,
        "Makefile": makefile(board, ram_bytes, kernels),
    }


BOARD_HEADER = """\
/* adir_board.h: what the board's startup code (startup_<board>.c) offers a program. */
#ifndef ADIR_BOARD_H
#define ADIR_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Instructions executed since reset (under QEMU with -icount shift=0; good to one SysTick
 * tick, ADIR_BOARD_INSTRUCTIONS_PER_TICK instructions). */
uint64_t adir_board_instructions(void);

/* The most bytes of stack used since reset (the stack is filled with a pattern at reset). */
size_t adir_board_stack_used(void);

#endif /* ADIR_BOARD_H */
"""


def startup_source(board: Board) -> str:
    ticks = board.instructions_per_tick
    fpu = (
        "CPACR |= 0xFu << 20; /* CP10 and CP11 (the FPU): full access, before any float code */"
        if board.has_fpu
        else "/* no FPU: floats are libgcc's soft-float calls */"
    )
    return f"""\
/* startup_{board.file_name}.c: reset, vector table and board services for {board.name}
 * (generated by adir). Symbols come from {board.file_name}.ld. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "adir_board.h"

#define ADIR_BOARD_INSTRUCTIONS_PER_TICK {ticks.numerator}u / {ticks.denominator}u
#define STACK_PATTERN 0x5afe57acu

extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_bottom__[], __stack_top__[];

int main(void);
void initialise_monitor_handles(void); /* newlib's rdimon: semihosting stdio */

/* System control registers (ARMv7-M): coprocessor access, interrupt state, SysTick. */
#define CPACR (*(volatile uint32_t *)0xE000ED88u)
#define ICSR (*(volatile uint32_t *)0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_MAX 0xFFFFFFu

static volatile uint32_t systick_wraps;

void SysTick_Handler(void) {{ systick_wraps = systick_wraps + 1u; }}

/* Any fault or unexpected interrupt ends the program with status 70. */
void Default_Handler(void) {{ _exit(70); }}

uint64_t adir_board_instructions(void)
{{
    uint32_t wraps, value;
    do {{
        wraps = systick_wraps;
        value = SYST_CVR;
    }} while (wraps != systick_wraps || (ICSR & ICSR_PENDSTSET));
    return ((uint64_t)wraps * (SYST_MAX + 1u) + (SYST_MAX - value)) *
           ADIR_BOARD_INSTRUCTIONS_PER_TICK;
}}

size_t adir_board_stack_used(void)
{{
    const uint32_t *word = __stack_bottom__;
    while (word < __stack_top__ && *word == STACK_PATTERN) {{
        ++word;
    }}
    return (size_t)(__stack_top__ - word) * sizeof *word;
}}

void Reset_Handler(void)
{{
    uint32_t *from = __data_load__, *to = __data_start__;
    uint32_t *word;
    while (to < __data_end__) {{
        *to++ = *from++;
    }}
    for (to = __bss_start__; to < __bss_end__; ++to) {{
        *to = 0u;
    }}
    /* The stack below this frame, filled for adir_board_stack_used. */
    for (word = __stack_bottom__; word < (uint32_t *)__builtin_frame_address(0) - 64; ++word) {{
        *word = STACK_PATTERN;
    }}
    {fpu}
    __asm__ volatile("dsb\\n\\tisb" ::: "memory");
    SYST_RVR = SYST_MAX;
    SYST_CVR = 0u;
    SYST_CSR = 7u; /* on, with its interrupt, on the CPU clock */
    initialise_monitor_handles();
    exit(main());
}}

/* The initial stack pointer, then the handlers of the 15 system exceptions and 32 interrupts. */
typedef union {{
    void (*handler)(void);
    const void *stack;
}} vector;

__attribute__((section(".vectors"), used)) static const vector vectors[48] = {{
    {{.stack = __stack_top__}},
    {{Reset_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{0}}, {{0}}, {{0}}, {{0}}, {{Default_Handler}}, {{Default_Handler}},
    {{0}}, {{Default_Handler}},
    {{SysTick_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
    {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}}, {{Default_Handler}},
}};
"""


def linker_script(
    board: Board, ram_bytes: int, stack_bytes: int, heap_bytes: int, flash_bytes: int | None = None
) -> str:
    flash = board.flash_bytes if flash_bytes is None else flash_bytes
    return f"""\
/* {board.file_name}.ld: memory map of {board.name} with a RAM budget of {ram_bytes} bytes
 * (generated by adir). Everything mutable must fit the budget: .data, .bss (the model's
 * parameters, optimizer state and arena), the heap and the stack; else the link fails. */
MEMORY
{{
    FLASH (rx) : ORIGIN = {board.flash_origin:#010x}, LENGTH = {flash}
    RAM (rwx) : ORIGIN = {board.ram_origin:#010x}, LENGTH = {ram_bytes}
}}

ENTRY(Reset_Handler)

SECTIONS
{{
    .text :
    {{
        KEEP(*(.vectors))
        *(.text*)
        *(.rodata*)
        . = ALIGN(4);
    }} > FLASH

    .ARM.exidx :
    {{
        *(.ARM.exidx* .gnu.linkonce.armexidx.*)
    }} > FLASH

    .data :
    {{
        . = ALIGN(4);
        __data_start__ = .;
        *(.data*)
        . = ALIGN(4);
        __data_end__ = .;
    }} > RAM AT > FLASH
    __data_load__ = LOADADDR(.data);

    .bss (NOLOAD) :
    {{
        . = ALIGN(4);
        __bss_start__ = .;
        *(.bss*)
        *(COMMON)
        . = ALIGN(8);
        __bss_end__ = .;
    }} > RAM

    .heap (NOLOAD) :
    {{
        end = .;
        __end__ = .;
        . += {heap_bytes};
        __heap_end__ = .;
    }} > RAM

    .stack (NOLOAD) :
    {{
        . = ALIGN(8);
        __stack_bottom__ = .;
        . += {stack_bytes};
        __stack_top__ = .;
    }} > RAM
}}
"""


def makefile(board: Board, ram_bytes: int, kernels: str) -> str:
    name = board.file_name
    cmsis = kernels == "cmsis-dsp"
    cmsis_lines = ""
    if cmsis:
        sources = " \\\n    ".join(f"$(CMSIS_DSP)/Source/{s}" for s in CMSIS_DSP_SOURCES)
        includes = " ".join(f"-isystem $(CMSIS_DSP)/{d}" for d in CMSIS_DSP_INCLUDES)
        cmsis_lines = f"""
# CMSIS-DSP: the unpacked cmsisdsp sdist (bash tools/fetch_cmsis_dsp.sh prints where).
CMSIS_DSP ?=
ifeq ($(strip $(CMSIS_DSP)),)
$(error this model calls CMSIS-DSP: make CMSIS_DSP=<the unpacked cmsisdsp sdist>)
endif
CMSIS_SOURCES = \\
    {sources}
CPPFLAGS += {" ".join(CMSIS_DSP_DEFINES)} {includes}
OBJECTS += $(patsubst $(CMSIS_DSP)/Source/%.c,build/cmsis/%.o,$(CMSIS_SOURCES))

build/cmsis/%.o: $(CMSIS_DSP)/Source/%.c
\t@mkdir -p $(dir $@)
\t$(CC) $(CPU) $(CPPFLAGS) $(OPT) -c $< -o $@
"""
    if kernels == "cmsis-nn":
        cmsis_lines = CMSIS_NN_MAKE
    return f"""\
# Makefile: the generated model for {board.name}, RAM budget {ram_bytes} bytes (adir).
#   make            build train.elf and print its sizes
#   make run        run it under QEMU (semihosting: printf and exit reach the host)
CC = {board.toolchain}-gcc
SIZE = {board.toolchain}-size
QEMU = {board.qemu}
CPU = {" ".join(board.cpu_flags)}
OPT = -O2 {" ".join(BOARD_COMPILE_FLAGS)}
CFLAGS = -std=c99 -Wall -Wextra -Wpedantic -Werror
CPPFLAGS = -I. -DADIR_BOARD
LDFLAGS = {" ".join(board_link_flags(board, f"{name}.ld"))} -Wl,-Map=build/train.map
QEMU_FLAGS = {" ".join(qemu_flags(board))}

SOURCES = $(sort $(wildcard *.c))
OBJECTS = $(patsubst %.c,build/%.o,$(SOURCES))
{cmsis_lines}
all: train.elf

build/%.o: %.c $(wildcard *.h)
\t@mkdir -p build
\t$(CC) $(CPU) $(CPPFLAGS) $(OPT) $(CFLAGS) -c $< -o $@

train.elf: $(OBJECTS) {name}.ld
\t$(CC) $(CPU) $(LDFLAGS) $(OBJECTS) -o $@ -lm
\t$(SIZE) $@

run: train.elf
\t$(QEMU) $(QEMU_FLAGS) -kernel train.elf

clean:
\trm -rf build train.elf

.PHONY: all run clean
"""


# CMSIS-NN's integer kernels and their support code: every Source/<group>/*.c but the f16 and
# f32 ones (which need Arm's floating-point headers and which no int8 model calls). The
# compiler's -mcpu turns on CMSIS-NN's DSP or Helium code through __ARM_FEATURE_*.
CMSIS_NN_MAKE = """
# CMSIS-NN: a checkout of github.com/ARM-software/CMSIS-NN (on no package registry).
CMSIS_NN ?=
ifeq ($(strip $(CMSIS_NN)),)
$(error this model calls CMSIS-NN: make CMSIS_NN=<a CMSIS-NN checkout>)
endif
CMSIS_NN_ALL = $(sort $(wildcard $(CMSIS_NN)/Source/*/*.c))
CMSIS_NN_FLOAT = $(findstring f16,$(notdir $(f)))$(findstring f32,$(notdir $(f)))
CMSIS_NN_SOURCES = $(foreach f,$(CMSIS_NN_ALL),$(if $(CMSIS_NN_FLOAT),,$(f)))
CPPFLAGS += -isystem $(CMSIS_NN)/Include
OBJECTS += $(patsubst $(CMSIS_NN)/Source/%.c,build/cmsis_nn/%.o,$(CMSIS_NN_SOURCES))

build/cmsis_nn/%.o: $(CMSIS_NN)/Source/%.c
\t@mkdir -p $(dir $@)
\t$(CC) $(CPU) $(CPPFLAGS) $(OPT) -std=c99 -c $< -o $@
"""
