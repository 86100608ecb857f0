"""`<prefix>train_embedded.c`: a program that trains the generated model on batches compiled
into it, for a device with no file system (or the host, to compare).

    step 0 loss 2.30258512 bits 0x40135d8f instructions 412360
    ...
    stack 3336 bytes
    done

It calls `<prefix>init(seed)`, then `@train_step` once per batch, and prints each loss (also
as its float32 bits, so that host and device compare exactly). Built with `-DADIR_BOARD` (the
Cortex-M Makefile does), it also prints the instructions each step took and the stack's
high-water mark, from the board's startup code (`adir_board.h`, see `cortex_m.py`). The
batches are `static const`, so a device keeps them in flash.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, MemRefType, ModuleOp

from adir.backends.c.calls import c_type
from adir.backends.c.literals import literal_list
from adir.diagnostics import OpError


def embedded_training_source(
    module: ModuleOp, prefix: str, batches: Sequence[Sequence[np.ndarray]], seed: int = 0
) -> str:
    """The C of the program for a planned module with `@train_step` and these batches (one
    array per argument of `@train_step` per step)."""
    train = next(
        (
            op
            for op in module.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step"
        ),
        None,
    )
    if train is None:
        raise OpError(module, "embedded training: the module has no @train_step (--optimizer)")
    types = list(train.function_type.inputs.data)
    outputs = train.function_type.outputs.data
    if (
        len(outputs) != 1
        or not isinstance(outputs[0], MemRefType)
        or outputs[0].get_shape() != ()
        or not isinstance(outputs[0].element_type, Float32Type)
    ):
        raise OpError(train, "embedded training: @train_step must return the loss")
    steps = len(batches)
    tables, arguments = [], []
    for index, type_ in enumerate(types):
        assert isinstance(type_, MemRefType)
        shape = tuple(type_.get_shape())
        count = max(math.prod(shape), 1)
        values = [np.asarray(batch[index]).reshape(-1) for batch in batches]
        if any(v.size != math.prod(shape) for v in values):
            raise ValueError(f"argument #{index} of @train_step has shape {shape}")
        name = f"arg{index}"
        ctype = c_type(type_.element_type)
        data = np.concatenate(values) if values else np.zeros(0)
        tables.append(
            f"static const {ctype} {name}[STEPS * {count}] = "
            f"{literal_list(data, type_.element_type)};"
        )
        arguments.append(f"{name} + step * {count}")
    return f"""\
/* {prefix}train_embedded.c: trains the generated model on {steps} batches compiled into the
 * program, printing each step's loss (adir). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "{prefix}model.h"
#ifdef ADIR_BOARD
#include "adir_board.h"
#endif

#define STEPS {steps}

{chr(10).join(tables)}

int main(void)
{{
    int step;
    {prefix}init({seed}u);
    for (step = 0; step < STEPS; ++step) {{
        uint32_t bits;
#ifdef ADIR_BOARD
        const uint64_t start = adir_board_instructions();
        const float loss = {prefix}train_step({", ".join(arguments)});
        const uint64_t used = adir_board_instructions() - start;
        memcpy(&bits, &loss, sizeof bits);
        printf("step %d loss %.9g bits 0x%08lx instructions %lu\\n", step, (double)loss,
               (unsigned long)bits, (unsigned long)used);
#else
        const float loss = {prefix}train_step({", ".join(arguments)});
        memcpy(&bits, &loss, sizeof bits);
        printf("step %d loss %.9g bits 0x%08lx\\n", step, (double)loss, (unsigned long)bits);
#endif
    }}
#ifdef ADIR_BOARD
    printf("stack %lu bytes\\n", (unsigned long)adir_board_stack_used());
#endif
    printf("done\\n");
    return 0;
}}
"""
