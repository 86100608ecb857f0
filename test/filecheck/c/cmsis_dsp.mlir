// --c-kernels=cmsis-dsp (select-kernels{kernels=cmsis-dsp}): LeNet-5's training step calls
// CMSIS-DSP where the call computes what the reference kernel computes (matmuls without transpose_a, flat adds, relu as a clip to
// [0, +inf], copies, sums over trailing axes, the plain SGD updates) and keeps the reference
// kernels elsewhere (convolutions, pooling, losses, relu's gradient), tuned where they apply. The op each call came
// from stays in its comment.
// RUN: adir-opt --optimizer=sgd --lr=0.01 --plan-memory --c-kernels=cmsis-dsp -t c %S/../../../examples/lenet5.mlir | filecheck %s
// RUN: adir-opt --optimizer=sgd --lr=0.01 --plan-memory -t c %S/../../../examples/lenet5.mlir | filecheck %s --check-prefix=TUNED
// RUN: adir-opt --optimizer=sgd --lr=0.01 --plan-memory --c-kernels=reference -t c %S/../../../examples/lenet5.mlir | filecheck %s --check-prefix=REFERENCE
// RUN: not adir-opt --optimizer=sgd --plan-memory --c-kernels=cmsis %S/../../../examples/lenet5.mlir 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:       #include "adir_kernels.h"
// CHECK-NEXT:  #include "adir_cmsis_dsp.h"
// CHECK-LABEL: float train_step(const float *x, const int32_t *label)
// CHECK:         ADIR_TUNED_CONV2D(x, conv1_w, conv1_b, c1,
// CHECK-NEXT:    arm_clip_f32(c1, c1, 0.0f, INFINITY, 3456u);  /* adir_kernel.relu at lenet5.mlir:32 */
// CHECK:         arm_copy_f32(p2, flat, 256u);  /* adir_kernel.reshape at lenet5.mlir:39 */
// CHECK:         adir_cmsis_matmul_nt(flat, fc1_w, m3, 1, 1, 120, 256, 1);  /* adir_kernel.matmul {transpose_b} at lenet5.mlir:42 */
// CHECK-NEXT:    arm_add_f32(m3, fc1_b, m3, 120u);  /* adir_kernel.add at lenet5.mlir:43 */
// CHECK:         ADIR_CROSS_ENTROPY_I32(
// CHECK:         adir_cmsis_matmul(logits_grad, fc3_w, a4_grad, 1, 1, 84, 10, 1);  /* adir_kernel.matmul at lenet5.mlir:52 */
// CHECK-NEXT:    adir_cmsis_matmul_sgd_update(fc3_w, logits_grad, m4, [[LR:constant_[0-9]+]], fc3_w, 10, 84, 1);  /* adir_kernel.matmul_sgd_update {transpose_a} at lenet5.mlir:52 */
// CHECK-NEXT:    ADIR_RELU_GRAD(m4, a4_grad, m4, 84u);
// CHECK:         adir_cmsis_matmul_sgd_update(fc1_w, m3, flat, [[LR]], fc1_w, 120, 256, 1);
// CHECK:         ADIR_RELU_GRAD(c2,
// CHECK-NEXT:    float *const conv2_b_grad =
// CHECK-NEXT:    adir_cmsis_sum_rows(c2, conv2_b_grad, 16u, 64u);  /* adir_kernel.sum at lenet5.mlir:36 */
// CHECK:         adir_cmsis_sgd_update(conv1_w, conv1_w_grad, [[LR]], conv1_w, 150u);  /* adir_kernel.sgd_update at lenet5.mlir:28 */
// CHECK:         return loss[0];

// TUNED-NOT:     adir_cmsis_dsp.h
// TUNED-NOT:     arm_
// TUNED:         ADIR_TUNED_MATMUL(flat, fc1_w, m3, 1, 1, 120, 256, 0, 1, 1);
// TUNED:         ADIR_TUNED_MATMUL_SGD_UPDATE(fc1_w, m3, flat, {{.*}}, fc1_w, 120, 256, 1, 1, 0);

// REFERENCE-NOT: adir_cmsis_dsp.h
// REFERENCE-NOT: ADIR_TUNED_
// REFERENCE:     ADIR_CONV2D(x, conv1_w, conv1_b, c1,
// REFERENCE:     ADIR_MATMUL(flat, fc1_w, m3, 1, 1, 120, 256, 0, 1, 1);
// REFERENCE:     ADIR_MATMUL_SGD_UPDATE(fc1_w, m3, flat, {{.*}}, fc1_w, 120, 256, 1, 1, 0);

// BAD: adir-opt: error: argument --c-kernels: invalid choice: 'cmsis' (choose from 'reference', 'tuned', 'cmsis-dsp', 'cmsis-nn')
