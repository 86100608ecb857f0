// An op no registered dialect defines is a located error, exit code 1.
// RUN: not adir-opt %s 2>&1 | filecheck %s

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = adir.frobnicate %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: unknown_op.mlir:5:8: error: unknown op 'adir.frobnicate' (no registered dialect defines it)
// CHECK-NEXT: {{^}}  %0 = adir.frobnicate %a : tensor<2xf32>
// CHECK-NEXT: {{^       \^~{14}$}}
// CHECK-NOT: Traceback
