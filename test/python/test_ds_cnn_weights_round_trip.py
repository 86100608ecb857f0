"""Issue 19's round trip: MLPerf Tiny's DS-CNN (examples/torch/ds_cnn.py, training mode: batch
norm with batch statistics, dropout) trains 20 steps in C from its imported weights, the
`--c-main` program writes the trained weights, and the torch module, given them by name
(`load_state_dict`), predicts what the C's `@predict` does to 1e-5.

`adir-opt --predict --optimizer=sgd --emit-c --c-main` on the model imported at batch 4: the
program trains one epoch of 80 random utterances (20 steps; dropout's masks are adir's, which is
why the weights are compared through the file and not with a PyTorch training run) and writes
`weights.bin`. A second main, linked with the same model, loads that blob (`load_params`) and
predicts 3 utterances one at a time (`--predict-batch` is 1 by default). Built with gcc and
ASan/UBSan.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from c_testing import c_flags, runtime_objects
from examples_testing import load_example

from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import import_module, load_state_dict
from adir.tools.adir_opt import main as adir_opt

ROOT = Path(__file__).parents[2]
BATCH, STEPS, TESTS = 4, 20, 3


def adirdata(x: np.ndarray, labels: np.ndarray) -> bytes:
    """An ADIRDATA file (adir/backends/c/harness.py's DATASET_FORMAT)."""
    records = b"".join(
        sample.astype("<f4").tobytes() + struct.pack("<i", int(label))
        for sample, label in zip(x.reshape(len(x), -1), labels, strict=True)
    )
    return b"ADIRDATA" + struct.pack("<II", len(x), x[0].size) + records


PREDICT_MAIN = """\
#include <stdio.h>
#include "kws_model.h"

/* Loads argv[1] (a parameter blob), predicts each utterance of argv[2] (raw float32), writes
 * the scores to argv[3]. */
int main(int argc, char **argv)
{
    static unsigned char blob[KWS_PARAMS_BLOB_BYTES];
    static float x[KWS_PREDICT_X_SIZE], scores[12];
    FILE *weights, *in, *out;
    if (argc != 4) return 2;
    weights = fopen(argv[1], "rb"); in = fopen(argv[2], "rb"); out = fopen(argv[3], "wb");
    if (!weights || !in || !out) return 2;
    if (fread(blob, 1, sizeof blob, weights) != sizeof blob) return 3;
    kws_init(0);
    if (kws_load_params(blob, sizeof blob) != 0) return 4;
    while (fread(x, sizeof x, 1, in) == 1) {
        kws_predict(x, scores);
        fwrite(scores, sizeof scores, 1, out);
    }
    return fclose(out) != 0;
}
"""


@pytest.mark.slow
def test_ds_cnn_trained_in_c_predicts_in_torch_as_in_c(tmp_path: Path) -> None:
    example = load_example("ds_cnn")
    x, _ = example.example_input(BATCH)
    torch_model = example.model()
    module = import_module(torch_model, (x,), loss=example.LOSS)
    (tmp_path / "ds_cnn.mlir").write_text(module_to_text(module))
    c_dir = tmp_path / "c"
    arguments = ["--predict", "--optimizer=sgd", "--lr=0.05", f"--emit-c={c_dir}"]
    arguments += ["--c-prefix=kws_", "--c-main", str(tmp_path / "ds_cnn.mlir")]
    assert adir_opt(arguments) == 0

    rng = np.random.default_rng(19)
    train_x = rng.standard_normal((BATCH * STEPS, 1, 49, 10)).astype(np.float32)
    train_labels = rng.integers(0, 12, BATCH * STEPS)
    test_x = rng.standard_normal((TESTS, 1, 49, 10)).astype(np.float32)
    (tmp_path / "train.bin").write_bytes(adirdata(train_x, train_labels))
    (tmp_path / "test.bin").write_bytes(adirdata(test_x, np.zeros(TESTS, np.int64)))
    (tmp_path / "test.f32").write_bytes(test_x.tobytes())
    (c_dir / "predict_main.c").write_text(PREDICT_MAIN)

    # The runtime as the other C tests build it, once a test run (`runtime_objects`): a user's
    # `cc DIR/*.c` on x86-64 would also compile the AVX2 and AVX-512 versions of the tuned
    # kernels, 130 s under ASan, which test_c_multiversion.py and test_c_kernels_vs_reference.py
    # build and check; what this test checks is the weights' round trip.
    flags = c_flags("-O1", sanitize=True)
    objects = runtime_objects("gcc", tuple(flags))
    for main, program in (("kws_main.c", "train"), ("predict_main.c", "predict")):
        sources = [str(c_dir / "kws_model.c"), str(c_dir / main), *objects]
        built = subprocess.run(
            ["gcc", *flags, "-I", str(c_dir), *sources, "-o", str(tmp_path / program), "-lm"],
            capture_output=True,
            text=True,
        )
        assert built.returncode == 0, built.stderr
    trained = subprocess.run(
        [str(tmp_path / "train"), "train.bin", "test.bin", "1", "0", "weights.bin"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert trained.returncode == 0 and trained.stderr == "", trained.stdout + trained.stderr
    assert "epoch  1" in trained.stdout
    predicted = subprocess.run(
        [str(tmp_path / "predict"), "weights.bin", "test.f32", "scores.f32"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert predicted.returncode == 0 and predicted.stderr == "", predicted.stderr
    c_scores = np.fromfile(tmp_path / "scores.f32", np.float32).reshape(TESTS, 12)

    state = load_state_dict(tmp_path / "weights.bin", torch_model)
    before = {name: tensor.clone() for name, tensor in torch_model.state_dict().items()}
    torch_model.load_state_dict(state)
    assert not torch.equal(before["fc.weight"], state["fc.weight"])  # it trained
    assert not torch.equal(  # and the running statistics moved, batch by batch
        before["features.2.running_mean"], state["features.2.running_mean"]
    )
    with torch.no_grad():
        expected = torch_model.eval()(torch.from_numpy(test_x)).numpy()
    np.testing.assert_allclose(c_scores, expected, rtol=1e-5, atol=1e-5)
