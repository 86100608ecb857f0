// The verifier rules of adir.qsoftmax, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @not_int8(%x: tensor<4xi32>) {
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<4xi32> -> tensor<4xi8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:5:3: error: adir.qsoftmax: operand input must be i8, got i32

// -----

func.func @multiplier_below_2_30(%x: tensor<4xi8>) {
  %0 = adir.qsoftmax %x {multiplier = 1000 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<4xi8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:13:3: error: adir.qsoftmax: multiplier 1000 is not in [1073741824, 2147483647]

// -----

// A right shift: TFLite's softmax scaling is a multiplier greater than one.
func.func @negative_shift(%x: tensor<4xi8>) {
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = -1 : i32, diff_min = -248 : i32} : tensor<4xi8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:22:3: error: adir.qsoftmax: shift -1 is not in [0, 30]

// -----

func.func @positive_diff_min(%x: tensor<4xi8>) {
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = 1 : i32} : tensor<4xi8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:30:3: error: adir.qsoftmax: diff_min 1 is not in [-2147483648, 0]

// -----

// -255 * 2^24 is below -2^31: the scaled difference would overflow int32.
func.func @scaled_difference_overflows(%x: tensor<4xi8>) {
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 24 : i32, diff_min = -300 : i32} : tensor<4xi8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:39:3: error: adir.qsoftmax: diff_min -300 with shift 24 overflows int32 (diff * 2^shift)

// -----

func.func @rank_0(%x: tensor<i8>) {
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<i8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:47:3: error: adir.qsoftmax: operand input must have rank 1 or more

// -----

// 4096 entries at the maximum sum to 4096 * 2^19 = 2^31 in the int32 accumulator.
func.func @row_too_long(%x: tensor<1x4096xi8>) {
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<1x4096xi8>
  func.return
}
// CHECK: qsoftmax_invalid.mlir:56:3: error: adir.qsoftmax: rows of 4096 entries exceed 4095 (the int32 sum of exps, 12 integer bits, would overflow)
