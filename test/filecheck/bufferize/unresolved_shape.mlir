// A `?` dimension left for bufferize (no infer-shapes could resolve it) is a located error with
// exit code 1; it was an internal error (exit 2) from inside the pass.
// RUN: not adir-opt %s -p bufferize 2>&1 | filecheck %s

func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = adir.relu %x : tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
// CHECK: unresolved_shape.mlir:5:1: error: bufferize: argument #0 of @f is tensor<?x3xf32>: static shapes only (run infer-shapes)
// CHECK-NOT: internal error
