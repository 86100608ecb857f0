// Level 2 of quantized training (docs/quantized_training.md): the gradient through a
// requantization and the SGD step on int8 weights and int32 biases print in their custom form
// and survive a trip through the generic form. Defaults (act_min -128, act_max 127, axis 0)
// are left out.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @level2
func.func @level2(%y: tensor<1x2x2x3xi8>, %g: tensor<1x2x2x3xf32>, %w: tensor<3x1x1x2xi8>, %gw: tensor<3x1x1x2xf32>, %dw: tensor<1x3x3x3xi8>, %gdw: tensor<1x3x3x3xf32>, %b: tensor<3xi32>, %gb: tensor<3xf32>, %lr: tensor<f32>) -> (tensor<1x2x2x3xf32>, tensor<3x1x1x2xi8>, tensor<1x3x3x3xi8>, tensor<3xi32>) {
  // CHECK-NEXT: %0 = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824, 1610612736, 1073741824>, shift = array<i32: -3, 0, 1>, act_min = -5 : i32} : tensor<1x2x2x3xi8>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %0 = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824, 1610612736, 1073741824>, shift = array<i32: -3, 0, 1>, act_min = -5 : i32} : tensor<1x2x2x3xi8>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  // CHECK-NEXT: %1 = adir.qsgd_update %w, %gw, %lr {step_scale = array<f32: 1.000000e+00, 5.000000e-01, 4.000000e+00>} : tensor<3x1x1x2xi8>, tensor<3x1x1x2xf32>, tensor<f32> -> tensor<3x1x1x2xi8>
  %1 = adir.qsgd_update %w, %gw, %lr {step_scale = array<f32: 1.0, 0.5, 4.0>} : tensor<3x1x1x2xi8>, tensor<3x1x1x2xf32>, tensor<f32> -> tensor<3x1x1x2xi8>
  // CHECK-NEXT: %2 = adir.qsgd_update %dw, %gdw, %lr {step_scale = array<f32: 1.000000e+00, 2.000000e+00, 3.000000e+00>, axis = 3 : i64} : tensor<1x3x3x3xi8>, tensor<1x3x3x3xf32>, tensor<f32> -> tensor<1x3x3x3xi8>
  %2 = adir.qsgd_update %dw, %gdw, %lr {step_scale = array<f32: 1.0, 2.0, 3.0>, axis = 3 : i64} : tensor<1x3x3x3xi8>, tensor<1x3x3x3xf32>, tensor<f32> -> tensor<1x3x3x3xi8>
  // CHECK-NEXT: %3 = adir.qsgd_update %b, %gb, %lr {step_scale = array<f32: 1.000000e+04>} : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>
  %3 = adir.qsgd_update %b, %gb, %lr {step_scale = array<f32: 1.0e4>} : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>
  func.return %0, %1, %2, %3 : tensor<1x2x2x3xf32>, tensor<3x1x1x2xi8>, tensor<1x3x3x3xi8>, tensor<3xi32>
}
