"""The memory figures of issue 5, printed and checked: the seed MLP (784-32-10, batch 1, SGD)
must fit in at most 1.02 x (persistent + lower bound) and 0.52 x the origin's 51,828 floats;
for the 784-256-128-10 relu MLP with Adam at batch 32, the arena must be within 1.02 x its
lower bound. Run with `pytest -s` to see the figures."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from xdsl.dialects import func

from adir.context import adir_context, parse_module
from adir.passes import ADIR_PASSES, PLANNING_PASSES
from adir.passes.autodiff import AutodiffPass
from adir.passes.insert_optimizer import InsertOptimizerPass

ROOT = Path(__file__).parents[2]
ORIGIN_FLOATS = 51_828  # the origin's single buffer for the seed MLP, no reuse


def relu_mlp(batch: int, sizes=(784, 256, 128, 10)) -> str:
    params, body, h = [], [], "%x"
    for i, (fan_in, fan_out) in enumerate(pairwise(sizes), start=1):
        params += [
            f"adir.param @w{i} : tensor<{fan_out}x{fan_in}xf32> = "
            f"#adir.kaiming_uniform<a = 2.23606797749979, seed = {i}>",
            f"adir.param @b{i} : tensor<{fan_out}xf32> = #adir.zeros",
        ]
        x_t, w_t, y_t = (
            f"tensor<{batch}x{fan_in}xf32>",
            f"tensor<{fan_out}x{fan_in}xf32>",
            f"tensor<{batch}x{fan_out}xf32>",
        )
        body += [
            f"  %w{i} = adir.load @w{i} : {w_t}",
            f"  %b{i} = adir.load @b{i} : tensor<{fan_out}xf32>",
            f"  %m{i} = adir.matmul {h}, %w{i} {{transpose_b}} : {x_t}, {w_t} -> {y_t}",
            f"  %z{i} = adir.add %m{i}, %b{i} : {y_t}, tensor<{fan_out}xf32> -> {y_t}",
        ]
        h = f"%z{i}"
        if i < len(sizes) - 1:
            body.append(f"  %h{i} = adir.relu %z{i} : {y_t}")
            h = f"%h{i}"
    body += [
        f"  %l = adir.cross_entropy {h}, %y : tensor<{batch}x{sizes[-1]}xf32>, "
        f"tensor<{batch}xi32> -> tensor<f32>",
        "  func.return %l : tensor<f32>",
    ]
    signature = f"%x: tensor<{batch}x{sizes[0]}xf32>, %y: tensor<{batch}xi32>"
    return "\n".join(
        [
            *params,
            f"func.func @loss({signature}) -> tensor<f32> attributes {{adir.loss}} {{",
            *body,
            "}",
        ]
    )


def plan(ir: str, optimizer: dict) -> dict[str, int]:
    module = parse_module(ir, "model.mlir")
    for transform in [AutodiffPass(), InsertOptimizerPass(**optimizer)]:
        transform.apply(adir_context(), module)
    for name in (*PLANNING_PASSES, "verify-memory-plan"):
        ADIR_PASSES[name]()().apply(adir_context(), module)
    module.verify()
    step = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step"
    )
    figures = {
        key.removeprefix("adir."): step.attributes[key].value.data
        for key in ("adir.arena_size", "adir.arena_lower_bound", "adir.naive_arena_size")
    }
    figures["persistent"] = module.attributes["adir.persistent_size"].value.data
    print(
        f"\n  arena {figures['arena_size']} B, lower bound {figures['arena_lower_bound']} B, "
        f"naive {figures['naive_arena_size']} B, persistent {figures['persistent']} B, total "
        f"{(figures['arena_size'] + figures['persistent']) // 4} floats"
    )
    return figures


def test_seed_mlp_sgd_fits_in_about_half_the_origins_memory() -> None:
    ir = (ROOT / "examples" / "mnist_mlp.mlir").read_text()
    figures = plan(ir, {"kind": "sgd", "lr": 0.1})
    total = figures["persistent"] + figures["arena_size"]
    assert figures["persistent"] == 25_408 * 4  # the parameters; SGD has no state
    assert total <= 1.02 * (figures["persistent"] + figures["arena_lower_bound"])
    assert total <= 0.52 * ORIGIN_FLOATS * 4
    assert figures["arena_size"] < figures["naive_arena_size"]


@pytest.mark.parametrize("optimizer", [{"kind": "adam", "lr": 0.001}, {"kind": "sgd", "lr": 0.01}])
def test_relu_mlp_batch_32_arena_is_within_2_percent_of_its_lower_bound(optimizer) -> None:
    figures = plan(relu_mlp(32), optimizer)
    assert figures["arena_size"] <= 1.02 * figures["arena_lower_bound"]


@pytest.mark.parametrize("optimizer", [{"kind": "sgd", "lr": 0.01}, {"kind": "adam", "lr": 0.001}])
def test_lenet5_arena_is_within_2_percent_of_its_lower_bound(optimizer) -> None:
    figures = plan((ROOT / "examples" / "lenet5.mlir").read_text(), optimizer)
    assert figures["arena_size"] <= 1.02 * figures["arena_lower_bound"]


def test_seed_mlp_adam_keeps_no_weight_gradient_in_the_arena() -> None:
    """Adam's weight gradients are computed inside their fused updates, which write w, exp_avg
    and exp_avg_sq in place. Measured: 302,384 B of arena with the updates written out as
    elementwise ops (`update_ops=false`: w1's 25,088-float gradient and two temporaries of its
    size live at once), 352 B fused (activations and scalars), beside 304,900 B of parameters
    and moments."""
    ir = (ROOT / "examples" / "mnist_mlp.mlir").read_text()
    unfused = plan(ir, {"kind": "adam", "lr": 0.001, "update_ops": False})
    fused = plan(ir, {"kind": "adam", "lr": 0.001})
    assert fused["persistent"] == unfused["persistent"] == 304_900
    assert unfused["arena_size"] >= 3 * 25_088 * 4
    assert fused["arena_size"] <= 352


@pytest.mark.parametrize(
    "optimizer",
    [{"kind": "adam", "lr": 0.001}, {"kind": "sgd", "lr": 0.01, "momentum": 0.9}],
    ids=["adam", "momentum"],
)
def test_relu_mlp_batch_32_stateful_updates_need_no_more_arena_than_sgd(optimizer) -> None:
    """With fused updates, Adam and momentum keep no weight gradient: their arena is plain
    SGD's (101,184 B) plus a few scalars (Adam's bias corrections). Measured before fusion of
    stateful updates: Adam 2,546,272 B, momentum 1,743,424 B; after: 101,216 B and 101,184 B."""
    sgd = plan(relu_mlp(32), {"kind": "sgd", "lr": 0.01})
    figures = plan(relu_mlp(32), optimizer)
    assert figures["arena_size"] <= sgd["arena_size"] + 64
