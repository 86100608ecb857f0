// Each update op whose gradient is a 2-D matmul with no other use becomes its matmul form,
// every property kept; a gradient that is not such a matmul is left alone.
// RUN: adir-opt %s -p fuse-weight-updates | filecheck %s

adir.param @w : tensor<4x3xf32> = #adir.zeros
adir.param @w_buf : tensor<4x3xf32> = #adir.zeros
adir.param @w_m : tensor<4x3xf32> = #adir.zeros
adir.param @w_v : tensor<4x3xf32> = #adir.zeros

func.func @step(%dy: tensor<2x4xf32>, %x: tensor<2x3xf32>, %lr: tensor<f32>, %bc1: tensor<f32>, %bc2: tensor<f32>) -> tensor<4x3xf32> {
  %w = adir.load @w : tensor<4x3xf32>
  %buf = adir.load @w_buf : tensor<4x3xf32>
  %m = adir.load @w_m : tensor<4x3xf32>
  %v = adir.load @w_v : tensor<4x3xf32>
  %g1 = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %w1 = adir.sgd_update %w, %g1, %lr {weight_decay = 0.01 : f32, clip_value = 0.5 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %g2 = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %w2, %buf2 = adir.momentum_update %w1, %buf, %g2, %lr {momentum = 0.9 : f32, nesterov} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
  %g3 = adir.matmul %x, %dy {transpose_a} : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
  %g3t = adir.transpose %g3 {permutation = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  %w3, %m3, %v3 = adir.adam_update %w2, %m, %v, %g3t, %lr, %bc1, %bc2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32, weight_decay = 0.01 : f32, decoupled_weight_decay} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  %g4 = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %w4, %m4, %v4 = adir.adam_update %w3, %m3, %v3, %g4, %lr, %bc1, %bc2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  %g5 = adir.matmul %dy, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %w5 = adir.sgd_update %w4, %g5, %lr : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  adir.store %w5, @w : tensor<4x3xf32>
  adir.store %buf2, @w_buf : tensor<4x3xf32>
  adir.store %m4, @w_m : tensor<4x3xf32>
  adir.store %v4, @w_v : tensor<4x3xf32>
  func.return %g5 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @step
// CHECK:         %v = adir.load @w_v : tensor<4x3xf32>
// CHECK-NEXT:    %w1 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a, weight_decay = 1.000000e-02 : f32, clip_value = 5.000000e-01 : f32} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4x3xf32>
// CHECK-NEXT:    %w2, %buf2 = adir.matmul_momentum_update %w1, %buf, %dy, %x, %lr {transpose_a, momentum = 9.000000e-01 : f32, nesterov} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
// A transposed gradient is not a matmul:
// CHECK-NEXT:    %g3 = adir.matmul %x, %dy {transpose_a}
// CHECK-NEXT:    %g3t = adir.transpose %g3
// CHECK-NEXT:    %w3, %m3, %v3 = adir.adam_update %w2, %m, %v, %g3t, %lr, %bc1, %bc2 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f32, weight_decay = 1.000000e-02 : f32, decoupled_weight_decay}
// CHECK-NEXT:    %w4, %m4, %v4 = adir.matmul_adam_update %w3, %m3, %v3, %dy, %x, %lr, %bc1, %bc2 {transpose_a, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
// %g5 is also returned: no fusion.
// CHECK-NEXT:    %g5 = adir.matmul %dy, %x {transpose_a}
// CHECK-NEXT:    %w5 = adir.sgd_update %w4, %g5, %lr
