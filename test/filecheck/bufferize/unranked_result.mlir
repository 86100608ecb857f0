// An unranked result (`*`) reaching bufferize is a located error at its op, exit code 1; it
// was an internal error (exit 2).
// RUN: not adir-opt %s -p bufferize 2>&1 | filecheck %s

func.func @f(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %y = adir.sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<*xf32>
  func.return %y : tensor<*xf32>
}
// CHECK: unranked_result.mlir:6:3: error: bufferize: adir.sum result #0 is tensor<*xf32>: static shapes only (run infer-shapes)
// CHECK-NEXT: {{^}}  %y = adir.sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<*xf32>
// CHECK-NOT: internal error
