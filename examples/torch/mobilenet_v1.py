"""MobileNetV1 with width multiplier 0.25 for Visual Wake Words (person / no person):
MLPerf Tiny's VWW reference model (Banbury et al., "MLPerf Tiny Benchmark", NeurIPS 2021
Datasets and Benchmarks; the Keras model `mobilenet_v1` of github.com/mlcommons/tiny,
benchmark/training/visual_wake_words/vww_model.py), from Howard et al., "MobileNets: Efficient
Convolutional Neural Networks for Mobile Vision Applications", 2017; the dataset is
Chowdhery et al., "Visual Wake Words Dataset", 2019.

One 96x96 RGB image; 2 classes:

    3x96x96 -conv 3x3 stride 2, bn, relu6-> 8x48x48
    -> 13 depthwise-separable blocks: depthwise 3x3 (stride 1 or 2), bn, relu6,
       pointwise 1x1, bn, relu6; channels 16, 32, 32, 64, 64, 128 x 6, 256, 256 (MobileNetV1's
       32 ... 1024 times 0.25), stride 2 in blocks 2, 4, 6 and 12
    -> 256x3x3 -average pool 3x3-> 256 -fc-> 2

with MobileNetV1's ReLU6 (the paper's, and Keras's applications.MobileNet; MLPerf Tiny's
training script writes plain ReLU): `model_with_relu()` builds that variant, with the same
weights. The Keras "same" 3x3 convolutions are `padding=1` (the same output sizes; TensorFlow
pads a stride-2 convolution of an even size 0 above and 1 below, PyTorch 1 on each side). Every
convolution has a bias, as Keras's Conv2D and DepthwiseConv2D default; the batch norms run in
training mode; the softmax is in the loss. 216,322 trainable parameters.
"""

from __future__ import annotations

import torch
from torch import nn

LOSS = "cross_entropy"

CHANNELS, SIZE, CLASSES = 3, 96, 2
WIDTH = 0.25
# MobileNetV1's depthwise-separable blocks at width 1: (pointwise outputs, depthwise stride).
BLOCKS = [
    (64, 1),
    (128, 2),
    (128, 1),
    (256, 2),
    (256, 1),
    (512, 2),
    *[(512, 1)] * 5,
    (1024, 2),
    (1024, 1),
]


def conv_bn(conv: nn.Conv2d, activation: type[nn.Module]) -> list[nn.Module]:
    return [conv, nn.BatchNorm2d(conv.out_channels), activation()]


class MobileNetV1(nn.Module):
    def __init__(self, activation: type[nn.Module] = nn.ReLU6) -> None:
        super().__init__()
        channels = int(32 * WIDTH)
        layers = conv_bn(nn.Conv2d(CHANNELS, channels, 3, stride=2, padding=1), activation)
        for width_1_outputs, stride in BLOCKS:
            outputs = int(width_1_outputs * WIDTH)
            depthwise = nn.Conv2d(channels, channels, 3, stride=stride, padding=1, groups=channels)
            layers += conv_bn(depthwise, activation)
            layers += conv_bn(nn.Conv2d(channels, outputs, 1), activation)
            channels = outputs
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d(SIZE // 32)  # the 3x3 map after five stride-2 layers
        self.fc = nn.Linear(channels, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def model(activation: type[nn.Module] = nn.ReLU6) -> nn.Module:
    """MobileNetV1-0.25 with ReLU6, or with `activation` in its place (the same weights)."""
    torch.manual_seed(0)
    return MobileNetV1(activation)


def model_with_relu() -> nn.Module:
    """The same network and weights with plain ReLU, as MLPerf Tiny's training script writes it
    (for comparing the two: `adir-import examples/torch/mobilenet_v1.py:model_with_relu`)."""
    return model(nn.ReLU)


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """`batch` images and their class labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, CHANNELS, SIZE, SIZE, generator=generator)
    return x, torch.randint(0, CLASSES, (batch,), generator=generator)
