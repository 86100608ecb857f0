"""Transfer learning with a sparse scheme: pretrain on the host, fine-tune in C on new classes.

    .venv/bin/python tools/transfer_demo.py                # build/transfer, 5 epochs, 64 KB
    .venv/bin/python tools/transfer_demo.py --epochs 10 --sram 32K --out /tmp/transfer
    .venv/bin/python tools/transfer_demo.py --schemes "bias + last layer" --epochs 1

A small CNN (three conv-batchnorm-relu layers, global average pooling, a 10-way classifier) is
pretrained in PyTorch on scikit-learn's bundled 8x8 digits 0-4 (no download). It has never seen a
5-9, so on the test digits 5-9 it is right on none of them. It is then imported into adir (batch
1, training mode) and, for each sparse update scheme, compiled to C with the training program of
`--c-main` (`adir-opt --train=SCHEME --optimizer=sgd --predict --emit-c --c-main`), built with
the system C compiler and fine-tuned in C on the training digits 5-9 alone; the program prints
the test accuracy on the digits 5-9 after each epoch. The schemes: the classifier alone
(`last:1`), TTE's bias-only + the classifier (`bias+last:1`), and the scheme
`suggest-update-scheme` picks for `--sram` (`--train=suggested`). For each it prints the SRAM the
C program's step needs (its arena and its parameters and state in RAM) and the accuracy before
and after. The accuracy before is the pretrained PyTorch model's in eval mode, which the C's
`@predict` computes (batchnorm with running statistics).

The data: the 1,797 digits scaled to [0, 1], split 80/20 by a fixed shuffle; the old classes'
training digits pretrain, the new classes' fine-tune, the new classes' test digits measure.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import import_module
from adir.limits import parse_size

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from c_runtime import model_sources, runtime_objects  # noqa: E402  (tools/c_runtime.py)
from digits import write_adirdata  # noqa: E402  (tools/digits.py, beside this file)

OLD, NEW = range(0, 5), range(5, 10)
SCHEMES = {"last layer": "last:1", "bias + last layer": "bias+last:1", "suggested": "suggested"}
LR = 0.05


class DigitsCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.bn3 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1(self.conv1(x)))
        h = torch.relu(self.bn2(self.conv2(h)))
        h = torch.relu(self.bn3(self.conv3(h)))
        return self.fc(h.mean(dim=(2, 3)))


def digits() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(train, test) images [N, 1, 8, 8] in [0, 1] and labels, split 80/20."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = (data.images / 16.0).astype(np.float32)[:, None]
    labels = data.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(images))
    split = len(images) * 4 // 5
    train, test = order[:split], order[split:]
    return (images[train], labels[train]), (images[test], labels[test])


def of_classes(data: tuple[np.ndarray, np.ndarray], classes: range):
    images, labels = data
    keep = np.isin(labels, list(classes))
    return images[keep], labels[keep]


def pretrain(model: nn.Module, data, epochs: int = 30) -> None:
    images, labels = (torch.from_numpy(a) for a in data)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(0)
    model.train()
    for _ in range(epochs):
        for batch in torch.randperm(len(images), generator=generator).split(32):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images[batch]), labels[batch].long())
            loss.backward()
            optimizer.step()


def accuracy(model: nn.Module, data) -> float:
    images, labels = data
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(images)).argmax(dim=1).numpy()
    model.train()
    return float(np.mean(predicted == labels))


def fine_tune_in_c(
    model_file: Path,
    scheme: str,
    sram: str,
    out: Path,
    epochs: int,
    lr: float = LR,
    extra: tuple[str, ...] = (),
):
    """Compile (adir-opt's `extra` options added: tools/qas_convergence.py's quantization),
    build and run the C training program; (SRAM bytes, accuracy per epoch, the scheme it
    trained)."""
    options = ["--train=" + scheme, *extra]
    if scheme == "suggested":
        options.append(f"--sram={sram}")
    compiled = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "adir-opt"), str(model_file), *options, "--optimizer=sgd",
         f"--lr={lr}", "--predict", f"--emit-c={out}", "--c-main", "--c-prefix=t_"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    trained = re.search(r"--train=(\S+)", compiled.stderr) if scheme == "suggested" else None
    # The runtime compiled once a run (tools/c_runtime.py), each run's model and main here.
    command = ("cc", "-std=c99", "-O2")
    objects = runtime_objects(out.parent, command)
    program = out / "train"
    subprocess.run(
        [*command, f"-I{out}", *model_sources(out), *objects, "-o", str(program), "-lm"],
        check=True,
    )
    run = subprocess.run(
        [str(program), str(out.parent / "new_train.bin"), str(out.parent / "new_test.bin"),
         str(epochs)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    arena, state = (int(n) for n in re.search(r"arena (\d+) bytes, parameters and state (\d+)",
                                                run.stdout).groups())  # fmt: skip
    accuracies = [float(a) / 100 for a in re.findall(r"test accuracy ([\d.]+)%", run.stdout)]
    return arena + state, accuracies, trained[1] if trained else scheme


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--sram", default="64K", help="the budget of --train=suggested")
    parser.add_argument("--out", default=str(ROOT / "build" / "transfer"))
    parser.add_argument(
        "--schemes", nargs="+", choices=list(SCHEMES), default=list(SCHEMES), help="by label"
    )
    args = parser.parse_args()
    parse_size(args.sram)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train, test = digits()
    model = DigitsCnn()
    pretrain(model, of_classes(train, OLD))
    old_accuracy = accuracy(model, of_classes(test, OLD))
    before = accuracy(model, of_classes(test, NEW))
    print(
        f"pretrained on digits 0-4 in PyTorch: test accuracy {old_accuracy:.1%} on 0-4, "
        f"{before:.1%} on 5-9"
    )
    write_adirdata(out / "new_train.bin", *of_classes(train, NEW))
    write_adirdata(out / "new_test.bin", *of_classes(test, NEW))
    example = torch.from_numpy(train[0][:1])
    module = import_module(model, (example,), loss="cross_entropy")
    model_file = out / "digits_cnn.mlir"
    model_file.write_text(module_to_text(module))
    print(f"fine-tuned in C on digits 5-9 ({len(of_classes(train, NEW)[0])} images), SGD lr {LR}")
    print()
    print("| scheme | SRAM (bytes) | accuracy on 5-9 before | after epoch 1 | after the last |")
    print("|---|---:|---:|---:|---:|")
    for label in args.schemes:
        scheme = SCHEMES[label]
        sram, accuracies, trained = fine_tune_in_c(
            model_file, scheme, args.sram, out / label.replace(" ", "_"), args.epochs
        )
        print(
            f"| {label} (`{trained}`) | {sram:,} | {before:.1%} | {accuracies[0]:.1%} | "
            f"{accuracies[-1]:.1%} |"
        )


if __name__ == "__main__":
    main()
