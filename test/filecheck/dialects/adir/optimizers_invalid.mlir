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

// -----

func.func @state_shape_mismatch(%w: tensor<4x3xf32>, %m: tensor<3x4xf32>, %g: tensor<4x3xf32>, %lr: tensor<f32>) {
  %0, %1 = adir.momentum_update %w, %m, %g, %lr {momentum = 0.9 : f32} : tensor<4x3xf32>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<f32> -> (tensor<4x3xf32>, tensor<4x3xf32>)
  func.return
}
// CHECK: optimizers_invalid.mlir:69:3: error: adir.momentum_update: momentum_buffer is 3x4 but param is 4x3

// -----

func.func @grad_shape_mismatch(%w: tensor<4x3xf32>, %g: tensor<4x2xf32>, %lr: tensor<f32>) {
  %0 = adir.sgd_update %w, %g, %lr : tensor<4x3xf32>, tensor<4x2xf32>, tensor<f32> -> tensor<4x3xf32>
  func.return
}
// CHECK: optimizers_invalid.mlir:77:3: error: adir.sgd_update: grad is 4x2 but param is 4x3

// -----

func.func @correction_not_scalar(%w: tensor<3xf32>, %g: tensor<3xf32>, %lr: tensor<f32>, %bc: tensor<3xf32>) {
  %0, %1, %2 = adir.adam_update %w, %w, %w, %g, %lr, %lr, %bc {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<3xf32> -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}
// CHECK: optimizers_invalid.mlir:85:3: error: adir.adam_update: operand bias_correction2_sqrt must be a scalar tensor<f32>, got tensor<3xf32>

// -----

func.func @beta_out_of_range_in_update(%w: tensor<3xf32>, %g: tensor<3xf32>, %lr: tensor<f32>) {
  %0, %1, %2 = adir.adam_update %w, %w, %w, %g, %lr, %lr, %lr {beta1 = 1.0 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f32} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32> -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}
// CHECK: optimizers_invalid.mlir:93:3: error: adir.adam_update: beta1 must be in [0, 1), got 1.0

// -----

func.func @negative_weight_decay(%w: tensor<3xf32>, %g: tensor<3xf32>, %lr: tensor<f32>) {
  %0 = adir.sgd_update %w, %g, %lr {weight_decay = -0.5 : f32} : tensor<3xf32>, tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  func.return
}
// CHECK: optimizers_invalid.mlir:101:3: error: adir.sgd_update: weight_decay must not be negative, got -0.5

// -----

func.func @nesterov_without_momentum(%w: tensor<3xf32>, %g: tensor<3xf32>, %lr: tensor<f32>) {
  %0, %1 = adir.momentum_update %w, %w, %g, %lr {momentum = 0.0 : f32, nesterov} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32> -> (tensor<3xf32>, tensor<3xf32>)
  func.return
}
// CHECK: optimizers_invalid.mlir:109:3: error: adir.momentum_update: nesterov needs a momentum

// -----

func.func @matmul_update_product_mismatch(%w: tensor<3x4xf32>, %m: tensor<3x4xf32>, %dy: tensor<2x4xf32>, %x: tensor<2x3xf32>, %lr: tensor<f32>) {
  %0, %1 = adir.matmul_momentum_update %w, %m, %dy, %x, %lr {transpose_a, momentum = 0.9 : f32} : tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<f32> -> (tensor<3x4xf32>, tensor<3x4xf32>)
  func.return
}
// CHECK: optimizers_invalid.mlir:117:3: error: adir.matmul_momentum_update: the product is 4x3 but param is 3x4
