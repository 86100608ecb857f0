// A softmax axis that only turns out to be out of range once infer-shapes knows the operand's
// rank is an error at the softmax, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics -p infer-shapes | filecheck %s

// %0 has rank 1 once inferred (a sum over axis 1 of a 2x3 tensor), so axis 1 does not exist.
func.func @softmax_axis(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = adir.sum %a {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<*xf32>
  %1 = adir.softmax %0 {axis = 1 : i64} : tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// CHECK: activations_mismatch_found_late.mlir:8:3: error: adir.softmax: axis 1 is out of range for rank 1

// -----

// %0 is a scalar once inferred (a sum over all axes): it has no axis -1.
func.func @log_softmax_of_scalar(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = adir.sum %a : tensor<2x3xf32> -> tensor<*xf32>
  %1 = adir.log_softmax %0 : tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// CHECK: activations_mismatch_found_late.mlir:18:3: error: adir.log_softmax: axis -1 is out of range for rank 0
