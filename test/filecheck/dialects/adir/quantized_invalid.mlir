// The verifier rules of the quantized family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @scale_not_positive(%x: tensor<4xf32>) {
  %0 = adir.quantize %x {scale = 0.0 : f32, zero_point = 0 : i32} : tensor<4xf32> -> tensor<4xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:5:3: error: adir.quantize: scale must be positive and finite, got 0.0

// -----

func.func @zero_point_out_of_range(%x: tensor<4xi8>) {
  %0 = adir.dequantize %x {scale = 1.0 : f32, zero_point = 128 : i32} : tensor<4xi8> -> tensor<4xf32>
  func.return
}
// CHECK: quantized_invalid.mlir:13:3: error: adir.dequantize: zero_point 128 is not in [-128, 127]

// -----

func.func @fc_not_int8(%x: tensor<1x4xi32>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) {
  %0 = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<1x4xi32>, tensor<2x4xi8>, tensor<2xi32> -> tensor<1x2xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:21:3: error: adir.qfully_connected: operand input must be i8, got i32

// -----

func.func @fc_features(%x: tensor<1x5xi8>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) {
  %0 = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<1x5xi8>, tensor<2x4xi8>, tensor<2xi32> -> tensor<1x2xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:29:3: error: adir.qfully_connected: input has 5 features but weight rows have 4

// -----

func.func @multiplier_range(%x: tensor<1x4xi8>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) {
  %0 = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 5>, shift = array<i32: 0>} : tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32> -> tensor<1x2xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:37:3: error: adir.qfully_connected: multiplier 5 is not 0 or in [2^30, 2^31 - 1]

// -----

func.func @multiplier_count(%x: tensor<1x4xi8>, %w: tensor<3x4xi8>, %b: tensor<3xi32>) {
  %0 = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 0, 0>} : tensor<1x4xi8>, tensor<3x4xi8>, tensor<3xi32> -> tensor<1x3xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:45:3: error: adir.qfully_connected: 2 multipliers for 3 output channels (one per channel, or one for all)

// -----

func.func @bias_entries(%x: tensor<1x4xi8>, %w: tensor<3x4xi8>, %b: tensor<2xi32>) {
  %0 = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<1x4xi8>, tensor<3x4xi8>, tensor<2xi32> -> tensor<1x3xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:53:3: error: adir.qfully_connected: operand bias has 2 entries for 3 output channels

// -----

func.func @act_range(%x: tensor<1x4xi8>, %w: tensor<2x4xi8>, %b: tensor<2xi32>) {
  %0 = adir.qfully_connected %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>, act_min = 10 : i32, act_max = 5 : i32} : tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32> -> tensor<1x2xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:61:3: error: adir.qfully_connected: act_min 10 exceeds act_max 5

// -----

func.func @conv_channels(%x: tensor<1x4x4x3xi8>, %w: tensor<2x1x1x2xi8>, %b: tensor<2xi32>) {
  %0 = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<1x4x4x3xi8>, tensor<2x1x1x2xi8>, tensor<2xi32> -> tensor<1x4x4x2xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:69:3: error: adir.qconv2d: input channels 3 and weight channels 2 do not match

// -----

func.func @depthwise_groups(%x: tensor<1x4x4x3xi8>, %w: tensor<1x1x1x6xi8>, %b: tensor<6xi32>) {
  %0 = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: 0>, groups = 2 : i64} : tensor<1x4x4x3xi8>, tensor<1x1x1x6xi8>, tensor<6xi32> -> tensor<1x4x4x6xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:77:3: error: adir.qconv2d: groups 2 must be 1 or the input channels 3 (depthwise)

// -----

func.func @pool_padding(%x: tensor<1x4x4x3xi8>) {
  %0 = adir.qmaxpool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>} : tensor<1x4x4x3xi8> -> tensor<1x3x2x3xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:85:3: error: adir.qmaxpool2d: padding 2 leaves a window with no input (kernel (2, 2))

// -----

func.func @lookup_table(%x: tensor<4xi8>, %t: tensor<255xi8>) {
  %0 = adir.qlookup %x, %t : tensor<4xi8>, tensor<255xi8> -> tensor<4xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:93:3: error: adir.qlookup: table must be tensor<256xi8>, got 255

// -----

func.func @reshape_count(%x: tensor<2x3xi8>) {
  %0 = adir.qreshape %x {shape = array<i64: 5>} : tensor<2x3xi8> -> tensor<5xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:101:3: error: adir.qreshape: cannot reshape 2x3 to 5

// -----

func.func @qadd_shapes_differ(%a: tensor<4xi8>, %b: tensor<2x2xi8>) {
  %0 = adir.qadd %a, %b {lhs_zero_point = 0 : i32, rhs_zero_point = 0 : i32, output_zero_point = 0 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32, rhs_multiplier = 1073741824 : i32, rhs_shift = 0 : i32, multiplier = 1073741824 : i32, shift = -19 : i32} : tensor<4xi8>, tensor<2x2xi8> -> tensor<4xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:109:3: error: adir.qadd: operands of shapes 4 and 2x2 differ (no broadcasting)

// -----

func.func @qadd_multiplier_above_one(%a: tensor<4xi8>, %b: tensor<4xi8>) {
  %0 = adir.qadd %a, %b {lhs_zero_point = 0 : i32, rhs_zero_point = 0 : i32, output_zero_point = 0 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32, rhs_multiplier = 1073741824 : i32, rhs_shift = 0 : i32, multiplier = 1073741824 : i32, shift = 2 : i32} : tensor<4xi8>, tensor<4xi8> -> tensor<4xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:117:3: error: adir.qadd: shift 2 is not in [-31, 0]

// -----

func.func @expand_not_1x1(%x: tensor<1x5x5x2xi8>, %we: tensor<3x3x3x2xi8>, %be: tensor<3xi32>, %wd: tensor<1x3x3x3xi8>, %bd: tensor<3xi32>) {
  %0 = adir.qexpand_depthwise %x, %we, %be, %wd, %bd {input_zero_point = 0 : i32, expand_zero_point = 0 : i32, output_zero_point = 0 : i32, expand_multiplier = array<i32: 1073741824>, expand_shift = array<i32: -1>, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x5x5x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>, tensor<1x3x3x3xi8>, tensor<3xi32> -> tensor<1x3x3x3xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:125:3: error: adir.qexpand_depthwise: the expansion is a 1x1 convolution [E, 1, 1, C], got 3x3x3x2

// -----

func.func @expand_depthwise_channels_differ(%x: tensor<1x5x5x2xi8>, %we: tensor<3x1x1x2xi8>, %be: tensor<3xi32>, %wd: tensor<1x3x3x6xi8>, %bd: tensor<3xi32>) {
  %0 = adir.qexpand_depthwise %x, %we, %be, %wd, %bd {input_zero_point = 0 : i32, expand_zero_point = 0 : i32, output_zero_point = 0 : i32, expand_multiplier = array<i32: 1073741824>, expand_shift = array<i32: -1>, multiplier = array<i32: 1073741824>, shift = array<i32: -1>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x5x5x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>, tensor<1x3x3x6xi8>, tensor<3xi32> -> tensor<1x3x3x3xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:133:3: error: adir.qexpand_depthwise: 3 expanded channels but the depthwise weight has 6 (channel multiplier 1)

// -----

func.func @quantize_conv_channels_differ(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x2xi8>, %b: tensor<4xi32>) {
  %0 = adir.quantize_qconv2d %x, %w, %b {input_scale = 0.5 : f32, input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x3x5x5xf32>, tensor<4x3x3x2xi8>, tensor<4xi32> -> tensor<1x3x3x4xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:141:3: error: adir.quantize_qconv2d: input channels 3 (NCHW) and weight channels 2 (OHWI) do not match

// -----

func.func @quantize_conv_scale_zero(%x: tensor<1x2x5x5xf32>, %w: tensor<4x3x3x2xi8>, %b: tensor<4xi32>) {
  %0 = adir.quantize_qconv2d %x, %w, %b {input_scale = 0.0 : f32, input_zero_point = 0 : i32, output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x2x5x5xf32>, tensor<4x3x3x2xi8>, tensor<4xi32> -> tensor<1x3x3x4xi8>
  func.return
}
// CHECK: quantized_invalid.mlir:149:3: error: adir.quantize_qconv2d: input_scale must be positive and finite, got 0.0
