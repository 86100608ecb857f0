"""MobileNetV2 with width multiplier 0.35 at 128x128, a new 10-class head: the model that the
Tiny Training Engine fine-tunes on a microcontroller (Lin et al., "On-Device Training Under
256KB Memory", NeurIPS 2022; its "MbV2-w0.35"), from Sandler et al., "MobileNetV2: Inverted
Residuals and Linear Bottlenecks", CVPR 2018.

One 128x128 RGB image; 10 classes:

    3x128x128 -conv 3x3 stride 2, bn, relu6-> 16x64x64
    -> 17 inverted residual blocks: [expand 1x1, bn, relu6] (not in the first block, whose
       expansion is 1), depthwise 3x3 (stride 1 or 2), bn, relu6, project 1x1, bn (linear);
       plus the input where the stride is 1 and the channels do not change
       outputs 8, 8 x 2, 16 x 3, 24 x 4, 32 x 3, 56 x 3, 112 (MobileNetV2's 16 ... 320 times
       0.35, rounded to multiples of 8 as torchvision's and TTE's `make_divisible` do),
       expansion 6, stride 2 first in the stages of 8 x 2, 16, 24 and 56 channels
    -> 112x4x4 -conv 1x1, bn, relu6-> 1280x4x4 -average pool-> 1280 -fc-> 10

The resolution: TTE's code trains and compiles at 128 (github.com/mit-han-lab/tiny-training,
`algorithm/configs/default.yaml`: `image_size: 128`; `compilation/mcu_ir_gen.py`: `rs = 128`,
`num_classes = 10`); the paper's text was not available here to check the number against it.
The issue's figures (12.6 MB of arena for full training at 128x128; "the 64x64x48 expansion")
are of this network. The last 1x1 convolution keeps MobileNetV2's 1280 channels for widths
below 1 (torchvision's and TTE's `last_channel` rule). Convolutions have no bias (each feeds a
batch norm); batch norms run in training mode; no dropout before the classifier (TTE's
`dropout: 0.`); the softmax is in the loss.
"""

from __future__ import annotations

import torch
from torch import nn

LOSS = "cross_entropy"

CHANNELS, SIZE, CLASSES = 3, 128, 10
WIDTH = 0.35
LAST_CHANNELS = 1280
# MobileNetV2's stages at width 1: (expansion t, outputs c, repeats n, first stride s).
STAGES = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
]


def make_divisible(value: float, divisor: int = 8) -> int:
    """The nearest multiple of `divisor`, never 10% below `value` (torchvision's rule)."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def conv_bn(
    inputs: int, outputs: int, kernel: int, stride: int = 1, groups: int = 1, relu6: bool = True
) -> list[nn.Module]:
    layers: list[nn.Module] = [
        nn.Conv2d(inputs, outputs, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(outputs),
    ]
    return [*layers, nn.ReLU6()] if relu6 else layers


class InvertedResidual(nn.Module):
    def __init__(self, inputs: int, outputs: int, stride: int, expansion: int) -> None:
        super().__init__()
        hidden = inputs * expansion
        layers = conv_bn(inputs, hidden, 1) if expansion != 1 else []
        layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
        layers += conv_bn(hidden, outputs, 1, relu6=False)
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and inputs == outputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        channels = make_divisible(32 * WIDTH)
        layers: list[nn.Module] = [nn.Sequential(*conv_bn(CHANNELS, channels, 3, 2))]
        for expansion, width_1_outputs, repeats, stride in STAGES:
            outputs = make_divisible(width_1_outputs * WIDTH)
            for index in range(repeats):
                layers.append(
                    InvertedResidual(channels, outputs, stride if index == 0 else 1, expansion)
                )
                channels = outputs
        layers.append(nn.Sequential(*conv_bn(channels, LAST_CHANNELS, 1)))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(LAST_CHANNELS, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


def model() -> nn.Module:
    torch.manual_seed(0)
    return MobileNetV2()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """`batch` images and their class labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, CHANNELS, SIZE, SIZE, generator=generator)
    return x, torch.randint(0, CLASSES, (batch,), generator=generator)
