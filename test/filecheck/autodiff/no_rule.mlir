// An op without a VJP rule on the path from a parameter to the loss is a located error.
// RUN: not adir-opt %s -p autodiff 2>&1 | filecheck %s

adir.param @w : tensor<4xf32> = #adir.zeros

func.func @loss() -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4xf32>
  %y = "test.op"(%w) : (tensor<4xf32>) -> tensor<4xf32>
  %l = adir.sum %y : tensor<4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// CHECK: no_rule.mlir:8:3: error: autodiff: test.op has no VJP rule, so it cannot be differentiated
// CHECK-NEXT: {{^}}  %y = "test.op"(%w) : (tensor<4xf32>) -> tensor<4xf32>
