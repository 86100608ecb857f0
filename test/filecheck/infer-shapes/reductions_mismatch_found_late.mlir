// A reduction whose axes only turn out to be wrong once infer-shapes knows the input's rank or
// dims is an error at the reduction, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics -p infer-shapes | filecheck %s

// %0 has rank 2 once inferred, so axis 2 does not exist.
func.func @axis_out_of_range(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = adir.exp %a : tensor<2x3xf32> -> tensor<*xf32>
  %1 = adir.sum %0 {axes = array<i64: 2>} : tensor<*xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// CHECK: reductions_mismatch_found_late.mlir:8:3: error: adir.sum: axis 2 is out of range for rank 2

// -----

// -1 and 1 name the same axis once the rank is known to be 2.
func.func @repeated_axis(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = adir.exp %a : tensor<2x3xf32> -> tensor<*xf32>
  %1 = adir.mean %0 {axes = array<i64: -1, 1>} : tensor<*xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// CHECK: reductions_mismatch_found_late.mlir:18:3: error: adir.mean: axes [-1, 1] name axis 1 twice

// -----

// %0 is 2x0 once inferred: the max of its last axis is a max of no elements.
func.func @max_of_nothing(%a: tensor<2x0xf32>) -> tensor<*xf32> {
  %0 = adir.exp %a : tensor<2x0xf32> -> tensor<*xf32>
  %1 = adir.max %0 {axes = array<i64: -1>} : tensor<*xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// CHECK: reductions_mismatch_found_late.mlir:28:3: error: adir.max: axis 1 has size 0, and the max of no elements is undefined
