// LeNet-5's training step in C: the conv and pool kernels forward, their gradient kernels
// backward (maxpool's gradient recomputes its window picks from the forward input, the bias
// gradients are channel sums), each update written into its parameter.
// RUN: adir-opt --optimizer=sgd --lr=0.01 --plan-memory -t 'c{prefix="lenet_"}' %S/../../../examples/lenet5.mlir | filecheck %s

// CHECK-LABEL: float lenet_train_step(const float *x, const int32_t *label)
// CHECK:      ADIR_TUNED_CONV2D(x, lenet_conv1_w, lenet_conv1_b, c1, 1, 1, 28, 28, 6, 24, 24, 5, 5, 1, 1, 0, 0, 1, 1, 1);  /* adir_kernel.conv2d at lenet5.mlir:31 */
// CHECK-NEXT: ADIR_RELU(c1, c1, 3456u);
// CHECK:      ADIR_TUNED_MAXPOOL2D(c1, p1, 1, 6, 24, 24, 12, 12, 2, 2, 2, 2, 0, 0);  /* adir_kernel.maxpool2d at lenet5.mlir:33 */
// CHECK:      ADIR_TUNED_CONV2D(p1, lenet_conv2_w, lenet_conv2_b, c2, 1, 6, 12, 12, 16, 8, 8, 5, 5, 1, 1, 0, 0, 1, 1, 1);
// CHECK:      ADIR_CROSS_ENTROPY_GRAD_I32(m5, label,
// Each update runs as soon as its gradient is complete and the old weight is read for the last
// time (reorder-updates): conv2's after the gradient of its input, before the backward pass of
// conv1 goes on.
// CHECK:      ADIR_TUNED_MAXPOOL2D_GRAD(c2, p2_grad, a2_grad, 1, 16, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0);
// CHECK-NEXT: ADIR_RELU_GRAD(c2, a2_grad, c2, 1024u);
// CHECK:      ADIR_SUM(c2, conv2_b_grad, 16, 64, 1);
// CHECK-NEXT: ADIR_TUNED_SGD_UPDATE(lenet_conv2_b, conv2_b_grad, {{.*}}, lenet_conv2_b, 16u, 0.0f, 0.0f);
// CHECK:      ADIR_TUNED_CONV2D_GRAD_INPUT(c2, lenet_conv2_w, p1_grad, 1, 6, 12, 12, 16, 8, 8, 5, 5, 1, 1, 0, 0, 1, 1, 1);
// CHECK:      ADIR_TUNED_CONV2D_GRAD_WEIGHT(p1, c2, conv2_w_grad, 1, 6, 12, 12, 16, 8, 8, 5, 5, 1, 1, 0, 0, 1, 1, 1);
// CHECK-NEXT: ADIR_TUNED_SGD_UPDATE(lenet_conv2_w, conv2_w_grad, {{.*}}, lenet_conv2_w, 2400u, 0.0f, 0.0f);
// CHECK:      ADIR_TUNED_MAXPOOL2D_GRAD(c1, p1_grad,
// CHECK:      return loss[0];
