// RUN: not adir-opt %s -p split-partial-updates 2>&1 | filecheck %s
// A seeded initializer has no block of its own.
adir.param @w : tensor<4x2xf32> = #adir.kaiming_uniform<seed = 3> {update_fraction = 0.5 : f32}
func.func @loss(%x: tensor<1x2xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x2xf32>
  %y = adir.matmul %x, %w {transpose_b} : tensor<1x2xf32>, tensor<4x2xf32> -> tensor<1x4xf32>
  %l = adir.sum %y : tensor<1x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// CHECK: seeded_initializer.mlir:3:1: error: split-partial-updates: @w is drawn from the seeded initializer adir.kaiming_uniform, which gives no block of its own
