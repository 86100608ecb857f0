"""adir as an xDSL plugin: the `xdsl.universe` entry point (pyproject.toml) that makes xDSL's
own tools see adir's dialects, passes and C target.

    xdsl-opt -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd lr=0.1},bufferize,plan-memory' \\
        examples/mnist_mlp.mlir
    xdsl-opt -p 'infer-shapes,autodiff,insert-optimizer{kind=sgd},bufferize,select-kernels,\\
        plan-memory' -t c examples/mnist_mlp.mlir

xDSL's `Universe.get_multiverse()` gathers every installed package's universe and refuses a
dialect, pass or target name defined twice, so this one holds only what is adir's: its two
dialects (builtin, func, arith, memref and test are xDSL's), its passes (`ADIR_PASSES`, none
named like one of xDSL's; `canonicalize`, `cse`, `dce` are xDSL's) and the `c` target.

`adir-opt` registers the same multiverse's passes (`available_passes`), so any pass `xdsl-opt`
lists composes with adir's in one `-p` pipeline. Every factory imports lazily: loading this
module costs `xdsl-opt` no start-up time.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

from adir.passes import ADIR_PASSES


def _adir() -> Dialect:
    from adir.dialects.tensor import Adir

    return Adir


def _adir_kernel() -> Dialect:
    from adir.dialects.kernel import AdirKernel

    return AdirKernel


def _c_target() -> type[Target]:
    from adir.backends.c.target import CTarget

    return CTarget


ADIR_UNIVERSE = Universe(
    all_dialects={"adir": _adir, "adir_kernel": _adir_kernel},
    all_passes=dict(ADIR_PASSES),
    all_targets={"c": _c_target},
)


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass `xdsl-opt` offers (xDSL's, adir's, any other plugin's), and adir's own also
    where adir's entry point is not installed (a source tree on `sys.path`)."""
    passes = dict(Universe.get_multiverse().all_passes)
    passes.update(ADIR_PASSES)
    return passes
