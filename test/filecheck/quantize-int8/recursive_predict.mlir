// quantize-int8 calibrates @predict in the interpreter: a call cycle would never return (adir
// has no control flow), and was Python's RecursionError, an internal error (exit 2). It is a
// located error at the call that closes the cycle, exit code 1.
// RUN: not adir-opt %s -p quantize-int8 2>&1 | filecheck %s

func.func @predict(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %y = func.call @predict(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
// CHECK: recursive_predict.mlir:7:3: error: recursive call @predict -> @predict: adir has no control flow to end a recursion, so it would never return
// CHECK-NOT: internal error
