// adir.qgrad_input (level 2 of quantized training, docs/quantized_training.md): the adjoint of
// an int8 conv's input (NHWC, weight OHWI or depthwise [1, KH, KW, O]) or fully-connected
// layer's input from its accumulator's adjoint, on the int8 weight. It prints in its custom
// form and survives the generic form; defaults (stride 1, no padding, dilation 1, groups 1)
// are left out.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @grad_input
func.func @grad_input(%g: tensor<1x3x2x4xf32>, %w: tensor<4x3x3x2xi8>, %gd: tensor<2x2x2x6xf32>, %dw: tensor<1x3x3x6xi8>, %gf: tensor<2x10xf32>, %fc: tensor<10x7xi8>) -> (tensor<1x5x4x2xf32>, tensor<2x4x4x3xf32>, tensor<2x7xf32>) {
  // CHECK-NEXT: %0 = adir.qgrad_input %g, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, input_size = array<i64: 5, 4>} : tensor<1x3x2x4xf32>, tensor<4x3x3x2xi8> -> tensor<1x5x4x2xf32>
  %0 = adir.qgrad_input %g, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, input_size = array<i64: 5, 4>} : tensor<1x3x2x4xf32>, tensor<4x3x3x2xi8> -> tensor<1x5x4x2xf32>
  // CHECK-NEXT: %1 = adir.qgrad_input %gd, %dw {dilation = array<i64: 2, 2>, groups = 3 : i64, input_size = array<i64: 4, 4>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x2x2x6xf32>, tensor<1x3x3x6xi8> -> tensor<2x4x4x3xf32>
  %1 = adir.qgrad_input %gd, %dw {dilation = array<i64: 2, 2>, groups = 3 : i64, input_size = array<i64: 4, 4>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x2x2x6xf32>, tensor<1x3x3x6xi8> -> tensor<2x4x4x3xf32>
  // CHECK-NEXT: %2 = adir.qgrad_input %gf, %fc : tensor<2x10xf32>, tensor<10x7xi8> -> tensor<2x7xf32>
  %2 = adir.qgrad_input %gf, %fc : tensor<2x10xf32>, tensor<10x7xi8> -> tensor<2x7xf32>
  func.return %0, %1, %2 : tensor<1x5x4x2xf32>, tensor<2x4x4x3xf32>, tensor<2x7xf32>
}
