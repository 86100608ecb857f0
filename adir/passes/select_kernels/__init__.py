"""`select-kernels`: choose the C kernel of every kernel op, and record the choice in the IR.

    adir-opt m.mlir -p 'bufferize,select-kernels{kernels=cmsis-dsp target=cortex-m4f},plan-memory'

Runs on the kernel level, after `bufferize` and before `plan-memory` (`--plan-memory` and
`--emit-c` run it, with `--c-kernels` and `--c-target`). Every kernel op has a reference
kernel, the plain loops that state its semantics (`runtime/reference/`); `kernels` says which
other libraries may compute it instead, tried in this order:

    kernels      tried                        for
    reference    -                            the oracle: every op on its reference kernel
    tuned        tuned                        (the default) adir's tiles, `tuned.py`
    cmsis-dsp    cmsis-dsp, tuned             CMSIS-DSP's f32 functions, `cmsis_dsp.py`
    cmsis-nn     cmsis-nn, tuned              CMSIS-NN's s8 functions, `cmsis_nn.py`

Each library's rule says whether its kernel computes this op (its shapes, its attributes, the
`target`'s build), or why not. The op records what it uses and what was refused:

    adir_kernel.conv2d ins(...) outs(...) {adir.kernel = "reference",
        adir.kernel_refused = {tuned = "stride [2, 2]: the tiles take stride 1"}}
    adir_kernel.qconv2d ins(...) outs(..., %scratch : memref<288xi8>) {adir.kernel = "cmsis-nn",
        adir.kernel_call = "arm_convolve_wrapper_s8", adir.kernel_scratch = 288 : i64}

`adir.kernel_call` names the function where a library has several for one op, and a call that
needs scratch memory gets a buffer of its own (an extra last `outs`, placed by `plan-memory`);
so does a reference kernel whose op says it needs one (`ReferenceScratch`: the fused int8
expansion + depthwise kernel's plane).
Where the kernel also runs with less, the op says how little (`adir.kernel_scratch_min`), and
`plan-memory` gives the buffer what the arena has free at the op, between the two (the tuned
convolutions' im2col panels: `tuned.py`, "Scratch").
The C backend prints exactly what is recorded (an op with no record calls its reference
kernel) and never chooses. Adding a library is a file of rules here (`rules.judges`) and its
calls in the backend; adding a target is an entry of `targets.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass

from adir.diagnostics import OpError
from adir.dialects.kernel import KERNELS, KernelOp
from adir.dialects.tensor.traits import ReferenceScratch
from adir.passes.select_kernels import cmsis_dsp, cmsis_nn, tuned  # noqa: F401 (they register)
from adir.passes.select_kernels.cmsis_nn import add_scratch
from adir.passes.select_kernels.rules import RULES, Refuse
from adir.passes.select_kernels.targets import TARGETS

KERNEL_SETS: dict[str, tuple[str, ...]] = {
    "reference": (),
    "tuned": ("tuned",),
    "cmsis-dsp": ("cmsis-dsp", "tuned"),
    "cmsis-nn": ("cmsis-nn", "tuned"),
}
"""The libraries each `kernels` option tries, in order, before the reference."""

RECORDS = ("adir.kernel", "adir.kernel_call", "adir.kernel_refused")
# (`adir.kernel_scratch` and `adir.kernel_scratch_min` come with the scratch buffer, which a
# second selection refuses to replace.)


TENSOR_OPS = {kernel: tensor for tensor, kernel in KERNELS.items()}


def reference_scratch(kernel: KernelOp) -> int:
    """The scratch bytes that the op's reference kernel needs (its `ReferenceScratch` trait: a
    fused kernel's intermediate), or 0."""
    trait = TENSOR_OPS[type(kernel)].get_trait(ReferenceScratch)
    if trait is None:
        return 0
    return trait.size(kernel)


@dataclass(frozen=True)
class SelectKernelsPass(ModulePass):
    """Record on each kernel op the kernel it calls (see the module docstring)."""

    name = "select-kernels"

    kernels: str = "tuned"
    target: str = "host"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option, value, choices in (
            ("kernels", self.kernels, KERNEL_SETS),
            ("target", self.target, TARGETS),
        ):
            if value not in choices:
                raise OpError(
                    op, f"select-kernels: {option}={value!r} is not one of {', '.join(choices)}"
                )
        target = TARGETS[self.target]
        kernels = [inner for inner in op.walk() if isinstance(inner, KernelOp)]
        if any("adir.kernel_scratch" in kernel.attributes for kernel in kernels):
            raise OpError(
                op, "select-kernels: the kernels were selected already, with scratch buffers"
            )
        planned = "adir.arena_size" in op.attributes
        uses: set[str] = set()
        for kernel in kernels:
            for name in RECORDS:
                kernel.attributes.pop(name, None)
            used, call, scratch, scratch_min, refused = "reference", None, 0, None, {}
            for library in KERNEL_SETS[self.kernels]:
                rule = RULES[library].get(type(kernel))
                if rule is None:
                    continue
                verdict = rule(kernel, target)
                if isinstance(verdict, Refuse):
                    refused[library] = StringAttr(verdict.reason)
                    continue
                used, call, scratch = library, verdict.call, verdict.scratch
                scratch_min = verdict.scratch_min
                break
            if used == "reference" and (size := reference_scratch(kernel)):
                scratch = size
            uses.add(used)
            kernel.attributes["adir.kernel"] = StringAttr(used)
            if call is not None:
                kernel.attributes["adir.kernel_call"] = StringAttr(call)
            if refused:
                kernel.attributes["adir.kernel_refused"] = DictionaryAttr(refused)
            if scratch:
                if planned:
                    raise OpError(
                        kernel,
                        f"select-kernels: {call or kernel.name} needs {scratch} bytes of "
                        "scratch, which only a "
                        "plan made after this pass has: run select-kernels before plan-memory",
                    )
                add_scratch(kernel, scratch, scratch_min)
        op.attributes["adir.kernel_target"] = StringAttr(self.target)
        if "cmsis-nn" in uses:
            op.attributes["adir.cmsis_nn_build"] = StringAttr(target.cmsis_nn_build)
        else:
            op.attributes.pop("adir.cmsis_nn_build", None)
