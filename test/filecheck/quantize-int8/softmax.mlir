// quantize-int8 turns an f32 softmax over the last axis of an int8 value into adir.qsoftmax
// (beta 1, TFLite's fixed output quantization: scale 1/256 = 3.90625e-03, zero point -128); a
// softmax over another axis, or of a value that stays f32, stays f32. Calibration: 4
// standard-normal inputs, seed 0.
// RUN: adir-opt %s -p 'quantize-int8{samples=4}' | filecheck %s

adir.param @w : tensor<10x6xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>

func.func @predict(%x: tensor<2x6xf32>) -> (tensor<2x10xf32>, tensor<2x10xf32>, tensor<2x6xf32>, tensor<2x10xf32>) {
  %w = adir.load @w : tensor<10x6xf32>
  %h = adir.matmul %x, %w {transpose_b} : tensor<2x6xf32>, tensor<10x6xf32> -> tensor<2x10xf32>
  %s = adir.softmax %h : tensor<2x10xf32>
  %c = adir.softmax %h {axis = 0 : i64} : tensor<2x10xf32>
  %f = adir.softmax %x {axis = 1 : i64} : tensor<2x6xf32>
  %g = adir.softmax %c : tensor<2x10xf32>
  func.return %s, %c, %f, %g : tensor<2x10xf32>, tensor<2x10xf32>, tensor<2x6xf32>, tensor<2x10xf32>
}

// CHECK-LABEL: func.func @predict_int8(
// CHECK:         %x_1 = adir.quantize %x {scale = 0.0168050565 : f32, zero_point = 10 : i32}
// CHECK:         %h = adir.qfully_connected {{.*}} -> tensor<2x10xi8>
// %h's scale 8.23767e-03 times 2^26 is 552818.1 = 0.52722 * 2^20: multiplier
// round(0.52722 * 2^31) = 1132176768 and shift 20; diff_min = -floor(31 * 2^26 / 2^20) = -1984.
// CHECK-NEXT:    %s = adir.qsoftmax %h {multiplier = 1132176768 : i32, shift = 20 : i32, diff_min = -1984 : i32} : tensor<2x10xi8>
// CHECK-NEXT:    %h_1 = adir.dequantize %h {scale = 8.237670e-03 : f32, zero_point = 5 : i32} : tensor<2x10xi8> -> tensor<2x10xf32>
// CHECK-NEXT:    %c = adir.softmax %h_1 {axis = 0 : i64} : tensor<2x10xf32>
// The input is int8 here already (the matmul quantized it): 0.0168 * 2^26 = 0.5378 * 2^21.
// CHECK-NEXT:    %f = adir.qsoftmax %x_1 {multiplier = 1154834688 : i32, shift = 21 : i32, diff_min = -992 : i32} : tensor<2x6xi8>
// CHECK-NEXT:    %g = adir.softmax %c : tensor<2x10xf32>
// CHECK-NEXT:    %s_1 = adir.dequantize %s {scale = 3.906250e-03 : f32, zero_point = -128 : i32} : tensor<2x10xi8> -> tensor<2x10xf32>
// CHECK-NEXT:    %f_1 = adir.dequantize %f {scale = 3.906250e-03 : f32, zero_point = -128 : i32} : tensor<2x6xi8> -> tensor<2x6xf32>
// CHECK-NEXT:    func.return %s_1, %c, %f_1, %g
