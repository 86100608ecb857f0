// Every verifier rule of the optimizers family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @unknown_schedule(%lr: tensor<f32>, %t: tensor<f32>) {
  %0 = adir.lr_schedule %lr, %t {kind = "linear"} : tensor<f32>
  func.return
}
// CHECK: optimizers_invalid.mlir:5:3: error: adir.lr_schedule: unknown schedule 'linear', expected one of step, exponential, cosine

// -----

func.func @zero_step_size(%lr: tensor<f32>, %t: tensor<f32>) {
  %0 = adir.lr_schedule %lr, %t {kind = "step", step_size = 0 : i64} : tensor<f32>
  func.return
}
// CHECK: optimizers_invalid.mlir:13:3: error: adir.lr_schedule: step_size must be at least 1, got 0

// -----

func.func @bad_gamma(%lr: tensor<f32>, %t: tensor<f32>) {
  %0 = adir.lr_schedule %lr, %t {kind = "exponential", gamma = -0.5 : f32} : tensor<f32>
  func.return
}
// CHECK: optimizers_invalid.mlir:21:3: error: adir.lr_schedule: gamma must be positive, got -0.5

// -----

func.func @lr_not_scalar(%lr: tensor<2xf32>, %t: tensor<f32>) {
  %0 = adir.lr_schedule %lr, %t {kind = "cosine"} : tensor<2xf32>, tensor<f32> -> tensor<f32>
  func.return
}
// CHECK: optimizers_invalid.mlir:29:3: error: adir.lr_schedule: operand lr must be a scalar tensor<f32>, got tensor<2xf32>

// -----

func.func @beta_out_of_range(%t: tensor<f32>) {
  %0 = adir.bias_correction %t {beta = 1.0 : f64} : tensor<f32>
  func.return
}
// CHECK: optimizers_invalid.mlir:37:3: error: adir.bias_correction: beta must be in [0, 1), got 1.0

// -----

func.func @update_inner_mismatch(%w: tensor<4x3xf32>, %dy: tensor<2x4xf32>, %x: tensor<5x3xf32>, %lr: tensor<f32>) {
  %0 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a} : tensor<4x3xf32>, tensor<2x4xf32>, tensor<5x3xf32>, tensor<f32> -> tensor<4x3xf32>
  func.return
}
// CHECK: optimizers_invalid.mlir:45:3: error: adir.matmul_sgd_update: inner dimensions 2 and 5 do not match

// -----

func.func @update_shape_mismatch(%w: tensor<3x4xf32>, %dy: tensor<2x4xf32>, %x: tensor<2x3xf32>, %lr: tensor<f32>) {
  %0 = adir.matmul_sgd_update %w, %dy, %x, %lr {transpose_a} : tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<3x4xf32>
  func.return
}
// CHECK: optimizers_invalid.mlir:53:3: error: adir.matmul_sgd_update: the product is 4x3 but param is 3x4

// -----

func.func @update_not_2d(%w: tensor<4xf32>, %dy: tensor<2x4xf32>, %x: tensor<2x3xf32>, %lr: tensor<f32>) {
  %0 = adir.matmul_sgd_update %w, %dy, %x, %lr : tensor<4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<4xf32>
  func.return
}
// CHECK: optimizers_invalid.mlir:61:3: error: adir.matmul_sgd_update: operand param must have rank 2, got 4
