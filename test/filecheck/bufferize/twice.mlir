// bufferize runs once: a second run, on buffers, is a located error with exit code 1 (it was
// an internal error, exit 2). So is bufferize on a function bufferized by an earlier run.
// RUN: not adir-opt %s -p bufferize,bufferize 2>&1 | filecheck %s --check-prefix=ARGS
// RUN: adir-opt %s -p bufferize | sed 's/@f(/@g(/' > %t.mlir
// RUN: not adir-opt %t.mlir -p bufferize 2>&1 | filecheck %s --check-prefix=ARGS-G

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = adir.relu %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
// ARGS: twice.mlir:7:1: error: bufferize: @f takes buffers already (argument #0 is memref<3xf32>); bufferize runs once, on tensors
// ARGS-NOT: internal error
// ARGS-G: error: bufferize: @g takes buffers already (argument #0 is memref<3xf32>)
