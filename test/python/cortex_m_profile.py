"""Instructions per kernel call of a board build: the generated model's kernel calls in
@train_step wrapped in reads of the board's instruction counter (`tools/cortex_m_report.py
--per-kernel`).

    profiled = profile_kernel_calls(model_c)           # model.c with counters
    program = print_profile_at_exit(train_embedded_c)  # prints them before "done"
    calls = parse_profile(stdout, steps)               # instructions per step, per call site

Each kernel call of the generated C is one statement on one line that ends with the comment
naming its kernel op (`ADIR_RELU(a, b, 3456u);  /* adir_kernel.relu at lenet5.mlir:32 */`).
The counter is good to one SysTick tick (40 instructions) and reading it costs a few dozen
instructions, which the profile measures (two reads in a row) and takes off every call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CALL_LINE = re.compile(
    r"^(?P<indent>\s+)(?P<call>[A-Za-z_]\w*\(.*\);)\s+/\* (?P<site>adir_kernel\..*) \*/$"
)
TRAIN_STEP = re.compile(r" \w*train_step\(")
PROFILE_LINE = re.compile(r"^profile (\d+) (\d+) (.*)$", re.MULTILINE)
OVERHEAD_LINE = re.compile(r"^profile overhead (\d+)$", re.MULTILINE)


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile_kernel_calls(model_c: str) -> str:
    """`model_c` with every kernel call of @train_step between two reads of the instruction
    counter, the instructions summed per call site in `adir_profile_instructions`."""
    sites: list[str] = []
    lines = []
    in_train_step = False
    for line in model_c.splitlines():
        if line and not line.startswith((" ", "\t", "{")):  # a definition's first line, or "}"
            in_train_step = TRAIN_STEP.search(line) is not None and not line.endswith(";")
        match = CALL_LINE.match(line) if in_train_step else None
        if match is None:
            lines.append(line)
            continue
        index = len(sites)
        sites.append(match["site"])
        lines.append(
            f"{match['indent']}{{ const uint64_t adir_profile_start = adir_board_instructions(); "
            f"{match['call']} adir_profile_instructions[{index}] += "
            f"adir_board_instructions() - adir_profile_start; }}  /* {match['site']} */"
        )
    names = ", ".join(c_string(site) for site in sites) or '""'
    table = f"""
#include <stdio.h>
#include "adir_board.h"

#define ADIR_PROFILE_SITES {len(sites)}
static uint64_t adir_profile_instructions[ADIR_PROFILE_SITES + 1];
static const char *const adir_profile_names[ADIR_PROFILE_SITES + 1] = {{{names}}};

void adir_profile_print(void);
void adir_profile_print(void)
{{
    const uint64_t first = adir_board_instructions();
    const uint64_t overhead = adir_board_instructions() - first;
    int i;
    printf("profile overhead %lu\\n", (unsigned long)overhead);
    for (i = 0; i < ADIR_PROFILE_SITES; ++i) {{
        printf("profile %d %lu %s\\n", i, (unsigned long)adir_profile_instructions[i],
               adir_profile_names[i]);
    }}
}}
"""
    # After the model's own #includes, so that its types are declared.
    last_include = max(i for i, line in enumerate(lines) if line.startswith("#include"))
    lines.insert(last_include + 1, table)
    return "\n".join(lines) + "\n"


def print_profile_at_exit(train_embedded_c: str) -> str:
    """The embedded training program, printing the profile before its last line."""
    done = '    printf("done\\n");'
    assert done in train_embedded_c
    call = (
        "    {\n        extern void adir_profile_print(void);\n        adir_profile_print();\n    }"
    )
    return train_embedded_c.replace(done, f"{call}\n{done}")


@dataclass(frozen=True)
class KernelCall:
    site: str  # the kernel op and its location, as the generated C's comment says
    instructions: float  # per step, the counter's own cost taken off


def parse_profile(stdout: str, steps: int) -> list[KernelCall]:
    """Each call site's instructions per step, in the order of the generated C."""
    overhead = OVERHEAD_LINE.search(stdout)
    assert overhead, stdout
    return [
        KernelCall(match[3], (int(match[2]) - steps * int(overhead[1])) / steps)
        for match in PROFILE_LINE.finditer(stdout)
    ]
