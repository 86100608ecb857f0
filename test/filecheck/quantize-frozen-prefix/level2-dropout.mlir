// quantize-frozen-prefix{level=2} on level2.mlir's small CNN with a training-mode dropout
// before its trainable classifier: the classifier's input is no fixed function of the model's
// input (the mask changes with %step), so level 2 cannot calibrate and quantize it; the error
// is at the classifier and names the dropout, the cause, and the way out (an eval-mode import).
// RUN: not adir-opt %s -p 'infer-shapes,quantize-frozen-prefix{level=2 samples=4}' 2>&1 | filecheck %s
// CHECK: level2-dropout.mlir:[[# @LINE + 27]]:3: error: quantize-frozen-prefix{level=2}: the trainable parameter @fc_w is read by an op whose input depends on more than the model's input and the parameters (through adir.dropout %dropped); level 2 quantizes a fixed function of the input: import the model in eval mode (adir-import --eval: dropout off, batch norms on running statistics)
// CHECK-NEXT: %mm = adir.matmul %dropped, %fc_w {transpose_b}

adir.param @conv_w : tensor<2x1x3x3xf32> = dense<[[[[0.5, -0.25, 0.125], [1.0, 0.0, -1.0], [0.25, 0.5, -0.5]]], [[[-0.75, 0.25, 0.0], [0.5, 0.5, 0.5], [-0.125, 1.0, 0.25]]]]> : tensor<2x1x3x3xf32> {trainable = false}
adir.param @conv_b : tensor<2xf32> = dense<[0.1, -0.2]> : tensor<2xf32> {trainable = false}
adir.param @bn_gamma : tensor<2xf32> = dense<[1.0, 0.5]> : tensor<2xf32> {trainable = false}
adir.param @bn_beta : tensor<2xf32> = dense<[0.1, -0.1]> : tensor<2xf32> {trainable = false}
adir.param @bn_mean : tensor<2xf32> = dense<[0.0, 0.2]> : tensor<2xf32> {trainable = false}
adir.param @bn_var : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32> {trainable = false}
adir.param @fc_w : tensor<3x8xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
adir.param @fc_b : tensor<3xf32> = #adir.uniform<low = -0.1, high = 0.1, seed = 4>

func.func @loss(%x: tensor<1x1x6x6xf32>, %label: tensor<1xi32>, %step: tensor<i64>) -> tensor<f32> attributes {adir.loss} {
  %conv_w = adir.load @conv_w : tensor<2x1x3x3xf32>
  %conv_b = adir.load @conv_b : tensor<2xf32>
  %c = adir.conv2d %x, %conv_w, %conv_b : tensor<1x1x6x6xf32>, tensor<2x1x3x3xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %g = adir.load @bn_gamma : tensor<2xf32>
  %b = adir.load @bn_beta : tensor<2xf32>
  %m = adir.load @bn_mean : tensor<2xf32>
  %v = adir.load @bn_var : tensor<2xf32>
  %n = adir.batchnorm_eval %c, %g, %b, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %a = adir.relu %n : tensor<1x2x4x4xf32>
  %p = adir.maxpool2d %a {kernel_size = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %flat = adir.reshape %p {shape = array<i64: 1, 8>} : tensor<1x2x2x2xf32> -> tensor<1x8xf32>
  %dropped = adir.dropout %flat, %step {seed = 7 : i64} : tensor<1x8xf32>, tensor<i64> -> tensor<1x8xf32>
  %fc_w = adir.load @fc_w : tensor<3x8xf32>
  %fc_b = adir.load @fc_b : tensor<3xf32>
  %mm = adir.matmul %dropped, %fc_w {transpose_b} : tensor<1x8xf32>, tensor<3x8xf32> -> tensor<1x3xf32>
  %h = adir.add %mm, %fc_b : tensor<1x3xf32>, tensor<3xf32> -> tensor<1x3xf32>
  %logp = adir.log_softmax %h : tensor<1x3xf32>
  %loss = adir.nll %logp, %label : tensor<1x3xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}
