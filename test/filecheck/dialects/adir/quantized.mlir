// Every op of the quantized family prints in its custom form and survives a trip through the
// generic form. Properties equal to their defaults (act_min -128, act_max 127, stride 1, ...)
// are left out.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @family
func.func @family(%x: tensor<1x4x4x2xf32>, %w: tensor<3x2x2x2xi8>, %dw: tensor<1x3x3x2xi8>, %b3: tensor<3xi32>, %b2: tensor<2xi32>, %t: tensor<256xi8>, %fw: tensor<5x18xi8>, %fb: tensor<5xi32>) -> tensor<1x5xf32> {
  // CHECK-NEXT: %0 = adir.quantize %x {scale = 5.000000e-01 : f32, zero_point = -3 : i32} : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xi8>
  %0 = adir.quantize %x {scale = 0.5 : f32, zero_point = -3 : i32} : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xi8>
  // CHECK-NEXT: %1 = adir.qconv2d %0, %w, %b3 {input_zero_point = -3 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824, 1073741824, 2147483647>, shift = array<i32: -1, 0, -31>, act_min = 1 : i32} : tensor<1x4x4x2xi8>, tensor<3x2x2x2xi8>, tensor<3xi32> -> tensor<1x3x3x3xi8>
  %1 = adir.qconv2d %0, %w, %b3 {input_zero_point = -3 : i32, output_zero_point = 1 : i32, multiplier = array<i32: 1073741824, 1073741824, 2147483647>, shift = array<i32: -1, 0, -31>, act_min = 1 : i32} : tensor<1x4x4x2xi8>, tensor<3x2x2x2xi8>, tensor<3xi32> -> tensor<1x3x3x3xi8>
  // CHECK-NEXT: %2 = adir.qconv2d %0, %dw, %b2 {input_zero_point = -3 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>, padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : tensor<1x4x4x2xi8>, tensor<1x3x3x2xi8>, tensor<2xi32> -> tensor<1x4x4x2xi8>
  %2 = adir.qconv2d %0, %dw, %b2 {input_zero_point = -3 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>, padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : tensor<1x4x4x2xi8>, tensor<1x3x3x2xi8>, tensor<2xi32> -> tensor<1x4x4x2xi8>
  // CHECK-NEXT: %3 = adir.qmaxpool2d %2 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<1x4x4x2xi8> -> tensor<1x2x2x2xi8>
  %3 = adir.qmaxpool2d %2 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<1x4x4x2xi8> -> tensor<1x2x2x2xi8>
  // CHECK-NEXT: %4 = adir.qavgpool2d %2 {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x2xi8>
  %4 = adir.qavgpool2d %2 {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x2xi8> -> tensor<1x4x4x2xi8>
  // CHECK-NEXT: %5 = adir.qlookup %1, %t : tensor<1x3x3x3xi8>, tensor<256xi8> -> tensor<1x3x3x3xi8>
  %5 = adir.qlookup %1, %t : tensor<1x3x3x3xi8>, tensor<256xi8> -> tensor<1x3x3x3xi8>
  // CHECK-NEXT: %6 = adir.qtranspose %3 {permutation = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x2xi8>
  %6 = adir.qtranspose %3 {permutation = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x2xi8> -> tensor<1x2x2x2xi8>
  // CHECK-NEXT: %7 = adir.qreshape %5 {shape = array<i64: 1, 27>} : tensor<1x3x3x3xi8> -> tensor<1x27xi8>
  %7 = adir.qreshape %5 {shape = array<i64: 1, 27>} : tensor<1x3x3x3xi8> -> tensor<1x27xi8>
  // CHECK-NEXT: %8 = adir.qreshape %4 {shape = array<i64: 1, 32>} : tensor<1x4x4x2xi8> -> tensor<1x32xi8>
  %8 = adir.qreshape %4 {shape = array<i64: 1, 32>} : tensor<1x4x4x2xi8> -> tensor<1x32xi8>
  // CHECK-NEXT: %9 = adir.qreshape %6 {shape = array<i64: 1, 8>} : tensor<1x2x2x2xi8> -> tensor<1x8xi8>
  %9 = adir.qreshape %6 {shape = array<i64: 1, 8>} : tensor<1x2x2x2xi8> -> tensor<1x8xi8>
  // CHECK-NEXT: %10 = adir.qreshape %9 {shape = array<i64: 1, 8>} : tensor<1x8xi8>
  %10 = adir.qreshape %9 {shape = array<i64: 1, 8>} : tensor<1x8xi8>
  // CHECK-NEXT: %c = adir.constant dense<1> : tensor<1x18xi8>
  %c = adir.constant dense<1> : tensor<1x18xi8>
  // CHECK-NEXT: %11 = adir.qfully_connected %c, %fw, %fb {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 0>, shift = array<i32: 0>} : tensor<1x18xi8>, tensor<5x18xi8>, tensor<5xi32> -> tensor<1x5xi8>
  %11 = adir.qfully_connected %c, %fw, %fb {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 0>, shift = array<i32: 0>} : tensor<1x18xi8>, tensor<5x18xi8>, tensor<5xi32> -> tensor<1x5xi8>
  // CHECK-NEXT: %12 = adir.dequantize %11 {scale = 2.500000e-01 : f32, zero_point = 0 : i32} : tensor<1x5xi8> -> tensor<1x5xf32>
  %12 = adir.dequantize %11 {scale = 0.25 : f32, zero_point = 0 : i32} : tensor<1x5xi8> -> tensor<1x5xf32>
  func.return %12 : tensor<1x5xf32>
}

// CHECK-LABEL: func.func @sum
func.func @sum(%a: tensor<1x4x4x2xi8>, %b: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8> {
  // CHECK-NEXT: %0 = adir.qadd %a, %b {lhs_zero_point = -3 : i32, rhs_zero_point = 5 : i32, output_zero_point = -128 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32, rhs_multiplier = 1431655765 : i32, rhs_shift = -1 : i32, multiplier = 1288490189 : i32, shift = -18 : i32} : tensor<1x4x4x2xi8>
  %0 = adir.qadd %a, %b {lhs_zero_point = -3 : i32, rhs_zero_point = 5 : i32, output_zero_point = -128 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32, rhs_multiplier = 1431655765 : i32, rhs_shift = -1 : i32, multiplier = 1288490189 : i32, shift = -18 : i32, act_min = -128 : i32} : tensor<1x4x4x2xi8>, tensor<1x4x4x2xi8> -> tensor<1x4x4x2xi8>
  func.return %0 : tensor<1x4x4x2xi8>
}

// A 1x1 expansion fused into the depthwise convolution that reads it (fuse-expand-depthwise).
// CHECK-LABEL: func.func @expand_depthwise
func.func @expand_depthwise(%x: tensor<1x5x5x2xi8>, %we: tensor<3x1x1x2xi8>, %be: tensor<3xi32>, %wd: tensor<1x3x3x3xi8>, %bd: tensor<3xi32>) -> tensor<1x3x3x3xi8> {
  // CHECK-NEXT: %0 = adir.qexpand_depthwise %x, %we, %be, %wd, %bd {input_zero_point = -3 : i32, expand_zero_point = -128 : i32, output_zero_point = 4 : i32, expand_multiplier = array<i32: 1073741824, 1073741824, 2147483647>, expand_shift = array<i32: -1, 0, -31>, expand_act_max = 20 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x5x5x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>, tensor<1x3x3x3xi8>, tensor<3xi32> -> tensor<1x3x3x3xi8>
  %0 = adir.qexpand_depthwise %x, %we, %be, %wd, %bd {input_zero_point = -3 : i32, expand_zero_point = -128 : i32, output_zero_point = 4 : i32, expand_multiplier = array<i32: 1073741824, 1073741824, 2147483647>, expand_shift = array<i32: -1, 0, -31>, expand_act_min = -128 : i32, expand_act_max = 20 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x5x5x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>, tensor<1x3x3x3xi8>, tensor<3xi32> -> tensor<1x3x3x3xi8>
  func.return %0 : tensor<1x3x3x3xi8>
}

// A float NCHW image quantized into the int8 convolution that reads it (fuse-quantize-conv).
// CHECK-LABEL: func.func @quantize_conv
func.func @quantize_conv(%x: tensor<1x3x7x7xf32>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>) -> tensor<1x4x4x4xi8> {
  // CHECK-NEXT: %0 = adir.quantize_qconv2d %x, %w, %b {input_scale = 2.500000e-01 : f32, input_zero_point = -3 : i32, output_zero_point = -128 : i32, multiplier = array<i32: 1073741824, 1200000000, 1500000000, 2000000000>, shift = array<i32: -7, -7, -8, -8>, act_max = -20 : i32, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x7x7xf32>, tensor<4x3x3x3xi8>, tensor<4xi32> -> tensor<1x4x4x4xi8>
  %0 = adir.quantize_qconv2d %x, %w, %b {input_scale = 0.25 : f32, input_zero_point = -3 : i32, output_zero_point = -128 : i32, multiplier = array<i32: 1073741824, 1200000000, 1500000000, 2000000000>, shift = array<i32: -7, -7, -8, -8>, act_min = -128 : i32, act_max = -20 : i32, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x7x7xf32>, tensor<4x3x3x3xi8>, tensor<4xi32> -> tensor<1x4x4x4xi8>
  func.return %0 : tensor<1x4x4x4xi8>
}
