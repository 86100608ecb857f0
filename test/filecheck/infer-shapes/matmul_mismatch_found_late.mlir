// A matmul whose inner dimensions only turn out to differ once infer-shapes knows the shape of
// an operand is an error at the matmul.
// RUN: not adir-opt %s -p infer-shapes 2>&1 | filecheck %s

// %t is 784x1 once inferred, and transpose_b reads it as 1x784: the contraction dims are 784
// (of %x) and 1. The transpose and the flag each undo the other.
func.func @late_mismatch(%x: tensor<8x784xf32>, %w: tensor<1x784xf32>) -> tensor<*xf32> {
  %t = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<1x784xf32> -> tensor<*xf32>
  %y = adir.matmul %x, %t {transpose_b} : tensor<8x784xf32>, tensor<*xf32> -> tensor<*xf32>
  func.return %y : tensor<*xf32>
}
// CHECK: matmul_mismatch_found_late.mlir:9:3: error: adir.matmul: inner dimensions 784 and 1 do not match
