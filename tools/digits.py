"""Write scikit-learn's bundled handwritten digits as ADIRDATA files for the C training program.

    python tools/digits.py OUT_DIR          -> OUT_DIR/train.bin, OUT_DIR/test.bin

The 1,797 8x8 digits (0..16 grey levels, bundled with scikit-learn: no download) are upsampled
to 28x28 the way MNIST frames its digits: bilinear to 20x20, centred on a 28x28 zero canvas,
scaled to [0, 1]. A fixed shuffle splits them 80/20 into train (1,437) and test (360).
The file format is `adir.backends.c.harness.DATASET_FORMAT`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SIDE, DIGIT_SIDE = 28, 20


def bilinear(image: np.ndarray, side: int) -> np.ndarray:
    """Resize a square image to side x side, sampling pixel centres (align_corners=False)."""
    n = image.shape[0]
    centres = (np.arange(side) + 0.5) * n / side - 0.5
    low = np.clip(np.floor(centres).astype(int), 0, n - 1)
    high = np.clip(low + 1, 0, n - 1)
    w = np.clip(centres - low, 0.0, 1.0)
    rows = image[low] * (1 - w)[:, None] + image[high] * w[:, None]
    return rows[:, low] * (1 - w)[None, :] + rows[:, high] * w[None, :]


def digits_28x28() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = np.zeros((len(digits.images), SIDE, SIDE), np.float32)
    start = (SIDE - DIGIT_SIDE) // 2
    for i, image in enumerate(digits.images):
        images[i, start : start + DIGIT_SIDE, start : start + DIGIT_SIDE] = bilinear(
            image / 16.0, DIGIT_SIDE
        )
    return images, digits.target.astype(np.int32)


def write_adirdata(path: Path, images: np.ndarray, labels: np.ndarray) -> None:
    features = int(np.prod(images.shape[1:]))
    records = np.zeros(len(images), [("x", "<f4", (features,)), ("label", "<i4")])
    records["x"] = images.reshape(len(images), features)
    records["label"] = labels
    header = b"ADIRDATA" + np.array([len(images), features], "<u4").tobytes()
    path.write_bytes(header + records.tobytes())


def main(out: str) -> None:
    images, labels = digits_28x28()
    order = np.random.default_rng(0).permutation(len(images))
    split = len(images) * 4 // 5
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    write_adirdata(directory / "train.bin", images[order[:split]], labels[order[:split]])
    write_adirdata(directory / "test.bin", images[order[split:]], labels[order[split:]])
    print(f"{directory}/train.bin: {split} digits, {directory}/test.bin: {len(images) - split}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/digits")
