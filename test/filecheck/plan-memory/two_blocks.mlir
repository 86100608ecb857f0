// A function of two blocks is a located error before any pass runs, exit code 1: adir has no
// branch op, and every pass reads a function as its one block (bufferize, plan-memory,
// derive-predict, ... raised an internal error, exit 2). Printing it without passes is fine.
// RUN: not adir-opt %s --plan-memory 2>&1 | filecheck %s
// RUN: adir-opt %s | filecheck %s --check-prefix=PRINT

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = adir.relu %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
^bb1:
  %z = adir.exp %x : tensor<3xf32>
  func.return %z : tensor<3xf32>
}
// CHECK: two_blocks.mlir:11:3: error: @f has 2 blocks; adir's functions are one block (it has no branch ops, so a second block is unreachable)
// CHECK-NEXT: {{^}}  %z = adir.exp %x : tensor<3xf32>
// CHECK-NOT: internal error
// PRINT: ^bb1:
