// A contradiction that only shows once infer-shapes knows a shape is an error at that op.
// RUN: not adir-opt %s -p infer-shapes 2>&1 | filecheck %s

// The mismatch is only visible once %0's shape is known.
func.func @late_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  %0 = adir.exp %a : tensor<2x3xf32> -> tensor<*xf32>
  %1 = adir.add %0, %b : tensor<*xf32>, tensor<4xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// CHECK: mismatch_found_late.mlir:7:3: error: adir.add: operands lhs (2x3) and rhs (4) do not broadcast: dimensions 3 and 4 differ
