"""In-place batchnorm: `adir.batchnorm_eval` may overwrite its input
when nothing reads the input later (`WritesResultOver`), which a frozen batchnorm's backward
never does (it reads only its scale). The kernel reads element i before it writes element i,
so the numbers do not change: the C step with the batchnorm in place gives the same bits as
the step with the batchnorm writing a buffer of its own (the trait switched off), and the
arena is smaller by the buffer it no longer needs where that buffer was live at the peak.

The model is test_freeze_batchnorm's: bn2 (frozen, after the trainable conv2) runs as
`batchnorm_eval` after `freeze-batchnorm`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from c_testing import build_c, c_compilers, function, run_pipeline
from test_freeze_batchnorm import BATCH, imported
from xdsl.dialects.builtin import ModuleOp
from xdsl.irdl import traits_def
from xdsl.traits import Pure

from adir.dialects.kernel import KernelOp
from adir.dialects.tensor.normalization import BatchnormEvalOp
from adir.passes import PLANNING_PIPELINE


def planned() -> tuple[ModuleOp, int]:
    tensor_level = run_pipeline(
        imported(), "freeze-batchnorm,autodiff,insert-optimizer{kind=sgd lr=0.1}"
    )
    module = run_pipeline(tensor_level, PLANNING_PIPELINE)
    step = function(module, "train_step")
    return module, step.attributes["adir.arena_size"].value.data  # type: ignore[attr-defined]


def batchnorm_kernels(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.walk() if op.name == "adir_kernel.batchnorm_eval"]  # type: ignore[misc]


def run(module, steps) -> list[bytes]:
    with tempfile.TemporaryDirectory(prefix="adir-bn-") as directory:
        built = build_c(module, "train_step", len(steps), Path(directory), c_compilers()[0])
        return [np.ascontiguousarray(a).tobytes() for a in built.run(0, steps)]


@pytest.mark.slow
def test_batchnorm_eval_in_place_gives_the_same_bits(monkeypatch):
    rng = np.random.default_rng(4)
    steps = [
        [rng.standard_normal((BATCH, 3, 8, 8)).astype(np.float32), rng.integers(0, 3, BATCH)]
        for _ in range(3)
    ]
    in_place, arena = planned()
    kernel = batchnorm_kernels(in_place)[0]  # bn2's, in @train_step (the last function)
    assert kernel.outs[0] is kernel.ins[0]  # type: ignore[attr-defined]
    monkeypatch.setattr(BatchnormEvalOp, "traits", traits_def(Pure()))
    apart, arena_apart = planned()
    kernel_apart = batchnorm_kernels(apart)[0]
    assert kernel_apart.outs[0] is not kernel_apart.ins[0]  # type: ignore[attr-defined]
    assert run(in_place, steps) == run(apart, steps)
    assert arena <= arena_apart
