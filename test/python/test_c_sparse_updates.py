"""Sparse update schemes through the compiled C train like PyTorch with the same parameters
frozen and the same channels masked (sparse_update_testing.py): 20 steps of SGD and of Adam,
float32 on both sides (gcc and clang, ASan/UBSan), the loss of every step and every parameter
after them to 1e-5 relative (elements to 1e-5 of their tensor's largest magnitude: one that
training carries near zero keeps only its absolute error). The frozen blocks of a split weight
are `static const` in the C and end bit for bit where they started.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from c_testing import build_c, c_compilers, run_pipeline
from sparse_update_testing import (
    ALL,
    OPTIMIZERS,
    SCHEMES,
    STEPS,
    batches,
    imported,
    torch_training,
    whole_params,
)

from adir.backends.c.model import print_model
from adir.passes import PLANNING_PIPELINE

RTOL = 1e-5
# The channel scheme with each compiler, the others with the first (each build under ASan and
# UBSan takes about 10 s).
CASES = [("channels", "sgd", compiler) for compiler in c_compilers()] + [
    ("channels", "adam", c_compilers()[0]),
    ("bias_last", "sgd", c_compilers()[0]),
    ("channels_count", "adam", c_compilers()[0]),
]


@pytest.mark.slow
@pytest.mark.parametrize(("scheme", "optimizer", "compiler"), CASES)
def test_scheme_in_c_trains_like_pytorch(scheme: str, optimizer: str, compiler: str) -> None:
    model, module = imported(SCHEMES[scheme])
    initial = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    kind, lr = OPTIMIZERS[optimizer]
    planned = run_pipeline(
        module,
        f"infer-shapes,autodiff,insert-optimizer{{kind={kind} lr={lr}}}," + PLANNING_PIPELINE,
    )
    with tempfile.TemporaryDirectory(prefix="adir-c-") as directory:
        build = build_c(planned, "train_step", STEPS, Path(directory), compiler, sanitize=True)
        outputs = build.run(0, batches())
    source = print_model(planned, "m_").source
    params = [op.sym_name.data for op in planned.ops if op.name == "adir.param"]
    values = dict(zip(params, outputs[STEPS:], strict=True))
    torch_losses, torch_params = torch_training(model, SCHEMES[scheme], optimizer, torch.float32)
    np.testing.assert_allclose([float(v) for v in outputs[:STEPS]], torch_losses, rtol=RTOL)
    whole = whole_params(planned, values)
    for name in ALL:
        scale = float(np.abs(torch_params[name]).max())
        np.testing.assert_allclose(
            whole[name], torch_params[name], rtol=RTOL, atol=RTOL * scale, err_msg=name
        )
    for name, channels in SCHEMES[scheme].masked.items():
        np.testing.assert_array_equal(whole[name][channels:], initial[name][channels:])
        frozen = name.replace(".", "_") + "_frozen"
        assert (
            f"static const float m_{frozen}[" in source or f"static const float {frozen}[" in source
        ), frozen
