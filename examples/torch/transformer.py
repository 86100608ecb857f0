"""A 2-layer transformer encoder classifier for keyword spotting on MFCC frames.

The Keyword Transformer (KWT) of Berg, O'Connor and Cruz, "Keyword Transformer: A
Self-Attention Model for Keyword Spotting", Interspeech 2021 (arXiv:2104.00769), scaled to a
microcontroller: each MFCC frame is a token, linearly embedded to d = 64 and added to a learned
positional embedding (a parameter, initialised as KWT's with a normal of std 0.02), then two
post-norm encoder layers (`nn.TransformerEncoderLayer`: 4 heads of 16, a ReLU feed-forward of
128, dropout 0 as KWT's), the mean over the tokens (KWT takes a class token; the mean is the
other usual choice and needs no extra token), and a linear head over the 12 classes of Speech
Commands v2 as MLPerf Tiny's keyword spotting uses them. The input is 16 frames of 10 MFCCs,
`[N, 16, 10]` (KWT reads 98 frames of 40; 16 keep a training step in the C to milliseconds):
69,452 parameters (277,808 bytes in float32).

torch.export writes the attention (`F.scaled_dot_product_attention` inside
`nn.MultiheadAttention`) as batched matmuls over batch x heads, a softmax over the last axis
and PyTorch's guard that gives zeros for a row whose scores are all -inf
(`aten._safe_softmax`), between views, transposes and permutes of 4-D tensors; adir imports
those ops as they are.

`forward(x)` returns the logits; `forward(x, label)` the mean cross-entropy against the class
indices `label`, which is what adir imports as the loss function (`example_input`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

FRAMES = 16  # tokens: MFCC frames
MFCC = 10  # features per frame
D_MODEL = 64
HEADS = 4
FEEDFORWARD = 128
LAYERS = 2
CLASSES = 12  # Speech Commands v2's 10 words, silence and unknown


class KeywordTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(MFCC, D_MODEL)
        self.position = nn.Parameter(torch.empty(1, FRAMES, D_MODEL))
        nn.init.normal_(self.position, std=0.02)
        layer = nn.TransformerEncoderLayer(
            D_MODEL, HEADS, FEEDFORWARD, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, x: torch.Tensor, label: torch.Tensor | None = None) -> torch.Tensor:
        tokens = self.encoder(self.embed(x) + self.position)
        logits = self.head(tokens.mean(dim=1))
        return logits if label is None else F.cross_entropy(logits, label)


def model() -> nn.Module:
    torch.manual_seed(0)
    return KeywordTransformer()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """A batch of MFCC windows (standard normal, as standardized features) and keyword
    labels."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(batch, FRAMES, MFCC, generator=generator)
    label = torch.randint(0, CLASSES, (batch,), generator=generator)
    return x, label
