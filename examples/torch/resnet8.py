"""ResNet-8 for CIFAR-10 image classification: MLPerf Tiny's IC reference model (Banbury et
al., "MLPerf Tiny Benchmark", NeurIPS 2021 Datasets and Benchmarks; the Keras model
`resnet_v1_eembc` of github.com/mlcommons/tiny, benchmark/training/image_classification/
keras_model.py), after He, Zhang, Ren & Sun, "Deep Residual Learning for Image Recognition",
CVPR 2016.

One 32x32 RGB image; 10 classes:

    3x32x32 -conv 3x3 16, bn, relu-> 16x32x32
    -> 3 stacks of one residual block each, 16, 32 and 64 channels (the 2nd and 3rd halve H, W):
       x -conv 3x3 (stride s), bn, relu, conv 3x3, bn-> + shortcut(x) -relu->
       shortcut: x itself in the first stack, a 1x1 stride-2 conv in the others
    -> 64x8x8 -average pool 8x8-> 64 -fc-> 10

as the Keras reference writes it, in PyTorch: its "same" 3x3 convolutions (stride 1 and 2) are
`padding=1`, which gives the same output sizes (TensorFlow pads a stride-2 convolution of an
even size 0 above and 1 below, PyTorch 1 on each side: a shift of the sampling grid, not of the
architecture); its 1x1 shortcut is `padding=0`. Every convolution has a bias, as Keras's
Conv2D default; the batch norms run in training mode. The softmax is in the loss
(cross entropy over the logits). 78,186 trainable parameters.
"""

from __future__ import annotations

import torch
from torch import nn

LOSS = "cross_entropy"

CHANNELS, SIZE, CLASSES = 3, 32, 10
STACKS = (16, 32, 64)


class ResidualBlock(nn.Module):
    """conv-bn-relu-conv-bn, plus the shortcut (a 1x1 conv when the shape changes), then relu."""

    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.shortcut: nn.Module = (
            nn.Identity() if stride == 1 else nn.Conv2d(inputs, outputs, 1, stride=stride)
        )
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return self.relu(h + self.shortcut(x))


class ResNet8(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(CHANNELS, STACKS[0], 3, padding=1), nn.BatchNorm2d(STACKS[0]), nn.ReLU()
        )
        blocks, inputs = [], STACKS[0]
        for index, outputs in enumerate(STACKS):
            blocks.append(ResidualBlock(inputs, outputs, stride=1 if index == 0 else 2))
            inputs = outputs
        self.stacks = nn.Sequential(*blocks)
        self.pool = nn.AvgPool2d(SIZE // 4)  # the 8x8 map of the last stack
        self.fc = nn.Linear(STACKS[-1], CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.stacks(self.stem(x))), 1))


def model() -> nn.Module:
    torch.manual_seed(0)
    return ResNet8()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """`batch` images and their class labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, CHANNELS, SIZE, SIZE, generator=generator)
    return x, torch.randint(0, CLASSES, (batch,), generator=generator)
