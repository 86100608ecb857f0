/* adir_tuned_sources.h: every tuned kernel's source (tuned/adir_tuned_*.c), included into one
 * translation unit by each version of a multiversioned build (adir_tuned_x86_avx2.c,
 * adir_tuned_x86_avx512.c; see targets/adir_multiversion.h). test_c_multiversion.py checks that
 * none is missing. The C library's headers come first, so that their declarations keep the
 * build's own target, not the version's. */
#ifndef ADIR_TUNED_SOURCES_H
#define ADIR_TUNED_SOURCES_H

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The version's instructions for every function below (its ADIR_VARIANT_TARGET, a macro, which
 * a #pragma line would not expand, hence _Pragma); under gcc also -O3's optimizations, for which
 * the AVX targets' settings are made (an -O3 -march=native build): at -O2 gcc leaves their
 * tiles rolled, the sums in memory (LeNet b16's step took 28 times the -O3 -march=native one's,
 * 18.4 ms against 0.6, most of it in the conv weight-gradient tile's scalar multiply-adds; with
 * -O3 here 0.75 ms). clang vectorizes at -O2 as gcc does at -O3. */
#define ADIR_PRAGMA(...) _Pragma(#__VA_ARGS__)
/* Fused multiply-adds where the kernels ask (their ADIR_FMA, fmaf in a version), nowhere else:
 * so that kernels that promise their reference's bits (batchnorm, the elementwise updates) keep
 * them against the SSE2 reference kernels. gcc contracts nothing in ISO C modes; clang would
 * contract a * b + c on a target with FMA (its -ffp-contract=on). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__clang__)
#define ADIR_TARGET_PUSH(features) \
    ADIR_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
ADIR_TARGET_PUSH(ADIR_VARIANT_TARGET)
#else
#define ADIR_TARGET_PUSH(features) ADIR_PRAGMA(GCC target(features))
#pragma GCC push_options
ADIR_TARGET_PUSH(ADIR_VARIANT_TARGET)
#pragma GCC optimize("O3")
#endif

#include "adir_tuned_batchnorm.c"
#include "adir_tuned_batchnorm_channels.c"
#include "adir_tuned_conv.c"
#include "adir_tuned_conv_gemm.c"
#include "adir_tuned_conv_implicit.c"
#include "adir_tuned_depthwise.c"
#include "adir_tuned_depthwise_3x3.c"
#include "adir_tuned_depthwise_lanes.c"
#include "adir_tuned_depthwise_same.c"
#include "adir_tuned_matmul.c"
#include "adir_tuned_pool.c"
#include "adir_tuned_updates.c"
#include "adir_tuned_conv_pointwise.c"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* ADIR_TUNED_SOURCES_H */
