/* kernels_vs_reference.c: every tuned kernel of adir's C runtime (tuned/) against its reference
 * kernel (reference/), on shapes at every tile edge of the target this is compiled for: for
 * each tile size t of the target's settings header, sizes 1, t - 1, t, t + 1 and 2t + 3.
 * Driven by test_c_kernels_vs_reference.py, which builds it with the flags users build with.
 *
 * Each case runs twice: on "exact" data (multiples of 1/8 in [-1, 1]: every product and every
 * partial sum is a float, so any summation order gives the same sums, and every kernel must
 * agree with its reference bit for bit), and on "random" data (uniform in [-1, 1]), where a
 * kernel that sums in another order than its reference must stay within
 *
 *     |tuned - reference| <= 2 gamma(n) sum |a_p b_p|,   gamma(n) = n u / (1 - n u), u = 2^-24
 *
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5: each of the two
 * n-term dot products is within gamma(n) sum |a_p b_p| of the exact one, in any order, with
 * or without fused multiply-adds), and every other kernel must agree bit for bit. The sums of
 * |a_p b_p| are the reference kernel run on |a| and |b|.
 *
 * Prints one line per kernel: `kernel NAME cases C failures F random_identical I` (I: whether
 * every random case was bit for bit the reference's), then `target NAME fma F` (F: MAY_FUSE). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In a multiversioned build (runtime/targets/adir_multiversion.h: portable x86-64 with gcc or
 * clang), the kernels named below are the build's own SSE2 version (_generic), unless
 * -DVERSION_UNDER_TEST=avx2 or avx512 names another: then its names, its settings header's tile
 * sizes and its fused multiply-adds (test_c_multiversion.py). adir_tuned.h first: it renames
 * the kernels' declarations in adir_kernels.h. */
#if defined(VERSION_UNDER_TEST)
#include "adir_multiversion.h"
#define avx2 1
#define avx512 2
#if VERSION_UNDER_TEST == avx2
#define ADIR_VARIANT_SUFFIX _avx2
#define ADIR_TARGET_SETTINGS "adir_target_x86_avx2.h"
#elif VERSION_UNDER_TEST == avx512
#define ADIR_VARIANT_SUFFIX _avx512
#define ADIR_TARGET_SETTINGS "adir_target_x86_avx512.h"
#endif
#undef avx2
#undef avx512
#define MAY_FUSE 1
#endif
#include "adir_tuned.h"

#include "adir_kernels.h"
#include "adir_target.h"

#define UNIT_ROUNDOFF (1.0 / 16777216.0)

/* Whether this build may compute a * b + c with one rounding: ADIR_FMA is fmaf where
 * FP_FAST_FMAF says so, and clang contracts ADIR_FMA's a * b + c into one where the target has
 * the instruction (its -ffp-contract=on; gcc's -std=c99 turns contraction off); an RV32 core
 * with F has fmadd.s, which adir_target_rv32f.h's ADIR_FMA uses. */
#ifndef MAY_FUSE
#if defined(FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA) || \
    (defined(__riscv) && defined(__riscv_flen))
#define MAY_FUSE 1
#else
#define MAY_FUSE 0
#endif
#endif
#define UPDATE_CHUNK 64 /* adir_tuned_updates.c's ADIR_UPDATE_CHUNK */

struct stats {
    const char *name;
    long cases, failures;
    int random_identical;
};

static struct stats kernel_stats[48];
static int kernel_count;

static struct stats *stats_of(const char *name)
{
    int i;
    for (i = 0; i < kernel_count; ++i) {
        if (strcmp(kernel_stats[i].name, name) == 0) {
            return &kernel_stats[i];
        }
    }
    kernel_stats[kernel_count].name = name;
    kernel_stats[kernel_count].random_identical = 1;
    return &kernel_stats[kernel_count++];
}

/* --- data ------------------------------------------------------------------------------- */

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static unsigned long long next_bits(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* exact: a multiple of 1/8 in [-1, 1]; else uniform in [-1, 1). */
static float next_value(int exact)
{
    if (exact) {
        return (float)((int)(next_bits() % 17u) - 8) / 8.0f;
    }
    return (float)((double)(next_bits() >> 40) / 8388608.0 - 1.0);
}

/* count floats from the heap, or the driver stops with a message: a small board's heap (the
 * Cortex-M4F run) running out must not read as a crash in some kernel. */
static float *allocated(size_t count)
{
    float *x = malloc((count ? count : 1) * sizeof *x);
    if (x == NULL) {
        printf("FAIL: out of heap for %lu floats\n", (unsigned long)count);
        exit(1);
    }
    return x;
}

static float *filled(size_t count, int exact)
{
    float *x = allocated(count);
    size_t i;
    for (i = 0; i < count; ++i) {
        x[i] = next_value(exact);
    }
    return x;
}

static float *absolute(const float *x, size_t count)
{
    float *y = allocated(count);
    size_t i;
    for (i = 0; i < count; ++i) {
        y[i] = fabsf(x[i]);
    }
    return y;
}

/* filled(count, exact) made non-negative in place (second moments). */
static float *filled_absolute(size_t count, int exact)
{
    float *x = filled(count, exact);
    size_t i;
    for (i = 0; i < count; ++i) {
        x[i] = fabsf(x[i]);
    }
    return x;
}

static float *copied(const float *x, size_t count)
{
    float *y = allocated(count);
    memcpy(y, x, count * sizeof *y);
    return y;
}

static int same(float a, float b)
{
    return a == b || (a != a && b != b);
}

static double gamma_of(long terms)
{
    const double nu = (double)terms * UNIT_ROUNDOFF;
    return nu / (1.0 - nu);
}

/* One case's verdict: tuned against ref, elementwise. With abs_sums (the reference on |inputs|,
 * itself rounded: so divided by 1 - gamma), within the bound for `terms` terms; else exact. */
static void compare(const char *name, const char *shape, int exact, const float *tuned,
                    const float *ref, const float *abs_sums, long terms, size_t count)
{
    struct stats *s = stats_of(name);
    size_t i;
    int identical = 1, failed = 0;
    for (i = 0; i < count; ++i) {
        if (same(tuned[i], ref[i])) {
            continue;
        }
        identical = 0;
        if (exact || abs_sums == NULL) {
            failed = 1;
        } else {
            const double g = gamma_of(terms);
            const double bound = 2.0 * g * (double)abs_sums[i] / (1.0 - g);
            if (!(fabs((double)tuned[i] - (double)ref[i]) <= bound)) {
                failed = 1;
            }
        }
        if (failed) {
            printf("FAIL %s %s %s data: element %lu: tuned %.9g reference %.9g\n", name, shape,
                   exact ? "exact" : "random", (unsigned long)i, (double)tuned[i],
                   (double)ref[i]);
            break;
        }
    }
    s->cases += 1;
    s->failures += failed;
    if (!exact && !identical) {
        s->random_identical = 0;
    }
}

/* The sizes at the edges of a tile of t: 1, t - 1, t, t + 1, 2t + 3 (added to sizes[*count],
 * without repeats). */
static void add_edges(int32_t *sizes, int *count, int32_t t)
{
    const int32_t edges[5] = {1, t - 1, t, t + 1, 2 * t + 3};
    int e, i;
    for (e = 0; e < 5; ++e) {
        int seen = edges[e] < 1;
        for (i = 0; i < *count; ++i) {
            seen |= sizes[i] == edges[e];
        }
        if (!seen) {
            sizes[(*count)++] = edges[e];
        }
    }
}

/* --- matmul ----------------------------------------------------------------------------- */

static void matmul_case(int32_t batch, int32_t m, int32_t n, int32_t k, int ta, int tb,
                        int shared_b, int exact)
{
    const size_t a_size = (size_t)batch * (size_t)m * (size_t)k;
    const size_t b_size = (shared_b ? 1u : (size_t)batch) * (size_t)k * (size_t)n;
    const size_t c_size = (size_t)batch * (size_t)m * (size_t)n;
    float *a = filled(a_size, exact), *b = filled(b_size, exact);
    float *abs_a = absolute(a, a_size), *abs_b = absolute(b, b_size);
    float *tuned = filled(c_size, 0), *ref = filled(c_size, 0), *sums = filled(c_size, 0);
    char shape[96];
    sprintf(shape, "batch %d m %d n %d k %d ta %d tb %d shared %d", (int)batch, (int)m,
            (int)n, (int)k, ta, tb, shared_b);
    adir_tuned_matmul(a, b, tuned, batch, m, n, k, ta, tb, shared_b);
    adir_matmul(a, b, ref, batch, m, n, k, ta, tb, shared_b);
    adir_matmul(abs_a, abs_b, sums, batch, m, n, k, ta, tb, shared_b);
    compare("matmul", shape, exact, tuned, ref, sums, k, c_size);
    free(a), free(b), free(abs_a), free(abs_b), free(tuned), free(ref), free(sums);
}

static void matmuls(void)
{
    int32_t ms[16], ns[16], ks[24];
    int m_count = 0, n_count = 0, k_count = 0, i, j, l, layout, exact;
    add_edges(ms, &m_count, ADIR_GEMM_MR);
    add_edges(ms, &m_count, ADIR_DOT_ROWS);
    add_edges(ns, &n_count, ADIR_GEMM_NR);
    add_edges(ns, &n_count, ADIR_DOT_COLS);
#if defined(ADIR_STREAM_COLS) && ADIR_STREAM_COLS > 0
    add_edges(ns, &n_count, ADIR_STREAM_COLS); /* a row's blocks of columns below the tiles */
#endif
    add_edges(ks, &k_count, ADIR_GEMM_KC);
    add_edges(ks, &k_count, ADIR_DOT_LANES);
#ifdef ADIR_DOT_ROW_STEPS
    /* A batch of one's row takes ADIR_DOT_ROW_STEPS steps of LANES at a time, then single
     * steps: k with and without a single step after the multiple ones. */
    add_edges(ks, &k_count, ADIR_DOT_LANES * ADIR_DOT_ROW_STEPS);
    add_edges(ks, &k_count, ADIR_DOT_LANES * ADIR_DOT_ROW_STEPS + ADIR_DOT_LANES);
#endif
    for (exact = 0; exact < 2; ++exact) {
        for (layout = 0; layout < 4; ++layout) {
            for (i = 0; i < m_count; ++i) {
                for (j = 0; j < n_count; ++j) {
                    for (l = 0; l < k_count; ++l) {
                        matmul_case(1, ms[i], ns[j], ks[l], layout & 1, layout >> 1, 1, exact);
                    }
                }
            }
            matmul_case(3, ADIR_GEMM_MR + 1, ADIR_GEMM_NR + 1, 7, layout & 1, layout >> 1, 0,
                        exact);
            matmul_case(3, ADIR_DOT_ROWS + 1, ADIR_DOT_COLS + 1, 7, layout & 1, layout >> 1, 1,
                        exact);
        }
    }
}

/* --- convolution -------------------------------------------------------------------------- */

struct conv {
    int32_t batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad, dilation;
};

static void conv_case(struct conv c, int exact)
{
    const int32_t height = (c.out_h - 1) * c.stride + c.dilation * (c.kh - 1) + 1 - 2 * c.pad;
    const int32_t width = (c.out_w - 1) * c.stride + c.dilation * (c.kw - 1) + 1 - 2 * c.pad;
    const int32_t group_channels = c.channels / c.groups;
    const size_t x_size = (size_t)c.batch * (size_t)c.channels * (size_t)height * (size_t)width;
    const size_t w_size =
        (size_t)c.out_channels * (size_t)group_channels * (size_t)c.kh * (size_t)c.kw;
    const size_t y_size = (size_t)c.batch * (size_t)c.out_channels * (size_t)c.out_h *
                          (size_t)c.out_w;
    float *x = filled(x_size, exact), *w = filled(w_size, exact), *bias;
    float *dy = filled(y_size, exact);
    float *abs_x = absolute(x, x_size), *abs_w = absolute(w, w_size), *abs_dy, *abs_bias;
    float *tuned, *ref, *sums;
    const size_t most = x_size > y_size ? (x_size > w_size ? x_size : w_size)
                                        : (y_size > w_size ? y_size : w_size);
    char shape[160];
    bias = filled((size_t)c.out_channels, exact);
    abs_bias = absolute(bias, (size_t)c.out_channels);
    abs_dy = absolute(dy, y_size);
    tuned = filled(most, 0), ref = filled(most, 0), sums = filled(most, 0);
    sprintf(shape,
            "batch %d channels %d out %d groups %d kernel %dx%d out %dx%d stride %d pad %d "
            "dilation %d",
            (int)c.batch, (int)c.channels, (int)c.out_channels, (int)c.groups, (int)c.kh,
            (int)c.kw, (int)c.out_h, (int)c.out_w, (int)c.stride, (int)c.pad, (int)c.dilation);
#define CONV_SIZES                                                                              \
    c.batch, c.channels, height, width, c.out_channels, c.out_h, c.out_w, c.kh, c.kw, c.stride, \
        c.stride, c.pad, c.pad, c.dilation, c.dilation, c.groups
    adir_tuned_conv2d(x, w, bias, tuned, CONV_SIZES);
    adir_conv2d(x, w, bias, ref, CONV_SIZES);
    adir_conv2d(abs_x, abs_w, abs_bias, sums, CONV_SIZES);
    compare("conv2d", shape, exact, tuned, ref, sums, (long)group_channels * c.kh * c.kw + 1,
            y_size);
    adir_tuned_conv2d(x, w, NULL, tuned, CONV_SIZES);
    adir_conv2d(x, w, NULL, ref, CONV_SIZES);
    adir_conv2d(abs_x, abs_w, NULL, sums, CONV_SIZES);
    compare("conv2d", shape, exact, tuned, ref, sums, (long)group_channels * c.kh * c.kw,
            y_size);
    adir_tuned_conv2d_grad_input(dy, w, tuned, CONV_SIZES);
    adir_conv2d_grad_input(dy, w, ref, CONV_SIZES);
    adir_conv2d_grad_input(abs_dy, abs_w, sums, CONV_SIZES);
    compare("conv2d_grad_input", shape, exact, tuned, ref, sums,
            (long)(c.out_channels / c.groups) * c.kh * c.kw, x_size);
    adir_tuned_conv2d_grad_weight(x, dy, tuned, CONV_SIZES);
    adir_conv2d_grad_weight(x, dy, ref, CONV_SIZES);
    adir_conv2d_grad_weight(abs_x, abs_dy, sums, CONV_SIZES);
    compare("conv2d_grad_weight", shape, exact, tuned, ref, sums,
            (long)c.batch * c.out_h * c.out_w, w_size);
#undef CONV_SIZES
    if (c.kh == 1 && c.out_h == 1) { /* also a conv1d: its tuned kernels are these at height 1 */
#define CONV1D_SIZES \
    c.batch, c.channels, width, c.out_channels, c.out_w, c.kw, c.stride, c.pad, c.dilation, c.groups
        adir_tuned_conv1d(x, w, bias, tuned, CONV1D_SIZES);
        adir_conv1d(x, w, bias, ref, CONV1D_SIZES);
        adir_conv1d(abs_x, abs_w, abs_bias, sums, CONV1D_SIZES);
        compare("conv1d", shape, exact, tuned, ref, sums, (long)group_channels * c.kw + 1,
                y_size);
        adir_tuned_conv1d_grad_input(dy, w, tuned, CONV1D_SIZES);
        adir_conv1d_grad_input(dy, w, ref, CONV1D_SIZES);
        adir_conv1d_grad_input(abs_dy, abs_w, sums, CONV1D_SIZES);
        compare("conv1d_grad_input", shape, exact, tuned, ref, sums,
                (long)(c.out_channels / c.groups) * c.kw, x_size);
        adir_tuned_conv1d_grad_weight(x, dy, tuned, CONV1D_SIZES);
        adir_conv1d_grad_weight(x, dy, ref, CONV1D_SIZES);
        adir_conv1d_grad_weight(abs_x, abs_dy, sums, CONV1D_SIZES);
        compare("conv1d_grad_weight", shape, exact, tuned, ref, sums, (long)c.batch * c.out_w,
                w_size);
#undef CONV1D_SIZES
    }
    free(x), free(w), free(bias), free(dy), free(abs_x), free(abs_w), free(abs_dy);
    free(abs_bias), free(tuned), free(ref), free(sums);
}

static void convs(void)
{
    /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad, dilation: the
     * tuned convolutions take stride 1, no padding and no dilation only (select-kernels gives
     * the others to the reference: its rule is tested in test/filecheck/select-kernels/). */
    const struct conv base = {2, 3, 5, 1, 3, 3, 5, 9, 1, 0, 1};
    const struct conv fixed[] = {
        {2, 1, 6, 1, 5, 5, 24, 24, 1, 0, 1},  /* LeNet's conv1 */
        {2, 6, 16, 1, 5, 5, 8, 8, 1, 0, 1},   /* LeNet's conv2 */
        {1, 4, 6, 2, 3, 3, 4, 11, 1, 0, 1},   /* groups */
        {2, 6, 6, 6, 3, 3, 5, 17, 1, 0, 1},   /* depthwise */
        {1, 3, 4, 1, 2, 3, 3, 10, 1, 0, 1},   /* a kernel that is not square */
    };
    int32_t sizes[32];
    int count, i, exact;
    for (exact = 0; exact < 2; ++exact) {
        struct conv c;
        for (i = 0; i < (int)(sizeof fixed / sizeof fixed[0]); ++i) {
            conv_case(fixed[i], exact);
        }
        /* Output channels: the forward tiles (OB, and NARROW = 3/4 OB) and the weight
         * gradient's (WB and WB - 1). */
        count = 0;
        add_edges(sizes, &count, ADIR_CONV_OB);
        add_edges(sizes, &count, ADIR_CONV_OB - ADIR_CONV_OB / 4);
        add_edges(sizes, &count, ADIR_CONV_WB);
        if (ADIR_CONV_WB > 1) {
            add_edges(sizes, &count, ADIR_CONV_WB - 1);
        }
        for (i = 0; i < count; ++i) {
            c = base, c.out_channels = sizes[i], conv_case(c, exact);
            c.kh = 1, c.out_h = 1, conv_case(c, exact); /* conv1d */
        }
        /* Input channels: the input gradient's tiles (OB, NARROW), and with a 1 x 1 kernel the
         * weight gradient's taps (TB). */
        count = 0;
        add_edges(sizes, &count, ADIR_CONV_OB);
        add_edges(sizes, &count, ADIR_CONV_OB - ADIR_CONV_OB / 4);
        for (i = 0; i < count; ++i) {
            c = base, c.channels = sizes[i], conv_case(c, exact);
        }
        count = 0;
        add_edges(sizes, &count, ADIR_CONV_TB);
        for (i = 0; i < count; ++i) {
            c = base, c.channels = sizes[i], c.kh = 1, c.kw = 1, conv_case(c, exact);
            c = base, c.channels = 1, c.kh = 1, c.kw = sizes[i], conv_case(c, exact);
        }
        /* Output rows (RB) and pixels along a row (QB). */
        count = 0;
        add_edges(sizes, &count, ADIR_CONV_RB);
        for (i = 0; i < count; ++i) {
            c = base, c.out_h = sizes[i], conv_case(c, exact);
        }
        count = 0;
        add_edges(sizes, &count, ADIR_CONV_QB);
        if (ADIR_CONV_WQB != ADIR_CONV_QB) { /* the weight gradient's lanes */
            add_edges(sizes, &count, ADIR_CONV_WQB);
        }
        for (i = 0; i < count; ++i) {
            c = base, c.out_w = sizes[i], conv_case(c, exact);
            c = base, c.kh = 1, c.out_h = 1, c.out_w = sizes[i], conv_case(c, exact); /* conv1d */
        }
    }
}

/* --- convolution as GEMM, and depthwise ------------------------------------------------------ */

/* The scratch of the GEMM kernels (select_kernels/tuned.py, shrunk by plan-memory): `floats`
 * floats, whatever they hold (whole-tap panels of taps x pixels floats, or narrower blocks of
 * taps); the depthwise ones' a padded plane and a row of sums. */
static int32_t gemm_taps(struct conv c)
{
    return (c.channels / c.groups) * c.kh * c.kw;
}

static int32_t depthwise_scratch_floats(struct conv c)
{
    const int32_t hp = (c.out_h - 1) * c.stride + c.kh, wp = (c.out_w - 1) * c.stride + c.kw;
    return hp * wp + c.kw + c.out_h * wp;
}

/* The tuned kernels a scratch_conv_case runs: the GEMM ones, the depthwise ones on flat rows
 * (with the scratch of their weight gradient's channels in lanes too, where larger), or the
 * register-blocked depthwise 3 x 3 ones (the Cortex-M targets'). */
enum scratch_kernels { GEMM, DEPTHWISE, DEPTHWISE_LANES, DEPTHWISE_3X3 };

typedef void (*conv_forward_fn)(const float *, const float *, const float *, float *, int32_t,
                                int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                                int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                                int32_t, float *, int32_t);
typedef void (*conv_adjoint_fn)(const float *, const float *, float *, int32_t, int32_t, int32_t,
                                int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
                                int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, float *,
                                int32_t);

/* The register-blocked kernels' scratch: the larger of the padded input plane and the stride-1
 * input gradient's padded dy plane (height + 2 by width + 2), as select_kernels/tuned.py
 * sizes it. */
static int32_t depthwise_3x3_scratch_floats(struct conv c, int32_t height, int32_t width)
{
    const int32_t hp = (c.out_h - 1) * c.stride + 3, wp = (c.out_w - 1) * c.stride + 3;
    const int32_t dy_plane = (height + 2) * (width + 2);
    return hp * wp > dy_plane ? hp * wp : dy_plane;
}

/* One shape's data and its reference results, kept while the next cases run the same shape:
 * scratch_convs and the others run a shape at many scratch sizes (20 or more) and through
 * several kernels, and the reference convolutions were most of the driver's time (natively
 * 3/4 of it; under QEMU's soft float more). The sums of |a_p b_p| for the bound are made the
 * first time a random case differs from its reference (never where a kernel is bit for bit
 * the reference's). `extra` rows and columns past the last window's (an image whose bottom and
 * right no window reads: a stride-2 conv of an even size) are in the image. */
enum conv_result { Y_BIAS, Y, X_GRAD, W_GRAD, CONV_RESULTS };

static struct conv_reference {
    int valid, exact;
    struct conv c;
    int32_t extra, height, width;
    size_t sizes[CONV_RESULTS];
    float *x, *w, *dy, *bias;
    float *ref[CONV_RESULTS], *sums[CONV_RESULTS]; /* sums: NULL until first needed */
} shape_reference;

static void release_conv_reference(void)
{
    struct conv_reference *r = &shape_reference;
    int k;
    if (!r->valid) {
        return;
    }
    free(r->x), free(r->w), free(r->dy), free(r->bias);
    for (k = 0; k < CONV_RESULTS; ++k) {
        free(r->ref[k]), free(r->sums[k]);
    }
    r->valid = 0;
}

static int same_conv(struct conv a, struct conv b)
{
    return a.batch == b.batch && a.channels == b.channels && a.out_channels == b.out_channels &&
           a.groups == b.groups && a.kh == b.kh && a.kw == b.kw && a.out_h == b.out_h &&
           a.out_w == b.out_w && a.stride == b.stride && a.pad == b.pad &&
           a.dilation == b.dilation;
}

#define CONV_SIZES(r)                                                                         \
    (r)->c.batch, (r)->c.channels, (r)->height, (r)->width, (r)->c.out_channels, (r)->c.out_h, \
        (r)->c.out_w, (r)->c.kh, (r)->c.kw, (r)->c.stride, (r)->c.stride, (r)->c.pad,         \
        (r)->c.pad, (r)->c.dilation, (r)->c.dilation, (r)->c.groups

/* The reference results of shape c (new data unless the last case's shape was c). */
static struct conv_reference *conv_reference(struct conv c, int32_t extra, int exact)
{
    struct conv_reference *r = &shape_reference;
    const int32_t group_channels = c.channels / c.groups;
    int k;
    if (r->valid && same_conv(r->c, c) && r->extra == extra && r->exact == exact) {
        return r;
    }
    release_conv_reference();
    r->valid = 1, r->exact = exact, r->c = c, r->extra = extra;
    r->height = (c.out_h - 1) * c.stride + c.dilation * (c.kh - 1) + 1 - 2 * c.pad + extra;
    r->width = (c.out_w - 1) * c.stride + c.dilation * (c.kw - 1) + 1 - 2 * c.pad + extra;
    r->sizes[X_GRAD] = (size_t)c.batch * (size_t)c.channels * (size_t)r->height *
                       (size_t)r->width;
    r->sizes[W_GRAD] =
        (size_t)c.out_channels * (size_t)group_channels * (size_t)c.kh * (size_t)c.kw;
    r->sizes[Y] = r->sizes[Y_BIAS] =
        (size_t)c.batch * (size_t)c.out_channels * (size_t)c.out_h * (size_t)c.out_w;
    r->x = filled(r->sizes[X_GRAD], exact), r->w = filled(r->sizes[W_GRAD], exact);
    r->dy = filled(r->sizes[Y], exact), r->bias = filled((size_t)c.out_channels, exact);
    for (k = 0; k < CONV_RESULTS; ++k) {
        r->ref[k] = allocated(r->sizes[k]), r->sums[k] = NULL;
    }
    adir_conv2d(r->x, r->w, r->bias, r->ref[Y_BIAS], CONV_SIZES(r));
    adir_conv2d(r->x, r->w, NULL, r->ref[Y], CONV_SIZES(r));
    adir_conv2d_grad_input(r->dy, r->w, r->ref[X_GRAD], CONV_SIZES(r));
    adir_conv2d_grad_weight(r->x, r->dy, r->ref[W_GRAD], CONV_SIZES(r));
    return r;
}

/* The reference of result k on |inputs|: the sums the bound of a differing random case needs. */
static const float *conv_sums(struct conv_reference *r, enum conv_result k)
{
    if (r->sums[k] == NULL) {
        const size_t x_size = r->sizes[X_GRAD], w_size = r->sizes[W_GRAD];
        float *abs_x = absolute(r->x, x_size), *abs_w = absolute(r->w, w_size);
        float *abs_dy = absolute(r->dy, r->sizes[Y]);
        float *abs_bias = absolute(r->bias, (size_t)r->c.out_channels);
        r->sums[k] = allocated(r->sizes[k]);
        if (k == Y_BIAS || k == Y) {
            adir_conv2d(abs_x, abs_w, k == Y_BIAS ? abs_bias : NULL, r->sums[k], CONV_SIZES(r));
        } else if (k == X_GRAD) {
            adir_conv2d_grad_input(abs_dy, abs_w, r->sums[k], CONV_SIZES(r));
        } else {
            adir_conv2d_grad_weight(abs_x, abs_dy, r->sums[k], CONV_SIZES(r));
        }
        free(abs_x), free(abs_w), free(abs_dy), free(abs_bias);
    }
    return r->sums[k];
}

/* compare() of a tuned result against reference result k, with the bound's sums where a
 * random case differs. */
static void compare_conv(const char *name, const char *shape, struct conv_reference *r,
                         enum conv_result k, const float *tuned, long terms)
{
    const float *sums = NULL;
    size_t i;
    if (!r->exact) {
        for (i = 0; i < r->sizes[k]; ++i) {
            if (!same(tuned[i], r->ref[k][i])) {
                sums = conv_sums(r, k);
                break;
            }
        }
    }
    compare(name, shape, r->exact, tuned, r->ref[k], sums, terms, r->sizes[k]);
}

/* One shape through the GEMM kernels (`floats` floats of scratch) or the depthwise ones,
 * against the references (conv_reference): the same data, bound and term counts as
 * conv_case. */
static void scratch_conv_case_of(struct conv c, int32_t floats, enum scratch_kernels kernels,
                                 int32_t extra, int exact)
{
    struct conv_reference *r = conv_reference(c, extra, exact);
    const int32_t group_channels = c.channels / c.groups;
    const size_t most = r->sizes[X_GRAD] > r->sizes[Y]
                            ? (r->sizes[X_GRAD] > r->sizes[W_GRAD] ? r->sizes[X_GRAD]
                                                                   : r->sizes[W_GRAD])
                            : (r->sizes[Y] > r->sizes[W_GRAD] ? r->sizes[Y] : r->sizes[W_GRAD]);
    float *tuned = filled(most, 0);
    /* garbage in: the kernels must not read it */
    float *scratch;
    const char *names[3];
    conv_forward_fn forward;
    conv_adjoint_fn grad_input, grad_weight;
    char shape[200];
    if (kernels == DEPTHWISE || kernels == DEPTHWISE_LANES) {
        floats = depthwise_scratch_floats(c);
        if (kernels == DEPTHWISE_LANES &&
            adir_depthwise_lanes_floats(c.out_h, c.out_w, c.stride, c.stride) > floats) {
            floats = adir_depthwise_lanes_floats(c.out_h, c.out_w, c.stride, c.stride);
        }
        names[0] = "conv2d_depthwise", names[1] = "conv2d_grad_input_depthwise";
        names[2] = "conv2d_grad_weight_depthwise";
        forward = adir_tuned_conv2d_depthwise;
        grad_input = adir_tuned_conv2d_grad_input_depthwise;
        grad_weight = adir_tuned_conv2d_grad_weight_depthwise;
    } else if (kernels == DEPTHWISE_3X3) {
        floats = depthwise_3x3_scratch_floats(c, r->height, r->width);
        names[0] = "conv2d_depthwise_3x3", names[1] = "conv2d_grad_input_depthwise_3x3";
        names[2] = "conv2d_grad_weight_depthwise_3x3";
        forward = adir_tuned_conv2d_depthwise_3x3;
        grad_input = adir_tuned_conv2d_grad_input_depthwise_3x3;
        grad_weight = adir_tuned_conv2d_grad_weight_depthwise_3x3;
    } else {
        names[0] = "conv2d_gemm", names[1] = "conv2d_grad_input_gemm";
        names[2] = "conv2d_grad_weight_gemm";
        forward = adir_tuned_conv2d_gemm;
        grad_input = adir_tuned_conv2d_grad_input_gemm;
        grad_weight = adir_tuned_conv2d_grad_weight_gemm;
    }
    scratch = filled((size_t)floats, 0);
    sprintf(shape,
            "batch %d channels %d out %d groups %d kernel %dx%d out %dx%d stride %d pad %d "
            "dilation %d extra %d scratch %d",
            (int)c.batch, (int)c.channels, (int)c.out_channels, (int)c.groups, (int)c.kh,
            (int)c.kw, (int)c.out_h, (int)c.out_w, (int)c.stride, (int)c.pad, (int)c.dilation,
            (int)extra, (int)floats);
    forward(r->x, r->w, r->bias, tuned, CONV_SIZES(r), scratch, floats);
    compare_conv(names[0], shape, r, Y_BIAS, tuned, (long)group_channels * c.kh * c.kw + 1);
    forward(r->x, r->w, NULL, tuned, CONV_SIZES(r), scratch, floats);
    compare_conv(names[0], shape, r, Y, tuned, (long)group_channels * c.kh * c.kw);
    grad_input(r->dy, r->w, tuned, CONV_SIZES(r), scratch, floats);
    compare_conv(names[1], shape, r, X_GRAD, tuned,
                 (long)(c.out_channels / c.groups) * c.kh * c.kw);
    grad_weight(r->x, r->dy, tuned, CONV_SIZES(r), scratch, floats);
    compare_conv(names[2], shape, r, W_GRAD, tuned, (long)c.batch * c.out_h * c.out_w);
    free(tuned), free(scratch);
}
#undef CONV_SIZES

static void scratch_conv_case(struct conv c, int32_t floats, int depthwise, int exact)
{
    scratch_conv_case_of(c, floats, depthwise ? DEPTHWISE : GEMM, 0, exact);
    if (depthwise) {
        scratch_conv_case_of(c, floats, DEPTHWISE_LANES, 0, exact);
    }
}

/* The depthwise 3 x 3 weight gradient with channels in lanes (adir_tuned_depthwise_lanes.c):
 * channel counts around its block of 16 and the lanes of the target's vectors (the lanes past
 * a last block's channels), strides 1 and 2, padding 0 to 2, images whose bottom and right no
 * window reads, several samples (each lane's sums continue from sample to sample). The planes
 * are interleaved 16 pixels at a time where a vector holds 16 floats: images of fewer than 16
 * pixels (padding 2), of 20 and more (the last block overlapping), and below of exactly 16
 * and 32 (whole blocks) and DS-CNN's 25 x 5. */
static void depthwise_lanes_convs(void)
{
    const int32_t channels[] = {1, ADIR_DEPTHWISE_LANES + 1, 16, 17, 35};
    int32_t stride, pad, extra;
    int i, exact;
    for (exact = 0; exact < 2; ++exact) {
        for (i = 0; i < (int)(sizeof channels / sizeof channels[0]); ++i) {
            for (stride = 1; stride <= 2; ++stride) {
                for (pad = 0; pad <= 2; ++pad) {
                    for (extra = 0; extra < 2; ++extra) {
                        /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride,
                         * pad, dilation */
                        const struct conv c = {3, channels[i], channels[i], channels[i], 3, 3,
                                               4, 5, stride, pad, 1};
                        scratch_conv_case_of(c, 0, DEPTHWISE_LANES, extra, exact);
                    }
                }
            }
        }
        for (i = 0; i < 3; ++i) {
            /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad,
             * dilation: 4 x 4, 8 x 4 and 25 x 5 images, padding 1 */
            const int32_t heights[] = {4, 8, 25}, widths[] = {4, 4, 5};
            const struct conv c = {2, 35, 35, 35, 3, 3, heights[i], widths[i], 1, 1, 1};
            scratch_conv_case_of(c, 0, DEPTHWISE_LANES, 0, exact);
        }
    }
}

/* The register-blocked depthwise 3 x 3 kernels: stride 1 and 2, padding 0 to 2, images whose
 * bottom and right no window reads, output widths across the blocks of 4 pixels and their
 * tails (1 .. 9), odd and even heights, and channel counts that are not the batch's. */
static void depthwise_3x3_convs(void)
{
    /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad, dilation */
    const struct conv fixed[] = {
        {1, 4, 4, 4, 3, 3, 25, 5, 1, 1, 1},    /* DS-CNN's (4 of its 64 channels) */
        {2, 3, 3, 3, 3, 3, 7, 7, 1, 0, 1},     /* unpadded */
        {1, 2, 2, 2, 3, 3, 5, 6, 1, 2, 1},     /* padding 2 */
        {2, 3, 3, 3, 3, 3, 4, 5, 2, 1, 1},     /* stride 2 (MobileNet's) */
        {1, 2, 2, 2, 3, 3, 3, 9, 2, 0, 1},     /* stride 2, unpadded */
        {1, 2, 2, 2, 3, 3, 5, 3, 2, 2, 1},     /* stride 2, padding 2 */
        {1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1},     /* one pixel */
        {3, 5, 5, 5, 3, 3, 3, 11, 1, 1, 1},    /* odd sizes */
    };
    int32_t out_w, extra, stride, pad;
    int i, exact;
    for (exact = 0; exact < 2; ++exact) {
        for (i = 0; i < (int)(sizeof fixed / sizeof fixed[0]); ++i) {
            for (extra = 0; extra < 2; ++extra) {
                scratch_conv_case_of(fixed[i], 0, DEPTHWISE_3X3, extra, exact);
            }
        }
        for (stride = 1; stride <= 2; ++stride) {
            for (pad = 0; pad <= 2; ++pad) {
                for (out_w = 1; out_w <= 9; ++out_w) {
                    const struct conv c = {1, 2, 2, 2, 3, 3, 3, out_w, stride, pad, 1};
                    if ((out_w - 1) * stride + 3 - 2 * pad + out_w % 2 >= 1) { /* a width */
                        scratch_conv_case_of(c, 0, DEPTHWISE_3X3, out_w % 2, exact);
                    }
                }
            }
        }
    }
}

/* The scratch of each implicit-GEMM path (adir_tuned_conv_implicit.c) for a shape, and every
 * one of them (a path with -1 takes none: the GEMM kernels build panels there). */
static int32_t implicit_floats_of(struct conv c, int32_t kind, int32_t extra)
{
    const int32_t height =
        (c.out_h - 1) * c.stride + c.dilation * (c.kh - 1) + 1 - 2 * c.pad + extra;
    const int32_t width =
        (c.out_w - 1) * c.stride + c.dilation * (c.kw - 1) + 1 - 2 * c.pad + extra;
    return adir_conv_implicit_floats(kind, c.channels, height, width, c.out_channels, c.out_h,
                                     c.out_w, c.kh, c.kw, c.stride, c.stride, c.pad, c.pad,
                                     c.dilation, c.dilation, c.groups);
}

static int32_t implicit_floats(struct conv c, int32_t kind)
{
    return implicit_floats_of(c, kind, 0);
}

/* Each implicit path's scratch exactly (that path runs; the others where it holds theirs) and
 * one float less (that path builds panels instead). */
static void implicit_conv_cases(struct conv c, int exact)
{
    int32_t kind, floats;
    for (kind = ADIR_CONV_IMPLICIT_FORWARD; kind <= ADIR_CONV_IMPLICIT_GRAD_WEIGHT; ++kind) {
        floats = implicit_floats(c, kind);
        if (floats > 1) {
            scratch_conv_case(c, floats, 0, exact);
            scratch_conv_case(c, floats - 1, 0, exact);
        }
    }
}

/* The input gradient of strided convolutions, phase by phase (adir_tuned_conv_implicit.c), at
 * its exact scratch and one float less (panels): strides 2 and 3, padding 0 to 2 (past the
 * kernel's reach too), `extra` rows and columns no window reads (every phase's pixels of an
 * odd or even image), phases no tap lands on (a 3 x 1 kernel of dilation 2 at stride 2, 2 x 3
 * at stride 3; a 1 x 1 kernel takes panels), two samples,
 * output channels past one tile of MR, kernels that are not square. */
static void strided_grad_input_convs(void)
{
    /* kh, kw, dilation */
    const int32_t kernels[][3] = {{3, 3, 1}, {1, 1, 1}, {2, 3, 1}, {3, 1, 2}, {5, 4, 1}};
    const int32_t outs[][2] = {{1, 1}, {4, 5}, {3, 7}};
    int32_t stride, pad, extra, floats;
    int exact, k, o;
    for (exact = 0; exact < 2; ++exact) {
        for (stride = 2; stride <= 3; ++stride) {
            for (pad = 0; pad <= 2; ++pad) {
                for (k = 0; k < (int)(sizeof kernels / sizeof kernels[0]); ++k) {
                    for (o = 0; o < (int)(sizeof outs / sizeof outs[0]); ++o) {
                        for (extra = 0; extra < stride; ++extra) {
                            /* batch, channels, out_channels, groups, kh, kw, out_h, out_w,
                             * stride, pad, dilation */
                            struct conv c = {2, 3, ADIR_GEMM_MR + 1, 1, 0, 0, 0, 0, 0, 0, 0};
                            c.kh = kernels[k][0], c.kw = kernels[k][1];
                            c.dilation = kernels[k][2], c.out_h = outs[o][0];
                            c.out_w = outs[o][1], c.stride = stride, c.pad = pad;
                            if ((c.out_h - 1) * stride + c.dilation * (c.kh - 1) + 1 - 2 * pad +
                                        extra < 1 ||
                                (c.out_w - 1) * stride + c.dilation * (c.kw - 1) + 1 - 2 * pad +
                                        extra < 1) {
                                continue; /* no image */
                            }
                            floats = implicit_floats_of(c, ADIR_CONV_IMPLICIT_GRAD_INPUT, extra);
                            if (floats < 1) { /* a 1 x 1 kernel: panels, of every tap */
                                floats = gemm_taps(c) * c.out_h * c.out_w + 1;
                            }
                            scratch_conv_case_of(c, floats, GEMM, extra, exact);
                            scratch_conv_case_of(c, floats - 1, GEMM, extra, exact);
                        }
                    }
                }
            }
        }
    }
}

static void scratch_convs(void)
{
    /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad, dilation */
    const struct conv base = {2, 3, 5, 1, 3, 3, 5, 9, 1, 1, 1};
    const struct conv fixed[] = {
        {1, 3, 16, 1, 3, 3, 8, 8, 1, 1, 1},    /* ResNet-8's first conv, a smaller image */
        {2, 16, 32, 1, 3, 3, 4, 4, 2, 1, 1},   /* its stride-2 3x3 */
        {2, 16, 32, 1, 1, 1, 4, 4, 2, 0, 1},   /* its stride-2 1x1 shortcut */
        {2, 8, 12, 1, 1, 1, 5, 5, 1, 0, 1},    /* pointwise: the image is the im2col */
        {1, 1, 8, 1, 10, 4, 5, 3, 2, 2, 1},    /* DS-CNN's first conv, a smaller image */
        /* column planes (few taps, phase planes that would drop an eighth of their pixels):
         * whole tiles stored into y, the last one's pixels, rows below MR, two samples */
        {2, 1, 19, 1, 10, 4, 25, 5, 2, 2, 1},  /* DS-CNN's first conv: 125 pixels */
        {1, 2, 10, 1, 3, 5, 4, 4, 2, 1, 2},    /* dilation 2, stride 2: columns 0, 2, .. 8 */
        {2, 3, 9, 1, 1, 5, 6, 3, 1, 2, 1},     /* stride 1, a 1 x 5 kernel */
        /* a plane's pixels y's without column planes (a kernel one column wide, stride 1):
         * the forward pass and the input gradient's one phase */
        {2, 3, 18, 1, 3, 1, 7, 6, 1, 0, 1},
        {1, 4, 6, 2, 3, 3, 4, 11, 1, 1, 1},    /* groups */
        {1, 3, 4, 1, 3, 3, 4, 6, 1, 2, 2},     /* dilation */
        {1, 2, 3, 1, 3, 3, 3, 3, 2, 0, 1},     /* stride, no padding */
        {2, 16, 16, 1, 3, 3, 12, 12, 1, 1, 1}, /* ResNet-8's 3x3 (whole MR x NR tiles) */
        {2, 8, 32, 1, 3, 3, 5, 7, 1, 1, 1},    /* two tiles of NR outputs, rows past NR */
        {1, 3, 17, 1, 2, 5, 6, 9, 3, 2, 1},    /* stride 3, an even kernel, edges of MR */
        {1, 2, 4, 1, 3, 3, 5, 5, 1, 0, 2},     /* dilation 2, no padding */
        {1, 2, 4, 1, 3, 3, 5, 5, 2, 2, 2},     /* dilation 2 and stride 2: one phase a side */
        /* the weight gradient's wide tiles (AVX-512: 8 taps by 32 outputs, 6 by 64) and the
         * forward tiles with outputs in lanes (8 pixels by 32, 6 by 64; 64 taps or more) */
        {2, 8, 64, 1, 3, 3, 5, 7, 1, 1, 1},    /* 72 taps by 64 outputs, 35 pixels */
        {1, 2, 70, 1, 3, 3, 4, 5, 1, 1, 1},    /* 18 taps: 64 outputs wide, 6 at the edge */
        {1, 8, 48, 1, 3, 3, 3, 9, 2, 1, 1},    /* stride 2: 32 wide, 16 by WMR; 27 pixels */
        {2, 8, 97, 1, 3, 3, 4, 4, 1, 1, 1},    /* 64 + 32 outputs wide, one at the edge */
        {1, 5, 40, 1, 3, 3, 4, 6, 1, 1, 1},    /* 45 taps: no whole wide tile, 16 + 16 + 8 */
        {2, 3, 8, 1, 3, 3, 5, 7, 2, 1, 1},     /* MobileNetV1-0.25's first: 8 outputs, NR / 2 */
        {1, 5, 24, 1, 3, 3, 4, 4, 1, 1, 1},    /* 16 outputs and a block of 8 */
        /* the input gradient's (its channels in lanes, its taps a phase's) */
        {2, 64, 8, 1, 3, 3, 5, 6, 1, 1, 1},    /* 64 channels, 30 pixels: a partial tile */
        {1, 40, 16, 1, 3, 3, 4, 7, 2, 1, 1},   /* stride 2: 64 taps in one phase, 32 + 8 */
        {1, 33, 8, 1, 3, 3, 3, 5, 1, 1, 1},    /* 32 in lanes, 1 by the MR tile's edge */
        /* the weight gradient's blocks of dW^T transposed in place without scratch (more
         * floats than the implicit path's), and groups (each group's blocks) */
        {2, 4, 16, 1, 3, 3, 1, 1, 1, 0, 1},    /* 36 taps x 16 outputs, 155 floats */
        {1, 6, 21, 1, 3, 3, 1, 2, 1, 0, 1},    /* a block of 16 outputs and one of 5 */
        {2, 8, 66, 2, 3, 3, 3, 4, 1, 1, 1},    /* 2 groups of 33 outputs from 4 channels */
        /* dy^T by blocks of 16 outputs x 16 pixels and the rows and columns past them; the
         * planes' padding zeroed by a call's (and each group's) first sample only */
        {3, 4, 17, 1, 3, 3, 5, 7, 2, 2, 1},    /* 17 outputs x 35 pixels, stride 2, pad 2 */
        {3, 6, 34, 2, 3, 3, 4, 5, 1, 1, 1},    /* 2 groups of 17 outputs, 3 samples */
        {2, 3, 32, 1, 3, 3, 16, 3, 1, 1, 1},   /* 2 x 2 whole blocks, 3 pixels a row */
        /* strided 1 x 1 kernels on the pointwise tiles (adir_tuned_conv_pointwise.c), a chunk
         * of pixels at a time: the panel sizes above give chunks of 32 to all pixels, and a
         * last chunk under 32 moved back over the one before it */
        {2, 5, 9, 1, 1, 1, 6, 7, 2, 0, 1},     /* 42 pixels, stride 2 */
        {1, 3, 4, 1, 1, 1, 5, 8, 3, 0, 1},     /* 40 pixels, stride 3 */
        {2, 16, 32, 1, 1, 1, 8, 9, 2, 0, 1},   /* ResNet-8's first shortcut, 72 pixels */
        {1, 32, 17, 1, 1, 1, 8, 8, 2, 0, 1},   /* its second's channels, 17 outputs */
    };
    const struct conv depthwise[] = {
        {2, 6, 6, 6, 3, 3, 5, 5, 1, 1, 1},     /* DS-CNN's depthwise (padding 1) */
        {1, 4, 4, 4, 3, 3, 7, 2, 1, 0, 1},     /* unpadded */
        {2, 3, 3, 3, 3, 3, 4, 5, 2, 1, 1},     /* stride 2 (MobileNet's) */
        {1, 2, 2, 2, 5, 3, 3, 9, 1, 2, 1},     /* another kernel */
        {1, 2, 2, 2, 2, 2, 3, 4, 2, 0, 1},     /* stride 2, even kernel, unpadded */
    };
    int32_t sizes[32], panels[32];
    int count, panel_count = 0, i, l, exact;
    add_edges(panels, &panel_count, ADIR_GEMM_NR);
    panels[panel_count++] = 64;
    for (exact = 0; exact < 2; ++exact) {
        struct conv c;
        for (i = 0; i < (int)(sizeof fixed / sizeof fixed[0]); ++i) {
            /* Whole-tap panels of `panels` pixels; then what plan-memory may shrink them to:
             * chunks of 64 pixels (or the image's, if fewer) and blocks of taps at the tiles'
             * edges, one tap of a few pixels, one float. */
            const int32_t taps = gemm_taps(fixed[i]);
            const int32_t pixels = fixed[i].out_h * fixed[i].out_w;
            const int32_t chunk = pixels < 64 ? pixels : 64;
            int32_t blocks[32];
            int block_count = 0;
            for (l = 0; l < panel_count; ++l) {
                scratch_conv_case(fixed[i], taps * panels[l], 0, exact);
            }
            add_edges(blocks, &block_count, ADIR_GEMM_MR);
            add_edges(blocks, &block_count, ADIR_GEMM_NR);
            for (l = 0; l < block_count; ++l) {
                if (blocks[l] < taps) {
                    scratch_conv_case(fixed[i], blocks[l] * chunk, 0, exact);
                }
            }
            scratch_conv_case(fixed[i], taps * chunk - 1, 0, exact);
            scratch_conv_case(fixed[i], chunk - 1 > 0 ? chunk - 1 : 1, 0, exact);
            scratch_conv_case(fixed[i], 1, 0, exact);
            implicit_conv_cases(fixed[i], exact);
        }
        for (i = 0; i < (int)(sizeof depthwise / sizeof depthwise[0]); ++i) {
            scratch_conv_case(depthwise[i], 0, 1, exact);
        }
        /* Output channels: the rows of the forward tile (MR); taps: the rows of the input
         * gradient's and the columns of the weight gradient's (MR, NR), with 1 x 1 kernels. */
        count = 0;
        add_edges(sizes, &count, ADIR_GEMM_MR);
        add_edges(sizes, &count, ADIR_GEMM_NR);
        if (ADIR_IMPLICIT_WMR != ADIR_GEMM_MR && ADIR_IMPLICIT_WMR != ADIR_GEMM_NR) {
            add_edges(sizes, &count, ADIR_IMPLICIT_WMR); /* the implicit weight tile's taps */
        }
        for (i = 0; i < count; ++i) {
            c = base, c.out_channels = sizes[i], scratch_conv_case(c, gemm_taps(c) * 64, 0, exact);
            implicit_conv_cases(c, exact);
            c = base, c.channels = sizes[i], c.kh = 1, c.kw = 1, c.pad = 0;
            scratch_conv_case(c, gemm_taps(c) * (ADIR_GEMM_NR + 1), 0, exact);
            implicit_conv_cases(c, exact);
            c.stride = 2, scratch_conv_case(c, gemm_taps(c) * 64, 0, exact);
            implicit_conv_cases(c, exact);
            c = base, c.channels = sizes[i], c.groups = sizes[i], c.out_channels = sizes[i];
            scratch_conv_case(c, 0, 1, exact);
        }
        /* Pixels along a row: the columns of the forward tile, and the flat depthwise rows. */
        count = 0;
        add_edges(sizes, &count, ADIR_GEMM_NR);
        if (ADIR_IMPLICIT_NR != ADIR_GEMM_NR) {
            add_edges(sizes, &count, ADIR_IMPLICIT_NR); /* the implicit forward tile's pixels */
        }
        for (i = 0; i < count; ++i) {
            c = base, c.out_w = sizes[i];
            scratch_conv_case(c, gemm_taps(c) * 2 * ADIR_GEMM_NR, 0, exact);
            implicit_conv_cases(c, exact);
            c.channels = 4, c.out_channels = 4, c.groups = 4, scratch_conv_case(c, 0, 1, exact);
        }
    }
}

/* --- batchnorm -------------------------------------------------------------------------- */

/* The tuned batchnorms and their gradients (the same operations in the same order as the
 * references) against them, bit for bit: every output. The edges: a row's eight partial sums
 * (rows of 1 to 17 values: none, exactly one block of 8, the tails after it, two blocks), the
 * hosts' `_channels` kernels' blocks of eight channels and the gradient's rows of four within
 * them (1, 3, 4, 5, 7, 8, 9, 12, 19 channels), their element passes' vectors of 8 or 16 (rows
 * of 15, 16, 17, 37 values), and DS-CNN's rows of 125 and a long row of 263, at one to three
 * samples and at 16 and 17. The forward pass also in place (y = x: its rows of a vector and
 * more are written a vector at a time, overlapping, only where y is not x). */
typedef void (*batchnorm_fn)(const float *, const float *, const float *, const float *,
                             const float *, float *, float *, float *, float *, float *, int32_t,
                             int32_t, int32_t, float, float);
typedef void (*batchnorm_grad_fn)(const float *, const float *, const float *, const float *,
                                  const float *, float *, float *, float *, int32_t, int32_t,
                                  int32_t);

static void batchnorm_case_of(const char *names[2], batchnorm_fn tuned_forward,
                              batchnorm_grad_fn tuned_grad, int32_t batch, int32_t channels,
                              int32_t spatial, int exact)
{
    const size_t size = (size_t)batch * (size_t)channels * (size_t)spatial;
    const size_t ch = (size_t)channels;
    float *x = filled(size, exact), *dy = filled(size, exact), *gamma = filled(ch, exact);
    float *beta = filled(ch, exact), *mean0 = filled(ch, exact), *var0 = absolute(x, ch);
    float *y[2], *stats[2][4], *dx[2], *dgamma[2], *dbeta[2];
    char shape[96];
    int k, t;
    for (k = 0; k < 2; ++k) {
        y[k] = filled(size, 0), dx[k] = filled(size, 0);
        dgamma[k] = filled(ch, 0), dbeta[k] = filled(ch, 0);
        for (t = 0; t < 4; ++t) {
            stats[k][t] = filled(ch, 0);
        }
    }
    sprintf(shape, "batch %d channels %d spatial %d", (int)batch, (int)channels, (int)spatial);
    tuned_forward(x, gamma, beta, mean0, var0, y[0], stats[0][0], stats[0][1], stats[0][2],
                  stats[0][3], batch, channels, spatial, 0.1f, 1e-5f);
    adir_batchnorm(x, gamma, beta, mean0, var0, y[1], stats[1][0], stats[1][1], stats[1][2],
                   stats[1][3], batch, channels, spatial, 0.1f, 1e-5f);
    compare(names[0], shape, 1, y[0], y[1], NULL, 0, size);
    for (t = 0; t < 4; ++t) {
        compare(names[0], shape, 1, stats[0][t], stats[1][t], NULL, 0, ch);
    }
    memcpy(y[0], x, size * sizeof *x);
    tuned_forward(y[0], gamma, beta, mean0, var0, y[0], stats[0][0], stats[0][1], stats[0][2],
                  stats[0][3], batch, channels, spatial, 0.1f, 1e-5f);
    compare(names[0], shape, 1, y[0], y[1], NULL, 0, size);
    tuned_grad(x, gamma, stats[1][0], stats[1][1], dy, dx[0], dgamma[0], dbeta[0], batch,
               channels, spatial);
    adir_batchnorm_grad(x, gamma, stats[1][0], stats[1][1], dy, dx[1], dgamma[1], dbeta[1],
                        batch, channels, spatial);
    compare(names[1], shape, 1, dx[0], dx[1], NULL, 0, size);
    compare(names[1], shape, 1, dgamma[0], dgamma[1], NULL, 0, ch);
    compare(names[1], shape, 1, dbeta[0], dbeta[1], NULL, 0, ch);
    for (k = 0; k < 2; ++k) {
        free(y[k]), free(dx[k]), free(dgamma[k]), free(dbeta[k]);
        for (t = 0; t < 4; ++t) {
            free(stats[k][t]);
        }
    }
    free(x), free(dy), free(gamma), free(beta), free(mean0), free(var0);
}

/* The batchnorm fused with the relu after it (adir_batchnorm_relu, adir_batchnorm_relu_grad):
 * the references against the kernels they fuse (adir_batchnorm then adir_relu; adir_relu_grad
 * of the relu's output then adir_batchnorm_grad), and a tuned pair (the scalar cores', the
 * hosts' `_channels`) against the references, bit for bit on every output. */
typedef void (*batchnorm_relu_grad_fn)(const float *, const float *, const float *,
                                       const float *, const float *, const float *, float *,
                                       float *, float *, int32_t, int32_t, int32_t);

static void batchnorm_relu_case(const char *names[2], batchnorm_fn tuned_forward,
                                batchnorm_relu_grad_fn tuned_grad, int32_t batch,
                                int32_t channels, int32_t spatial, int exact)
{
    const size_t size = (size_t)batch * (size_t)channels * (size_t)spatial;
    const size_t ch = (size_t)channels;
    float *x = filled(size, exact), *dy = filled(size, exact), *gamma = filled(ch, exact);
    float *beta = filled(ch, exact), *mean0 = filled(ch, exact), *var0 = absolute(x, ch);
    float *y[3], *stats[3][4], *dx[3], *dgamma[3], *dbeta[3], *relu_dy = filled(size, 0);
    char shape[96];
    int k, t;
    for (k = 0; k < 3; ++k) {
        y[k] = filled(size, 0), dx[k] = filled(size, 0);
        dgamma[k] = filled(ch, 0), dbeta[k] = filled(ch, 0);
        for (t = 0; t < 4; ++t) {
            stats[k][t] = filled(ch, 0);
        }
    }
    sprintf(shape, "batch %d channels %d spatial %d", (int)batch, (int)channels, (int)spatial);
    /* 0: the tuned fused kernel, 1: the fused reference, 2: the two kernels it fuses */
    tuned_forward(x, gamma, beta, mean0, var0, y[0], stats[0][0], stats[0][1], stats[0][2],
                  stats[0][3], batch, channels, spatial, 0.1f, 1e-5f);
    adir_batchnorm_relu(x, gamma, beta, mean0, var0, y[1], stats[1][0], stats[1][1],
                        stats[1][2], stats[1][3], batch, channels, spatial, 0.1f, 1e-5f);
    adir_batchnorm(x, gamma, beta, mean0, var0, y[2], stats[2][0], stats[2][1], stats[2][2],
                   stats[2][3], batch, channels, spatial, 0.1f, 1e-5f);
    adir_relu(y[2], y[2], size);
    for (k = 0; k < 2; ++k) {
        compare(names[0], shape, 1, y[k], y[k + 1], NULL, 0, size);
        for (t = 0; t < 4; ++t) {
            compare(names[0], shape, 1, stats[k][t], stats[k + 1][t], NULL, 0, ch);
        }
    }
    tuned_grad(x, gamma, beta, stats[1][0], stats[1][1], dy, dx[0], dgamma[0], dbeta[0], batch,
               channels, spatial);
    adir_batchnorm_relu_grad(x, gamma, beta, stats[1][0], stats[1][1], dy, dx[1], dgamma[1],
                             dbeta[1], batch, channels, spatial);
    adir_relu_grad(y[1], dy, relu_dy, size);
    adir_batchnorm_grad(x, gamma, stats[1][0], stats[1][1], relu_dy, dx[2], dgamma[2], dbeta[2],
                        batch, channels, spatial);
    for (k = 0; k < 2; ++k) {
        compare(names[1], shape, 1, dx[k], dx[k + 1], NULL, 0, size);
        compare(names[1], shape, 1, dgamma[k], dgamma[k + 1], NULL, 0, ch);
        compare(names[1], shape, 1, dbeta[k], dbeta[k + 1], NULL, 0, ch);
    }
    for (k = 0; k < 3; ++k) {
        free(y[k]), free(dx[k]), free(dgamma[k]), free(dbeta[k]);
        for (t = 0; t < 4; ++t) {
            free(stats[k][t]);
        }
    }
    free(x), free(dy), free(gamma), free(beta), free(mean0), free(var0), free(relu_dy);
}

static void batchnorm_case(int32_t batch, int32_t channels, int32_t spatial, int exact)
{
    const char *scalar[2] = {"batchnorm", "batchnorm_grad"};
    const char *hosts[2] = {"batchnorm_channels", "batchnorm_grad_channels"};
    const char *scalar_relu[2] = {"batchnorm_relu", "batchnorm_relu_grad"};
    const char *hosts_relu[2] = {"batchnorm_relu_channels", "batchnorm_relu_grad_channels"};
    batchnorm_case_of(scalar, adir_tuned_batchnorm, adir_tuned_batchnorm_grad, batch, channels,
                      spatial, exact);
    batchnorm_case_of(hosts, adir_tuned_batchnorm_channels, adir_tuned_batchnorm_grad_channels,
                      batch, channels, spatial, exact);
    batchnorm_relu_case(scalar_relu, adir_tuned_batchnorm_relu, adir_tuned_batchnorm_relu_grad,
                        batch, channels, spatial, exact);
    batchnorm_relu_case(hosts_relu, adir_tuned_batchnorm_relu_channels,
                        adir_tuned_batchnorm_relu_grad_channels, batch, channels, spatial, exact);
}

static void batchnorms(void)
{
    const int32_t channel_counts[] = {1, 3, 4, 5, 7, 8, 9, 12, 19};
    const int32_t batches[] = {16, 17}, rows[] = {5, 16, 37, 125};
    int32_t batch, spatial;
    int exact, i, j;
    for (exact = 0; exact < 2; ++exact) {
        for (i = 0; i < (int)(sizeof batches / sizeof batches[0]); ++i) {
            for (j = 0; j < (int)(sizeof rows / sizeof rows[0]); ++j) {
                batchnorm_case(batches[i], 9, rows[j], exact);
            }
        }
        batchnorm_case(16, 2, 263, exact);
        for (batch = 1; batch <= 3; ++batch) {
            for (spatial = batch == 1 ? 2 : 1; spatial <= 17; ++spatial) {
                batchnorm_case(batch, 3, spatial, exact);
            }
            batchnorm_case(batch, 2, 125, exact);
            for (i = 0; i < (int)(sizeof channel_counts / sizeof channel_counts[0]); ++i) {
                batchnorm_case(batch, channel_counts[i], batch == 1 ? 5 : 3, exact);
                batchnorm_case(batch, channel_counts[i], 15, exact);
                batchnorm_case(batch, channel_counts[i], 64, exact);
            }
        }
    }
}

/* --- max pool ------------------------------------------------------------------------------- */

static void maxpool_case(int32_t planes, int32_t out_h, int32_t out_w, int32_t k, int32_t stride,
                         int32_t pad, int32_t extra, int exact)
{
    const int32_t height = (out_h - 1) * stride + k - 2 * pad + extra;
    const int32_t width = (out_w - 1) * stride + k - 2 * pad + extra;
    const size_t x_size = (size_t)planes * (size_t)height * (size_t)width;
    const size_t y_size = (size_t)planes * (size_t)out_h * (size_t)out_w;
    float *x = filled(x_size, exact), *dy = filled(y_size, exact);
    float *tuned = filled(x_size, 0), *ref = filled(x_size, 0);
    char shape[96];
    if (!exact) {
        x[x_size / 2] = NAN; /* a nan wins its window */
    }
    sprintf(shape, "planes %d out %dx%d kernel %d stride %d pad %d", (int)planes, (int)out_h,
            (int)out_w, (int)k, (int)stride, (int)pad);
#define POOL_SIZES 1, planes, height, width, out_h, out_w, k, k, stride, stride, pad, pad
    adir_tuned_maxpool2d(x, tuned, POOL_SIZES);
    adir_maxpool2d(x, ref, POOL_SIZES);
    compare("maxpool2d", shape, exact, tuned, ref, NULL, 0, y_size);
    adir_tuned_maxpool2d_grad(x, dy, tuned, POOL_SIZES);
    adir_maxpool2d_grad(x, dy, ref, POOL_SIZES);
    compare("maxpool2d_grad", shape, exact, tuned, ref, NULL, 0, x_size);
#undef POOL_SIZES
    free(x), free(dy), free(tuned), free(ref);
}

static void maxpools(void)
{
    /* The 2 x 2 rows run blocks of 8, 4 and 1 windows, 64 windows at a time. Only windows that
     * tile the image: the tuned pools take no others (select-kernels). */
    const int32_t widths[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 63, 64, 65, 131};
    int i, exact;
    for (exact = 0; exact < 2; ++exact) {
        for (i = 0; i < (int)(sizeof widths / sizeof widths[0]); ++i) {
            maxpool_case(3, 2, widths[i], 2, 2, 0, 0, exact);
            maxpool_case(2, 3, widths[i], 2, 2, 0, 1, exact); /* a row and column left over */
            maxpool_case(2, 2, widths[i], 3, 3, 0, 0, exact);
        }
    }
}

/* --- updates -------------------------------------------------------------------------------- */

static const double BETA1 = 0.9, BETA2 = 0.999;

static void update_case(size_t n, float weight_decay, float clip, int variant, int in_place,
                        int exact)
{
    float *param = filled(n, exact), *grad = filled(n, exact), *state1 = filled(n, exact);
    float *state2 = filled_absolute(n, exact);
    float *p_t = copied(param, n), *p_r = copied(param, n), *s1_t = copied(state1, n);
    float *s1_r = copied(state1, n), *s2_t = copied(state2, n), *s2_r = copied(state2, n);
    float *o_t = in_place ? p_t : filled(n, 0), *o_r = in_place ? p_r : filled(n, 0);
    float *b_t = in_place ? s1_t : filled(n, 0), *b_r = in_place ? s1_r : filled(n, 0);
    float *v_t = in_place ? s2_t : filled(n, 0), *v_r = in_place ? s2_r : filled(n, 0);
    const float lr = 0.125f, bc1 = 0.1f, bc2 = 0.0316f;
    char shape[96];
    sprintf(shape, "n %lu weight_decay %g clip %g variant %d in_place %d", (unsigned long)n,
            (double)weight_decay, (double)clip, variant, in_place);
    adir_tuned_sgd_update(p_t, grad, &lr, o_t, n, weight_decay, clip);
    adir_sgd_update(p_r, grad, &lr, o_r, n, weight_decay, clip);
    compare("sgd_update", shape, exact, o_t, o_r, NULL, 0, n);
    memcpy(p_t, param, n * sizeof *p_t), memcpy(p_r, param, n * sizeof *p_r);
    adir_tuned_momentum_update(p_t, s1_t, grad, &lr, o_t, b_t, n, 0.875f, weight_decay, clip,
                         variant & 1);
    adir_momentum_update(p_r, s1_r, grad, &lr, o_r, b_r, n, 0.875f, weight_decay, clip,
                             variant & 1);
    compare("momentum_update", shape, exact, o_t, o_r, NULL, 0, n);
    compare("momentum_update", shape, exact, b_t, b_r, NULL, 0, n);
    memcpy(p_t, param, n * sizeof *p_t), memcpy(p_r, param, n * sizeof *p_r);
    memcpy(s1_t, state1, n * sizeof *s1_t), memcpy(s1_r, state1, n * sizeof *s1_r);
    adir_tuned_adam_update(p_t, s1_t, s2_t, grad, &lr, &bc1, &bc2, o_t, b_t, v_t, n, BETA1, BETA2,
                     1e-8f, weight_decay, clip, variant & 1);
    adir_adam_update(p_r, s1_r, s2_r, grad, &lr, &bc1, &bc2, o_r, b_r, v_r, n, BETA1,
                         BETA2, 1e-8f, weight_decay, clip, variant & 1);
    compare("adam_update", shape, exact, o_t, o_r, NULL, 0, n);
    compare("adam_update", shape, exact, b_t, b_r, NULL, 0, n);
    compare("adam_update", shape, exact, v_t, v_r, NULL, 0, n);
    if (!in_place) {
        free(o_t), free(o_r), free(b_t), free(b_r), free(v_t), free(v_r);
    }
    free(param), free(grad), free(state1), free(state2), free(p_t), free(p_r);
    free(s1_t), free(s1_r), free(s2_t), free(s2_r);
}

/* Adam's division of each root by sqrt(1 - beta2^t), which the tuned update may do as a
 * multiplication in double by the reciprocal (adir_tuned_updates.c): bit for bit the float
 * division for every root and divisor. Divisors: those of steps 1 to 48 and 16 drawn across
 * (0, 2); second moments across 2^-120..2^40 (roots 2^-60..2^20), 4096 of them a divisor.
 * A float reciprocal (x * (1/c) in float) misses the quotient on about a quarter of these
 * elements, and a single miss fails the case. */
static void adam_divisor_cases(void)
{
    const size_t n = 4096;
    float *param = filled(n, 0), *grad = filled(n, 0), *state1 = filled(n, 0);
    float *state2 = allocated(n);
    float *p_t = allocated(n), *p_r = allocated(n);
    float *s1_t = allocated(n), *s1_r = allocated(n);
    float *s2_t = allocated(n), *s2_r = allocated(n);
    const float lr = 0.125f, bc1 = 0.1f;
    char shape[64];
    size_t i;
    int t;
    for (t = 1; t <= 64; ++t) {
        const float bc2 = t <= 48 ? (float)sqrt(1.0 - pow(BETA2, t))
                                  : (float)((double)(next_bits() >> 40) / 8388608.0 * 2.0);
        for (i = 0; i < n; ++i) {
            const int exponent = (int)(next_bits() % 161u) - 120;
            state2[i] = ldexpf(fabsf(next_value(0)) + 0x1p-24f, exponent);
        }
        memcpy(p_t, param, n * sizeof *p_t), memcpy(p_r, param, n * sizeof *p_r);
        memcpy(s1_t, state1, n * sizeof *s1_t), memcpy(s1_r, state1, n * sizeof *s1_r);
        memcpy(s2_t, state2, n * sizeof *s2_t), memcpy(s2_r, state2, n * sizeof *s2_r);
        sprintf(shape, "n %lu divisor %.9g (step %d)", (unsigned long)n, (double)bc2, t);
        adir_tuned_adam_update(p_t, s1_t, s2_t, grad, &lr, &bc1, &bc2, p_t, s1_t, s2_t, n,
                               BETA1, BETA2, 1e-8f, 0.0f, 0.0f, 0);
        adir_adam_update(p_r, s1_r, s2_r, grad, &lr, &bc1, &bc2, p_r, s1_r, s2_r, n, BETA1,
                         BETA2, 1e-8f, 0.0f, 0.0f, 0);
        compare("adam_update", shape, 0, p_t, p_r, NULL, 0, n);
        compare("adam_update", shape, 0, s1_t, s1_r, NULL, 0, n);
        compare("adam_update", shape, 0, s2_t, s2_r, NULL, 0, n);
    }
    free(param), free(grad), free(state1), free(state2), free(p_t), free(p_r);
    free(s1_t), free(s1_r), free(s2_t), free(s2_r);
}

/* A float near target / factor (so that a product by factor lands near target), moved by
 * `offset` floats (bits); zero, infinite and NaN targets as they are. */
static float edge_value(float target, float factor, int offset)
{
    float x = (float)((double)target / (double)factor);
    uint32_t bits;
    if (target == 0.0f || !(fabsf(target) <= FLT_MAX)) {
        return target;
    }
    memcpy(&bits, &x, sizeof bits);
    bits = (uint32_t)((int64_t)bits + offset);
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* A float x with x * factor == target in float (0 < factor < 1: x -> x * factor rounded is
 * monotone and misses no float), or the nearest; zero, infinite and NaN targets as they are. */
static float preimage(float target, float factor)
{
    float x = (float)((double)target / (double)factor);
    if (target == 0.0f || !(fabsf(target) <= FLT_MAX)) {
        return target;
    }
    while (x * factor < target) {
        x = nextafterf(x, INFINITY);
    }
    while (x * factor > target) {
        x = nextafterf(x, -INFINITY);
    }
    return x;
}

/* Adam's lanes at special values, elementwise, in the register tiles and in the panels:
 * second moments whose v_new lies around +0, 2^-100, 2^-126, a subnormal, 2^-64 and 2^64 (with
 * eps 0 and divisor 1, d = sqrt(v_new) around 2^-32 and 2^32), near 4 (roots and d around
 * 2 - 2^-23, a significand of all ones), FLT_MAX, +inf and NaN, and 0x1.fffffep-103 and
 * 0x1.fffffap-105; first moments whose m_new lies around +-2^-90, +-2^90, +-1 (exactly, with
 * g = m), a subnormal, 3e38 and -inf; eps 1e-8, 0, 2^-126 (d = eps where v = 0), 2^-32 and
 * 2^127; divisors 1, those of steps 1 and 100, 2^-40 and 2^40. Some vectors take one pair of
 * values in all 16 lanes, others mix them. They are the edges of a root and a quotient on the
 * multiply-add units that were tried and not kept (docs/benchmarks.md: the two v_new above
 * are the largest whose root that sequence missed, the all-ones divisors its reciprocal's
 * misses), and the places where any vector form of the update may part from the reference.
 * adir_tuned_adam_update (even elements: g = 0, odd: g = m) and
 * adir_tuned_matmul_adam_update (g = 0: its register tiles, 16 x 256, and its panels,
 * 128 x 264: more than ADIR_ADAM_TILE_FLOATS), against the references, exactly. */
static void adam_special_cases(void)
{
    /* v_new exactly. */
    static const float v_targets[] = {0.0f,      0x1.fffffep-103f, 0x1p-100f,          0x1p-126f,
                                      0x1p-140f, 0x1p-64f,         0x1p64f,            3.99999976f,
                                      FLT_MAX,   INFINITY,         0x1.fffffap-105f,   NAN};
    static const float m_targets[] = {0.0f, 0x1p-90f, -0x1p-90f, 0x1p90f, -0x1p90f, 1.0f,
                                      -1.0f, 0x1p-140f, 3e38f, -INFINITY};
    /* The pairs for the vectors of one pair: v targets 2, 5, 6, 7 (from above the lower edges,
     * below the upper ones) and 1 and 10; m targets 1 to 6. */
    static const int v_inside[] = {2, 5, 6, 7, 1, 10}, m_inside[] = {1, 2, 3, 4, 5, 6};
    static const float eps_list[] = {1e-8f, 0.0f, 0x1p-126f, 0x1p-32f, 0x1p127f};
    const float beta2 = (float)BETA2, keep1 = 0.9f;
    const int32_t rows = 128, cols = 264, tile_rows = 16, tile_cols = 256;
    const size_t tiled = (size_t)tile_rows * (size_t)tile_cols;
    const size_t n = tiled + (size_t)rows * (size_t)cols;
    float *param = filled(n, 0), *state1 = allocated(n), *state2 = allocated(n);
    float *exact_v = allocated(n);
    float *grad = allocated(n), *zeros = allocated(n), *ones = allocated(rows);
    float *p_t = allocated(n), *p_r = allocated(n), *s1_t = allocated(n), *s1_r = allocated(n);
    float *s2_t = allocated(n), *s2_r = allocated(n);
    const float lr = 0.125f, bc1 = 0.1f;
    const float bc2_list[] = {1.0f, (float)sqrt(1.0 - BETA2), (float)sqrt(1.0 - pow(BETA2, 100)),
                              0x1p-40f, 0x1p40f};
    const size_t bytes = n * sizeof(float);
    char shape[96];
    size_t i;
    int e, c;
    for (i = 0; i < n; ++i) {
        const size_t vector = i / 16;
        const int odd = (int)(i & 1u);
        int vt, mt, v_off, m_off;
        if (vector % 2 == 0) {
            const size_t pair = vector / 2;
            vt = v_inside[pair % 6];
            mt = m_inside[(pair / 6) % 6];
            /* From the lower edges up, from the upper ones down (v near 4: 20 roots below
             * 2 - 2^-23). */
            v_off = (3 + (int)(next_bits() % 8u)) * (vt == 6 || vt == 7 ? -1 : 1) -
                    (vt == 7 ? 40 : 0);
            m_off = (3 + (int)(next_bits() % 8u)) * (mt == 3 || mt == 4 ? -1 : 1);
        } else {
            vt = (int)(next_bits() % (sizeof v_targets / sizeof v_targets[0]));
            mt = (int)(next_bits() % (sizeof m_targets / sizeof m_targets[0]));
            v_off = (int)(next_bits() % 33u) - 16;
            m_off = (int)(next_bits() % 17u) - 8;
        }
        zeros[i] = 0.0f;
        if (odd && (mt == 5 || mt == 6)) {
            /* g = m: m_new = m exactly, +-1 or its neighbours. */
            state1[i] = edge_value(m_targets[mt], 1.0f, m_off / 4);
            grad[i] = state1[i];
        } else {
            state1[i] = edge_value(m_targets[mt], keep1, m_off);
            grad[i] = 0.0f;
        }
        /* beta2 = 1 keeps v_new = v (+ 0 g^2): exactly the target; with 0.999 its preimage,
         * the nearest float where the product skips it. */
        exact_v[i] = edge_value(v_targets[vt], 1.0f, vt == 1 || vt == 10 ? 0 : v_off);
        state2[i] = preimage(exact_v[i], beta2);
    }
    for (i = 0; i < (size_t)rows; ++i) {
        ones[i] = 1.0f;
    }
    for (e = 0; e < 2 * (int)(sizeof eps_list / sizeof eps_list[0]); ++e) {
        for (c = 0; c < (int)(sizeof bc2_list / sizeof bc2_list[0]); ++c) {
            const float eps = eps_list[e / 2], bc2 = bc2_list[c];
            const double beta2_of_call = e % 2 ? BETA2 : 1.0;
            const float *v_in = e % 2 ? state2 : exact_v;
            sprintf(shape, "special values eps %g divisor %g beta2 %g", (double)eps, (double)bc2,
                    beta2_of_call);
            memcpy(p_t, param, bytes), memcpy(p_r, param, bytes);
            memcpy(s1_t, state1, bytes), memcpy(s1_r, state1, bytes);
            memcpy(s2_t, v_in, bytes), memcpy(s2_r, v_in, bytes);
            adir_tuned_adam_update(p_t, s1_t, s2_t, grad, &lr, &bc1, &bc2, p_t, s1_t, s2_t, n,
                                   BETA1, beta2_of_call, eps, 0.0f, 0.0f, 0);
            adir_adam_update(p_r, s1_r, s2_r, grad, &lr, &bc1, &bc2, p_r, s1_r, s2_r, n, BETA1,
                             beta2_of_call, eps, 0.0f, 0.0f, 0);
            compare("adam_update", shape, 0, p_t, p_r, NULL, 0, n);
            compare("adam_update", shape, 0, s1_t, s1_r, NULL, 0, n);
            compare("adam_update", shape, 0, s2_t, s2_r, NULL, 0, n);
            /* The tiles (16 x 256, at most 32767 floats) and the panels (128 x 264), g = 0:
             * ones (rows) times zeros (cols). */
            memcpy(p_t, param, bytes), memcpy(p_r, param, bytes);
            memcpy(s1_t, state1, bytes), memcpy(s1_r, state1, bytes);
            memcpy(s2_t, v_in, bytes), memcpy(s2_r, v_in, bytes);
            adir_tuned_matmul_adam_update(p_t, s1_t, s2_t, ones, zeros, &lr, &bc1, &bc2, p_t,
                                          s1_t, s2_t, tile_rows, tile_cols, 1, 0, 0, BETA1,
                                          beta2_of_call, eps, 0.0f, 0.0f, 0);
            adir_matmul_adam_update(p_r, s1_r, s2_r, ones, zeros, &lr, &bc1, &bc2, p_r, s1_r,
                                    s2_r, tile_rows, tile_cols, 1, 0, 0, BETA1, beta2_of_call, eps, 0.0f,
                                    0.0f, 0);
            adir_tuned_matmul_adam_update(p_t + tiled, s1_t + tiled, s2_t + tiled, ones, zeros,
                                          &lr, &bc1, &bc2, p_t + tiled, s1_t + tiled,
                                          s2_t + tiled, rows, cols, 1, 0, 0, BETA1, beta2_of_call, eps,
                                          0.0f, 0.0f, 0);
            adir_matmul_adam_update(p_r + tiled, s1_r + tiled, s2_r + tiled, ones, zeros, &lr,
                                    &bc1, &bc2, p_r + tiled, s1_r + tiled, s2_r + tiled, rows,
                                    cols, 1, 0, 0, BETA1, beta2_of_call, eps, 0.0f, 0.0f, 0);
            compare("matmul_adam_update", shape, 0, p_t, p_r, NULL, 0, n);
            compare("matmul_adam_update", shape, 0, s1_t, s1_r, NULL, 0, n);
            compare("matmul_adam_update", shape, 0, s2_t, s2_r, NULL, 0, n);
        }
    }
    free(param), free(state1), free(state2), free(exact_v), free(grad), free(zeros), free(ones);
    free(p_t), free(p_r), free(s1_t), free(s1_r), free(s2_t), free(s2_r);
}

/* The fused matmul updates. Their gradient sums run in order, one ADIR_FMA per step: where
 * ADIR_FMA cannot fuse they are the reference's bit for bit on any data; else only
 * on exact data, and adir_tuned_matmul_sgd_update (linear in the sums) is checked against the bound
 * below on random data. */
static void matmul_update_case(int32_t m, int32_t n, int32_t k, int ta, int tb, float wd,
                               float clip, int variant, int in_place, int exact)
{
    const size_t size = (size_t)m * (size_t)n;
    float *a = filled((size_t)m * (size_t)k, exact), *b = filled((size_t)k * (size_t)n, exact);
    float *param = filled(size, exact), *state1 = filled(size, exact);
    float *state2 = filled_absolute(size, exact);
    float *o_t = filled(size, 0), *o_r = filled(size, 0), *b_t = filled(size, 0);
    float *b_r = filled(size, 0), *v_t = filled(size, 0), *v_r = filled(size, 0);
    const float lr = 0.125f, bc1 = 0.1f, bc2 = 0.0316f;
    const int reordered = MAY_FUSE && !exact;
    char shape[128];
    /* In place (the outputs are the inputs, as the generated code calls them): the tuned
     * kernels read copies of param and the state in the output buffers. */
    const float *p_in = in_place ? o_t : param, *s1_in = in_place ? b_t : state1;
    const float *s2_in = in_place ? v_t : state2;
    const size_t bytes = size * sizeof(float);
    sprintf(shape, "m %d n %d k %d ta %d tb %d weight_decay %g clip %g variant %d in_place %d",
            (int)m, (int)n, (int)k, ta, tb, (double)wd, (double)clip, variant, in_place);
    if (wd == 0.0f && clip == 0.0f) {
        memcpy(o_t, param, bytes);
        adir_tuned_matmul_sgd_update(p_in, a, b, &lr, o_t, m, n, k, ta, tb);
        adir_matmul_sgd_update(param, a, b, &lr, o_r, m, n, k, ta, tb);
        if (!reordered) {
            compare("matmul_sgd_update", shape, exact, o_t, o_r, NULL, 0, size);
        } else {
            /* |rate| (2 gamma(k) + 2u) S + 2u (|p| + |rate| S): two roundings (lr times the
             * sum, p minus that) after sums within 2 gamma(k) S of each other, S bounding
             * sum |a_p b_p| (the reference on |a|, |b|, over 1 - gamma(k)). */
            float *abs_a = absolute(a, (size_t)m * (size_t)k);
            float *abs_b = absolute(b, (size_t)k * (size_t)n);
            const double g = gamma_of(k), u = UNIT_ROUNDOFF;
            size_t i;
            struct stats *s = stats_of("matmul_sgd_update");
            int failed = 0, identical = 1;
            adir_matmul(abs_a, abs_b, b_t, 1, m, n, k, ta, tb, 1);
            for (i = 0; i < size; ++i) {
                const double sum_bound = (double)b_t[i] / (1.0 - g);
                const double bound = (double)lr * (2.0 * g + 2.0 * u) * sum_bound * (1.0 + g) +
                                     2.0 * u * (fabs((double)param[i]) +
                                                (double)lr * sum_bound * (1.0 + g)) * (1.0 + u);
                if (!same(o_t[i], o_r[i])) {
                    identical = 0;
                    if (!(fabs((double)o_t[i] - (double)o_r[i]) <= bound)) {
                        failed = 1;
                    }
                }
            }
            if (failed) {
                printf("FAIL matmul_sgd_update %s random data\n", shape);
            }
            s->cases += 1, s->failures += failed;
            s->random_identical &= identical;
            free(abs_a), free(abs_b);
        }
    }
    if (!reordered) {
        memcpy(o_t, param, bytes);
        adir_tuned_matmul_sgd_update_general(p_in, a, b, &lr, o_t, m, n, k, ta, tb, wd, clip);
        adir_matmul_sgd_update_general(param, a, b, &lr, o_r, m, n, k, ta, tb, wd, clip);
        compare("matmul_sgd_update_general", shape, exact, o_t, o_r, NULL, 0, size);
        memcpy(o_t, param, bytes), memcpy(b_t, state1, bytes);
        adir_tuned_matmul_momentum_update(p_in, s1_in, a, b, &lr, o_t, b_t, m, n, k, ta, tb,
                                          0.875f, wd, clip, variant & 1);
        adir_matmul_momentum_update(param, state1, a, b, &lr, o_r, b_r, m, n, k, ta, tb,
                                        0.875f, wd, clip, variant & 1);
        compare("matmul_momentum_update", shape, exact, o_t, o_r, NULL, 0, size);
        compare("matmul_momentum_update", shape, exact, b_t, b_r, NULL, 0, size);
        memcpy(o_t, param, bytes), memcpy(b_t, state1, bytes), memcpy(v_t, state2, bytes);
        adir_tuned_matmul_adam_update(p_in, s1_in, s2_in, a, b, &lr, &bc1, &bc2, o_t, b_t, v_t,
                                      m, n, k, ta, tb, BETA1, BETA2, 1e-8f, wd, clip,
                                      variant & 1);
        adir_matmul_adam_update(param, state1, state2, a, b, &lr, &bc1, &bc2, o_r, b_r, v_r,
                                    m, n, k, ta, tb, BETA1, BETA2, 1e-8f, wd, clip,
                                    variant & 1);
        compare("matmul_adam_update", shape, exact, o_t, o_r, NULL, 0, size);
        compare("matmul_adam_update", shape, exact, b_t, b_r, NULL, 0, size);
        compare("matmul_adam_update", shape, exact, v_t, v_r, NULL, 0, size);
    }
    free(a), free(b), free(param), free(state1), free(state2);
    free(o_t), free(o_r), free(b_t), free(b_r), free(v_t), free(v_r);
}

static void updates(void)
{
    int32_t ms[16], ns[16], ns_wide[16];
    const int32_t ks[] = {1, 7, 16, 33};
    int m_count = 0, n_count = 0, wide_count = 0, i, j, l, layout, exact, variant, in_place;
    size_t sizes[] = {1, UPDATE_CHUNK - 1, UPDATE_CHUNK, UPDATE_CHUNK + 1, 2 * UPDATE_CHUNK + 3};
    add_edges(ms, &m_count, ADIR_GEMM_MR);
    add_edges(ns, &n_count, ADIR_GEMM_NR);
#ifdef ADIR_OUTER_BLOCK
    add_edges(ns, &n_count, ADIR_OUTER_BLOCK); /* a batch of one's blocks of a row */
#endif
    add_edges(ns_wide, &wide_count, UPDATE_CHUNK);
    add_edges(ns, &n_count, 2 * ADIR_GEMM_NR); /* the plain Adam update's register tiles */
    adam_divisor_cases();
    adam_special_cases();
    for (exact = 0; exact < 2; ++exact) {
        for (i = 0; i < 5; ++i) {
            for (variant = 0; variant < 2; ++variant) {
                for (in_place = 0; in_place < 2; ++in_place) {
                    update_case(sizes[i], 0.0f, 0.0f, variant, in_place, exact);
                    update_case(sizes[i], 0.25f, 0.5f, variant, in_place, exact);
                }
            }
        }
        /* Every layout, k and size, out of place and in place, with and without decay and
         * clipping, plain and Nesterov / decoupled (alternating with k and the layout). */
        for (layout = 0; layout < 4; ++layout) {
            for (i = 0; i < m_count; ++i) {
                for (l = 0; l < 4; ++l) {
                    const int second = (l ^ layout) & 1;
                    for (j = 0; j < n_count; ++j) {
                        for (in_place = 0; in_place < 2; ++in_place) {
                            matmul_update_case(ms[i], ns[j], ks[l], layout & 1, layout >> 1,
                                               0.0f, 0.0f, second, in_place, exact);
                        }
                    }
                    for (j = 0; j < wide_count; ++j) {
                        matmul_update_case(ms[i], ns_wide[j], ks[l], layout & 1, layout >> 1,
                                           0.25f, 0.5f, second, (i + j) & 1, exact);
                    }
                }
            }
        }
#if !(defined(ADIR_OUTER_UPDATES) && ADIR_OUTER_UPDATES)
        /* A plain Adam update of more than ADIR_ADAM_TILE_FLOATS (32767) floats: its panels in
         * the plain form, the multiply-add quotient, with whole and partial panels. (A scalar
         * core has no register tiles: its plain updates of any size take those panels, above;
         * nor the heap for this one.) */
        for (in_place = 0; in_place < 2; ++in_place) {
            matmul_update_case(4 * ADIR_GEMM_MR + 3, 2 * UPDATE_CHUNK * 20 + 7, 33, 1, 0, 0.0f,
                               0.0f, 0, in_place, exact);
        }
#endif
    }
}

/* Pointwise convolutions on the hosts' tiles (adir_tuned_conv_pointwise.c, through the `_gemm`
 * kernels): outputs at the edges of MR (whole tiles, then rows one at a time), channels and
 * pixels at the edges of two vectors (NB = 2 NR: whole blocks, the last block overlapping the
 * one before it; fewer than NB stay on the `_gemm` tiles), two samples (the weight gradient's
 * sums run on), DS-CNN's 64 x 64 at 25 x 5; the weight gradient at its scratch (x^T of a sample)
 * and one float less (the implicit or panel path). */
static void pointwise_convs(void)
{
    const int32_t nb = 2 * ADIR_GEMM_NR;
    int32_t outs[8], chans[8], pixels[8];
    int out_count = 0, chan_count = 0, pixel_count = 0, o, k, p, exact;
    add_edges(outs, &out_count, ADIR_GEMM_MR);
    add_edges(chans, &chan_count, nb);
    add_edges(pixels, &pixel_count, nb);
    for (exact = 0; exact < 2; ++exact) {
        /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad, dilation */
        struct conv ds_cnn = {2, 64, 64, 1, 1, 1, 25, 5, 1, 0, 1};
        scratch_conv_case_of(ds_cnn, 64 * 125, GEMM, 0, exact);
        for (o = 0; o < out_count; ++o) {
            for (k = 0; k < chan_count; ++k) {
                for (p = 0; p < pixel_count; ++p) {
                    struct conv c = {2, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1};
                    c.channels = chans[k], c.out_channels = outs[o], c.out_w = pixels[p];
                    scratch_conv_case_of(c, c.channels * c.out_w, GEMM, 0, exact);
                    if (c.channels * c.out_w > 1) {
                        scratch_conv_case_of(c, c.channels * c.out_w - 1, GEMM, 0, exact);
                    }
                }
            }
        }
    }
}

/* Depthwise 3 x 3 of stride 1 padded by 1 ("same": adir_tuned_depthwise_same.c's flat planes
 * with column masks, blocks of 16 pixels, the last overlapping): planes of 16 pixels and more (4 x
 * 4, 1 x 17, 17 x 1, 7 x 9, DS-CNN's 25 x 5), one row or column (every tap of a row masked),
 * and 15 (the padded path), two samples of three channels. With 16-float vectors each block
 * loads the middle inputs of the block after it: widths 1 to 5 around 16, 32 and 48 pixels
 * (a whole number of blocks or not, no block but the last and the overlapping one), rows wider
 * than a vector (whose first blocks' rows above are padding), MobileNet's 6 x 6 and 12 x 12;
 * DS-CNN's 25 x 5 with many channels and samples, and one plane alone (the first and the last
 * plane, read from scratch). */
static void depthwise_same_convs(void)
{
    const int32_t planes[][2] = {{4, 4},  {1, 17}, {17, 1}, {7, 9},  {25, 5}, {3, 5},
                                 {2, 8},  {16, 1}, {32, 1}, {33, 1}, {8, 2},  {9, 2},
                                 {24, 2}, {6, 3},  {11, 3}, {16, 3}, {5, 4},  {8, 4},
                                 {12, 4}, {4, 5},  {7, 5},  {10, 5}, {3, 20}, {2, 40},
                                 {6, 6},  {12, 12}};
    /* DS-CNN's plane: 64 channels of one sample; 16 samples of 5 channels (64 would not fit
     * the Cortex-M4F's heap); one plane alone */
    const int32_t ds_cnn[][2] = {{1, 64}, {16, 5}, {1, 1}};
    int p, n, exact;
    for (exact = 0; exact < 2; ++exact) {
        for (p = 0; p < (int)(sizeof planes / sizeof planes[0]); ++p) {
            /* batch, channels, out_channels, groups, kh, kw, out_h, out_w, stride, pad,
             * dilation */
            struct conv c = {2, 3, 3, 3, 3, 3, 0, 0, 1, 1, 1};
            c.out_h = planes[p][0], c.out_w = planes[p][1];
            scratch_conv_case(c, 0, 1, exact);
        }
        for (n = 0; n < (int)(sizeof ds_cnn / sizeof ds_cnn[0]); ++n) {
            struct conv c = {0, 0, 0, 0, 3, 3, 25, 5, 1, 1, 1};
            c.batch = ds_cnn[n][0];
            c.channels = c.out_channels = c.groups = ds_cnn[n][1];
            scratch_conv_case(c, 0, 1, exact);
        }
    }
}

int main(void)
{
    int i;
    matmuls();
    convs();
    scratch_convs();
    strided_grad_input_convs();
    depthwise_lanes_convs();
    depthwise_3x3_convs();
    batchnorms();
    maxpools();
    updates();
    pointwise_convs();
    depthwise_same_convs();
    release_conv_reference();
    for (i = 0; i < kernel_count; ++i) {
        printf("kernel %s cases %ld failures %ld random_identical %d\n", kernel_stats[i].name,
               kernel_stats[i].cases, kernel_stats[i].failures,
               kernel_stats[i].random_identical);
    }
    printf("target %s fma %d\n", ADIR_TARGET_NAME, MAY_FUSE);
    return 0;
}
