// The seed MLP with Adam, end to end: both weight gradients are computed inside their updates,
// which write the weights and both moments in place, so no 32x784 buffer is left in the arena
// (352 bytes; 302,384 with the gradient and the update's temporaries as buffers). The C calls
// one fused kernel per weight.
// RUN: adir-opt --optimizer=adam --lr=0.001 --plan-memory %S/../../../examples/mnist_mlp.mlir | filecheck %s
// RUN: adir-opt --optimizer=adam --lr=0.001 --plan-memory -t 'c{prefix="mnist_"}' %S/../../../examples/mnist_mlp.mlir | filecheck %s --check-prefix=C
// RUN: adir-opt -p 'autodiff,insert-optimizer{kind=sgd lr=0.1 momentum=0.9},fuse-weight-updates,bufferize' %S/../../../examples/mnist_mlp.mlir | filecheck %s --check-prefix=MOMENTUM

// CHECK: builtin.module attributes {adir.kernel_target = "host", adir.arena_size = 352 : i64, adir.persistent_size = 304900 : i64}
// CHECK-LABEL: func.func @train_step
// CHECK-NOT:     memref.alloc() {{.*}} : memref<32x784xf32>
// CHECK:         adir_kernel.matmul_adam_update ins(%w2, %w2_exp_avg, %w2_exp_avg_sq, %logits_grad, %h, {{.*}}) outs(%w2, %w2_exp_avg, %w2_exp_avg_sq : {{.*}}) {adir.kernel = "tuned", transpose_a, {{.*}}}
// CHECK:         adir_kernel.matmul_adam_update ins(%w1, %w1_exp_avg, %w1_exp_avg_sq, %h, %x, %{{[0-9]+}}, %bias_correction1, %bias_correction2 : {{.*}}) outs(%w1, %w1_exp_avg, %w1_exp_avg_sq : memref<32x784xf32>, memref<32x784xf32>, memref<32x784xf32>) {adir.kernel = "tuned", transpose_a, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f32}
// CHECK-NEXT:    func.return %loss : memref<f32>

// C:      ADIR_TUNED_MATMUL_ADAM_UPDATE(mnist_w2, mnist_w2_exp_avg, mnist_w2_exp_avg_sq, logits_grad, h, [[LR:[a-z0-9_]+]], bias_correction1, bias_correction2, mnist_w2, mnist_w2_exp_avg, mnist_w2_exp_avg_sq, 10, 32, 1, 1, 0, 0.9, 0.999, 9.99999994e-09f, 0.0f, 0.0f, 0);
// C-NEXT: ADIR_SIGMOID_GRAD(h, a_grad, h, 32u);
// C-NEXT: ADIR_TUNED_MATMUL_ADAM_UPDATE(mnist_w1, mnist_w1_exp_avg, mnist_w1_exp_avg_sq, h, x, [[LR]], bias_correction1, bias_correction2, mnist_w1, mnist_w1_exp_avg, mnist_w1_exp_avg_sq, 32, 784, 1, 1, 0, 0.9, 0.999, 9.99999994e-09f, 0.0f, 0.0f, 0);  /* adir_kernel.matmul_adam_update {transpose_a} at mnist_mlp.mlir:17 */

// MOMENTUM-LABEL: func.func @train_step
// MOMENTUM-NOT:   memref.alloc() : memref<32x784xf32>
// MOMENTUM:       adir_kernel.matmul_momentum_update ins(%w1, %w1_momentum_buffer, %a_grad, %x, %{{[0-9]+}} : {{.*}}) outs(%w1, %w1_momentum_buffer : memref<32x784xf32>, memref<32x784xf32>) {transpose_a, momentum = 9.000000e-01 : f32}
// MOMENTUM:       adir_kernel.matmul_momentum_update ins(%w2, %w2_momentum_buffer, {{.*}}) outs(%w2, %w2_momentum_buffer : {{.*}})
