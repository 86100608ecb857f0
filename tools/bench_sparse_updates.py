"""The memory of fine-tuning the four MLPerf Tiny models on a microcontroller, issue 20's table.

    .venv/bin/python tools/bench_sparse_updates.py          # the table of docs/sparse_updates.md
    .venv/bin/python tools/bench_sparse_updates.py --target host     # the host's kernels
    .venv/bin/python tools/bench_sparse_updates.py --models ds_cnn --optimizers sgd

For ResNet-8, DS-CNN, MobileNetV1-0.25 and the FC autoencoder (examples/torch/) at batch 1, with
SGD and with Adam, and for full training, the last layer, bias-only + the last layer and the
scheme `suggest-update-scheme` picks for 256 KB, it prints the SRAM the training step needs (the
planned arena, plus the parameters and state in RAM: trainable parameters, optimizer state, other
mutable state such as running statistics) and its parts, the flash (frozen parameters, the
initial values `init` copies, constants), as `adir-opt --memory-report` splits them
(`adir/param_storage.py`), and the arena's lower bound (no placement of the same buffers needs
less). The kernels are the target's (`--target`, default the Cortex-M4F's, whose convolutions
take at most 8 KB of im2col scratch; their scratch is part of the arena).

Each model is imported from examples/torch/ as `generate_examples.py` does, in training mode,
with its scheme (`import_module(train=...)`), then compiled as `adir-opt --train=SCHEME
--optimizer=... --c-target=... --plan-memory` compiles it (`freeze-batchnorm` first: batchnorms
whose gamma is frozen run with their running statistics). The autoencoder's BatchNorm1d layers
are imported in eval mode: PyTorch trains them in training mode only at batch 2 or more (its
examples/mlir is at batch 2), and fine-tuning at batch 1 normalises with the running statistics
(its full training then trains gamma and beta as a per-channel affine).
"""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from torch import nn
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from adir.context import adir_context
from adir.frontends.torch_import import import_module
from adir.param_storage import OTHER_STATE, STATE, TRAINABLE, static_memory
from adir.passes import ADIR_PASSES
from adir.passes.suggest_update_scheme import SuggestUpdateSchemePass
from adir.update_scheme_suggestion import suggest_scheme

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("resnet8", "ds_cnn", "mobilenet_v1", "autoencoder")
# Batchnorms a model at batch 1 cannot train in training mode (see the module docstring).
EVAL_BATCHNORM = {"autoencoder"}
SCHEMES = {"full": "all", "last layer": "last:1", "bias + last layer": "bias+last:1"}
SUGGESTED = "suggested for 256 KB"
BUDGET = 256 * 1024
OPTIMIZERS = {"sgd": 0.01, "adam": 0.001}

# TTE's published peak SRAM for sparse-update fine-tuning (Lin et al., "On-Device Training Under
# 256KB Memory", NeurIPS 2022; batch 1 on an STM32F746, with an int8 forward pass, which adir's
# float training does not have), as issue 20 quotes them.
TTE = (
    ("MobileNetV2-w0.35", "141 KB"),
    ("ProxylessNAS-w0.3", "135 KB"),
    ("MCUNet", "173 KB"),
)


@dataclass(frozen=True)
class Row:
    """What one model, optimizer and scheme need, in bytes."""

    sram: int
    arena: int
    trainable: int
    state: int  # optimizer state
    other: int  # other mutable state (running statistics)
    bound: int  # the arena's lower bound
    flash: int


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / "torch" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def imported(model: str) -> ModuleOp:
    """The model at batch 1, every parameter trainable, its layers recorded (`adir.layer`)."""
    example = load_example(model)
    *inputs, _label = example.example_input(1)
    torch_model = example.model()
    if model in EVAL_BATCHNORM:
        for layer in torch_model.modules():
            if isinstance(layer, nn.modules.batchnorm._BatchNorm):
                layer.eval()
    return import_module(torch_model, tuple(inputs), loss=example.LOSS)


def compiler(optimizer: str, target: str) -> SuggestUpdateSchemePass:
    """The pipeline after the scheme, as `adir-opt` runs it (the suggester's own)."""
    return SuggestUpdateSchemePass(
        sram=BUDGET, kind=optimizer, lr=OPTIMIZERS[optimizer], target=target
    )


def measure(module: ModuleOp, scheme: str, optimizer: str, target: str) -> Row:
    from adir.update_scheme import apply_scheme

    planned = module.clone()
    apply_scheme(planned, scheme)
    pipeline = compiler(optimizer, target).pipeline()
    PassPipeline.parse_spec(dict(ADIR_PASSES), pipeline).apply(adir_context(), planned)
    memory = static_memory(planned)
    arena = planned.attributes["adir.arena_size"].value.data  # type: ignore[union-attr]
    step = next(
        op for op in planned.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step"
    )
    bound = step.attributes["adir.arena_lower_bound"].value.data  # type: ignore[union-attr]
    kinds = memory.by_kind
    return Row(
        sram=arena + memory.ram_params,
        arena=arena,
        trainable=kinds[TRAINABLE],
        state=kinds[STATE],
        other=kinds[OTHER_STATE],
        bound=bound,
        flash=memory.flash,
    )


def suggested(module: ModuleOp, optimizer: str, target: str) -> str:
    return suggest_scheme(module, BUDGET, compiler(optimizer, target).pipeline()).scheme


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument(
        "--optimizers", nargs="+", choices=list(OPTIMIZERS), default=["sgd", "adam"]
    )
    parser.add_argument("--target", default="cortex-m4f", help="select-kernels' target")
    args = parser.parse_args()
    print(
        "| model | optimizer | scheme | SRAM | arena | trainable | optimizer state | "
        "other state | lower bound | flash |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    picked: dict[tuple[str, str], str] = {}
    for model in args.models:
        module = imported(model)
        for optimizer in args.optimizers:
            schemes = dict(SCHEMES)
            schemes[SUGGESTED] = picked[model, optimizer] = suggested(
                module, optimizer, args.target
            )
            for label, scheme in schemes.items():
                row = measure(module, scheme, optimizer, args.target)
                print(
                    f"| {model} | {optimizer} | {label} | {row.sram:,} | {row.arena:,} | "
                    f"{row.trainable:,} | {row.state:,} | {row.other:,} | {row.bound:,} | "
                    f"{row.flash:,} |",
                    flush=True,
                )
    print()
    print("The schemes suggested for 256 KB (`--train=suggested --sram=256K`):")
    print()
    for (model, optimizer), scheme in picked.items():
        print(f"- {model}, {optimizer}: `--train={scheme}`")
    print()
    print(
        'TTE (Lin et al., "On-Device Training Under 256KB Memory", NeurIPS 2022), peak SRAM of '
        "sparse-update fine-tuning at batch 1 with an int8 forward pass:"
    )
    print()
    print("| TTE model | peak SRAM |")
    print("|---|---:|")
    for name, sram in TTE:
        print(f"| {name} | {sram} |")


if __name__ == "__main__":
    main()
