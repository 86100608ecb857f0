"""DS-CNN, the depthwise-separable CNN for keyword spotting: MLPerf Tiny's KWS reference model
(Banbury et al., "MLPerf Tiny Benchmark", NeurIPS 2021 Datasets and Benchmarks; the Keras model
of github.com/mlcommons/tiny, benchmark/training/keyword_spotting/keras_model.py), from Zhang,
Suda, Lai & Chandra, "Hello Edge: Keyword Spotting on Microcontrollers", 2017 (DS-CNN-S).

One utterance is 49 frames of 10 MFCCs; 12 classes (10 words, silence, unknown):

    1x1x49x10 -conv 10x4 stride 2 ("same")-> 64x25x5 -bn relu dropout 0.2->
    4 x [ depthwise 3x3 ("same") -bn relu-> pointwise 1x1 -bn relu-> ] 64x25x5
    -dropout 0.4-> average pool over 25x5 -> 64 -fc-> 12

as the Keras reference writes it, in PyTorch: TensorFlow's "same" padding is asymmetric for an
even kernel or a stride (conv1 pads 4 rows above and 5 below), which PyTorch's `padding=` cannot
say, so it is an `nn.ZeroPad2d` before the convolution (`TfSamePadding`); the importer folds it
into the convolution's padding. The convolutions have no bias: each feeds a batch norm, whose
beta is the bias. Batch norms and dropouts run in training mode. The architecture is
examples/ds_cnn.mlir's, which writes the same network by hand in adir's IR.

Imported by tools/generate_examples.py as examples/ds_cnn_torch.mlir (examples/ds_cnn.mlir is
the hand-written one): `@loss(%x, %label, %step)`, the step counter for dropout's masks.
"""

from __future__ import annotations

import torch
from torch import nn

LOSS = "cross_entropy"
EXAMPLE = "ds_cnn_torch"  # examples/ds_cnn.mlir is the hand-written DS-CNN

FRAMES, MFCCS, CLASSES, FILTERS = 49, 10, 12, 64


def tf_same_padding(size: tuple[int, int], kernel: tuple[int, int], stride: int) -> nn.ZeroPad2d:
    """TensorFlow's "same": the output is ceil(size / stride), the padding that needs split
    with the odd row or column after (below, right)."""
    sides = []
    for extent, k in zip(reversed(size), reversed(kernel), strict=True):  # W first, as F.pad
        out = -(-extent // stride)
        total = max((out - 1) * stride + k - extent, 0)
        sides += [total // 2, total - total // 2]
    return nn.ZeroPad2d(tuple(sides))


def conv_bn_relu(conv: nn.Conv2d) -> list[nn.Module]:
    return [conv, nn.BatchNorm2d(conv.out_channels), nn.ReLU()]


class DSCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layers: list[nn.Module] = [tf_same_padding((FRAMES, MFCCS), (10, 4), 2)]
        layers += conv_bn_relu(nn.Conv2d(1, FILTERS, (10, 4), stride=2, bias=False))
        layers.append(nn.Dropout(0.2))
        size = (-(-FRAMES // 2), -(-MFCCS // 2))  # 25 x 5
        for _ in range(4):
            layers.append(tf_same_padding(size, (3, 3), 1))
            layers += conv_bn_relu(nn.Conv2d(FILTERS, FILTERS, 3, groups=FILTERS, bias=False))
            layers += conv_bn_relu(nn.Conv2d(FILTERS, FILTERS, 1, bias=False))
        layers += [nn.Dropout(0.4), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(FILTERS, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def model() -> nn.Module:
    torch.manual_seed(0)
    return DSCNN()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """`batch` utterances of MFCCs and their class labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 1, FRAMES, MFCCS, generator=generator)
    return x, torch.randint(0, CLASSES, (batch,), generator=generator)
