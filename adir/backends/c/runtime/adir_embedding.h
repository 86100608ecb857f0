/* adir_embedding.h: the kernels of the embedding family (see adir_kernels.h).
 *
 * A table `weight` of num_weights rows of dim floats, looked up by `count` i32 indices. An
 * index outside [0, num_weights) is a fault in the data (the interpreter raises an error
 * naming it, as PyTorch does); these kernels never read or write outside the table for it:
 * the lookup writes a row of nan at that position (so the loss is nan, as for a class index
 * outside [0, C) in adir_losses.h) and the backward skips it.
 */
#ifndef ADIR_EMBEDDING_H
#define ADIR_EMBEDDING_H

#include <stddef.h>
#include <stdint.h>

/* adir.embedding: y[i, :] = weight[indices[i], :] for i < count (y is count x dim). No buffers
 * overlap. */
void adir_embedding(const float *weight, const int32_t *indices, float *y, size_t count,
                    int32_t num_weights, int32_t dim);
#ifndef ADIR_EMBEDDING
#define ADIR_EMBEDDING adir_embedding
#endif

/* adir.embedding_grad: table = 0, then table[indices[i], :] += grad[i, :] for i = 0, 1, ...,
 * count - 1 in that order (the interpreter's order, so both agree bit for bit), skipping the
 * indices equal to padding_idx (-1: none). No buffers overlap. */
void adir_embedding_grad(const float *grad, const int32_t *indices, float *table, size_t count,
                         int32_t num_weights, int32_t dim, int32_t padding_idx);
#ifndef ADIR_EMBEDDING_GRAD
#define ADIR_EMBEDDING_GRAD adir_embedding_grad
#endif

#endif /* ADIR_EMBEDDING_H */
