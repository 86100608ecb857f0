"""Integer parameters through the C parameter API and the parameter blob (version 2 of
`adir/param_blob.py`'s format).

The model is test_int8_level2_pipeline's: a 3x3 conv whose int8 weight `@w` (6x3x3x8, OHWI)
and int32 bias `@b` (6) are trainable parameters (level 2 of quantized training), and a frozen
f32 classifier `@fc` (12x120). Its training step (SGD, QAS) in C (gcc and clang, ASan and
UBSan) with a main that checks the API in C:

- `param_type` gives `TYPE_I8`, `TYPE_I32` and `TYPE_F32` (and -1 past the last);
  `param_data`/`param_writable` (float) give NULL for the integer ones, `param_values` their
  int8_t/int32_t storage, `param_values_writable` NULL for the frozen classifier;
- `save_params` after init and after 5 steps; `load_params` of the initial blob gives it back
  byte for byte when saved again (the integers were restored), and so does the trained one;
- int8 -128 and int32 INT32_MIN written through `param_values_writable` come out of the blob
  as the two's complement extremes (the byte-wise encoding of negative integers).

Then in Python: the initial blob is byte for byte what `write_param_blob` makes of the IR's
initial values (C and Python agree on version 2); `read_param_blob` reads the trained blob as
integers (int8, int32: not dequantized, their scales are the compiled model's), equal to the
interpreter's integers after the same 5 steps, and to the bytes `param_values` held;
`load_state_dict` (torch tensors) leaves the integers out.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from c_testing import PREFIX, build_c, c_compilers, run_pipeline
from test_int8_level2_pipeline import CLASSES, LR, C, H, W, quantized_module

from adir.frontends.torch_state import load_state_dict
from adir.interpreter import Session
from adir.param_blob import blob_bytes, blob_entries, read_param_blob, write_param_blob
from adir.passes import PLANNING_PIPELINE

STEPS = 5
# The blob: the 20-byte header, then the table: "w" (4 + 1 + 3 bytes of padding, rank 4 and
# 4 dims, its type: 32), "b" (8, rank 1 and 1 dim, type: 20), "fc" (8, rank 2 and 2 dims,
# type: 24); the values: 432 int8 bytes, 6 int32 (24), 12 x 120 float32 (5,760).
BLOB_BYTES = 20 + 32 + 20 + 24 + 432 + 24 + 5760


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.0, 2.0, (STEPS, 1, H, W, C)).astype(np.float32)
    labels = np.array([[step % CLASSES] for step in range(STEPS)], np.int32)
    return x, labels


def driver(x: np.ndarray, labels: np.ndarray) -> str:
    p, m = PREFIX, PREFIX.upper()
    floats = ", ".join(f"{float(v)!r}f" for v in x.reshape(-1))
    return f"""\
#include <stdio.h>
#include <string.h>
#include "{p}model.h"

static const float x[{x.size}] = {{{floats}}};
static const int32_t labels[{STEPS}] = {{{", ".join(str(int(v)) for v in labels.reshape(-1))}}};
static unsigned char initial[{m}PARAMS_BLOB_BYTES], trained[{m}PARAMS_BLOB_BYTES];
static unsigned char again[{m}PARAMS_BLOB_BYTES];

static int put(const char *path, const void *data, size_t size)
{{
    FILE *file = fopen(path, "wb");
    int ok = file && fwrite(data, 1, size, file) == size;
    return file && fclose(file) == 0 && ok;
}}

int main(void)
{{
    int step, failed = 0;
    int8_t *w;
    int32_t *b;
    {p}init(0);
    failed |= {m}NUM_PARAMS != 3;
    failed |= {p}param_index("w") != {m}PARAM_W || {p}param_index("b") != {m}PARAM_B;
    failed |= {p}param_type({m}PARAM_W) != {m}TYPE_I8;
    failed |= {p}param_type({m}PARAM_B) != {m}TYPE_I32;
    failed |= {p}param_type({m}PARAM_FC) != {m}TYPE_F32;
    failed |= {p}param_type({m}NUM_PARAMS) != -1;
    failed |= {p}param_data({m}PARAM_W) != NULL || {p}param_writable({m}PARAM_B) != NULL;
    failed |= {p}param_data({m}PARAM_FC) != {p}param_values({m}PARAM_FC);
    failed |= {p}param_values_writable({m}PARAM_FC) != NULL;  /* frozen: flash */
    failed |= {p}param_size({m}PARAM_W) != {m}W_SIZE || {m}W_SIZE != 432;
    w = (int8_t *){p}param_values_writable({m}PARAM_W);
    b = (int32_t *){p}param_values_writable({m}PARAM_B);
    failed |= w == NULL || b == NULL;
    if (failed) return 1;
    failed |= {p}save_params(initial, sizeof initial) != 0;
    for (step = 0; step < {STEPS}; ++step) {{
        {p}train_step(x + step * {H * W * C}, labels + step);
    }}
    failed |= {p}save_params(trained, sizeof trained) != 0;
    failed |= !put("w.bin", w, {m}W_SIZE) || !put("b.bin", b, sizeof(int32_t) * {m}B_SIZE);
    /* The initial integers back, then the trained ones: each saved again byte for byte. */
    failed |= {p}load_params(initial, sizeof initial) != 0;
    failed |= {p}save_params(again, sizeof again) != 0 || memcmp(again, initial, sizeof again);
    failed |= {p}load_params(trained, sizeof trained) != 0;
    failed |= {p}save_params(again, sizeof again) != 0 || memcmp(again, trained, sizeof again);
    /* Another model's table (the int8 weight's type code changed) is refused. */
    trained[48] ^= 1u;
    failed |= {p}load_params(trained, sizeof trained) != -1;
    trained[48] ^= 1u;
    /* The two's complement extremes through the blob. */
    w[0] = -128;
    b[0] = INT32_MIN;
    failed |= {p}save_params(again, sizeof again) != 0;
    failed |= !put("initial.bin", initial, sizeof initial);
    failed |= !put("trained.bin", trained, sizeof trained);
    failed |= !put("edited.bin", again, sizeof again);
    return failed;
}}
"""


@pytest.mark.parametrize("compiler", c_compilers())
def test_integer_parameters_round_trip_through_the_c_api_and_the_blob(
    compiler: str, tmp_path: Path
) -> None:
    module, _ = quantized_module()
    tensor_level = run_pipeline(
        module, f"infer-shapes,autodiff,insert-optimizer{{kind=sgd lr={LR}}}"
    )
    planned = run_pipeline(tensor_level, PLANNING_PIPELINE)
    entries = blob_entries(tensor_level)
    assert [(e.name, e.dtype.str) for e in entries] == [
        ("w", "|i1"),
        ("b", "<i4"),
        ("fc", "<f4"),
    ]
    assert blob_bytes(entries) == BLOB_BYTES
    x, labels = inputs()
    built = build_c(
        planned, "train_step", 0, tmp_path, compiler, sanitize=True, driver=driver(x, labels)
    )
    ran = subprocess.run(
        [str(built.executable)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, f"a check of the C API failed:\n{ran.stdout}{ran.stderr}"
    assert ran.stderr == ""

    # C and Python write the same version-2 blob of the initial values.
    session = Session(tensor_level)
    initial = {op: session.params[op].copy() for op in ("w", "b", "fc")}
    assert initial["w"].dtype == np.int8 and initial["b"].dtype == np.int32
    blob = (tmp_path / "initial.bin").read_bytes()
    assert len(blob) == BLOB_BYTES and blob[8:12] == (2).to_bytes(4, "little")
    assert blob == write_param_blob(initial)

    # The trained blob as integers: the interpreter's after the same steps, bit for bit.
    for step in range(STEPS):
        session.call("train_step", x[step], labels[step])
    trained = read_param_blob((tmp_path / "trained.bin").read_bytes())
    assert trained["w"].dtype == np.int8 and trained["b"].dtype == np.int32
    np.testing.assert_array_equal(trained["w"], session.params["w"])
    np.testing.assert_array_equal(trained["b"], session.params["b"])
    np.testing.assert_array_equal(trained["fc"], initial["fc"])
    assert (trained["w"] != initial["w"]).sum() > 0  # the steps moved the weight
    assert (tmp_path / "w.bin").read_bytes() == trained["w"].tobytes()
    assert (tmp_path / "b.bin").read_bytes() == trained["b"].astype("<i4").tobytes()

    # load_state_dict makes torch tensors of the float parameters only.
    assert set(load_state_dict(tmp_path / "trained.bin")) == {"fc"}

    edited = read_param_blob((tmp_path / "edited.bin").read_bytes())
    assert edited["w"].reshape(-1)[0] == -128 and edited["b"][0] == -(2**31)
    np.testing.assert_array_equal(edited["w"].reshape(-1)[1:], trained["w"].reshape(-1)[1:])
