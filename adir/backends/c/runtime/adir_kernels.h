/* adir_kernels.h: the kernels that adir's generated C calls, one family per header.
 *
 * Two layers: reference/adir_<family>.c states each kernel's semantics in its plainest loops
 * (adir_<kernel>, the C twin of adir/interpreter/<family>.py); tuned/adir_tuned_*.c holds fast
 * versions of the kernels that pay for it (matmul, the convolutions, max pooling, the updates),
 * adir_tuned_<kernel>, same arguments, sized by the target's settings header (targets/). Which
 * one an op calls is decided at compile time by the select-kernels pass (a tuned conv, for
 * one, only takes stride 1 without padding or dilation) and recorded on the op in the IR; the
 * C prints that choice and never dispatches at run time.
 *
 * Generated code never calls a kernel function by name: it calls a macro, ADIR_<KERNEL> for
 * the reference and ADIR_TUNED_<KERNEL> for the tuned kernel, that the family's header defines
 * unless it is already defined. To bring your own kernel (a faster matmul, a vendor library),
 * define the macro before this header is read, without editing generated code:
 *
 *     cc -DADIR_TUNED_MATMUL=my_matmul ...            one kernel
 *     cc -DADIR_USER_KERNELS='"my_kernels.h"' ...     a header of #define ADIR_<KERNEL> lines
 *
 * A replacement takes the kernel's arguments, in the same order.
 *
 * Conventions of every kernel: pointers first (the inputs, then the outputs), then sizes and
 * attributes. Tensors are dense and row-major. An output may be the same buffer as an input
 * only where the kernel's comment allows it (the compiler uses that for in-place updates);
 * otherwise buffers do not overlap. Shapes are compile-time constants of the model, passed as
 * int32_t; element counts as size_t. Only <stdint.h>, <stddef.h>, <string.h> and <math.h>.
 */
#ifndef ADIR_KERNELS_H
#define ADIR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef ADIR_USER_KERNELS
#include ADIR_USER_KERNELS
#endif

/* The widest rank a strided kernel (broadcast, transpose, reduce) handles. */
#define ADIR_MAX_RANK 8

#include "adir_elementwise.h"
#include "adir_matmul.h"
#include "adir_data_movement.h"
#include "adir_reductions.h"
#include "adir_activations.h"
#include "adir_losses.h"
#include "adir_conv_and_pool.h"
#include "adir_normalization.h"
#include "adir_embedding.h"
#include "adir_optimizers.h"
#include "adir_quantized.h"

#endif /* ADIR_KERNELS_H */
