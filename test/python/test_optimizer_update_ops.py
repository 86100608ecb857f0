"""The optimizer's update ops keep the numbers and free the weight gradients.

- `insert-optimizer` writes each update as one op (`adir.sgd_update`, `adir.momentum_update`,
  `adir.adam_update`); `fuse-weight-updates` turns those whose gradient is a matmul into their
  matmul forms; `bufferize` writes parameters and state in place. Interpreted, each stage gives
  the losses, parameters and optimizer state of the elementwise updates
  (`update_ops=false`) bit for bit, in float32 and in float64, for every optimizer option.
- After fusion no weight gradient is left: every weight's update is a matmul form (except under
  `clip_norm`, which needs every gradient first), and no buffer of a weight's shape is
  allocated.
- The in-place rule for multi-result updates: the parameter and each state are written in
  place only when nothing reads their old values later, and two results never share a buffer.
"""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import function, run_pipeline
from xdsl.dialects import memref

from adir.context import parse_module
from adir.dialects.kernel import KERNELS, KernelOp, ParamBufferOp
from adir.dialects.tensor import optimizers as opt
from adir.interpreter import Session

MLP = """
adir.param @w1 : tensor<12x10xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 11>
adir.param @b1 : tensor<12xf32> = #adir.uniform<low = -0.2, high = 0.2, seed = 12>
    {weight_decay = 0.0 : f32}
adir.param @w2 : tensor<8x12xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 13>
    {lr_scale = 0.5 : f32}
adir.param @w3 : tensor<4x8xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 15>
adir.param @b3 : tensor<4xf32> = #adir.uniform<low = -0.25, high = 0.25, seed = 16>

func.func @loss(%x: tensor<6x10xf32>, %y: tensor<6xi64>) -> tensor<f32> attributes {adir.loss} {
  %w1 = adir.load @w1 : tensor<12x10xf32>
  %b1 = adir.load @b1 : tensor<12xf32>
  %m1 = adir.matmul %x, %w1 {transpose_b} : tensor<6x10xf32>, tensor<12x10xf32> -> tensor<6x12xf32>
  %z1 = adir.add %m1, %b1 : tensor<6x12xf32>, tensor<12xf32> -> tensor<6x12xf32>
  %h1 = adir.relu %z1 : tensor<6x12xf32>
  %w2 = adir.load @w2 : tensor<8x12xf32>
  %m2 = adir.matmul %h1, %w2 {transpose_b} : tensor<6x12xf32>, tensor<8x12xf32> -> tensor<6x8xf32>
  %h2 = adir.tanh %m2 : tensor<6x8xf32>
  %w3 = adir.load @w3 : tensor<4x8xf32>
  %b3 = adir.load @b3 : tensor<4xf32>
  %m3 = adir.matmul %h2, %w3 {transpose_b} : tensor<6x8xf32>, tensor<4x8xf32> -> tensor<6x4xf32>
  %z3 = adir.add %m3, %b3 : tensor<6x4xf32>, tensor<4xf32> -> tensor<6x4xf32>
  %l = adir.cross_entropy %z3, %y : tensor<6x4xf32>, tensor<6xi64> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""
WEIGHTS = {"w1": (12, 10), "w2": (8, 12), "w3": (4, 8)}

VARIANTS = {
    "sgd": "kind=sgd lr=0.1",
    "sgd_decay_clip": "kind=sgd lr=0.1 weight_decay=0.01 clip_value=0.05",
    "momentum": "kind=sgd lr=0.1 momentum=0.9",
    "nesterov_decay": "kind=sgd lr=0.1 momentum=0.9 nesterov=true weight_decay=0.01",
    "momentum_clip_step": (
        "kind=sgd lr=0.1 momentum=0.9 clip_value=0.05 schedule=step step_size=2 gamma=0.5"
    ),
    "adam": "kind=adam lr=0.01",
    "adam_l2_clip": "kind=adam lr=0.01 weight_decay=0.1 clip_value=0.02",
    "adamw_cosine": "kind=adamw lr=0.01 schedule=cosine t_max=3 eta_min=0.001",
    "adamw_runtime_lr": "kind=adamw lr=0.01 weight_decay=0.05 runtime_lr=true",
    "adam_clip_norm": "kind=adam lr=0.01 clip_norm=0.5",
}

STAGES = {
    "elementwise": "update_ops=false",
    "update_ops": "",
    "fused": "|fuse-weight-updates",
    "bufferized": "|fuse-weight-updates,bufferize,plan-memory,verify-memory-plan",
}


def stage(options: str, name: str) -> str:
    """The pipeline of one stage: `update_ops=false` is an option, the rest are passes."""
    extra = STAGES[name]
    if extra.startswith("|"):
        return f"infer-shapes,autodiff,insert-optimizer{{{options}}},{extra[1:]}"
    return f"infer-shapes,autodiff,insert-optimizer{{{options} {extra}}}".replace(" }", "}")


def steps(options: str, count: int = 5) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(7)
    data = []
    for index in range(count):
        args = [
            rng.standard_normal((6, 10)).astype(np.float32),
            rng.integers(0, 4, 6).astype(np.int64),
        ]
        if "runtime_lr" in options:
            args.append(np.asarray((0.02, 0.01, 0.005, 0.01, 0.03)[index], np.float32))
        data.append(args)
    return data


def train(options: str, stage_name: str, dtype: type[np.floating]):
    module = run_pipeline(parse_module(MLP, "mlp.mlir"), stage(options, stage_name))
    session = Session(module, dtype, seed=0)
    losses = [session.call("train_step", *args)[0].copy() for args in steps(options)]
    return losses, {name: value.copy() for name, value in session.params.items()}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_update_ops_and_their_matmul_forms_equal_the_elementwise_updates_bit_for_bit(
    variant: str, dtype: type[np.floating]
) -> None:
    options = VARIANTS[variant]
    expected_losses, expected_params = train(options, "elementwise", dtype)
    assert expected_params["w1"].dtype == dtype
    for name in ("update_ops", "fused", "bufferized"):
        losses, params = train(options, name, dtype)
        for step, (got, want) in enumerate(zip(losses, expected_losses, strict=True)):
            assert got.tobytes() == want.tobytes(), f"{name}: loss of step {step}"
        assert params.keys() == expected_params.keys()
        for param, want in expected_params.items():
            assert params[param].tobytes() == want.tobytes(), f"{name}: @{param}"


def kernels(module, tensor_op: type, name: str = "train_step") -> list[KernelOp]:
    return [op for op in function(module, name).walk() if isinstance(op, KERNELS[tensor_op])]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_no_weight_gradient_gets_a_buffer(variant: str) -> None:
    """Every weight is updated by a matmul form, in place over itself and its state; nothing of
    a weight's shape is allocated. Under clip_norm every gradient is read twice (its norm, then
    its update), so none is fused."""
    options = VARIANTS[variant]
    module = run_pipeline(parse_module(MLP, "mlp.mlir"), stage(options, "bufferized"))
    fused = [
        op
        for form in (opt.MatmulSgdUpdateOp, opt.MatmulMomentumUpdateOp, opt.MatmulAdamUpdateOp)
        for op in kernels(module, form)
    ]
    step = function(module, "train_step")
    allocated = [
        tuple(op.memref.type.get_shape()) for op in step.walk() if isinstance(op, memref.AllocOp)
    ]
    if "clip_norm" in options:
        assert not fused
        assert set(WEIGHTS.values()) <= set(allocated)
        return
    updated = []
    for op in fused:
        owners = [v.owner for v in op.outs]
        assert all(isinstance(o, ParamBufferOp) for o in owners)
        assert list(op.outs) == list(op.ins[: len(op.outs)])  # in place
        updated.append(owners[0].param.root_reference.data)
    assert sorted(updated) == sorted(WEIGHTS)
    assert not set(WEIGHTS.values()) & set(allocated)
    copied = [
        op.destination.type.get_shape() for op in step.walk() if isinstance(op, memref.CopyOp)
    ]
    assert not set(WEIGHTS.values()) & {tuple(shape) for shape in copied}


IN_PLACE = """
adir.param @w : tensor<4x3xf32> = #adir.zeros
adir.param @m : tensor<4x3xf32> = #adir.zeros
adir.param @v : tensor<4x3xf32> = #adir.zeros

func.func @f(%g: tensor<4x3xf32>, %lr: tensor<f32>) -> tensor<4x3xf32> {
  %w = adir.load @w : tensor<4x3xf32>
  %m = adir.load @m : tensor<4x3xf32>
  %v = adir.load @v : tensor<4x3xf32>
  %w1, %m1, %v1 = adir.adam_update %w, %m, %v, %g, %lr, %lr, %lr
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32}
      : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>,
        tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  %r = adir.add %m, %g : tensor<4x3xf32>
  adir.store %w1, @w : tensor<4x3xf32>
  adir.store %m1, @m : tensor<4x3xf32>
  adir.store %v1, @v : tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
"""


def test_an_update_writes_in_place_only_the_state_whose_old_value_is_dead() -> None:
    """The old @m is read after the update: the new @m goes to a buffer of its own and is
    copied back at its store; @w and @v are written in place. The numbers are those of the
    tensor level."""
    module = parse_module(IN_PLACE, "in_place.mlir")
    bufferized = run_pipeline(module, "bufferize")
    (update,) = kernels(bufferized, opt.AdamUpdateOp, "f")
    names = [
        out.owner.param.root_reference.data if isinstance(out.owner, ParamBufferOp) else None
        for out in update.outs
    ]
    assert names == ["w", None, "v"]
    copies = [op for op in function(bufferized, "f").walk() if isinstance(op, memref.CopyOp)]
    assert len(copies) == 1
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((4, 3)).astype(np.float32), np.asarray(0.1, np.float32)]
    tensors, buffers = Session(module, seed=0), Session(bufferized, seed=0)
    for _ in range(3):
        expected = tensors.call("f", *args)[0]
        assert buffers.call("f", *args)[0].tobytes() == expected.tobytes()
    for name, value in tensors.params.items():
        assert buffers.params[name].tobytes() == value.tobytes(), name


TRANSIENT = """
func.func @f(%p: tensor<2x5xf32>, %m: tensor<2x5xf32>, %v: tensor<2x5xf32>, %x: tensor<2x5xf32>,
             %lr: tensor<f32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %g = adir.sigmoid %x : tensor<2x5xf32>
  %p1 = adir.exp %p : tensor<2x5xf32>
  %p2, %m2, %v2 = adir.adam_update %p1, %m, %v, %g, %lr, %lr, %lr
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32}
      : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<f32>,
        tensor<f32>, tensor<f32> -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
  func.return %p2, %m2, %v2 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}
"""


def test_the_results_of_an_update_take_distinct_dying_operands() -> None:
    """Two dying transient operands (the parameter and the gradient) host two results; the
    third result gets a buffer of its own, never one already taken."""
    module = parse_module(TRANSIENT, "transient.mlir")
    bufferized = run_pipeline(module, "bufferize")
    (update,) = kernels(bufferized, opt.AdamUpdateOp, "f")
    assert len(set(update.outs)) == 3
    assert update.outs[0] is update.ins[0] and update.outs[1] is update.ins[3]
    rng = np.random.default_rng(2)
    args = [rng.standard_normal((2, 5)).astype(np.float32) for _ in range(4)]
    args.append(np.asarray(0.1, np.float32))
    expected = Session(module).call("f", *args)
    actual = Session(bufferized).call("f", *args)
    for got, want in zip(actual, expected, strict=True):
        assert got.tobytes() == want.tobytes()
