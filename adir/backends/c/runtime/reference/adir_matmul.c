/* adir_matmul.c: the reference kernel of the matmul family (declared in adir_matmul.h): its
 * semantics in the plainest loops, the C twin of adir/interpreter/matmul.py. adir_matmul here is
 * what the tuned matmul (adir_tuned_matmul, tuned/adir_tuned_matmul.c) must compute. */
#include "adir_kernels.h"

/* c[i][j] = the sum over p of op_a(a)[i][p] * op_b(b)[j][p], p in order, one multiply and one
 * add per step (on separate lines: contracted into a fused multiply-add nowhere). */
void adir_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m, int32_t n,
                 int32_t k, int transpose_a, int transpose_b, int shared_b)
{
    const size_t a_size = (size_t)m * (size_t)k;
    const size_t b_size = shared_b ? 0u : (size_t)k * (size_t)n;
    const size_t c_size = (size_t)m * (size_t)n;
    int32_t s, i, j, p;
    for (s = 0; s < batch; ++s) {
        const float *a_s = a + (size_t)s * a_size;
        const float *b_s = b + (size_t)s * b_size;
        float *c_s = c + (size_t)s * c_size;
        for (i = 0; i < m; ++i) {
            for (j = 0; j < n; ++j) {
                float sum = 0.0f;
                for (p = 0; p < k; ++p) {
                    const float x = transpose_a ? a_s[(size_t)p * (size_t)m + (size_t)i]
                                                : a_s[(size_t)i * (size_t)k + (size_t)p];
                    const float y = transpose_b ? b_s[(size_t)j * (size_t)k + (size_t)p]
                                                : b_s[(size_t)p * (size_t)n + (size_t)j];
                    const float product = x * y;
                    sum += product;
                }
                c_s[(size_t)i * (size_t)n + (size_t)j] = sum;
            }
        }
    }
}
