// autodiff alone does not split a partial update: a located error saying which pass does.
// RUN: not adir-opt %s -p autodiff 2>&1 | filecheck %s

adir.param @w : tensor<2x2xf32> = dense<1.0> : tensor<2x2xf32> {update_channels = 1 : i64}
func.func @loss(%x: tensor<1x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<2x2xf32>
  %y = adir.matmul %x, %w {transpose_b} : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  %l = adir.sum %y : tensor<1x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// CHECK: partial_update_needs_split.mlir:4:1: error: autodiff: @w trains part of its channels; run split-partial-updates before autodiff (the --autodiff shortcut does)
