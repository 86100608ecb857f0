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
