"""int8 accuracy on real data: the seed MLP and LeNet-5 trained on the digits, then quantized.

Each model trains in its generated C (SGD, batch 1, 5 epochs over the 1,437 training digits in
file order, seed 0: the lr of test_c_digits.py), its trained parameters go back into the IR as
dense data, `derive-predict,quantize-int8` quantizes it with 100 training digits as the
calibration set (a .npy file), and the interpreter classifies the 360 test digits with @predict
(f32) and @predict_int8.

Measured: the seed MLP 335 (f32) and 336 (int8) of 360 right, 359 predictions equal; LeNet-5
354 and 354, all 360 equal. The bounds: int8 within 3 digits (0.8 points) of f32 and at least
355 equal predictions. The int8 logits are a few output steps from the f32 ones
(test_quantize_int8.py), which changes a prediction only where the two best logits are that
close; a trained model has few such digits, a broken quantization many.
scikit-learn (the digits) is required, as for test_c_digits.py.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example
from c_testing import build_c, c_compilers, run_pipeline
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32

from adir.context import adir_context
from adir.dialects.tensor.params import ParamOp
from adir.interpreter import Session
from adir.passes import PLANNING_PIPELINE
from adir.passes.derive_predict import DerivePredictPass
from adir.passes.quantize_int8 import QuantizeInt8Pass

ROOT = Path(__file__).parents[2]
CASES = {"mnist_mlp": ((1, 784), 0.1), "lenet5": ((1, 1, 28, 28), 0.01)}
EPOCHS = 5


def digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """tools/digits.py's images and its train/test split."""
    spec = importlib.util.spec_from_file_location("digits", ROOT / "tools" / "digits.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    images, labels = tool.digits_28x28()
    order = np.random.default_rng(0).permutation(len(images))
    split = len(images) * 4 // 5
    return images, labels, order[:split], order[split:]


def trained_params(name: str, images, labels, train) -> dict[str, np.ndarray]:
    shape, lr = CASES[name]
    planned = run_pipeline(
        parse_example(name),
        f"infer-shapes,autodiff,insert-optimizer{{kind=sgd lr={lr}}},{PLANNING_PIPELINE}",
    )
    steps = [[images[i].reshape(shape), labels[i : i + 1]] for _ in range(EPOCHS) for i in train]
    with tempfile.TemporaryDirectory(prefix="adir-int8-digits-") as directory:
        built = build_c(planned, "train_step", len(steps), Path(directory), c_compilers()[0])
        results = built.run(0, steps)
    names = [op.sym_name.data for op in planned.ops if isinstance(op, ParamOp)]
    return dict(zip(names, results[len(steps) :], strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_int8_classifies_the_digits_like_f32(name: str, tmp_path: Path) -> None:
    images, labels, train, test = digits()
    trained = trained_params(name, images, labels, train)
    module = parse_example(name)
    for op in module.ops:
        if isinstance(op, ParamOp):
            value = trained[op.sym_name.data].astype(np.float32)
            op.properties["initial_value"] = DenseIntOrFPElementsAttr.from_list(
                TensorType(f32, value.shape), value.reshape(-1).tolist()
            )
    shape = CASES[name][0]
    calibration = tmp_path / "calibration.npy"
    np.save(calibration, np.stack([images[i].reshape(shape) for i in train[:100]]))
    DerivePredictPass().apply(adir_context(), module)
    QuantizeInt8Pass(calibration=str(calibration)).apply(adir_context(), module)
    session = Session(module)
    right_f32 = right_int8 = equal = 0
    for i in test:
        x = images[i].reshape(shape)
        (f32_logits,) = session.call("predict", x)
        (int8_logits,) = session.call("predict_int8", x)
        right_f32 += int(f32_logits.argmax() == labels[i])
        right_int8 += int(int8_logits.argmax() == labels[i])
        equal += int(f32_logits.argmax() == int8_logits.argmax())
    assert right_f32 >= 0.9 * len(test), right_f32  # the training worked at all
    assert abs(right_int8 - right_f32) <= 3, (right_f32, right_int8)
    assert equal >= 355, equal
