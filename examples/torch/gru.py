"""A GRU classifier for human activity recognition on 3-axis accelerometer windows.

The standard recurrent baseline of tinyML keyword spotting and activity recognition: one GRU
layer over the sequence, its last hidden state into a linear classifier (the GRU models of
Zhang, Suda, Lai and Chandra, "Hello Edge: Keyword Spotting on Microcontrollers",
arXiv:1711.07128, 2017, are this network on MFCC frames; here the frames are accelerometer
samples). The input is a window of 32 samples of the three axes, time first after the batch,
`[N, 32, 3]` (`batch_first=True`), and the output the logits of the six activities of the UCI
HAR dataset (Anguita et al., ESANN 2013). Hidden size 32: 3,552 parameters in the GRU and 198 in
the classifier (15,000 bytes in float32).

torch.export unrolls the GRU over the 32 steps: per step a linear map of the input and one of the
hidden state (`addmm`), each split into the reset, update and new gates, and PyTorch's cell
`h' = (1 - z) * n + z * h` written as `(h - n) * z + n`; adir imports those ops as they are
(docs/frontends.md says what that costs in memory).

`forward(x)` returns the logits; `forward(x, label)` the mean cross-entropy against the class
indices `label`, which is what adir imports as the loss function (`example_input`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

WINDOW = 32  # samples per window
AXES = 3  # accelerometer x, y, z
HIDDEN = 32
CLASSES = 6  # UCI HAR's activities


class GruClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(AXES, HIDDEN, batch_first=True)
        self.classifier = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor, label: torch.Tensor | None = None) -> torch.Tensor:
        _, hidden = self.gru(x)  # hidden: [layers = 1, N, HIDDEN], the last step's state
        logits = self.classifier(hidden[-1])
        return logits if label is None else F.cross_entropy(logits, label)


def model() -> nn.Module:
    torch.manual_seed(0)
    return GruClassifier()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """A batch of windows (standard normal, as standardized accelerometer data) and activity
    labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, WINDOW, AXES, generator=generator)
    label = torch.randint(0, CLASSES, (batch,), generator=generator)
    return x, label
