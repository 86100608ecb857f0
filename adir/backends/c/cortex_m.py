"""A Cortex-M build of the generated C: startup code, a linker script with a RAM budget, and a
Makefile, for a board that QEMU emulates.

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

from adir.backends.c.cmsis_dsp import CMSIS_DSP_DEFINES, CMSIS_DSP_INCLUDES, CMSIS_DSP_SOURCES
from adir.backends.c.size_limits import Limit, StaticBudget
from adir.limits import parse_size  # noqa: F401  (re-exported: --c-ram reads sizes here)

KIB = 1024


@dataclass(frozen=True)
class Board:
    """A Cortex-M board that QEMU emulates: its CPU, memory map and instruction clock."""

    name: str  # as --c-board takes it, and QEMU's -M
    kernel_target: str  # its CPU as select-kernels{target=...} names it
    cpu_flags: tuple[str, ...]
    flash_origin: int
    flash_bytes: int
    ram_origin: int
    ram_bytes: int  # the board's own RAM: the most a budget may ask for
    instructions_per_tick: int  # SysTick on the CPU clock under -icount shift=0

    @property
    def file_name(self) -> str:
        return self.name.replace("-", "_")


# QEMU's mps2-an386: a Cortex-M4F on the MPS2 FPGA board; code in ZBT SSRAM1 at 0 (4 MiB, the
# "flash" here), data in ZBT SSRAM2/3 at 0x20000000 (4 MiB); SYSCLK 25 MHz.
MPS2_AN386 = Board(
    name="mps2-an386",
    kernel_target="cortex-m4f",
    cpu_flags=("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
    flash_origin=0x00000000,
    flash_bytes=4 * KIB * KIB,
    ram_origin=0x20000000,
    ram_bytes=4 * KIB * KIB,
    instructions_per_tick=40,
)
BOARDS = {board.name: board for board in (MPS2_AN386,)}

STACK_BYTES = 16 * KIB  # the fused weight-gradient kernels keep a row of the gradient on it
HEAP_BYTES = 4 * KIB  # newlib's stdio buffers


# How every object of a board build is compiled besides the CPU flags, and how it is linked:
# the Makefile and the CMake build (`cmake.py`) say the same. `-ffp-contract=off` as the host
# builds, so that the board's losses are the host's; sections per function and object so that
# the linker drops the kernels a model does not call.
BOARD_COMPILE_FLAGS = ("-ffp-contract=off", "-ffunction-sections", "-fdata-sections")


def board_link_flags(linker_script: str) -> tuple[str, ...]:
    """newlib-nano with rdimon semihosting (printf and exit reach the host), the board's own
    startup code and `linker_script`."""
    return (
        "-nostartfiles",
        "--specs=nano.specs",
        "--specs=rdimon.specs",
        "-Wl,-u,_printf_float",
        f"-T{linker_script}",
        "-Wl,--gc-sections",
    )


def qemu_flags(board: Board) -> tuple[str, ...]:
    """How `qemu-system-arm` runs a program for `board`: no display or serial port,
    semihosting (the program's printf and exit reach the host), one instruction per virtual
    nanosecond (`-icount shift=0`, so SysTick counts instructions)."""
    return (
        "-M", board.name, "-nographic", "-monitor", "none", "-serial", "none",
        "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
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
    return {
        "adir_board.h": BOARD_HEADER,
        f"startup_{board.file_name}.c": startup_source(board),
        f"{board.file_name}.ld": linker_script(board, ram_bytes, stack_bytes, heap_bytes, flash),
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
    return f"""\
/* startup_{board.file_name}.c: reset, vector table and board services for {board.name}
 * (generated by adir). Symbols come from {board.file_name}.ld. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "adir_board.h"

#define ADIR_BOARD_INSTRUCTIONS_PER_TICK {board.instructions_per_tick}u
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
    CPACR |= 0xFu << 20; /* CP10 and CP11 (the FPU): full access, before any float code */
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
CC = arm-none-eabi-gcc
SIZE = arm-none-eabi-size
QEMU = qemu-system-arm
CPU = {" ".join(board.cpu_flags)}
OPT = -O2 {" ".join(BOARD_COMPILE_FLAGS)}
CFLAGS = -std=c99 -Wall -Wextra -Wpedantic -Werror
CPPFLAGS = -I. -DADIR_BOARD
LDFLAGS = {" ".join(board_link_flags(f"{name}.ld"))} -Wl,-Map=build/train.map
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
