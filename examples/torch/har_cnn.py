"""A 1-D CNN for human activity recognition on 3-axis accelerometer windows.

The input is one window of 128 samples (2.56 s at 50 Hz) of the three accelerometer axes,
channels first, `[N, 3, 128]`, and the output the logits of the six activities of the UCI HAR
dataset (walking, walking upstairs, walking downstairs, sitting, standing, lying; Anguita et
al., "A Public Domain Dataset for Human Activity Recognition Using Smartphones", ESANN 2013),
whose windows have exactly this shape.

The architecture is the fully convolutional network (FCN) of Wang, Yan and Oates, "Time Series
Classification from Scratch with Deep Neural Networks: A Strong Baseline", IJCNN 2017
(arXiv:1611.06455): three blocks of convolution, batch normalization and ReLU, then global
average pooling and a linear classifier. Scaled to a microcontroller, and three changes, each
for a reason:

- 16, 32 and 16 filters instead of 128, 256 and 128 (4,662 parameters and 128
  batch-norm running statistics: 19,160 bytes in float32);
- kernel sizes 7, 5 and 3 instead of 8, 5 and 3: with `padding="same"`, an odd kernel pads
  both ends equally, which is the convolution's own padding, while an even one makes PyTorch
  add a separate asymmetric `constant_pad_nd` before the convolution;
- the convolutions have no bias: the batch norm after each subtracts the channel's mean, so a
  bias has no effect on the output and its gradient is zero up to rounding (which Adam would
  turn into steps of the learning rate's size).

`forward(x)` returns the logits; `forward(x, label)` the mean cross-entropy against the class
indices `label`, which is what adir imports as the loss function (`example_input`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

WINDOW = 128  # samples per window (UCI HAR: 2.56 s at 50 Hz)
AXES = 3  # accelerometer x, y, z
CLASSES = 6  # UCI HAR's activities


def block(in_channels: int, out_channels: int, kernel: int) -> nn.Sequential:
    """FCN's block: a stride-1 convolution keeping the length, batch norm, ReLU."""
    return nn.Sequential(
        nn.Conv1d(in_channels, out_channels, kernel, padding="same", bias=False),
        nn.BatchNorm1d(out_channels),
        nn.ReLU(),
    )


class HarCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(block(AXES, 16, 7), block(16, 32, 5), block(32, 16, 3))
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.classifier = nn.Linear(16, CLASSES)

    def forward(self, x: torch.Tensor, label: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.classifier(torch.flatten(self.pool(self.features(x)), 1))
        return logits if label is None else F.cross_entropy(logits, label)


def model() -> nn.Module:
    torch.manual_seed(0)
    return HarCnn()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """A batch of windows (standard normal, as standardized accelerometer data) and activity
    labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, AXES, WINDOW, generator=generator)
    label = torch.randint(0, CLASSES, (batch,), generator=generator)
    return x, label
