"""adir's passes, one per file; each usable alone through `-p` pipelines.

`ADIR_PASSES` maps a pass name to a factory that imports it lazily, so the driver starts fast.
To add a pass: write `adir/passes/<name>.py` with a frozen-dataclass `ModulePass`, add its
entry here, and a lit folder `test/filecheck/<name>/`. Its name must not be one of xDSL's
(`xdsl.transforms.get_all_passes()`): adir's universe (`adir/universe.py`) offers these beside
xDSL's passes, in `xdsl-opt` and `adir-opt` alike, and a name in both is an error there.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def _infer_shapes() -> type[ModulePass]:
    from adir.passes.infer_shapes import InferShapesPass

    return InferShapesPass


def _fold_transpose_into_matmul() -> type[ModulePass]:
    from adir.passes.fold_transpose_into_matmul import FoldTransposeIntoMatmulPass

    return FoldTransposeIntoMatmulPass


def _quantize_int8() -> type[ModulePass]:
    from adir.passes.quantize_int8 import QuantizeInt8Pass

    return QuantizeInt8Pass


def _quantize_frozen_prefix() -> type[ModulePass]:
    from adir.passes.quantize_frozen_prefix import QuantizeFrozenPrefixPass

    return QuantizeFrozenPrefixPass


def _fuse_expand_depthwise() -> type[ModulePass]:
    from adir.passes.fuse_expand_depthwise import FuseExpandDepthwisePass

    return FuseExpandDepthwisePass


def _in_place_depthwise() -> type[ModulePass]:
    from adir.passes.in_place_depthwise import InPlaceDepthwisePass

    return InPlaceDepthwisePass


def _fuse_quantize_conv() -> type[ModulePass]:
    from adir.passes.fuse_quantize_conv import FuseQuantizeConvPass

    return FuseQuantizeConvPass


def _select_kernels() -> type[ModulePass]:
    from adir.passes.select_kernels import SelectKernelsPass

    return SelectKernelsPass


def _freeze_batchnorm() -> type[ModulePass]:
    from adir.passes.freeze_batchnorm import FreezeBatchnormPass

    return FreezeBatchnormPass


def _derive_predict() -> type[ModulePass]:
    from adir.passes.derive_predict import DerivePredictPass

    return DerivePredictPass


def _apply_update_scheme() -> type[ModulePass]:
    from adir.passes.apply_update_scheme import ApplyUpdateSchemePass

    return ApplyUpdateSchemePass


def _suggest_update_scheme() -> type[ModulePass]:
    from adir.passes.suggest_update_scheme import SuggestUpdateSchemePass

    return SuggestUpdateSchemePass


def _split_partial_updates() -> type[ModulePass]:
    from adir.passes.split_partial_updates import SplitPartialUpdatesPass

    return SplitPartialUpdatesPass


def _autodiff() -> type[ModulePass]:
    from adir.passes.autodiff import AutodiffPass

    return AutodiffPass


def _insert_optimizer() -> type[ModulePass]:
    from adir.passes.insert_optimizer import InsertOptimizerPass

    return InsertOptimizerPass


def _fuse_batchnorm_relu() -> type[ModulePass]:
    from adir.passes.fuse_batchnorm_relu import FuseBatchnormReluPass

    return FuseBatchnormReluPass


def _fuse_weight_updates() -> type[ModulePass]:
    from adir.passes.fuse_weight_updates import FuseWeightUpdatesPass

    return FuseWeightUpdatesPass


def _recompute_activations() -> type[ModulePass]:
    from adir.passes.recompute_activations import RecomputeActivationsPass

    return RecomputeActivationsPass


def _reorder_updates() -> type[ModulePass]:
    from adir.passes.reorder_updates import ReorderUpdatesPass

    return ReorderUpdatesPass


def _bufferize() -> type[ModulePass]:
    from adir.passes.bufferize import BufferizePass

    return BufferizePass


def _plan_memory() -> type[ModulePass]:
    from adir.passes.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _verify_memory_plan() -> type[ModulePass]:
    from adir.passes.verify_memory_plan import VerifyMemoryPlanPass

    return VerifyMemoryPlanPass


# From a differentiated tensor-level module to a planned one, as `adir-opt --plan-memory` (and
# `--emit-c`) runs it: the passes that only save memory are on by default, and the kernels are
# adir's tuned ones where they apply.
PLANNING_PASSES = (
    "fuse-weight-updates",
    "reorder-updates",
    "fuse-batchnorm-relu",
    "bufferize",
    "select-kernels",
    "plan-memory",
)
PLANNING_PIPELINE = ",".join(PLANNING_PASSES)

ADIR_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "infer-shapes": _infer_shapes,
    "derive-predict": _derive_predict,
    "freeze-batchnorm": _freeze_batchnorm,
    "quantize-int8": _quantize_int8,
    "quantize-frozen-prefix": _quantize_frozen_prefix,
    "fuse-expand-depthwise": _fuse_expand_depthwise,
    "in-place-depthwise": _in_place_depthwise,
    "fuse-quantize-conv": _fuse_quantize_conv,
    "apply-update-scheme": _apply_update_scheme,
    "suggest-update-scheme": _suggest_update_scheme,
    "split-partial-updates": _split_partial_updates,
    "autodiff": _autodiff,
    "insert-optimizer": _insert_optimizer,
    "fuse-weight-updates": _fuse_weight_updates,
    "recompute-activations": _recompute_activations,
    "reorder-updates": _reorder_updates,
    "fuse-batchnorm-relu": _fuse_batchnorm_relu,
    "bufferize": _bufferize,
    "select-kernels": _select_kernels,
    "plan-memory": _plan_memory,
    "verify-memory-plan": _verify_memory_plan,
    "fold-transpose-into-matmul": _fold_transpose_into_matmul,
}
