// Shortcut flags expand to the canonical pipeline whatever their order; a shortcut whose pass
// does not exist yet is a clear error, not a traceback.
// RUN: adir-opt %s --infer-shapes | filecheck %s
// RUN: not adir-opt --autodiff --plan-memory %s 2>&1 | filecheck %s --check-prefix=LATER
// RUN: not adir-opt --plan-memory --autodiff %s 2>&1 | filecheck %s --check-prefix=LATER

// CHECK: func.func @f(%a: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %0 = adir.exp %a : tensor<4xf32>
func.func @f(%a: tensor<4xf32>) -> tensor<*xf32> {
  %0 = adir.exp %a : tensor<4xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}
// LATER: adir-opt: error: --plan-memory: the 'bufferize' pass is not implemented yet
