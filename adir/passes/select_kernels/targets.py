"""The targets `select-kernels{target=...}` knows: what each offers the kernel choice.

The tuned kernels read their tile sizes from a settings header that the C compiler picks by
its predefined macros (`runtime/targets/adir_target.h`), so one generated C builds for every
target; what the pass's target decides is which libraries' kernels may be called and how they
are sized. Adding a target is one entry here (and, for its tile sizes, one settings header).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelTarget:
    """A CPU the generated C is built for."""

    name: str
    cmsis_nn_build: str
    """Which of CMSIS-NN's builds the core compiles, whose `*_get_buffer_size` sizes the
    scratch buffers: "scalar" (no DSP extension: a host, a Cortex-M0/M3), "dsp" (Cortex-M4,
    M7, M33) or "mve" (Helium: Cortex-M55, M85)."""
    settings: str
    """The settings header the tuned kernels use on it (`runtime/targets/`)."""


TARGETS = {
    target.name: target
    for target in (
        KernelTarget("host", "scalar", "adir_target_host.h"),
        KernelTarget("x86-avx2", "scalar", "adir_target_x86_avx2.h"),
        KernelTarget("x86-avx512", "scalar", "adir_target_x86_avx512.h"),
        # No FPU (Cortex-M3, mps2-an385; RV32IMAC): every float operation a library call.
        KernelTarget("cortex-m3", "scalar", "adir_target_soft_float.h"),
        KernelTarget("cortex-m4f", "dsp", "adir_target_cortex_m4f.h"),
        # The Cortex-M7's FPv5 has the M4F's 32 single-precision registers and VFMA: its tiles.
        KernelTarget("cortex-m7", "dsp", "adir_target_cortex_m4f.h"),
        # Helium: CMSIS-NN's MVE kernels and scratch sizes; adir's float kernels are scalar
        # there, and the M4F's tiles beat the host's (runtime/targets/adir_target.h).
        KernelTarget("cortex-m55", "mve", "adir_target_cortex_m4f.h"),
        KernelTarget("rv32imac", "scalar", "adir_target_soft_float.h"),
        # The F extension: 32 single-precision registers and fmadd.s, as the M4F has.
        KernelTarget("rv32imafc", "scalar", "adir_target_rv32f.h"),
    )
}
