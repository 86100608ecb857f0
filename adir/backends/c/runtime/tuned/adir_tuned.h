/* adir_tuned.h: what the tuned kernels (tuned/adir_tuned_*.c) share: the target's settings
 * (targets/adir_target.h), the compiler's spellings of what they ask of it, and the GEMM
 * micro-kernel. Not part of the API: generated code includes adir_kernels.h only. */
#ifndef ADIR_TUNED_H
#define ADIR_TUNED_H

/* gcc proper (clang defines __GNUC__ too, and is told apart where the two differ). */
#if defined(__GNUC__) && !defined(__clang__)
#define ADIR_GCC 1
#else
#define ADIR_GCC 0
#endif

/* The two pragmas below come before every include, so that the headers' static inline
 * functions (adir_optimizers.h's adir_regularized_grad, ...) get the kernels' options: gcc does
 * not inline a function of other target options (with the tuning set after the includes,
 * DS-CNN b1's SGD updates called adir_regularized_grad for each element, and its step took
 * 14% longer).
 *
 * The AVX targets' tile sizes (adir_target_x86_avx2.h, _avx512.h) are made for -O3, where gcc
 * unrolls the tiles' loops and keeps their sums in registers; at -O2 it leaves them rolled, the
 * sums in memory. A multiversioned build's AVX versions ask for -O3 (adir_tuned_sources.h);
 * so does a build with the compiler's own AVX (-O2 -march=native: LeNet b16's SGD step took
 * 10.9 ms on Zen 4 against 0.52 at -O3, 21 times as long, most of it in the conv weight
 * gradient's scalar multiply-adds). Not at -Os, and not at -O0, a debugging build. */
#if ADIR_GCC && defined(__AVX__) && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
#pragma GCC optimize("O3")
#endif

/* gcc 12 takes Zen 4 for Zen 3: -march=native there gives AVX-512 with Zen 3's tuning, under
 * which the tiles run slower than under the generic tuning that the portable build's versions
 * get (Zen 4, SGD steps, thread CPU time: LeNet b16 524 -> 446 us, mlp_m b32 400 -> 363, mlp_s
 * b32 49 -> 45.5; ResNet-8 and DS-CNN b16 the same; the same losses). Zen 3 itself has no
 * AVX-512, and gcc 13 and later know Zen 4. */
#if ADIR_GCC && defined(__tune_znver3__) && defined(__AVX512F__)
#pragma GCC target("tune=generic")
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* A multiversioned build (adir_multiversion.h) compiles each kernel under its version's name
 * (adir_tuned_variants.h): _generic here, unless a version's translation unit
 * (adir_tuned_x86_*.c) chose its suffix; the names themselves are the dispatcher's
 * (adir_tuned_dispatch.c). Before adir_kernels.h, so that its declarations are renamed too. */
#include "adir_multiversion.h"
#if ADIR_MULTIVERSION && !defined(ADIR_TUNED_DISPATCH)
#ifndef ADIR_VARIANT_SUFFIX
#define ADIR_VARIANT_SUFFIX _generic
#endif
#define ADIR_TUNED_RENAME 1
#endif
#include "adir_tuned_variants.h"

#include "adir_kernels.h"
#include "adir_target.h"

/* A fused multiply-add rounds once; where it is slow (a library call) a multiply and an add.
 * ADIR_FMA_FUSES: 1 where ADIR_FMA is fmaf on hardware that fuses (set by the multiversioned
 * build's AVX versions too); adir_tuned_updates.c relies on its single rounding. */
#ifndef ADIR_FMA
#if defined(FP_FAST_FMAF)
#define ADIR_FMA(x, y, acc) fmaf(x, y, acc)
#define ADIR_FMA_FUSES 1
#else
#define ADIR_FMA(x, y, acc) ((acc) + (x) * (y))
#endif
#endif

/* Tiles are compiled on their own, not inlined into the loops over tiles: inlined, clang
 * vectorizes those outer loops instead and loses the tile's registers. ADIR_INLINE: a helper
 * that each of its callers specialises with constant bounds. */
#if defined(__GNUC__)
#define ADIR_NOINLINE __attribute__((noinline))
#define ADIR_INLINE __inline__ __attribute__((always_inline))
#else
#define ADIR_NOINLINE
#define ADIR_INLINE
#endif

/* The target's ADIR_UNROLL_TILES, as gcc's pragma (other compilers unroll on their own). */
#if ADIR_UNROLL_TILES && ADIR_GCC
#define ADIR_UNROLL _Pragma("GCC unroll 16")
#else
#define ADIR_UNROLL
#endif

/* The loops of a register tile that gcc must unroll whole on every target and at every -O
 * level: the GEMM micro-kernel's and matmul's dot-product tile's. gcc -O2 unrolls no loop that
 * grows the code, and a tile left rolled keeps its accumulators in memory (with -O2
 * -march=native the dot tile of an MLP's forward pass ran 47 times slower than at -O3, the
 * micro-kernel 4 times); -O3 unrolls them anyway. Other compilers unroll on their own. */
#if ADIR_GCC
#define ADIR_TILE_UNROLL _Pragma("GCC unroll 16")
#else
#define ADIR_TILE_UNROLL
#endif

/* The target's ADIR_LANES_INNERMOST, where it applies: under gcc. */
#define ADIR_GCC_LANES_INNERMOST (ADIR_LANES_INNERMOST && ADIR_GCC)

/* The GEMM micro-kernel: acc[i][j] = the sum over p < k of a[i * a_row + p * a_col] *
 * b[p * b_row + j], for i < ADIR_GEMM_MR and j < ADIR_GEMM_NR, p in order, one ADIR_FMA per
 * step. Inlined into each tile that uses it (matmul's adir_gemm_tile, the fused updates'
 * adir_sgd_tile and adir_gradient_tile), so the accumulators stay in registers through the
 * tile's own store or update. */
static ADIR_INLINE void adir_gemm_sums_onto(const float *restrict a, size_t a_row, size_t a_col,
                                            const float *restrict b, size_t b_row, int32_t k,
                                            float acc[ADIR_GEMM_MR][ADIR_GEMM_NR]);

static ADIR_INLINE void adir_gemm_sums(const float *restrict a, size_t a_row, size_t a_col,
                                       const float *restrict b, size_t b_row, int32_t k,
                                       float acc[ADIR_GEMM_MR][ADIR_GEMM_NR])
{
    int32_t i, j;
    ADIR_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        ADIR_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    adir_gemm_sums_onto(a, a_row, a_col, b, b_row, k, acc);
}

/* One step p of the micro-kernel. */
static ADIR_INLINE void adir_gemm_step(const float *restrict a, size_t a_row, size_t a_col,
                                       const float *restrict b, size_t b_row, int32_t p,
                                       float acc[ADIR_GEMM_MR][ADIR_GEMM_NR])
{
    const float *restrict b_p = b + (size_t)p * b_row;
    float x[ADIR_GEMM_MR];
    int32_t i, j;
    ADIR_TILE_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        x[i] = a[(size_t)i * a_row + (size_t)p * a_col];
    }
    /* Rows innermost: so gcc, too, keeps the tile in registers on every target. */
    ADIR_TILE_UNROLL
    for (j = 0; j < ADIR_GEMM_NR; ++j) {
        const float y = b_p[j];
        ADIR_TILE_UNROLL
        for (i = 0; i < ADIR_GEMM_MR; ++i) {
            acc[i][j] = ADIR_FMA(x[i], y, acc[i][j]);
        }
    }
}

/* Steps of the micro-kernel a turn of its loop (the target's ADIR_GEMM_K_STEPS, 1 unless it
 * says): on a scalar core the loop's own instructions (a counter, a test, a branch and the
 * pointer steps) are a fifth of a 4 x 4 tile's step, so two steps a turn save about 8% of it. */
#ifndef ADIR_GEMM_K_STEPS
#define ADIR_GEMM_K_STEPS 1
#endif

/* The same as adir_gemm_sums, continuing the sums already in acc (a sum that runs on over
 * several calls adds in one order, p after p: the convolutions' weight gradient over panels and
 * samples). */
static ADIR_INLINE void adir_gemm_sums_onto(const float *restrict a, size_t a_row, size_t a_col,
                                            const float *restrict b, size_t b_row, int32_t k,
                                            float acc[ADIR_GEMM_MR][ADIR_GEMM_NR])
{
    int32_t p = 0;
#if ADIR_GEMM_K_STEPS == 2
    for (; p + 2 <= k; p += 2) {
        adir_gemm_step(a, a_row, a_col, b, b_row, p, acc);
        adir_gemm_step(a, a_row, a_col, b, b_row, p + 1, acc);
    }
#endif
    for (; p < k; ++p) {
        adir_gemm_step(a, a_row, a_col, b, b_row, p, acc);
    }
}

/* The implicit-GEMM convolutions (adir_tuned_conv_implicit.c): the `_gemm` kernels take them
 * where the target's settings set ADIR_CONV_IMPLICIT and the scratch holds
 * adir_conv_implicit_floats(kind, sizes...) floats (-1: more than INT32_MAX);
 * select_kernels/tuned.py computes the same count. */
#ifndef ADIR_CONV_IMPLICIT
#define ADIR_CONV_IMPLICIT 0
#endif
/* The implicit-GEMM tiles' sizes: the forward tile's MR outputs by ADIR_IMPLICIT_NR pixels,
 * the weight gradient's ADIR_IMPLICIT_WMR taps by NR outputs; the GEMM micro-kernel's unless
 * the target's settings say (AVX-512: two vectors of pixels, 16 taps). */
#ifndef ADIR_IMPLICIT_NR
#define ADIR_IMPLICIT_NR ADIR_GEMM_NR
#endif
#ifndef ADIR_IMPLICIT_WMR
#define ADIR_IMPLICIT_WMR ADIR_GEMM_MR
#endif
#define ADIR_CONV_IMPLICIT_FORWARD 0
#define ADIR_CONV_IMPLICIT_GRAD_INPUT 1
#define ADIR_CONV_IMPLICIT_GRAD_WEIGHT 2

int32_t adir_conv_implicit_floats(int32_t kind, int32_t channels, int32_t height, int32_t width,
                                  int32_t out_channels, int32_t out_height, int32_t out_width,
                                  int32_t kernel_height, int32_t kernel_width,
                                  int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                  int32_t pad_left, int32_t dilation_height,
                                  int32_t dilation_width, int32_t groups);
void adir_conv2d_implicit(const float *x, const float *w, const float *bias, float *y,
                          int32_t batch, int32_t channels, int32_t height, int32_t width,
                          int32_t out_channels, int32_t out_height, int32_t out_width,
                          int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                          int32_t stride_width, int32_t pad_top, int32_t pad_left,
                          int32_t dilation_height, int32_t dilation_width, int32_t groups,
                          float *scratch);
void adir_conv2d_grad_input_implicit(const float *dy, const float *w, float *dx, int32_t batch,
                                     int32_t channels, int32_t height, int32_t width,
                                     int32_t out_channels, int32_t out_height,
                                     int32_t out_width, int32_t kernel_height,
                                     int32_t kernel_width, int32_t stride_height,
                                     int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                     int32_t dilation_height, int32_t dilation_width,
                                     int32_t groups, float *scratch);
void adir_conv2d_grad_weight_implicit(const float *x, const float *dy, float *dw, int32_t batch,
                                      int32_t channels, int32_t height, int32_t width,
                                      int32_t out_channels, int32_t out_height,
                                      int32_t out_width, int32_t kernel_height,
                                      int32_t kernel_width, int32_t stride_height,
                                      int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                      int32_t dilation_height, int32_t dilation_width,
                                      int32_t groups, float *scratch);

/* The depthwise 3 x 3 weight gradient with channels in vector lanes
 * (adir_tuned_depthwise_lanes.c): adir_tuned_conv2d_grad_weight_depthwise takes it where the
 * scratch holds adir_depthwise_lanes_floats(...) floats (-1: more than INT32_MAX);
 * select_kernels/tuned.py computes the same count. Its lanes: a vector's floats. */
#ifndef ADIR_DEPTHWISE_LANES
#define ADIR_DEPTHWISE_LANES ADIR_DOT_LANES
#endif
int32_t adir_depthwise_lanes_floats(int32_t out_height, int32_t out_width, int32_t stride_height,
                                    int32_t stride_width);
void adir_conv2d_grad_weight_depthwise_lanes(const float *x, const float *dy, float *dw,
                                             int32_t batch, int32_t channels, int32_t height,
                                             int32_t width, int32_t out_height,
                                             int32_t out_width, int32_t stride_height,
                                             int32_t stride_width, int32_t pad_top,
                                             int32_t pad_left, float *scratch);
void adir_conv2d_grad_input_depthwise_lanes(const float *dy, const float *w, float *dx,
                                            int32_t batch, int32_t channels, int32_t height,
                                            int32_t width, int32_t out_height,
                                            int32_t out_width, int32_t stride_height,
                                            int32_t stride_width, int32_t pad_top,
                                            int32_t pad_left, float *scratch);

/* The depthwise 3 x 3 convolution of stride 1 padded by 1 on every side, output the image's
 * size (adir_tuned_depthwise_same.c): adir_depthwise_same_floats is the scratch it takes, 0
 * where it does not apply. adir_depthwise_same_planes convolves every plane of src (planes =
 * batch x channels of them, each the image's size) by its channel's 3 x 3 kernel in w into dst,
 * + bias where given: the forward pass with the taps in order, and the input gradient (flip)
 * with them in reverse, the reference's order for each. */
size_t adir_depthwise_same_floats(int32_t height, int32_t width, int32_t out_height,
                                  int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                                  int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                  int32_t pad_left);
void adir_depthwise_same_planes(const float *src, const float *w, int flip, const float *bias,
                                int32_t planes, int32_t channels, int32_t height, int32_t width,
                                float *scratch, float *dst);

/* Pointwise convolutions on the hosts (adir_tuned_conv_pointwise.c): the `_gemm` kernels call
 * them where the target's settings set ADIR_CONV_IMPLICIT, for a 1 x 1 kernel of stride 1,
 * unpadded, one group, where adir_pointwise_takes(kind, channels, plane) (kind: an
 * ADIR_CONV_IMPLICIT_* constant); `plane` is the image's pixels. The weight gradient takes
 * `channels x plane` floats of scratch (x^T of one sample). */
int32_t adir_pointwise_takes(int32_t kind, int32_t channels, int32_t plane);
void adir_conv2d_pointwise(const float *x, const float *w, const float *bias, float *y,
                           int32_t batch, int32_t channels, int32_t plane, int32_t out_channels);
void adir_conv2d_grad_input_pointwise(const float *dy, const float *w, float *dx, int32_t batch,
                                      int32_t channels, int32_t plane, int32_t out_channels);
void adir_conv2d_grad_weight_pointwise(const float *x, const float *dy, float *dw,
                                       int32_t batch, int32_t channels, int32_t plane,
                                       int32_t out_channels, float *scratch);
/* Strided ones (a 1 x 1 kernel of another stride, unpadded, one group), forward pass and input
 * gradient, a chunk of output pixels at a time in scratch: adir_pointwise_strided_chunk(channels,
 * out_pixels, scratch_floats) pixels, 0 where the scratch holds too few (the `_gemm` kernels
 * keep their own paths). */
int32_t adir_pointwise_strided_chunk(int32_t channels, int32_t out_pixels,
                                     int32_t scratch_floats);
void adir_conv2d_pointwise_strided(const float *x, const float *w, const float *bias, float *y,
                                   int32_t batch, int32_t channels, int32_t height,
                                   int32_t width, int32_t out_channels, int32_t out_height,
                                   int32_t out_width, int32_t stride_height,
                                   int32_t stride_width, float *scratch, int32_t chunk);
void adir_conv2d_grad_input_pointwise_strided(const float *dy, const float *w, float *dx,
                                              int32_t batch, int32_t channels, int32_t height,
                                              int32_t width, int32_t out_channels,
                                              int32_t out_height, int32_t out_width,
                                              int32_t stride_height, int32_t stride_width,
                                              float *scratch, int32_t chunk);

#endif /* ADIR_TUNED_H */
