// Only a batchnorm's output is differentiable: a loss that depends on the batch statistics
// (or the running ones) it returns is an error at the batchnorm, not a wrong gradient.
// RUN: not adir-opt %s -p autodiff 2>&1 | filecheck %s

adir.param @gamma : tensor<4xf32> = #adir.fill<value = 1.0>
adir.param @beta : tensor<4xf32> = #adir.zeros

func.func @loss(%x: tensor<8x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %g = adir.load @gamma : tensor<4xf32>
  %b = adir.load @beta : tensor<4xf32>
  %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %x, %g, %b, %rm, %rv : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %s = adir.mul %y, %invstd : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %l = adir.sum %s : tensor<8x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
// CHECK: batchnorm_statistics_not_differentiable.mlir:11:3: error: autodiff: the loss depends on result #2 of adir.batchnorm; only its output (result #0) is differentiable, not the batch or running statistics
