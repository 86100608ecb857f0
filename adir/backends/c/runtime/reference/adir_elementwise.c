/* adir_elementwise.c: the reference kernels of the elementwise family (declared in
 * adir_elementwise.h).
 *
 * Every binary kernel is built from one row function, which computes an innermost row of the
 * output reading each input at step 1 (along the row) or 0 (broadcast along it), with a tight
 * contiguous loop for each case. A flat kernel is one row of steps 1; a broadcast kernel walks
 * the rows of its outer dims and finds each input's row by its strides. A row reads input
 * element i just before it writes output element i, which makes the in-place case correct.
 */
#include <math.h>

#include "adir_chunked.h"
#include "adir_kernels.h"

/* -- walking a broadcast row by row ------------------------------------------------------- */

/* The length of an innermost row (a rank-0 output is one row of one element). */
static size_t adir_row_length(int32_t rank, const int32_t *shape)
{
    return rank > 0 ? (size_t)shape[rank - 1] : 1u;
}

/* The number of rows: the product of the outer dims. */
static size_t adir_row_count(int32_t rank, const int32_t *shape)
{
    size_t rows = 1;
    int32_t d;
    for (d = 0; d + 1 < rank; ++d) {
        rows *= (size_t)shape[d];
    }
    return rows;
}

/* An operand's step along the innermost row: its innermost stride, 0 or 1. */
static size_t adir_row_step(int32_t rank, const int32_t *strides)
{
    return rank > 0 ? (size_t)strides[rank - 1] : 0u;
}

/* Where row `row` (counted row-major over the outer dims) starts in an operand of `strides`.
 * A division per dim and row, none per element. */
static size_t adir_row_offset(size_t row, int32_t rank, const int32_t *shape,
                              const int32_t *strides)
{
    size_t offset = 0;
    int32_t d;
    for (d = rank - 2; d >= 0; --d) {
        offset += (row % (size_t)shape[d]) * (size_t)strides[d];
        row /= (size_t)shape[d];
    }
    return offset;
}

/* -- unary -------------------------------------------------------------------------------- */

void adir_neg(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = -x[i];
    }
}

void adir_exp(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = expf(x[i]);
    }
}

void adir_log(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = logf(x[i]);
    }
}

void adir_sqrt(const float *x, float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        y[i] = sqrtf(x[i]);
    }
}

/* -- binary ------------------------------------------------------------------------------- */

/* The element functions, numpy's formulas. maximum and minimum propagate a nan from either
 * side (fmaxf would drop it): numpy's maximum is `a >= b || isnan(a) ? a : b`. */
static float adir_add_one(float a, float b) { return a + b; }
static float adir_sub_one(float a, float b) { return a - b; }
static float adir_mul_one(float a, float b) { return a * b; }
static float adir_div_one(float a, float b) { return a / b; }
static float adir_pow_one(float a, float b) { return powf(a, b); }
static float adir_maximum_one(float a, float b) { return (a >= b || isnan(a)) ? a : b; }
static float adir_minimum_one(float a, float b) { return (a <= b || isnan(a)) ? a : b; }

static uint8_t adir_eq_one(float a, float b) { return (uint8_t)(a == b); }
static uint8_t adir_ne_one(float a, float b) { return (uint8_t)(a != b); }
static uint8_t adir_lt_one(float a, float b) { return (uint8_t)(a < b); }
static uint8_t adir_le_one(float a, float b) { return (uint8_t)(a <= b); }
static uint8_t adir_gt_one(float a, float b) { return (uint8_t)(a > b); }
static uint8_t adir_ge_one(float a, float b) { return (uint8_t)(a >= b); }

/* Defines adir_<op>_row: n elements of out = adir_<op>_one(a, b), reading a and b at steps
 * 0 or 1. An input read at step 0 is read once, before the loop: it is then not the output
 * (an output-shaped input has step 1 unless n is 1). The loops are ADIR_CHUNKED, which a -O2
 * build vectorizes (adir_chunked.h; a plain loop whose output may be an input stays scalar). */
#define ADIR_BINARY_ROW(op, out_type)                                                          \
    static void adir_##op##_row(const float *a, const float *b, out_type *out, size_t n,      \
                                size_t a_step, size_t b_step)                                 \
    {                                                                                         \
        size_t i;                                                                             \
        if (n == 0) {                                                                         \
            return;                                                                           \
        }                                                                                     \
        if (a_step && b_step) {                                                               \
            ADIR_CHUNKED(out_type, n, out, i, adir_##op##_one(a[i], b[i]));                   \
        } else if (a_step) {                                                                  \
            const float y = b[0];                                                             \
            ADIR_CHUNKED(out_type, n, out, i, adir_##op##_one(a[i], y));                      \
        } else if (b_step) {                                                                  \
            const float x = a[0];                                                             \
            ADIR_CHUNKED(out_type, n, out, i, adir_##op##_one(x, b[i]));                      \
        } else {                                                                              \
            const out_type z = adir_##op##_one(a[0], b[0]);                                   \
            for (i = 0; i < n; ++i) {                                                         \
                out[i] = z;                                                                   \
            }                                                                                 \
        }                                                                                     \
    }

/* Defines the kernels adir_<op> (one row) and adir_<op>_broadcast (row by row). */
#define ADIR_BINARY_KERNELS(op)                                                                \
    ADIR_BINARY_ROW(op, float)                                                                \
    void adir_##op(const float *a, const float *b, float *out, size_t n)                      \
    {                                                                                         \
        adir_##op##_row(a, b, out, n, 1u, 1u);                                                \
    }                                                                                         \
    void adir_##op##_broadcast(const float *a, const float *b, float *out, int32_t rank,      \
                               const int32_t *shape, const int32_t *a_strides,                \
                               const int32_t *b_strides)                                      \
    {                                                                                         \
        const size_t n = adir_row_length(rank, shape), rows = adir_row_count(rank, shape);    \
        const size_t a_step = adir_row_step(rank, a_strides);                                 \
        const size_t b_step = adir_row_step(rank, b_strides);                                 \
        size_t row;                                                                           \
        for (row = 0; row < rows; ++row) {                                                    \
            adir_##op##_row(a + adir_row_offset(row, rank, shape, a_strides),                 \
                            b + adir_row_offset(row, rank, shape, b_strides), out + row * n,  \
                            n, a_step, b_step);                                               \
        }                                                                                     \
    }

ADIR_BINARY_KERNELS(add)
ADIR_BINARY_KERNELS(sub)
ADIR_BINARY_KERNELS(mul)
ADIR_BINARY_KERNELS(div)
ADIR_BINARY_KERNELS(pow)
ADIR_BINARY_KERNELS(maximum)
ADIR_BINARY_KERNELS(minimum)

/* -- cmp ---------------------------------------------------------------------------------- */

ADIR_BINARY_ROW(eq, uint8_t)
ADIR_BINARY_ROW(ne, uint8_t)
ADIR_BINARY_ROW(lt, uint8_t)
ADIR_BINARY_ROW(le, uint8_t)
ADIR_BINARY_ROW(gt, uint8_t)
ADIR_BINARY_ROW(ge, uint8_t)

/* One row of cmp: the predicate is chosen once per row, not per element. */
static void adir_cmp_row(const float *a, const float *b, uint8_t *out, size_t n, size_t a_step,
                         size_t b_step, int32_t predicate)
{
    switch (predicate) {
    case ADIR_CMP_EQ: adir_eq_row(a, b, out, n, a_step, b_step); break;
    case ADIR_CMP_NE: adir_ne_row(a, b, out, n, a_step, b_step); break;
    case ADIR_CMP_LT: adir_lt_row(a, b, out, n, a_step, b_step); break;
    case ADIR_CMP_LE: adir_le_row(a, b, out, n, a_step, b_step); break;
    case ADIR_CMP_GT: adir_gt_row(a, b, out, n, a_step, b_step); break;
    default: adir_ge_row(a, b, out, n, a_step, b_step); break;
    }
}

void adir_cmp(const float *a, const float *b, uint8_t *out, size_t n, int32_t predicate)
{
    adir_cmp_row(a, b, out, n, 1u, 1u, predicate);
}

void adir_cmp_broadcast(const float *a, const float *b, uint8_t *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides,
                        int32_t predicate)
{
    const size_t n = adir_row_length(rank, shape), rows = adir_row_count(rank, shape);
    const size_t a_step = adir_row_step(rank, a_strides);
    const size_t b_step = adir_row_step(rank, b_strides);
    size_t row;
    for (row = 0; row < rows; ++row) {
        adir_cmp_row(a + adir_row_offset(row, rank, shape, a_strides),
                     b + adir_row_offset(row, rank, shape, b_strides), out + row * n, n, a_step,
                     b_step, predicate);
    }
}

/* -- select ------------------------------------------------------------------------------- */

/* One row of select; steps 0 or 1, the all-contiguous case on its own loop. */
static void adir_select_row(const uint8_t *condition, const float *a, const float *b, float *out,
                            size_t n, size_t condition_step, size_t a_step, size_t b_step)
{
    size_t i;
    if (condition_step && a_step && b_step) {
        for (i = 0; i < n; ++i) {
            out[i] = condition[i] ? a[i] : b[i];
        }
        return;
    }
    for (i = 0; i < n; ++i) {
        out[i] = condition[i * condition_step] ? a[i * a_step] : b[i * b_step];
    }
}

void adir_select(const uint8_t *condition, const float *a, const float *b, float *out, size_t n)
{
    adir_select_row(condition, a, b, out, n, 1u, 1u, 1u);
}

void adir_select_broadcast(const uint8_t *condition, const float *a, const float *b, float *out,
                           int32_t rank, const int32_t *shape, const int32_t *condition_strides,
                           const int32_t *a_strides, const int32_t *b_strides)
{
    const size_t n = adir_row_length(rank, shape), rows = adir_row_count(rank, shape);
    const size_t condition_step = adir_row_step(rank, condition_strides);
    const size_t a_step = adir_row_step(rank, a_strides);
    const size_t b_step = adir_row_step(rank, b_strides);
    size_t row;
    for (row = 0; row < rows; ++row) {
        adir_select_row(condition + adir_row_offset(row, rank, shape, condition_strides),
                        a + adir_row_offset(row, rank, shape, a_strides),
                        b + adir_row_offset(row, rank, shape, b_strides), out + row * n, n,
                        condition_step, a_step, b_step);
    }
}
