// The verifier rules of level 2's ops (qrequantize_grad, qsgd_update, qgrad_input), one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @grad_shape(%y: tensor<1x2x3xi8>, %g: tensor<1x2x4xf32>) {
  %0 = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<1x2x3xi8>, tensor<1x2x4xf32> -> tensor<1x2x3xf32>
  func.return
}
// CHECK: quantized_training_invalid.mlir:5:3: error: adir.qrequantize_grad: output 1x2x3 and grad 1x2x4 differ

// -----

func.func @multipliers_per_channel(%y: tensor<1x2x3xi8>, %g: tensor<1x2x3xf32>) {
  %0 = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 0, 0>} : tensor<1x2x3xi8>, tensor<1x2x3xf32> -> tensor<1x2x3xf32>
  func.return
}
// CHECK: error: adir.qrequantize_grad: 2 multipliers for 3 output channels (one per channel, or one for all)

// -----

func.func @param_float(%w: tensor<3xf32>, %g: tensor<3xf32>, %lr: tensor<f32>) {
  %0 = adir.qsgd_update %w, %g, %lr {step_scale = [1.0 : f32]} : tensor<3xf32>, tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  func.return
}
// CHECK: error: adir.qsgd_update: operand param must be i8 or i32, got f32

// -----

func.func @step_scales(%w: tensor<3x2xi8>, %g: tensor<3x2xf32>, %lr: tensor<f32>) {
  %0 = adir.qsgd_update %w, %g, %lr {step_scale = [1.0 : f32, 2.0 : f32]} : tensor<3x2xi8>, tensor<3x2xf32>, tensor<f32> -> tensor<3x2xi8>
  func.return
}
// CHECK: error: adir.qsgd_update: 2 step_scale entries for 3 entries along axis 0 (one per entry, or one for all)

// -----

func.func @negative_step_scale(%w: tensor<3xi32>, %g: tensor<3xf32>, %lr: tensor<f32>) {
  %0 = adir.qsgd_update %w, %g, %lr {step_scale = [-1.0 : f32]} : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>
  func.return
}
// CHECK: error: adir.qsgd_update: step_scale must be finite and >= 0

// -----

func.func @grad_input_size(%g: tensor<1x3x2x4xf32>, %w: tensor<4x3x3x2xi8>) -> tensor<1x6x4x2xf32> {
  // CHECK: error: adir.qgrad_input: a 6x4 input gives a 2x2 output, but grad is 1x3x2x4
  %0 = adir.qgrad_input %g, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, input_size = array<i64: 6, 4>} : tensor<1x3x2x4xf32>, tensor<4x3x3x2xi8> -> tensor<1x6x4x2xf32>
  func.return %0 : tensor<1x6x4x2xf32>
}

// -----

func.func @grad_input_channels(%g: tensor<2x9xf32>, %w: tensor<10x7xi8>) -> tensor<2x7xf32> {
  // CHECK: error: adir.qgrad_input: grad has 9 channels, the weight 10 outputs
  %0 = adir.qgrad_input %g, %w : tensor<2x9xf32>, tensor<10x7xi8> -> tensor<2x7xf32>
  func.return %0 : tensor<2x7xf32>
}
