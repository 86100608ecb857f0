"""Weights in and out of the generated C by name, and @predict at a batch of its own.

A small imported model (flatten, linear, BatchNorm1d, ReLU, linear: PyTorch names `1.weight`,
`2.running_mean`, ...) trains at batch 8 in C (SGD, gcc and clang, ASan/UBSan) and predicts one
sample (`derive-predict{batch=1}`). The C's own main checks the API: `param_index` by symbol and
by PyTorch name, `save_params` / `load_params` of one blob (`adir/param_blob.py`), a blob of
another model refused, a buffer too small refused. Then in Python:

- the blob of the initial weights is, byte for byte, the one `write_param_blob` makes of the
  IR's initial values under their PyTorch names: the C and Python agree on the format;
- the trained blob, read into a `state_dict` by `load_state_dict` and loaded into the torch
  module by name, predicts what the C's `@predict` does (1e-5): the weights left the device;
- the interpreter, training the same 3 steps and predicting the same sample, agrees with the C
  (1e-5): the predict function at batch 1 computes what the one at batch 8 does per sample;
- after `load_params` of the initial blob, the C predicts what the untrained torch module does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from c_testing import PREFIX, build_c, c_compilers, run_pipeline
from torch import nn

from adir.context import parse_module
from adir.frontends.torch_import import import_module, load_state_dict
from adir.interpreter import Session
from adir.param_blob import blob_bytes, blob_entries, read_param_blob, write_param_blob
from adir.passes import PLANNING_PIPELINE

BATCH, STEPS, FEATURES, CLASSES = 8, 3, 12, 5


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Flatten(), nn.Linear(FEATURES, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, CLASSES)
    )


def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((STEPS, BATCH, 3, 4)).astype(np.float32)
    labels = rng.integers(0, CLASSES, (STEPS, BATCH)).astype(np.int32)
    sample = rng.standard_normal((1, 3, 4)).astype(np.float32)
    return x, labels, sample


def driver(x: np.ndarray, labels: np.ndarray, sample: np.ndarray) -> str:
    """A main() that writes initial.bin, trains, writes trained.bin and predict.bin, then
    checks load_params (reset to initial.bin: reset.bin) and the refusals; exit code 0 only if
    every check of the API holds."""
    p = PREFIX

    def floats(a: np.ndarray) -> str:
        return ", ".join(f"{float(v)!r}f" for v in a.reshape(-1))

    return f"""\
#include <stdio.h>
#include <string.h>
#include "{p}model.h"

static const float x[{STEPS * BATCH * FEATURES}] = {{{floats(x)}}};
static const int32_t labels[{STEPS * BATCH}] = {{{", ".join(str(v) for v in labels.reshape(-1))}}};
static const float sample[{FEATURES}] = {{{floats(sample)}}};
static unsigned char initial[{p.upper()}PARAMS_BLOB_BYTES], trained[{p.upper()}PARAMS_BLOB_BYTES];

static int put(const char *path, const void *data, size_t size)
{{
    FILE *file = fopen(path, "wb");
    int ok = file && fwrite(data, 1, size, file) == size;
    return file && fclose(file) == 0 && ok;
}}

int main(void)
{{
    float out[{CLASSES}];
    int step, failed = 0;
    {p}init(0);
    failed |= {p}param_blob_size() != {p.upper()}PARAMS_BLOB_BYTES;
    failed |= {p}param_index("p1_weight") != {p.upper()}PARAM_P1_WEIGHT;
    failed |= {p}param_index("1.weight") != {p.upper()}PARAM_P1_WEIGHT;
    failed |= {p}param_index("2.running_var") != {p.upper()}PARAM_P2_RUNNING_VAR;
    failed |= {p}param_index("3.weight") != -1;
    failed |= {p}save_params(initial, sizeof initial - 1) != -1;
    failed |= {p}save_params(initial, sizeof initial) != 0;
    for (step = 0; step < {STEPS}; ++step) {{
        {p}train_step(x + step * {BATCH * FEATURES}, labels + step * {BATCH});
    }}
    failed |= {p}save_params(trained, sizeof trained) != 0;
    {p}predict(sample, out);
    failed |= !put("trained.bin", trained, sizeof trained) || !put("predict.bin", out, sizeof out);
    /* Another model's blob (a name changed) and a short one change nothing. */
    initial[24] ^= 1u;
    failed |= {p}load_params(initial, sizeof initial) != -1;
    initial[24] ^= 1u;
    failed |= {p}load_params(initial, sizeof initial - 1) != -1;
    {p}predict(sample, out);
    failed |= !put("trained_again.bin", out, sizeof out);
    failed |= {p}load_params(initial, sizeof initial) != 0;
    {p}predict(sample, out);
    failed |= !put("initial.bin", initial, sizeof initial) || !put("reset.bin", out, sizeof out);
    return failed;
}}
"""


@pytest.mark.parametrize("compiler", c_compilers())
def test_trained_weights_leave_the_c_by_name_and_predict_one_sample(
    compiler: str, tmp_path: Path
) -> None:
    torch_model = model()
    x, labels, sample = data()
    module = import_module(
        torch_model, (torch.from_numpy(x[0]),), loss="cross_entropy", label_dtype=torch.int64
    )
    tensor_level = run_pipeline(
        module, "infer-shapes,derive-predict{batch=1},autodiff,insert-optimizer{kind=sgd lr=0.1}"
    )
    planned = run_pipeline(tensor_level, PLANNING_PIPELINE)
    built = build_c(
        planned, "predict", 0, tmp_path, compiler, sanitize=True, driver=driver(x, labels, sample)
    )
    ran = subprocess.run(
        [str(built.executable)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, f"a check of the C API failed:\n{ran.stdout}{ran.stderr}"
    assert ran.stderr == ""
    predicted = np.fromfile(tmp_path / "predict.bin", np.float32).reshape(1, CLASSES)
    # The refused loads changed nothing.
    assert np.array_equal(np.fromfile(tmp_path / "trained_again.bin", np.float32), predicted[0])

    # The C's blob is the format's: the initial values under the PyTorch names.
    initial = {
        entry.name: Session(tensor_level).params[op.sym_name.data]
        for entry, op in zip(
            blob_entries(tensor_level),
            [op for op in tensor_level.ops if op.name == "adir.param"],
            strict=True,
        )
    }
    assert (tmp_path / "initial.bin").read_bytes() == write_param_blob(initial)
    assert "1.weight" in initial and "2.running_mean" in initial

    # PyTorch, given the trained weights by name, predicts what the C does.
    state = load_state_dict(tmp_path / "trained.bin", torch_model)
    trained_model = model()
    trained_model.load_state_dict(state)
    with torch.no_grad():
        expected = trained_model.eval()(torch.from_numpy(sample)).numpy()
    np.testing.assert_allclose(predicted, expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(expected, model().eval()(torch.from_numpy(sample)).detach().numpy())

    # The interpreter, training the same steps at batch 8, predicts the same for one sample.
    session = Session(tensor_level, np.float32)
    for step in range(STEPS):
        session.call("train_step", x[step], labels[step])
    (interpreted,) = session.call("predict", sample)
    np.testing.assert_allclose(predicted, interpreted, rtol=1e-5, atol=1e-5)
    trained = read_param_blob((tmp_path / "trained.bin").read_bytes())
    np.testing.assert_allclose(
        trained["1.weight"], session.params["p1_weight"], rtol=1e-5, atol=1e-6
    )

    # load_params put the initial weights back: the untrained module's prediction.
    with torch.no_grad():
        untrained = model().eval()(torch.from_numpy(sample)).numpy()
    reset = np.fromfile(tmp_path / "reset.bin", np.float32).reshape(1, CLASSES)
    np.testing.assert_allclose(reset, untrained, rtol=1e-5, atol=1e-5)


FROZEN = """\
adir.param @w : tensor<3x4xf32> = dense<0.5> : tensor<3x4xf32> {trainable = false}
adir.param @b : tensor<3xf32> = #adir.zeros
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %b = adir.load @b : tensor<3xf32>
  %y = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %z = adir.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = adir.cross_entropy %z, %label : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""

FROZEN_DRIVER = f"""\
#include "{PREFIX}model.h"
int main(void)
{{
    static unsigned char blob[M_PARAMS_BLOB_BYTES];
    const float x[8] = {{1, 2, 3, 4, 5, 6, 7, 8}};
    const int32_t label[2] = {{0, 2}};
    float *b;
    m_init(0);
    m_train_step(x, label);
    if (m_save_params(blob, sizeof blob) != 0) return 1;
    m_init(0); /* b is zeros again */
    b = m_param_writable((size_t)m_param_index("b"));
    if (b[0] != 0.0f || m_param_writable((size_t)m_param_index("w")) != 0) return 2;
    if (m_load_params(blob, sizeof blob) != 0) return 3; /* w is in it, and skipped */
    if (b[0] == 0.0f) return 4;
    return m_param_data((size_t)m_param_index("w"))[11] != 0.5f ? 5 : 0;
}}
"""


@pytest.mark.parametrize("compiler", c_compilers())
def test_a_frozen_parameter_is_saved_and_skipped_by_load(compiler: str, tmp_path: Path) -> None:
    """@w, which no function writes, is a constant (flash): save_params writes it (the blob is
    the whole model: 116 bytes, 48 of them w's), load_params sets @b and leaves @w alone."""
    module = run_pipeline(parse_module(FROZEN, "frozen.mlir"), "infer-shapes,autodiff")
    planned = run_pipeline(
        run_pipeline(module, "insert-optimizer{kind=sgd lr=0.1}"), PLANNING_PIPELINE
    )
    assert [e.size for e in blob_entries(planned)] == [12, 3]
    assert blob_bytes(blob_entries(planned)) == 116
    built = build_c(planned, "loss", 0, tmp_path, compiler, sanitize=True, driver=FROZEN_DRIVER)
    ran = subprocess.run([str(built.executable)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stderr == "", f"check {ran.returncode} failed"
    assert "static const float m_w[12]" in (tmp_path / f"{PREFIX}model.c").read_text()
