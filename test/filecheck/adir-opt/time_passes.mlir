// `--time-passes` prints one row per stage on stderr, in the order they ran, and leaves stdout
// to the IR. The verifier checks the input and the result (2 runs); with `--verify-each` also
// after each of the 9 passes but the last (10 runs).
// RUN: adir-opt --autodiff --plan-memory --time-passes %s 2>&1 >/dev/null | filecheck %s
// RUN: adir-opt --autodiff --plan-memory --time-passes --verify-each %s 2>&1 >/dev/null | filecheck %s --check-prefix=EACH
// RUN: adir-opt --autodiff --plan-memory --time-passes %s 2>/dev/null | filecheck %s --check-prefix=IR

adir.param @w : tensor<4xf32> = #adir.normal<seed = 3>

func.func @loss(%x: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4xf32>
  %y = adir.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = adir.sum %y : tensor<4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK: adir-opt execution time report
// CHECK: Total: {{[0-9.]+}} s wall, {{[0-9.]+}} s CPU
// CHECK-NEXT: wall s % CPU s runs stage
// CHECK-NEXT: 1 parse
// CHECK-NEXT: 2 verify
// CHECK-NEXT: 1 infer-shapes
// CHECK-NEXT: 1 freeze-batchnorm
// CHECK-NEXT: 1 autodiff
// CHECK-NEXT: 1 fuse-weight-updates
// CHECK-NEXT: 1 reorder-updates
// CHECK-NEXT: 1 fuse-batchnorm-relu
// CHECK-NEXT: 1 bufferize
// CHECK-NEXT: 1 select-kernels
// CHECK-NEXT: 1 plan-memory
// CHECK-NEXT: 1 output (-t mlir)
// CHECK-NOT: {{.}}

// EACH: 10 verify

// IR: func.func @loss_grad
// IR-NOT: execution time report
