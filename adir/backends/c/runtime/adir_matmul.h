/* adir_matmul.h: the kernels of the matmul family (see adir_kernels.h). */
#ifndef ADIR_MATMUL_H
#define ADIR_MATMUL_H

#include <stddef.h>
#include <stdint.h>

/* c = op_a(a) op_b(b) for each of `batch` products: op_a(a) is m x k (a is stored k x m when
 * transpose_a), op_b(b) is k x n (stored n x k when transpose_b), c is m x n. With shared_b,
 * every product reads the same b (a 2-D rhs); else b holds `batch` matrices too. c overlaps
 * neither a nor b. */
void adir_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m, int32_t n,
                 int32_t k, int transpose_a, int transpose_b, int shared_b);
#ifndef ADIR_MATMUL
#define ADIR_MATMUL adir_matmul
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m,
                       int32_t n, int32_t k, int transpose_a, int transpose_b, int shared_b);
#ifndef ADIR_TUNED_MATMUL
#define ADIR_TUNED_MATMUL adir_tuned_matmul
#endif

#endif /* ADIR_MATMUL_H */
