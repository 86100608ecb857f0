// The seed model's training step in C: one kernel call per line, each buffer a pointer at its
// planned offset in the arena, the parameters updated in place by the fused SGD kernels, the
// op each call came from in a comment. The loss is the step's return value.
// RUN: adir-opt --optimizer=sgd --lr=0.1 --plan-memory -t 'c{prefix="mnist_"}' %S/../../../examples/mnist_mlp.mlir | filecheck %s

// CHECK:      #include "mnist_model.h"
// CHECK:      static union { double align; unsigned char bytes[320]; }
// CHECK:      static float mnist_w1[25088];
// CHECK-NEXT: static float mnist_w2[320];
// CHECK:      void mnist_init(uint32_t seed)
// CHECK-NEXT: {
// CHECK-NEXT:     adir_init_symmetric_uniform(mnist_w1, 25088u, 0.0357142873f, UINT64_C(1) + (uint64_t)seed * ADIR_INIT_SEED_STEP);
// CHECK-NEXT:     adir_init_symmetric_uniform(mnist_w2, 320u, 0.176776692f, UINT64_C(2) + (uint64_t)seed * ADIR_INIT_SEED_STEP);
// CHECK-NEXT: }

// CHECK-LABEL: float mnist_train_step(const float *x, const int32_t *label)
// CHECK-NEXT:  {
// CHECK-NEXT:      ADIR_FLOAT_MODE_ENTER
// CHECK-NEXT:      unsigned char *const arena = MNIST_ARENA_BASE;
// CHECK-NEXT:      float *const h = (float *)(void *)(arena + 0);
// CHECK-NEXT:      ADIR_TUNED_MATMUL(x, mnist_w1, h, 1, 1, 32, 784, 0, 1, 1);  /* adir_kernel.matmul {transpose_b} at mnist_mlp.mlir:17 */
// CHECK-NEXT:      ADIR_SIGMOID(h, h, 32u);  /* adir_kernel.sigmoid at mnist_mlp.mlir:18 */
// CHECK-NEXT:      float *const logits = (float *)(void *)(arena + 128);
// CHECK-NEXT:      ADIR_TUNED_MATMUL(h, mnist_w2, logits, 1, 1, 10, 32, 0, 1, 1);
// CHECK:           ADIR_CROSS_ENTROPY_GRAD_I32(logits, label,
// CHECK:           ADIR_TUNED_MATMUL(logits_grad, mnist_w2, a_grad, 1, 1, 32, 10, 0, 0, 1);
// CHECK-NEXT:      ADIR_TUNED_MATMUL_SGD_UPDATE(mnist_w2, logits_grad, h, {{.*}}, mnist_w2, 10, 32, 1, 1, 0);
// CHECK-NEXT:      ADIR_SIGMOID_GRAD(h, a_grad, h, 32u);
// CHECK-NEXT:      ADIR_TUNED_MATMUL_SGD_UPDATE(mnist_w1, h, x, {{.*}}, mnist_w1, 32, 784, 1, 1, 0);  /* adir_kernel.matmul_sgd_update {transpose_a} at mnist_mlp.mlir:17 */
// CHECK-NEXT:      ADIR_FLOAT_MODE_LEAVE
// CHECK-NEXT:      return loss[0];
// CHECK-NEXT:  }
