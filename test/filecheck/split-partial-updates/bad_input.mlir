// What split-partial-updates refuses, each with a located error (exit 1).
// RUN: not adir-opt %s -p split-partial-updates 2>&1 | filecheck %s --check-prefix=USE

// A weight read as something other than a layer's weight: here a matmul without transpose_b,
// whose rhs is laid out [in, out].
adir.param @w : tensor<4x2xf32> = dense<1.0> : tensor<4x2xf32> {update_fraction = 0.5 : f32}
func.func @loss(%x: tensor<1x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x2xf32>
  %y = adir.matmul %x, %w : tensor<1x4xf32>, tensor<4x2xf32> -> tensor<1x2xf32>
  %l = adir.sum %y : tensor<1x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// USE: bad_input.mlir:[[# @LINE - 4]]:3: error: split-partial-updates: @w has a partial update, but adir.matmul reads it as something other than the weight of a conv or linear layer

