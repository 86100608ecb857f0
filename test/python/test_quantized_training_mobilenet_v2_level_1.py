"""Level 1 of quantized training (docs/quantized_training.md) on MobileNetV2-w0.35 at 128x128
(examples/torch/mobilenet_v2.py, TTE's model and resolution), batch 1, SGD at lr 0.0625, 20
steps: the frozen prefix on int8 kernels, its output dequantized into the float tail, which
trains. The step is `--quantize-frozen`'s: `autodiff`, `insert-optimizer{kind=sgd}`,
`quantize-frozen-prefix`, then its three lowerings (`fuse-expand-depthwise`,
`in-place-depthwise`, `fuse-quantize-conv`). Two schemes:

- `last:1`: the whole backbone int8 (all three lowerings apply), the float classifier trains;
- `last:7`: the last block's depthwise conv, its projection and the 1280-channel conv train in
  float with their batch norms' affine parameters (running statistics fixed: eval mode) and the
  classifier; the prefix ends at the last block's expansion (15 of the 16 expansions fuse: the
  last block's output is the prefix's, read by the float tail).

The reference: mobilenet_v2_int8_reference.py's int8 network for the prefix (TFLite's formulas
in PyTorch, the scales from the ranges of the same float values that calibration saw), its
output dequantized into a float64 copy of the tail trained by torch.optim.SGD. Checked at each
step: every int8 tensor of the prefix (@loss cut to return them) bit for bit, the loss and every
float gradient (`@loss_grad`, quantized the same way) to 1e-5 of the reference's largest
magnitude, the lowered step's loss to 1e-5 and every float parameter after its update to 1e-5
of its tensor's largest magnitude (float32 against float64).
"""

from __future__ import annotations

import copy
import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import function, run_pipeline
from mobilenet_v2_int8_reference import QuantizedMobileNetV2, float_ranges
from test_quantize_frozen_prefix import assert_close_to_scale, with_results
from test_quantize_frozen_prefix_mobilenet_v2 import calibration_inputs, mobilenet_v2
from test_quantized_training_mobilenet_v2_level_2 import LOWERINGS, training_data
from torch import nn

from adir.frontends.torch_import import import_module
from adir.interpreter import Session
from adir.param_storage import is_marked_frozen

LR = 0.0625  # f32 holds it exactly
PREFIX_OPS = ("adir.quantize", "adir.qconv2d", "adir.qadd", "adir.qavgpool2d")


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    calibration = tmp_path_factory.mktemp("calibration") / "inputs.npy"
    np.save(calibration, calibration_inputs())
    return {"net": mobilenet_v2(), "calibration": calibration}


def level_1(model: dict, scheme: str) -> dict:
    x = torch.from_numpy(training_data()[0][0])
    imported = import_module(copy.deepcopy(model["net"]), (x,), loss="cross_entropy", train=scheme)
    quantize = f'quantize-frozen-prefix{{calibration="{model["calibration"]}"}}'
    step = run_pipeline(
        imported,
        f"infer-shapes,freeze-batchnorm,autodiff,insert-optimizer{{kind=sgd lr={LR}}},{quantize}",
    )
    grad = run_pipeline(
        imported,
        "infer-shapes,freeze-batchnorm,autodiff,"
        f'quantize-frozen-prefix{{func=loss_grad calibration="{model["calibration"]}"}}',
    )
    float_loss = run_pipeline(imported, "infer-shapes,freeze-batchnorm")
    return {
        "step": step,
        "lowered": run_pipeline(step, LOWERINGS),
        "grad": grad,
        "reference": QuantizedMobileNetV2(
            model["net"], float_ranges(float_loss, calibration_inputs())
        ),
    }


class FloatTail(nn.Module):
    """The float64 layers after the prefix, their parameters by adir's symbols."""

    def __init__(self, net: nn.Module, first: str | None) -> None:
        super().__init__()
        owners = {}  # adir's prefix of a module's parameters -> the module (the pool aside)
        for name, layer in net.named_modules():
            if name and not list(layer.children()) and name != "pool":
                owners[name.replace(".", "_")] = layer
        names = list(owners)
        start = names.index(first.removesuffix("_weight") if first else "classifier")
        self.layers = [copy.deepcopy(owners[n]).double().eval() for n in names[start:]]
        self.params = {
            f"{n}_{kind}": p
            for n, layer in zip(names[start:], self.layers, strict=True)
            for kind, p in layer.named_parameters()
        }

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """`h`: the last block's expansion output (NCHW), or the pooled features."""
        *features, classifier = self.layers
        for layer in features:  # convs, batch norms, ReLU6s (no residual sum in the tail)
            h = layer(h)
        return classifier(h.mean(dim=(2, 3)) if h.dim() == 4 else h)


def check_level_1(model: dict, scheme: str, first: str | None) -> dict:
    """The 20 steps of `scheme`, whose float tail starts at the conv `first` (None: the
    classifier)."""
    start = time.time()
    case = level_1(model, scheme)
    reference: QuantizedMobileNetV2 = case["reference"]
    tail = FloatTail(model["net"], first)
    trained = [
        op.sym_name.data
        for op in case["grad"].ops
        if op.name == "adir.param" and not is_marked_frozen(op)
    ]
    assert sorted(trained) == sorted(tail.params)
    optimizer = torch.optim.SGD(tail.params.values(), lr=LR)
    step, grad = Session(case["lowered"]), Session(case["grad"])
    probe, _ = with_results(case["step"], "loss", lambda op: op.name in PREFIX_OPS)
    kinds = [op.name for op in function(probe, "loss").body.block.ops if op.name in PREFIX_OPS]
    prefix = Session(probe)
    for k, (x, label) in enumerate(training_data()):
        where = f"{scheme}, step {k}"
        tensors, features = reference.features_at(torch.from_numpy(x), first)
        ours = prefix.call("loss", x, label)
        for index, (got, want) in enumerate(zip(ours, tensors, strict=True)):
            got = got if kinds[index] == "adir.quantize" else got.transpose(0, 3, 1, 2)
            np.testing.assert_array_equal(got, want.numpy(), err_msg=f"int8 #{index}, {where}")
        optimizer.zero_grad()
        loss = F.cross_entropy(tail(features.double()), torch.from_numpy(label).long())
        loss.backward()
        grad.params.update({n: step.params[n].copy() for n in trained})
        loss_g, *grads = grad.call("loss_grad", x, label)
        np.testing.assert_allclose(float(loss_g), loss.item(), rtol=1e-5, err_msg=where)
        for name, got in zip(trained, grads, strict=True):
            want = tail.params[name].grad
            assert want is not None
            assert_close_to_scale(got, want.numpy(), f"{name} gradient, {where}")
        optimizer.step()
        (ours_loss,) = step.call("train_step", x, label)
        np.testing.assert_allclose(float(ours_loss), loss.item(), rtol=1e-5, err_msg=where)
        for name in trained:
            want = tail.params[name].detach().numpy()
            assert_close_to_scale(step.params[name], want, f"{name}, {where}")
    print(f"{scheme}: {time.time() - start:.1f} s")
    return case


@pytest.mark.slow
def test_last_1_is_the_reference(model: dict) -> None:
    """The whole backbone int8, the three lowerings in the step."""
    case = check_level_1(model, "last:1", None)
    ops = [op for op in function(case["lowered"], "train_step").body.block.ops]
    names = [op.name for op in ops]
    assert names.count("adir.qexpand_depthwise") == 16 and names.count("adir.quantize_qconv2d") == 1
    assert len([op for op in ops if "in_place" in op.properties]) == 1
    assert names.count("adir.qconv2d") == 52 - 32 - 1 and "adir.conv2d" not in names


@pytest.mark.slow
def test_last_7_is_the_reference(model: dict) -> None:
    """The prefix ends at the last block's expansion; three convs, their batch norms' affine
    parameters and the classifier train in float."""
    case = check_level_1(model, "last:7", "features_17_conv_3_weight")
    names = [op.name for op in function(case["lowered"], "train_step").body.block.ops]
    assert names.count("adir.qexpand_depthwise") == 15
    assert names.count("adir.conv2d") == 3 and names.count("adir.conv2d_grad_input") == 2
