/* adir_elementwise.h: the kernels of the elementwise family (see adir_kernels.h).
 *
 * Each operation has a flat kernel, for operands of the output's shape (n elements each), and
 * a _broadcast kernel for numpy broadcasting. A broadcast is described over the output's dims:
 * `rank` dims of sizes `shape`, and for each operand the stride of each of those dims in its
 * own dense buffer, 0 on a dim it broadcasts along (so a single-element operand has all strides
 * 0). The innermost stride of an operand is 0 or 1.
 *
 * In place: the output may be the same buffer as an operand of the output's shape and element
 * type (each output element is computed from the operands before it is written).
 */
#ifndef ADIR_ELEMENTWISE_H
#define ADIR_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>

/* y = f(x) for n elements: -x, e^x, ln x (ln 0 = -inf, nan below 0), sqrt x (nan below 0). */
void adir_neg(const float *x, float *y, size_t n);
void adir_exp(const float *x, float *y, size_t n);
void adir_log(const float *x, float *y, size_t n);
void adir_sqrt(const float *x, float *y, size_t n);
#ifndef ADIR_NEG
#define ADIR_NEG adir_neg
#endif
#ifndef ADIR_EXP
#define ADIR_EXP adir_exp
#endif
#ifndef ADIR_LOG
#define ADIR_LOG adir_log
#endif
#ifndef ADIR_SQRT
#define ADIR_SQRT adir_sqrt
#endif

/* out = f(a, b) for n elements: a + b, a - b, a * b, a / b (IEEE), powf(a, b) (nan for a
 * negative base and a non-integer exponent), and maximum/minimum, which propagate nan as numpy
 * does: maximum(a, b) = (a >= b || a is nan) ? a : b. */
void adir_add(const float *a, const float *b, float *out, size_t n);
void adir_sub(const float *a, const float *b, float *out, size_t n);
void adir_mul(const float *a, const float *b, float *out, size_t n);
void adir_div(const float *a, const float *b, float *out, size_t n);
void adir_pow(const float *a, const float *b, float *out, size_t n);
void adir_maximum(const float *a, const float *b, float *out, size_t n);
void adir_minimum(const float *a, const float *b, float *out, size_t n);
#ifndef ADIR_ADD
#define ADIR_ADD adir_add
#endif
#ifndef ADIR_SUB
#define ADIR_SUB adir_sub
#endif
#ifndef ADIR_MUL
#define ADIR_MUL adir_mul
#endif
#ifndef ADIR_DIV
#define ADIR_DIV adir_div
#endif
#ifndef ADIR_POW
#define ADIR_POW adir_pow
#endif
#ifndef ADIR_MAXIMUM
#define ADIR_MAXIMUM adir_maximum
#endif
#ifndef ADIR_MINIMUM
#define ADIR_MINIMUM adir_minimum
#endif

/* The same with numpy broadcasting: out (of `shape`) = f(a, b), a and b read at strides
 * a_strides and b_strides (see the top of this file). */
void adir_add_broadcast(const float *a, const float *b, float *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides);
void adir_sub_broadcast(const float *a, const float *b, float *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides);
void adir_mul_broadcast(const float *a, const float *b, float *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides);
void adir_div_broadcast(const float *a, const float *b, float *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides);
void adir_pow_broadcast(const float *a, const float *b, float *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides);
void adir_maximum_broadcast(const float *a, const float *b, float *out, int32_t rank,
                            const int32_t *shape, const int32_t *a_strides,
                            const int32_t *b_strides);
void adir_minimum_broadcast(const float *a, const float *b, float *out, int32_t rank,
                            const int32_t *shape, const int32_t *a_strides,
                            const int32_t *b_strides);
#ifndef ADIR_ADD_BROADCAST
#define ADIR_ADD_BROADCAST adir_add_broadcast
#endif
#ifndef ADIR_SUB_BROADCAST
#define ADIR_SUB_BROADCAST adir_sub_broadcast
#endif
#ifndef ADIR_MUL_BROADCAST
#define ADIR_MUL_BROADCAST adir_mul_broadcast
#endif
#ifndef ADIR_DIV_BROADCAST
#define ADIR_DIV_BROADCAST adir_div_broadcast
#endif
#ifndef ADIR_POW_BROADCAST
#define ADIR_POW_BROADCAST adir_pow_broadcast
#endif
#ifndef ADIR_MAXIMUM_BROADCAST
#define ADIR_MAXIMUM_BROADCAST adir_maximum_broadcast
#endif
#ifndef ADIR_MINIMUM_BROADCAST
#define ADIR_MINIMUM_BROADCAST adir_minimum_broadcast
#endif

/* The predicates of cmp. Ordered comparisons of nan are false; ne of nan is true (IEEE). */
#define ADIR_CMP_EQ 0
#define ADIR_CMP_NE 1
#define ADIR_CMP_LT 2
#define ADIR_CMP_LE 3
#define ADIR_CMP_GT 4
#define ADIR_CMP_GE 5

/* out = (a <predicate> b) as 0 or 1, one byte each, for n elements; and with broadcasting. */
void adir_cmp(const float *a, const float *b, uint8_t *out, size_t n, int32_t predicate);
void adir_cmp_broadcast(const float *a, const float *b, uint8_t *out, int32_t rank,
                        const int32_t *shape, const int32_t *a_strides, const int32_t *b_strides,
                        int32_t predicate);
#ifndef ADIR_CMP
#define ADIR_CMP adir_cmp
#endif
#ifndef ADIR_CMP_BROADCAST
#define ADIR_CMP_BROADCAST adir_cmp_broadcast
#endif

/* out = condition ? a : b (condition bytes, nonzero is true) for n elements; and with
 * broadcasting of all three. The output may be a or b (see the top of this file). */
void adir_select(const uint8_t *condition, const float *a, const float *b, float *out, size_t n);
void adir_select_broadcast(const uint8_t *condition, const float *a, const float *b, float *out,
                           int32_t rank, const int32_t *shape, const int32_t *condition_strides,
                           const int32_t *a_strides, const int32_t *b_strides);
#ifndef ADIR_SELECT
#define ADIR_SELECT adir_select
#endif
#ifndef ADIR_SELECT_BROADCAST
#define ADIR_SELECT_BROADCAST adir_select_broadcast
#endif

#endif /* ADIR_ELEMENTWISE_H */
