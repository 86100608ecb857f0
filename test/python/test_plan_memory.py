"""Memory planning on random interval sets: every algorithm's plan passes the independent
verifier, the arena is never below the lower bound, and the verifier rejects bad plans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.utils.exceptions import PassFailedException

from adir.context import adir_context, parse_module
from adir.passes.plan_memory import PlanMemoryPass
from adir.passes.plan_memory.liveness import LiveBuffer
from adir.passes.plan_memory.placement import ALGORITHMS, best_fit
from adir.passes.verify_memory_plan import VerifyMemoryPlanPass

intervals = st.lists(
    st.tuples(st.integers(1, 64), st.integers(0, 30), st.integers(0, 10)),  # floats, start, span
    min_size=1,
    max_size=25,
)


def interval_module(buffers: list[tuple[int, int, int]]) -> ModuleOp:
    """A function whose buffers are used exactly at their interval ends: `test.op`s at each
    program point touch the buffers that start or end there."""
    steps = max(start + span for _, start, span in buffers) + 1
    lines = [
        f"  %b{i} = memref.alloc() : memref<{size}xf32>" for i, (size, _, _) in enumerate(buffers)
    ]
    for t in range(steps):
        touched = [
            (f"%b{i}", f"memref<{size}xf32>")
            for i, (size, start, span) in enumerate(buffers)
            if t in (start, start + span)
        ]
        if touched:
            names, types = zip(*touched, strict=True)
            lines.append(f'  "test.op"({", ".join(names)}) : ({", ".join(types)}) -> ()')
    return parse_module("func.func @f() {\n" + "\n".join(lines) + "\n  func.return\n}")


@settings(max_examples=60, deadline=None)
@given(intervals, st.sampled_from(sorted(ALGORITHMS)))
def test_every_plan_passes_the_verifier(buffers, algo: str) -> None:
    module = interval_module(buffers)
    PlanMemoryPass(algo=algo).apply(adir_context(), module)
    VerifyMemoryPlanPass().apply(adir_context(), module)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    arena = function.attributes["adir.arena_size"].value.data
    bound = function.attributes["adir.arena_lower_bound"].value.data
    naive = function.attributes["adir.naive_arena_size"].value.data
    assert bound <= arena <= naive


def arena_sizes(buffers) -> dict[str, int]:
    sizes = {}
    for algo in ("greedy-by-size", "greedy-by-lifetime", "best"):
        module = interval_module(buffers)
        PlanMemoryPass(algo=algo).apply(adir_context(), module)
        sizes[algo] = module.attributes["adir.arena_size"].value.data
    return sizes


@settings(max_examples=40, deadline=None)
@given(intervals)
def test_best_is_no_worse_than_either_greedy_order(buffers) -> None:
    sizes = arena_sizes(buffers)
    assert sizes["best"] <= min(sizes["greedy-by-size"], sizes["greedy-by-lifetime"])


def test_best_tries_a_third_order_that_can_beat_both():
    """`best` also tries greedy-by-size with ties broken by the later last use (placement.py):
    on these four buffers (first, last, size in floats) both greedy orders need 208 bytes and
    that third order 192 (hypothesis found the case)."""
    sizes = arena_sizes([(13, 13, 10), (13, 23, 1), (13, 23, 1), (17, 3, 10)])
    assert sizes == {"greedy-by-size": 208, "greedy-by-lifetime": 208, "best": 192}


def best_fit_by_definition(order: list[LiveBuffer]) -> dict[LiveBuffer, int]:
    """Pisarchyk & Lee's best fit, written as plainly as it is defined: for each buffer in
    turn, the gaps between the placed buffers that overlap it in time, the smallest that fits
    (the lowest on ties), else on top of them."""
    offsets: dict[LiveBuffer, int] = {}
    for buffer in order:
        busy = sorted(
            (offsets[other], offsets[other] + other.size)
            for other in offsets
            if other.first <= buffer.last and buffer.first <= other.last
        )
        best, best_gap, cursor = None, None, 0
        for start, end in busy:
            if start - cursor >= buffer.size and (best_gap is None or start - cursor < best_gap):
                best, best_gap = cursor, start - cursor
            cursor = max(cursor, end)
        offsets[buffer] = cursor if best is None else best
    return offsets


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_best_fit_places_every_buffer_where_its_definition_does(buffers) -> None:
    """`best_fit` runs its comparisons as numpy vectors; same offsets as the plain loop."""
    live = [LiveBuffer(None, 4 * size, start, start + span) for size, start, span in buffers]  # type: ignore[arg-type]
    order = sorted(live, key=lambda b: (-b.size, b.first, b.last))
    assert best_fit(order) == best_fit_by_definition(order)


def test_disjoint_lifetimes_share_one_slot() -> None:
    """Three 16-byte buffers live one after another need 16 bytes, not 48."""
    module = interval_module([(4, 0, 1), (4, 2, 1), (4, 4, 1)])
    PlanMemoryPass().apply(adir_context(), module)
    assert module.attributes["adir.arena_size"].value.data == 16


def planned(buffers, offsets: list[int], arena: int) -> ModuleOp:
    module = interval_module(buffers)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    allocs = [op for op in function.walk() if isinstance(op, memref.AllocOp)]
    for alloc, offset in zip(allocs, offsets, strict=True):
        alloc.attributes["adir.offset"] = IntegerAttr(offset, i64)
    function.attributes["adir.arena_size"] = IntegerAttr(arena, i64)
    return module


@pytest.mark.parametrize(
    ("offsets", "arena", "message"),
    [
        ([0, 0], 64, "overlap"),  # both live at op 1, bytes [0, 16) shared
        ([0, 48], 64, "outside the arena"),  # [48, 80) past 64
        ([0, 24], 64, "not 16-aligned"),
    ],
)
def test_verifier_rejects_bad_plans(offsets, arena: int, message: str) -> None:
    module = planned([(4, 0, 2), (8, 1, 2)], offsets, arena)
    with pytest.raises(PassFailedException, match=message):
        VerifyMemoryPlanPass().apply(adir_context(), module)


def test_verifier_accepts_a_hand_made_good_plan() -> None:
    VerifyMemoryPlanPass().apply(adir_context(), planned([(4, 0, 2), (8, 1, 2)], [0, 16], 48))
