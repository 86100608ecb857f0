"""Quantized fine-tuning on a device converges like float with QAS, and without it does not.

    .venv/bin/python tools/qas_convergence.py               # build/qas_convergence, 10 epochs
    .venv/bin/python tools/qas_convergence.py --epochs 3 --out /tmp/qas
    .venv/bin/python tools/qas_convergence.py --no-qas-lrs 500 5000   # + no QAS at these lrs
    .venv/bin/python tools/qas_convergence.py --epochs 0 --count-updates 729   # interpreter

The transfer task of tools/transfer_demo.py (whose functions this uses): its small CNN
pretrained in PyTorch on scikit-learn's 8x8 digits 0-4, fine-tuned in C on the training digits
5-9, tested on the test digits 5-9 after each epoch. Here the batch norms are folded into their
convolutions on the host first (`torch.nn.utils.fuse_conv_bn_eval`, the pretrained running
statistics): the deployed network is conv-relu x 3, global average pooling, the classifier, and
every run trains the same tensors (the last conv's folded weight and bias, and the classifier:
`--train=last:2`) with SGD at the same learning rate for the same epochs, in the same order:

- fp32: everything in float;
- int8 level 1: the frozen prefix int8, the trained layers float (`--quantize-frozen`);
- int8 level 2 with QAS: the trained conv and classifier int8 too, their int8 weights and int32
  biases updated by `qsgd_update` with QAS's step scales (`--quantize-level=2`);
- int8 level 2 without QAS: step scales of 1 (`--no-qas`).

The int8 runs calibrate on the pretraining images (the first `--calibration` training digits
0-4: the host has those, not the device's new classes), as the passes do with
`--quantize-frozen=FILE`. It prints the test accuracy on 5-9 after each epoch, one row per run;
`--no-qas-lrs` adds runs of level 2 without QAS at other learning rates, and `--count-updates`
counts, in adir's interpreter, the integer values that each level-2 run's first updates change
(a step below one half rounds to 0).
docs/quantized_training.md ("Convergence") shows the table and why the learning rate is the
fp32 one for every run.
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from adir.context import parse_module
from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import import_module
from adir.interpreter import Session

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from digits import write_adirdata  # noqa: E402  (tools/digits.py, beside this file)
from transfer_demo import (  # noqa: E402  (tools/transfer_demo.py, beside this file)
    NEW,
    OLD,
    DigitsCnn,
    accuracy,
    digits,
    fine_tune_in_c,
    of_classes,
    pretrain,
)

SCHEME = "last:2"  # after folding: conv3 and fc
LR = 0.05  # transfer_demo's
# label -> adir-opt's options beside --train, --optimizer=sgd and --lr ({calibration}: the file)
RUNS = {
    "fp32": (),
    "int8 level 1": ("--quantize-frozen={calibration}",),
    "int8 level 2, QAS": ("--quantize-frozen={calibration}", "--quantize-level=2"),
    "int8 level 2, no QAS": (
        "--quantize-frozen={calibration}",
        "--quantize-level=2",
        "--no-qas",
    ),
}


# The level-2 parameters of the scheme (quantize-frozen-prefix{level=2} names them).
INTEGER_PARAMS = ("conv3_weight_q", "conv3_weight_q_bias", "fc_weight_q", "fc_weight_q_bias")


def fold_batchnorms(model: DigitsCnn) -> nn.Module:
    """A copy of `model` with each batch norm folded into the conv before it (eval mode: the
    running statistics), the batch norm then an identity."""
    folded = copy.deepcopy(model).eval()
    for conv, norm in (("conv1", "bn1"), ("conv2", "bn2"), ("conv3", "bn3")):
        fused = torch.nn.utils.fuse_conv_bn_eval(getattr(folded, conv), getattr(folded, norm))
        setattr(folded, conv, fused)
        setattr(folded, norm, nn.Identity())
    return folded


def integer_updates(
    model_file: Path, options: tuple[str, ...], lr: float, data, steps: int
) -> dict[str, tuple[float, float]]:
    """Run the level-2 step of `options` in adir's interpreter on the first `steps` training
    images; for each integer parameter, (the fraction of its values that an update changed,
    averaged over the steps; the fraction that changed at least once). An update below one
    half in integer units rounds to 0 (qsgd_update) and changes nothing."""
    compiled = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "adir-opt"), str(model_file), f"--train={SCHEME}",
         "--optimizer=sgd", f"--lr={lr}", *options],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    session = Session(parse_module(compiled.stdout))
    names = [name for name in session.params if name.endswith(("_q", "_q_bias"))]
    changed = {name: 0 for name in names}
    ever = {name: np.zeros(session.params[name].shape, bool) for name in names}
    images, labels = data
    for i in range(steps):
        before = {name: session.params[name].copy() for name in names}
        session.call("train_step", images[i : i + 1], labels[i : i + 1].astype(np.int64))
        for name in names:
            moved = session.params[name] != before[name]
            changed[name] += int(moved.sum())
            ever[name] |= moved
    return {
        name: (changed[name] / (steps * ever[name].size), float(ever[name].mean()))
        for name in names
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=LR, help="SGD's, for every run")
    parser.add_argument("--calibration", type=int, default=64, help="pretraining images")
    parser.add_argument("--out", default=str(ROOT / "build" / "qas_convergence"))
    parser.add_argument(
        "--runs", nargs="*", choices=list(RUNS), default=list(RUNS), help="by label"
    )
    parser.add_argument(
        "--no-qas-lrs",
        nargs="*",
        type=float,
        default=[],
        help="more runs of level 2 without QAS, at these learning rates",
    )
    parser.add_argument(
        "--count-updates",
        type=int,
        default=0,
        metavar="STEPS",
        help="then, for each level-2 run, how many integer values its first STEPS updates "
        "change (adir's interpreter)",
    )
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train, test = digits()
    model = DigitsCnn()
    pretrain(model, of_classes(train, OLD))
    deployed = fold_batchnorms(model)
    old_accuracy = accuracy(deployed, of_classes(test, OLD))
    before = accuracy(deployed, of_classes(test, NEW))
    print(
        f"pretrained on digits 0-4 in PyTorch, batch norms folded: test accuracy "
        f"{old_accuracy:.1%} on 0-4, {before:.1%} on 5-9"
    )
    write_adirdata(out / "new_train.bin", *of_classes(train, NEW))
    write_adirdata(out / "new_test.bin", *of_classes(test, NEW))
    calibration = out / "calibration.npy"
    np.save(calibration, of_classes(train, OLD)[0][: args.calibration])
    example = torch.from_numpy(train[0][:1])
    module = import_module(deployed, (example,), loss="cross_entropy")
    model_file = out / "digits_cnn_folded.mlir"
    model_file.write_text(module_to_text(module))
    runs = [(label, RUNS[label], args.lr) for label in args.runs] + [
        (f"int8 level 2, no QAS, lr {lr:g}", RUNS["int8 level 2, no QAS"], lr)
        for lr in args.no_qas_lrs
    ]
    if args.epochs:  # 0: --count-updates alone
        print(
            f"fine-tuned in C on digits 5-9 ({len(of_classes(train, NEW)[0])} images), "
            f"--train={SCHEME}, SGD lr {args.lr} (where no other is named), batch 1; "
            "test accuracy on 5-9 after each epoch"
        )
        print()
        epochs = range(1, args.epochs + 1)
        print("| run | SRAM (bytes) | before | " + " | ".join(f"{e}" for e in epochs) + " |")
        print("|---|---:|---:|" + "---:|" * len(epochs))
    for label, options, lr in runs if args.epochs else []:
        extra = tuple(option.format(calibration=calibration) for option in options)
        directory = "".join(c if c.isalnum() or c == "." else "_" for c in label)
        sram, accuracies, _ = fine_tune_in_c(
            model_file, SCHEME, "", out / directory, args.epochs, lr=lr, extra=extra
        )
        cells = " | ".join(f"{a:.1%}" for a in accuracies)
        print(f"| {label} | {sram:,} | {before:.1%} | {cells} |", flush=True)

    if not args.count_updates:
        return
    print()
    print(
        f"integer values changed by the first {args.count_updates} updates (per update, "
        "on average; at least once)"
    )
    print()
    print("| run | " + " | ".join(f"@{name}" for name in INTEGER_PARAMS) + " |")
    print("|---|" + "---:|" * len(INTEGER_PARAMS))
    for label, options, lr in runs:
        if "--quantize-level=2" not in options:
            continue
        extra = tuple(option.format(calibration=calibration) for option in options)
        counts = integer_updates(model_file, extra, lr, of_classes(train, NEW), args.count_updates)
        cells = " | ".join(
            f"{counts[name][0]:.1%}; {counts[name][1]:.1%}" for name in INTEGER_PARAMS
        )
        print(f"| {label} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
