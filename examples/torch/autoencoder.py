"""The fully connected autoencoder for anomaly detection: MLPerf Tiny's AD reference model
(Banbury et al., "MLPerf Tiny Benchmark", NeurIPS 2021 Datasets and Benchmarks; the Keras model
of github.com/mlcommons/tiny, benchmark/training/anomaly_detection/keras_model.py, the DCASE
2020 task 2 baseline of Koizumi et al., 2020).

A sample is 5 frames of a 128-band log-mel spectrogram of machine sound, 640 values, which the
network reconstructs through an 8-value bottleneck; the loss is the mean squared error between
the reconstruction and the input (the label is the input itself):

    640 -> 4 x [linear 128, batch norm, relu] -> [linear 8, batch norm, relu]
        -> 4 x [linear 128, batch norm, relu] -> linear 640

Batch size: PyTorch's BatchNorm1d in training mode refuses a batch of 1 on these (N, C) inputs
("Expected more than 1 value per channel when training": the running variance is unbiased, a
sum over N - 1 values), so the model trains, and tools/generate_examples.py imports it, at
batch 2 (`BATCH`); the importer reports batch 1 as that located error.
"""

from __future__ import annotations

import torch
from torch import nn

LOSS = "mse"
BATCH = 2  # the smallest batch PyTorch trains BatchNorm1d at on (N, C) inputs

INPUT, HIDDEN, BOTTLENECK = 640, 128, 8


def dense_bn_relu(inputs: int, outputs: int) -> list[nn.Module]:
    return [nn.Linear(inputs, outputs), nn.BatchNorm1d(outputs), nn.ReLU()]


class Autoencoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layers = dense_bn_relu(INPUT, HIDDEN)
        for _ in range(3):
            layers += dense_bn_relu(HIDDEN, HIDDEN)
        layers += dense_bn_relu(HIDDEN, BOTTLENECK)
        layers += dense_bn_relu(BOTTLENECK, HIDDEN)
        for _ in range(3):
            layers += dense_bn_relu(HIDDEN, HIDDEN)
        layers.append(nn.Linear(HIDDEN, INPUT))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def model() -> nn.Module:
    torch.manual_seed(0)
    return Autoencoder()


def example_input(batch: int) -> tuple[torch.Tensor, ...]:
    """`batch` spectrogram windows, and the same as the reconstruction's target."""
    x = torch.randn(batch, INPUT, generator=torch.Generator().manual_seed(0))
    return x, x.clone()
