"""The memory of fine-tuning ResNet-8 and DS-CNN (MLPerf Tiny) on a device under sparse update
schemes: for each model at batch 1, with SGD and with Adam, and each scheme, the SRAM the
training step needs (the planned arena, plus the parameters and state in RAM: the trainable
parameters, the optimizer state and the batch norms' running statistics) and the flash (frozen
parameters, the initial values `init` copies, constants), as `adir-opt --memory-report` splits
them (`adir/param_storage.py`), and the arena's lower bound.

    .venv/bin/python tools/bench_sparse_updates.py            # the table of docs/sparse_updates.md

Each model is imported from examples/torch/ with its scheme (`import_module(train=...)`), then
run through the pipeline of `adir-opt --optimizer=... --plan-memory`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from adir.context import adir_context
from adir.frontends.torch_import import import_module
from adir.param_storage import static_memory
from adir.passes import ADIR_PASSES, PLANNING_PIPELINE

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("resnet8", "ds_cnn")
# The channel-fraction scheme trains a quarter of the output channels of the two convolutions
# before the classifier that a gradient reaches through one path (ResNet-8's last block, DS-CNN's
# last two pointwise convolutions), every bias, and the classifier.
SCHEMES = {
    "resnet8": {
        "full": "all",
        "last layer": "last:1",
        "bias + last layer": "bias+last:1",
        "bias + 1/4 channels + last layer": (
            "bias+channels:0.25@stacks.2.conv1,stacks.2.conv2+last:1"
        ),
    },
    "ds_cnn": {
        "full": "all",
        "last layer": "last:1",
        "bias + last layer": "bias+last:1",
        "bias + 1/4 channels + last layer": "bias+channels:0.25@features.23,features.30+last:1",
    },
}
OPTIMIZERS = {
    "sgd": "insert-optimizer{kind=sgd lr=0.01}",
    "adam": "insert-optimizer{kind=adam lr=0.001}",
}


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / "torch" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module: ModuleOp, pipeline: str) -> ModuleOp:
    PassPipeline.parse_spec(dict(ADIR_PASSES), pipeline).apply(adir_context(), module)
    return module


def measure(model: str, scheme: str, optimizer: str) -> tuple[int, int, int, int]:
    """(SRAM, arena, arena lower bound, flash) in bytes."""
    example = load_example(model)
    *inputs, _label = example.example_input(1)
    module = import_module(example.model(), tuple(inputs), loss=example.LOSS, train=scheme)
    planned = run(
        module,
        f"infer-shapes,autodiff,{OPTIMIZERS[optimizer]},{PLANNING_PIPELINE}",
    )
    memory = static_memory(planned)
    arena = planned.attributes["adir.arena_size"].value.data  # type: ignore[union-attr]
    train = next(
        op for op in planned.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step"
    )
    bound = train.attributes["adir.arena_lower_bound"].value.data  # type: ignore[union-attr]
    return arena + memory.ram_params, arena, bound, memory.flash


def main() -> None:
    print("| model | optimizer | scheme | SRAM | arena | lower bound | flash |")
    print("|---|---|---|---:|---:|---:|---:|")
    for model in MODELS:
        for optimizer in OPTIMIZERS:
            for label, scheme in SCHEMES[model].items():
                sram, arena, bound, flash = measure(model, scheme, optimizer)
                print(
                    f"| {model} | {optimizer} | {label} | {sram:,} | {arena:,} | {bound:,} | "
                    f"{flash:,} |",
                    flush=True,
                )
    print()
    for model in MODELS:
        for label, scheme in SCHEMES[model].items():
            print(f"{model} {label}: `--train={scheme}`")


if __name__ == "__main__":
    main()
