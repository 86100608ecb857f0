// Level 2 of quantized training (docs/quantized_training.md): the gradient through a
// requantization and the SGD step on int8 weights and int32 biases print in their custom form
// and survive a trip through the generic form. Defaults (act_min -128, act_max 127, axis 0)
// are left out. A step scale that 7 digits do not give back exactly (5.151235e+07 is the f32
// 0x4C448108 only approximately in decimal) prints in hex, which reads back as the same f32.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @level2
func.func @level2(%y: tensor<1x2x2x3xi8>, %g: tensor<1x2x2x3xf32>, %w: tensor<3x1x1x2xi8>, %gw: tensor<3x1x1x2xf32>, %dw: tensor<1x3x3x3xi8>, %gdw: tensor<1x3x3x3xf32>, %b: tensor<3xi32>, %gb: tensor<3xf32>, %lr: tensor<f32>) -> (tensor<1x2x2x3xf32>, tensor<3x1x1x2xi8>, tensor<1x3x3x3xi8>, tensor<3xi32>) {
  // CHECK-NEXT: %0 = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824, 1610612736, 1073741824>, shift = array<i32: -3, 0, 1>, act_min = -5 : i32} : tensor<1x2x2x3xi8>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %0 = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824, 1610612736, 1073741824>, shift = array<i32: -3, 0, 1>, act_min = -5 : i32} : tensor<1x2x2x3xi8>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  // CHECK-NEXT: %1 = adir.qsgd_update %w, %gw, %lr {step_scale = [1.000000e+00 : f32, 5.000000e-01 : f32, 4.000000e+00 : f32]} : tensor<3x1x1x2xi8>, tensor<3x1x1x2xf32>, tensor<f32> -> tensor<3x1x1x2xi8>
  %1 = adir.qsgd_update %w, %gw, %lr {step_scale = [1.0 : f32, 0.5 : f32, 4.0 : f32]} : tensor<3x1x1x2xi8>, tensor<3x1x1x2xf32>, tensor<f32> -> tensor<3x1x1x2xi8>
  // CHECK-NEXT: %2 = adir.qsgd_update %dw, %gdw, %lr {step_scale = [1.000000e+00 : f32, 2.000000e+00 : f32, 3.000000e+00 : f32], axis = 3 : i64} : tensor<1x3x3x3xi8>, tensor<1x3x3x3xf32>, tensor<f32> -> tensor<1x3x3x3xi8>
  %2 = adir.qsgd_update %dw, %gdw, %lr {step_scale = [1.0 : f32, 2.0 : f32, 3.0 : f32], axis = 3 : i64} : tensor<1x3x3x3xi8>, tensor<1x3x3x3xf32>, tensor<f32> -> tensor<1x3x3x3xi8>
  // CHECK-NEXT: %3 = adir.qsgd_update %b, %gb, %lr {step_scale = [0x4C448108 : f32]} : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>
  %3 = adir.qsgd_update %b, %gb, %lr {step_scale = [5.151235e+07 : f32]} : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>
  func.return %0, %1, %2, %3 : tensor<1x2x2x3xf32>, tensor<3x1x1x2xi8>, tensor<1x3x3x3xi8>, tensor<3xi32>
}
