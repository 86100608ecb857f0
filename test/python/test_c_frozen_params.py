"""Frozen weights cost no RAM (adir/param_storage.py): LeNet-5 and DS-CNN fine-tuned in their
last layer, every other parameter frozen with dense data (the seed-0 draw of its initializer,
standing in for pretrained weights, which is what fine-tuning starts from).

- The Cortex-M link (arm-none-eabi-gcc, mps2-an386): `arm-none-eabi-size -A` shows .data + .bss
  within the arena, the trainable parameters and the optimizer state (and DS-CNN's batchnorm
  running statistics, which its training step writes) plus 4 KB; LeNet-5 trains under QEMU
  like the host.
- On the host (gcc and clang, ASan/UBSan): the training step gives the same bits, losses and
  every parameter after each step, as the same step with the frozen parameters in RAM, the
  storage they had before (a `@set_<name>` function that writes each one keeps it in RAM:
  `static float` plus the `_initial` table that `init` copies); and both agree with the
  interpreter.
- `init` restores every parameter's initial values after training (README's C API), and
  `param_writable` is NULL exactly for the frozen parameters.

With `pytest -s` the Cortex-M test prints its figures (the lead's table in docs/cortex_m.md).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example
from c_testing import (
    PREFIX,
    build_c,
    c_compilers,
    check_c_against_interpreter,
    interpreter_run,
    run_pipeline,
)
from cmsis_testing import check_cmsis_against_interpreter
from cortex_m_testing import BoardBuild, host_run
from test_c_examples import training_steps
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, IntegerAttr, ModuleOp, i1
from xdsl.ir import Block, Region

from adir.backends.c.model import print_model
from adir.context import parse_module
from adir.dialects.tensor.initializers import InitializerAttr
from adir.dialects.tensor.params import ParamOp, StoreOp
from adir.interpreter import Session
from adir.interpreter.initializers import sample
from adir.param_storage import (
    DRAWN_AT_INIT,
    FROZEN,
    OTHER_STATE,
    STATE,
    TRAINABLE,
    static_memory,
)
from adir.passes import PLANNING_PIPELINE

LAST_LAYER = {"lenet5": ("fc3_w", "fc3_b"), "ds_cnn": ("fc_w", "fc_b")}
OPTIMIZERS = {
    "sgd": "autodiff,insert-optimizer{kind=sgd lr=0.01}",
    "adam": "autodiff,insert-optimizer{kind=adam lr=0.001}",
}
KIB = 1024


def frozen_but_last(example: str) -> ModuleOp:
    """`examples/<example>.mlir` with every parameter but the last layer's `{trainable = false}`
    and holding its initializer's seed-0 values as dense data (the batchnorm running
    statistics, already `{trainable = false}`, stay as they are: the step writes them)."""
    module = parse_example(example)
    for op in module.ops:
        if not isinstance(op, ParamOp) or op.sym_name.data in LAST_LAYER[example]:
            continue
        if "trainable" in op.attributes:
            continue
        op.attributes["trainable"] = IntegerAttr(0, i1)
        init = op.initial_value
        assert isinstance(init, InitializerAttr)
        values = sample(init, tuple(op.type.get_shape())).reshape(-1)
        op.initial_value = DenseIntOrFPElementsAttr.from_list(op.type, values.tolist())
    return module


def with_setters(module: ModuleOp) -> ModuleOp:
    """`module` and, for each frozen parameter, `@set_<name>(%v)` that stores `%v` in it: the
    parameters stay frozen for autodiff, but a function writes them, so they stay in RAM."""
    result = module.clone()
    memory = static_memory(result)
    for op in list(result.ops):
        if isinstance(op, ParamOp) and memory.kinds[op.sym_name.data] is FROZEN:
            block = Block(arg_types=[op.type])
            block.add_ops([StoreOp(block.args[0], op.sym_name.data), func.ReturnOp()])
            setter = func.FuncOp(
                f"set_{op.sym_name.data}", FunctionType.from_lists([op.type], []), Region(block)
            )
            result.body.block.add_op(setter)
    return result


def trained(module: ModuleOp, optimizer: str = "sgd") -> tuple[ModuleOp, ModuleOp]:
    """The tensor-level training module and its planned form."""
    tensor_level = run_pipeline(module, f"infer-shapes,{OPTIMIZERS[optimizer]}")
    return tensor_level, run_pipeline(tensor_level, PLANNING_PIPELINE)


# Every form a frozen parameter takes in the C: dense data (@w1), a dense splat (@s), a fill of
# -0.0 past one line (@n: repeated, not `{0}`), zeros past one line (@z: `{0}`), a short fill
# (@b); @r is frozen but seeded (RAM, drawn at init); @w2 trains with SGD.
FORMS = """
adir.param @w1 : tensor<4x3xf32> = dense<[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75],
    [1.0, 1.0, -2.0], [0.125, 3.0, 0.5]]> : tensor<4x3xf32> {trainable = false}
adir.param @s : tensor<12xf32> = dense<0.5> : tensor<12xf32> {trainable = false}
adir.param @n : tensor<12xf32> = #adir.fill<value = -0.0> {trainable = false}
adir.param @z : tensor<4xf32> = #adir.zeros {trainable = false}
adir.param @b : tensor<4xf32> = #adir.fill<value = 0.25> {trainable = false}
adir.param @r : tensor<4x4xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 3>
    {trainable = false}
adir.param @w2 : tensor<2x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]]>
    : tensor<2x4xf32>

func.func @loss(%x: tensor<1x3xf32>, %t: tensor<1x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<4x3xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x3xf32>, tensor<4x3xf32> -> tensor<1x4xf32>
  %b = adir.load @b : tensor<4xf32>
  %z = adir.load @z : tensor<4xf32>
  %hb = adir.add %h, %b : tensor<1x4xf32>, tensor<4xf32> -> tensor<1x4xf32>
  %hz = adir.add %hb, %z : tensor<1x4xf32>, tensor<4xf32> -> tensor<1x4xf32>
  %a = adir.relu %hz : tensor<1x4xf32>
  %r = adir.load @r : tensor<4x4xf32>
  %ar = adir.matmul %a, %r : tensor<1x4xf32>, tensor<4x4xf32> -> tensor<1x4xf32>
  %w2 = adir.load @w2 : tensor<2x4xf32>
  %y = adir.matmul %ar, %w2 {transpose_b} : tensor<1x4xf32>, tensor<2x4xf32> -> tensor<1x2xf32>
  %s = adir.load @s : tensor<12xf32>
  %n = adir.load @n : tensor<12xf32>
  %sn = adir.add %s, %n : tensor<12xf32>
  %ss = adir.sum %sn : tensor<12xf32> -> tensor<f32>
  %l = adir.mse %y, %t : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<f32>
  %ls = adir.mul %l, %ss : tensor<f32>
  func.return %ls : tensor<f32>
}
"""


def form_steps() -> list[list[np.ndarray]]:
    rng = np.random.default_rng(3)
    return [
        [
            rng.standard_normal((1, 3)).astype(np.float32),
            rng.standard_normal((1, 2)).astype(np.float32),
        ]
        for _ in range(3)
    ]


@pytest.mark.parametrize("kernels", ["tuned", "cmsis-dsp"])
def test_every_form_of_frozen_parameter_trains_like_the_interpreter(kernels: str) -> None:
    """Three SGD steps like the interpreter (gcc, -Werror, ASan/UBSan; 1e-5, as every C test:
    the matmuls add in another order than numpy): the kernels, CMSIS-DSP's too, take the
    constants through `const float *`."""
    if kernels == "tuned":
        check_c_against_interpreter(
            FORMS, "train_step", form_steps(), differentiate=OPTIMIZERS["sgd"]
        )
    else:
        check_cmsis_against_interpreter(
            FORMS, "train_step", form_steps(), differentiate=OPTIMIZERS["sgd"]
        )


def test_param_kinds_come_from_the_writes() -> None:
    """With Adam: @w2 trains, its moments and the step counter are optimizer state, @r is
    frozen but seeded, the rest frozen; on the tensor level (stores) as after bufferize
    (kernels' outs and copies)."""
    tensor_level, planned = trained(parse_module(FORMS, "forms.mlir"), "adam")
    expected = {
        **dict.fromkeys(["w1", "s", "n", "z", "b"], FROZEN),
        "r": DRAWN_AT_INIT,
        "w2": TRAINABLE,
        **dict.fromkeys(["optimizer_step", "w2_exp_avg", "w2_exp_avg_sq"], STATE),
    }
    assert static_memory(tensor_level).kinds == expected
    memory = static_memory(planned)
    assert memory.kinds == expected
    assert memory.by_kind == {
        TRAINABLE: 32, STATE: 68, OTHER_STATE: 0, DRAWN_AT_INIT: 64, FROZEN: 48 + 48 + 48 + 16 + 16
    }  # fmt: skip
    assert memory.initial_values == 32  # @w2's data, which init copies
    assert planned.attributes["adir.persistent_size"].value.data == 32 + 68 + 64


def test_every_form_of_frozen_parameter_is_a_constant() -> None:
    _, planned = trained(parse_module(FORMS, "forms.mlir"))
    memory = static_memory(planned)
    frozen = [name for name, kind in memory.kinds.items() if kind is FROZEN]
    assert frozen == ["w1", "s", "n", "z", "b"]
    source = print_model(planned).source
    assert "static const float z[4] = {\n    0.0f, 0.0f, 0.0f, 0.0f\n};" in source
    assert "static const float n[12] = {\n    -0.0f, -0.0f, -0.0f," in source
    assert "static const float s[12] = {\n    0.5f, 0.5f," in source
    assert "static float r[16];" in source and "static float w2[8];" in source
    assert "float *const data[7] = {NULL, NULL, NULL, NULL, NULL, r, w2};" in source


def section_sizes(elf: Path) -> dict[str, int]:
    """Each section's bytes, as `arm-none-eabi-size -A` lists them (.bss apart from the heap
    and stack that the linker script reserves in sections of their own)."""
    listing = subprocess.run(
        ["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split() for line in listing.splitlines() if line.startswith(".")]
    return {row[0]: int(row[1]) for row in rows}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("example", "optimizer", "ram_bound", "frozen_bytes"),
    [
        # arena 17,280 + trainable (fc3: 850 floats) 3,400 + SGD state 0 = 20,680; measured
        # .data 480 + .bss 20,872 = 21,352 (newlib's own .data and .bss are the rest); before,
        # with the 174,304 bytes of frozen weights in RAM too, .bss was 195,176.
        ("lenet5", "sgd", 20_680 + 4 * KIB, 174_304),
        # arena 65,472 (64,512 and the first conv's 960-byte im2col scratch, at the forward's
        # peak) + trainable (fc: 780 floats) 3,120 + Adam state 6,244 (two moments and the step
        # counter) + running statistics 4,608 = 79,444; measured without the scratch, .data
        # 480 + .bss 78,680 = 79,160; before frozen weights went to flash, .bss was 168,280.
        ("ds_cnn", "adam", 79_444 + 4 * KIB, 89_600),
    ],
)
def test_frozen_weights_take_no_ram_on_the_board(
    example: str, optimizer: str, ram_bound: int, frozen_bytes: int, tmp_path: Path
) -> None:
    tensor_level, planned = trained(frozen_but_last(example), optimizer)
    memory = static_memory(planned)
    arena = planned.attributes["adir.arena_size"].value.data
    ram = arena + memory.by_kind[TRAINABLE] + memory.by_kind[STATE]
    ram += memory.by_kind[OTHER_STATE]  # DS-CNN's running statistics: the step writes them
    assert ram + 4 * KIB == ram_bound, "the bound in the parametrization is out of date"
    batches = training_steps(example, 2)
    build = BoardBuild.write(planned, tmp_path / "board", batches, None, ram_bytes=256 * KIB)
    build.build()
    sections = section_sizes(tmp_path / "board" / "train.elf")
    assert sections[".data"] + sections[".bss"] <= ram_bound
    # The frozen weights are in flash (.text holds .rodata in the board's linker script).
    assert memory.by_kind[FROZEN] == frozen_bytes
    assert sections[".text"] > frozen_bytes
    print(
        f"\n{example} {optimizer}, all but the last layer frozen: arena {arena}, trainable "
        f"{memory.by_kind[TRAINABLE]}, optimizer state {memory.by_kind[STATE]}, other state "
        f"{memory.by_kind[OTHER_STATE]}, frozen (flash) {memory.by_kind[FROZEN]}, initial "
        f"values {memory.initial_values}; .text {sections['.text']} .data {sections['.data']} "
        f".bss {sections['.bss']}"
    )
    if example == "lenet5":
        device = build.run()
        host = host_run(planned, tmp_path / "host", batches)
        expected = interpreter_run(tensor_level, "train_step", 0, batches)[: len(batches)]
        np.testing.assert_allclose(device.losses, host.losses, rtol=1e-5)
        np.testing.assert_allclose(device.losses, np.reshape(expected, -1), rtol=1e-5)


@pytest.fixture(scope="module")
def lenet5_frozen() -> tuple[ModuleOp, ModuleOp, ModuleOp]:
    """LeNet-5 with all but fc3 frozen: tensor level, planned, and planned with setters."""
    module = frozen_but_last("lenet5")
    tensor_level, planned = trained(module)
    _, planned_in_ram = trained(with_setters(module))
    return tensor_level, planned, planned_in_ram


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_training_is_bit_identical_with_frozen_weights_in_ram(
    lenet5_frozen: tuple[ModuleOp, ModuleOp, ModuleOp], compiler: str, tmp_path: Path
) -> None:
    tensor_level, planned, planned_in_ram = lenet5_frozen
    flash_source = print_model(planned, PREFIX).source
    ram_source = print_model(planned_in_ram, PREFIX).source
    assert f"static const float {PREFIX}conv1_w[150] = {{" in flash_source
    assert f"static float {PREFIX}conv1_w[150];" in ram_source
    assert f"memcpy({PREFIX}conv1_w, {PREFIX}conv1_w_initial" in ram_source
    # The step itself is the same C.
    step = flash_source[flash_source.index(f"float {PREFIX}train_step(") :]
    assert step in ram_source

    steps = training_steps("lenet5", 3)
    runs = []
    for name, module in (("flash", planned), ("ram", planned_in_ram)):
        build = build_c(
            module, "train_step", len(steps), tmp_path / name, compiler, sanitize=True,
            state_each_step=True,
        )  # fmt: skip
        runs.append(build.run(0, steps))
    flash, ram = runs
    assert len(flash) == len(ram) == 3 * (1 + 10)  # each step: the loss and the 10 parameters
    for got, want in zip(flash, ram, strict=True):
        assert got.tobytes() == want.tobytes()
    # fc3_w (parameter 8 of 10) moved between the first step and the last.
    assert not np.array_equal(flash[-2], flash[1 + 8])
    expected = interpreter_run(tensor_level, "train_step", 0, steps)
    losses = [flash[11 * k] for k in range(3)]
    np.testing.assert_allclose(np.array(losses), np.reshape(expected[:3], -1), rtol=1e-5)
    np.testing.assert_array_equal(flash[-10], expected[3])  # conv1_w: the frozen data


INIT_DRIVER = f"""\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "{PREFIX}model.h"

static float x[{PREFIX.upper()}TRAIN_STEP_X_SIZE];
static int32_t label[{PREFIX.upper()}TRAIN_STEP_LABEL_SIZE];

static void dump(FILE *out)
{{
    size_t i;
    for (i = 0; {PREFIX}param_name(i); ++i) {{
        fwrite({PREFIX}param_data(i), sizeof(float), {PREFIX}param_size(i), out);
    }}
}}

int main(int argc, char **argv)
{{
    FILE *out;
    size_t i;
    int step;
    if (argc != 2 || !(out = fopen(argv[1], "wb"))) return 2;
    for (i = 0; i < sizeof x / sizeof x[0]; ++i) x[i] = (float)((i * 7u) % 13u) / 13.0f - 0.5f;
    {PREFIX}init(0u);
    dump(out);
    for (step = 0; step < 3; ++step) {{
        label[0] = step;
        {PREFIX}train_step(x, label);
    }}
    dump(out);
    /* Scribble over what may be written, then reset. */
    for (i = 0; {PREFIX}param_name(i); ++i) {{
        float *data = {PREFIX}param_writable(i);
        if (data) memset(data, 0x7f, {PREFIX}param_size(i) * sizeof(float));
        fputc(data ? 'w' : 'c', stdout);
    }}
    {PREFIX}init(0u);
    dump(out);
    return fclose(out) != 0;
}}
"""


@pytest.mark.slow
def test_init_restores_the_initial_weights_after_training(
    lenet5_frozen: tuple[ModuleOp, ModuleOp, ModuleOp], tmp_path: Path
) -> None:
    """init(0), 3 training steps, every writable parameter overwritten, init(0) again: the
    parameters are the interpreter's initial values, bit for bit, before and after; training
    moved fc3 only; param_writable is NULL for the 8 frozen parameters, not for fc3's 2."""
    tensor_level, planned, _ = lenet5_frozen
    build = build_c(
        planned, "train_step", 0, tmp_path, c_compilers()[0], sanitize=True, driver=INIT_DRIVER
    )
    completed = subprocess.run(
        [str(build.executable), str(tmp_path / "params.bin")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0 and completed.stderr == "", completed.stderr
    params = [op for op in planned.ops if isinstance(op, ParamOp)]
    assert completed.stdout == "cccccccc" + "ww"
    assert [op.sym_name.data for op in params][-2:] == ["fc3_w", "fc3_b"]
    data = np.frombuffer((tmp_path / "params.bin").read_bytes(), np.float32)
    count = sum(int(np.prod(op.type.get_shape())) for op in params)
    assert data.size == 3 * count
    initial, after_training, after_reset = np.split(data, 3)
    session = Session(tensor_level, np.float32, seed=0)
    expected = np.concatenate([session.params[op.sym_name.data].reshape(-1) for op in params])
    assert initial.tobytes() == expected.tobytes()
    assert after_reset.tobytes() == expected.tobytes()
    fc3 = sum(int(np.prod(op.type.get_shape())) for op in params[-2:])
    assert after_training[:-fc3].tobytes() == expected[:-fc3].tobytes()
    assert not np.array_equal(after_training[-fc3:], expected[-fc3:])
