"""Random valid models (random_models.py) through every pass to C: each compiles with -Werror,
runs under ASan and UBSan (built with gcc and with clang, each where present), and trains for 50
steps like the interpreter (every loss to 1e-5 relative, every parameter and optimizer state to
1e-5 of its tensor's scale), and every memory plan passes the plan verifier.

CI runs a fixed set of seeds; a longer run is

    ADIR_RANDOM_MODELS=300 python -m pytest -q test/python/test_c_random_models.py

(300 models with each compiler: the two compilers warn about different things, and their
sanitizers check different things).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from c_testing import c_compilers, check_c_against_interpreter, run_pipeline
from random_models import random_model

from adir.passes import PLANNING_PIPELINE

COUNT = int(os.environ.get("ADIR_RANDOM_MODELS", "12"))
STEPS = 50


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
@pytest.mark.parametrize("seed", range(COUNT))
def test_random_model_trains_in_c_like_the_interpreter(seed: int, compiler: str) -> None:
    rng = np.random.default_rng(seed)
    model = random_model(rng)
    steps = [model.arguments(rng) for _ in range(STEPS)]
    differentiate = f"autodiff,{model.optimizer}"
    planned = run_pipeline(
        model.module,
        f"infer-shapes,{differentiate},{PLANNING_PIPELINE},verify-memory-plan",
    )
    assert planned.attributes["adir.arena_size"] is not None, model.description
    check_c_against_interpreter(
        model.module,
        "train_step",
        steps,
        differentiate=differentiate,
        param_atol=1e-5 if "adam" in model.optimizer else None,
        params_to_tensor_scale=True,
        compiler=compiler,
    )
