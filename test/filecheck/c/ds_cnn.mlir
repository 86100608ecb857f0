// The DS-CNN's training step in C: batchnorm in training mode writes the new running
// statistics over the old ones in their parameters (no buffer, no copy), with the relu after it
// in the same kernel (fuse-batchnorm-relu: it writes the relu's output a1), dropout draws its
// mask from the step counter, and the backward pass runs the fused batchnorm and relu gradient
// kernels.
// RUN: adir-opt --optimizer=sgd --lr=0.01 --plan-memory -t 'c{prefix="kws_"}' %S/../../../examples/ds_cnn.mlir | filecheck %s

// CHECK-LABEL: float kws_train_step(const float *x, const int32_t *label, const int64_t *step)
// CHECK:      ADIR_TUNED_CONV2D_GEMM(x, kws_conv1_w, NULL,
// CHECK:      ADIR_TUNED_BATCHNORM_RELU_CHANNELS(c1, kws_bn1_gamma, kws_bn1_beta, kws_bn1_mean, kws_bn1_var, a1, bn1_batch_mean, bn1_batch_invstd, kws_bn1_mean, kws_bn1_var, 1, 64, 125, 0.100000001f, 9.99999975e-06f);
// CHECK-NOT:  memcpy
// CHECK:      ADIR_DROPOUT({{.*}}adir_dropout_counter_i64(step), UINT64_C(1), 0.200000003f);
// CHECK:      ADIR_GLOBAL_AVGPOOL2D(
// CHECK:      ADIR_TUNED_BATCHNORM_RELU_GRAD_CHANNELS(
// CHECK:      return loss[0];
