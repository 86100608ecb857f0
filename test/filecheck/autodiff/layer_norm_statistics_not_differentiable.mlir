// Only a layer_norm's output is differentiable: a loss that depends on the row statistics it
// returns is an error at the layer_norm, not a wrong gradient.
// RUN: not adir-opt %s -p autodiff 2>&1 | filecheck %s

adir.param @w : tensor<4xf32> = #adir.fill<value = 1.0>

func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4xf32>
  %y, %mean, %rstd = adir.layer_norm %x, %w {normalized_shape = array<i64: 4>} : tensor<2x4xf32>, tensor<4xf32> -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = adir.reshape %rstd {shape = array<i64: 2, 1>} : tensor<2xf32> -> tensor<2x1xf32>
  %s = adir.mul %y, %r : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  %l = adir.sum %s : tensor<2x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// CHECK: layer_norm_statistics_not_differentiable.mlir:9:3: error: autodiff: the loss depends on result #2 of adir.layer_norm; only its output (result #0) is differentiable, not the row statistics
