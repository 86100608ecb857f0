// The optimizers family round-trips in custom and generic form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @step
func.func @step(%lr: tensor<f32>, %t: tensor<f32>, %w: tensor<4x3xf32>, %dy: tensor<2x4xf32>, %x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK-NEXT: %0 = adir.lr_schedule %lr, %t {kind = "cosine", t_max = 10 : i64, eta_min = 1.000000e-03 : f32} : tensor<f32>
  %0 = adir.lr_schedule %lr, %t {kind = "cosine", t_max = 10 : i64, eta_min = 0.001 : f32} : tensor<f32>
  // CHECK-NEXT: %1 = adir.lr_schedule %0, %t {kind = "step", step_size = 5 : i64, gamma = 5.000000e-01 : f32} : tensor<f32>
  %1 = adir.lr_schedule %0, %t {kind = "step", step_size = 5 : i64, gamma = 0.5 : f32} : tensor<f32>
  // CHECK-NEXT: %2 = adir.bias_correction %t {beta = 9.990000e-01 : f64} : tensor<f32>
  %2 = adir.bias_correction %t {beta = 0.999 : f64} : tensor<f32>
  // CHECK-NEXT: %3 = adir.matmul_sgd_update %w, %dy, %x, %1 {transpose_a} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %3 = adir.matmul_sgd_update %w, %dy, %x, %1 {transpose_a} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4x3xf32>
  func.return %3 : tensor<4x3xf32>
}

// -----

// The parameter updates: one op each, returning the new parameter and state; their matmul
// forms take the gradient as lhs, rhs and the transpose flags.
// CHECK-LABEL: func.func @updates
func.func @updates(%lr: tensor<f32>, %w: tensor<4x3xf32>, %m: tensor<4x3xf32>, %v: tensor<4x3xf32>, %g: tensor<4x3xf32>, %dy: tensor<2x4xf32>, %x: tensor<2x3xf32>, %bc1: tensor<f32>, %bc2: tensor<f32>) {
  // CHECK-NEXT: %0 = adir.sgd_update %w, %g, %lr {weight_decay = 1.000000e-02 : f32, clip_value = 1.000000e+00 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %0 = adir.sgd_update %w, %g, %lr {weight_decay = 0.01 : f32, clip_value = 1.0 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %1, %2 = adir.momentum_update %w, %m, %g, %lr {momentum = 9.000000e-01 : f32, nesterov} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
  %1, %2 = adir.momentum_update %w, %m, %g, %lr {momentum = 0.9 : f32, nesterov} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
  // CHECK-NEXT: %3, %4, %5 = adir.adam_update %w, %m, %v, %g, %lr, %bc1, %bc2 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f32, weight_decay = 1.000000e-02 : f32, decoupled_weight_decay} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  %3, %4, %5 = adir.adam_update %w, %m, %v, %g, %lr, %bc1, %bc2 {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32, weight_decay = 0.01 : f32, decoupled_weight_decay} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  // CHECK-NEXT: %6 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a, clip_value = 5.000000e-01 : f32} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %6 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a, clip_value = 0.5 : f32} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %7, %8 = adir.matmul_momentum_update %w, %m, %dy, %x, %lr {transpose_a, momentum = 9.000000e-01 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
  %7, %8 = adir.matmul_momentum_update %w, %m, %dy, %x, %lr {transpose_a, momentum = 0.9 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
  // CHECK-NEXT: %9, %10, %11 = adir.matmul_adam_update %w, %m, %v, %dy, %x, %lr, %bc1, %bc2 {transpose_a, beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  %9, %10, %11 = adir.matmul_adam_update %w, %m, %v, %dy, %x, %lr, %bc1, %bc2 {transpose_a, beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  func.return
}
