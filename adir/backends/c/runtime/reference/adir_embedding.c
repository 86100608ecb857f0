/* adir_embedding.c: the reference kernels of the embedding family (declared in
 * adir_embedding.h). */
#include <math.h>

#include "adir_kernels.h"

/* Whether an index names a row of the table (never read or write outside it). */
static int adir_is_row(int32_t index, int32_t num_weights)
{
    return index >= 0 && index < num_weights;
}

void adir_embedding(const float *weight, const int32_t *indices, float *y, size_t count,
                    int32_t num_weights, int32_t dim)
{
    size_t i;
    int32_t j;
    for (i = 0; i < count; ++i) {
        float *out = y + i * (size_t)dim;
        if (adir_is_row(indices[i], num_weights)) {
            const float *row = weight + (size_t)indices[i] * (size_t)dim;
            for (j = 0; j < dim; ++j) {
                out[j] = row[j];
            }
        } else {
            for (j = 0; j < dim; ++j) {
                out[j] = NAN;
            }
        }
    }
}

void adir_embedding_grad(const float *grad, const int32_t *indices, float *table, size_t count,
                         int32_t num_weights, int32_t dim, int32_t padding_idx)
{
    const size_t size = (size_t)num_weights * (size_t)dim;
    size_t i;
    int32_t j;
    for (i = 0; i < size; ++i) {
        table[i] = 0.0f;
    }
    for (i = 0; i < count; ++i) {
        const int32_t index = indices[i];
        if (adir_is_row(index, num_weights) && index != padding_idx) {
            const float *g = grad + i * (size_t)dim;
            float *row = table + (size_t)index * (size_t)dim;
            for (j = 0; j < dim; ++j) {
                row[j] += g[j];
            }
        }
    }
}
