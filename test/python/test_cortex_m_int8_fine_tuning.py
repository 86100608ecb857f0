"""DS-CNN fine-tuned with level-2 quantized training (trainable int8 layers, docs/
quantized_training.md) on the Cortex-M4F board (QEMU mps2-an386) in 256 KB of RAM, its int8
forward pass on CMSIS-NN (issue 21).

The model is test_quantize_frozen_prefix's DS-CNN (examples/torch/ds_cnn.py in eval mode, its
batch norms' statistics from a seeded generator, as a pretrained backbone has them), compiled
as

    adir-opt ds_cnn_eval.mlir --train=SCHEME --optimizer=sgd --lr=0.01 --quantize-frozen \\
        --quantize-level=2 --c-target=cortex-m4f --c-kernels=cmsis-nn --sram=BUDGET --plan-memory

(BUDGET: what `--c-ram=256K` leaves the model, as test_cortex_m_fine_tuning.py), linked with
`--c-ram=256K`'s linker script and trained 10 steps under QEMU. SCHEME is `suggested`: what
suggest-update-scheme, counting level 2's int8 weights, int32 biases and int8 activations at
their byte sizes, picks for that budget with CMSIS-NN's scratch:
`bias@last:18+all@fc,features.30,features.27,features.23,features.20,features.16,features.13,
features.9,features.6,features.1`, every conv and the classifier whole (the fp32 suggestion for
the same board trains four layers, test_cortex_m_fine_tuning.py).

Checked: every int8 conv and the classifier of the forward pass, the trainable layers
included, calls CMSIS-NN (the backward runs on adir's kernels); the SRAM (arena and trainable
parameters) fits the budget; the device's losses equal those of the same program built for the
host (gcc -O2, -ffp-contract=off as the board's build, CMSIS-NN's portable C) to 1e-6 relative
and the interpreter's to 1e-5, the tolerances of the fp32 test (test_cortex_m_fine_tuning.py):
the integer forward is exact on every build, but the loss and the float backward go through
expf and logf (the cross entropy), which newlib and glibc round differently in the last place,
and the interpreter (numpy, float32) sums the float backward's products in other orders than
the C. The integer parameters after the 10 steps (printed by code the test appends to the
model) are equal bit for bit on the device, on the host and in the interpreter.

Measured (2026-11-26): SRAM 119,872 bytes (arena 109,520), 13,811,492 instructions per step
(fp32 training the same layers: 215,616 bytes, 11,215,764; `tools/cortex_m_report.py
--fine-tuning`), 434 of the 9,740 integers moved, 9 of the 10 losses bit-equal to the host's.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from c_testing import PREFIX
from cortex_m_testing import BoardBuild, host_run
from test_cmsis_nn import needs_cmsis_nn
from test_quantize_frozen_prefix import CLASSES, SHAPE, ds_cnn
from xdsl.dialects.builtin import IntegerType, ModuleOp, StringAttr

from adir.backends.c.cortex_m import model_ram
from adir.context import parse_module
from adir.frontends.torch_import import import_module
from adir.interpreter import Session
from adir.param_storage import static_memory
from adir.passes.suggest_update_scheme import SUGGESTED
from adir.tools.adir_opt import main as adir_opt

KIB = 1024
STEPS = 10
BUDGET = model_ram(256 * KIB)
SCHEME = "suggested"  # the module docstring
LEVEL_2 = ["--optimizer=sgd", "--lr=0.01", "--quantize-frozen", "--quantize-level=2"]
ON_THE_BOARD = ["--c-target=cortex-m4f", "--c-kernels=cmsis-nn", f"--sram={BUDGET}"]
# The int8 forward ops of DS-CNN: the first conv, four depthwise and four pointwise convs, the
# classifier.
CMSIS_NN_CALLS = {
    "arm_convolve_wrapper_s8": 5,
    "arm_depthwise_conv_wrapper_s8": 4,
    "arm_fully_connected_s8": 1,
}


def ds_cnn_eval(directory: Path) -> Path:
    """The model as `adir-import examples/torch/ds_cnn.py:model --eval` writes it, with
    test_quantize_frozen_prefix's batch-norm statistics."""
    path = directory / "ds_cnn_eval.mlir"
    path.write_text(str(import_module(ds_cnn(), (torch.zeros(SHAPE),), loss="cross_entropy")))
    return path


def compile_module(model: Path, output: Path, *flags: str) -> ModuleOp:
    """`adir-opt model flags -o output`, parsed."""
    assert adir_opt([str(model), *flags, "-o", str(output)]) == 0
    return parse_module(output.read_text())


def trained_scheme(planned: ModuleOp, scheme: str) -> str:
    """The scheme `planned` trains: `scheme`, or the one suggest-update-scheme picked."""
    picked = planned.attributes.get(SUGGESTED)
    return picked.data if isinstance(picked, StringAttr) else scheme


def training_batches(count: int = STEPS) -> list[list[np.ndarray]]:
    """`count` random utterances and their labels."""
    rng = np.random.default_rng(1)
    return [
        [
            rng.standard_normal(SHAPE).astype(np.float32),
            rng.integers(0, CLASSES, (1,)).astype(np.int32),
        ]
        for _ in range(count)
    ]


def integer_params(module: ModuleOp) -> dict[str, int]:
    """The i8 and i32 parameters (the trainable int8 layers' weights and biases): their sizes."""
    return {
        op.sym_name.data: int(np.prod(op.type.get_shape()))  # type: ignore[attr-defined]
        for op in module.ops
        if op.name == "adir.param" and isinstance(op.type.element_type, IntegerType)  # type: ignore[attr-defined]
    }


def print_integer_params(params: dict[str, int]):
    """An `instrument` (cortex_m_testing) that makes the program print each integer parameter
    after its last step: `param NAME v0 v1 ...`."""

    def instrument(files: dict[str, str]) -> None:
        model = files[f"{PREFIX}model.c"]
        lines = [
            "",
            "#include <stdio.h>",
            f"void {PREFIX}print_integer_params(void);",
            f"void {PREFIX}print_integer_params(void)",
            "{",
            "    int i;",
        ]
        for name, size in params.items():
            declared = re.search(
                rf"^static (?:int8_t|int32_t) {PREFIX}{name}\[(\d+)\];$", model, re.M
            )
            assert declared and int(declared[1]) == size, name
            lines += [
                f'    printf("param {name}");',
                f"    for (i = 0; i < {size}; ++i) {{",
                f'        printf(" %ld", (long){PREFIX}{name}[i]);',
                "    }",
                '    printf("\\n");',
            ]
        files[f"{PREFIX}model.c"] = model + "\n".join([*lines, "}", ""])
        program = files[f"{PREFIX}train_embedded.c"]
        done = '    printf("done\\n");'
        assert program.count(done) == 1
        program = program.replace(done, f"    {PREFIX}print_integer_params();\n{done}")
        files[f"{PREFIX}train_embedded.c"] = program.replace(
            "int main(void)", f"void {PREFIX}print_integer_params(void);\n\nint main(void)"
        )

    return instrument


def printed_params(stdout: str) -> dict[str, np.ndarray]:
    return {
        match[1]: np.array(match[2].split(), np.int64)
        for match in re.finditer(r"^param (\w+)((?: -?\d+)+)$", stdout, re.M)
    }


@needs_cmsis_nn
@pytest.mark.slow
def test_ds_cnn_level_2_fine_tunes_in_256k_on_cmsis_nn_like_the_host(tmp_path: Path) -> None:
    model = ds_cnn_eval(tmp_path)
    planned = compile_module(
        model, tmp_path / "planned.mlir", f"--train={SCHEME}", *LEVEL_2, *ON_THE_BOARD,
        "--plan-memory",
    )  # fmt: skip
    scheme = trained_scheme(planned, SCHEME)
    tensor_level = compile_module(
        model, tmp_path / "tensor_level.mlir", f"--train={scheme}", *LEVEL_2
    )
    calls = [
        op.attributes["adir.kernel_call"].data  # type: ignore[union-attr]
        for op in planned.walk()
        if op.name in ("adir_kernel.qconv2d", "adir_kernel.qfully_connected")
        and op.parent_op().sym_name.data == "train_step"  # type: ignore[union-attr]
    ]
    assert {call: calls.count(call) for call in set(calls)} == CMSIS_NN_CALLS
    arena = planned.attributes["adir.arena_size"].value.data  # type: ignore[union-attr]
    sram = arena + static_memory(planned).ram_params
    assert sram <= BUDGET, (scheme, sram)

    params = integer_params(planned)
    # the suggestion's ten layers (nine convs and the classifier), each an int8 weight and an
    # int32 bias; bias@last:18 adds none, its biases being those of whole layers
    assert len(params) == 20
    batches = training_batches()
    build = BoardBuild.write(
        planned, tmp_path / "board", batches, "cmsis-nn", ram_bytes=256 * KIB, select=False,
        instrument=print_integer_params(params),
    )  # fmt: skip
    build.build()
    device = build.run()
    host = host_run(
        planned, tmp_path / "host", batches, "cmsis-nn", select=False,  # type: ignore[arg-type]
        instrument=print_integer_params(params),
    )  # fmt: skip
    np.testing.assert_allclose(device.losses, host.losses, rtol=1e-6)
    session = Session(tensor_level, np.float32, seed=0)
    expected = [session.call("train_step", *batch)[0] for batch in batches]
    np.testing.assert_allclose(device.losses, np.reshape(expected, -1), rtol=1e-5)

    on_device, on_host = printed_params(device.stdout), printed_params(host.stdout)
    assert sorted(on_device) == sorted(on_host) == sorted(params)
    initial = Session(tensor_level, np.float32, seed=0).params
    moved = 0
    for name in params:
        np.testing.assert_array_equal(on_device[name], on_host[name], name)
        np.testing.assert_array_equal(on_device[name], session.params[name].reshape(-1), name)
        moved += int(np.sum(on_device[name] != initial[name].reshape(-1)))
    assert moved > 0
    image = build.image_sizes()
    print(
        f"\nds_cnn level 2 --train={scheme}: SRAM {sram} (arena {arena}); image text "
        f"{image.text} data {image.data} bss {image.bss}; "
        f"{device.instructions_per_step:.0f} instructions per step; stack {device.stack_bytes} "
        f"bytes; {moved} integers moved; losses {device.losses.tolist()}; host bit-equal "
        f"{sum(d.bits == h.bits for d, h in zip(device.steps, host.steps, strict=True))}/{STEPS}"
    )
