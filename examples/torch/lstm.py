"""An LSTM classifier for human activity recognition on 3-axis accelerometer windows.

The LSTM counterpart of examples/torch/gru.py, the other standard recurrent baseline of tinyML
keyword spotting and activity recognition: one LSTM layer over the sequence, its last hidden
state into a linear classifier (the LSTM models of Zhang, Suda, Lai and Chandra, "Hello Edge:
Keyword Spotting on Microcontrollers", arXiv:1711.07128, 2017, are this network on MFCC
frames; DeepConvLSTM, Ordonez and Roggen, Sensors 16(1):115, 2016, puts convolutions before
it on accelerometer data). The input is a window of 32 samples of the three axes, `[N, 32, 3]`
(`batch_first=True`), and the output the logits of the six activities of the UCI HAR dataset
(Anguita et al., ESANN 2013). Hidden size 32: 4,736 parameters in the LSTM and 198 in the
classifier (19,736 bytes in float32).

torch.export unrolls the LSTM over the 32 steps: per step a linear map of the input and one of
the hidden state (`addmm`), their sum split into the input, forget, cell and output gates,
`c' = f * c + i * g` and `h' = o * tanh(c')`; adir imports those ops as they are.

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


class LstmClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(AXES, HIDDEN, batch_first=True)
        self.classifier = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x: torch.Tensor, label: torch.Tensor | None = None) -> torch.Tensor:
        _, (hidden, _) = self.lstm(x)  # hidden: [layers = 1, N, HIDDEN], the last step's
        logits = self.classifier(hidden[-1])
        return logits if label is None else F.cross_entropy(logits, label)


def model() -> nn.Module:
    torch.manual_seed(0)
    return LstmClassifier()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """A batch of windows (standard normal, as standardized accelerometer data) and activity
    labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, WINDOW, AXES, generator=generator)
    label = torch.randint(0, CLASSES, (batch,), generator=generator)
    return x, label
