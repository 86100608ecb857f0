// The normalization family's VJP rules.
// - batchnorm: one adir.batchnorm_grad, reading the input, gamma and the batch mean and invstd
//   the forward op returned; its three results are the adjoints of the input, gamma and beta.
//   The running statistics' stores stay in the gradient function (one call is one training
//   step's forward and backward), and the running statistics get no adjoint.
// - dropout: adir.dropout_grad with the forward op's seed, p and step (the mask is recomputed,
//   not saved); the step gets no adjoint.
// - batchnorm_eval: a per-channel scale of the adjoint for the input, sums for gamma and beta.
// RUN: adir-opt %s --split-input-file -p 'autodiff{wrt_args=0}' | filecheck %s

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @gamma : tensor<4xf32> = #adir.fill<value = 1.0>
adir.param @beta : tensor<4xf32> = #adir.zeros
adir.param @running_mean : tensor<4xf32> = #adir.zeros {trainable = false}
adir.param @running_var : tensor<4xf32> = #adir.fill<value = 1.0> {trainable = false}

// CHECK-LABEL: func.func @batchnorm_grad(%x: tensor<8x3xf32>, %r: tensor<8x4xf32>) -> (tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x3xf32>) attributes {adir.gradient_of = @batchnorm, adir.gradients = [@w, @gamma, @beta], adir.arg_gradients = array<i64: 0>}
// CHECK:         %h = adir.matmul %x, %w
// CHECK-NEXT:    %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %h, %g, %b, %rm, %rv
// CHECK-NEXT:    adir.store %rm2, @running_mean : tensor<4xf32>
// CHECK-NEXT:    adir.store %rv2, @running_var : tensor<4xf32>
// CHECK:         %y_grad = adir.mul %p_grad, %r : tensor<8x4xf32>
// CHECK-NEXT:    %h_grad, %gamma_grad, %beta_grad = adir.batchnorm_grad %h, %g, %mean, %invstd, %y_grad : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32> -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %x_grad = adir.matmul %h_grad, %w {transpose_b}
// CHECK-NEXT:    %w_grad = adir.matmul %x, %h_grad {transpose_a}
// CHECK-NEXT:    func.return %l, %w_grad, %gamma_grad, %beta_grad, %x_grad : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x3xf32>
func.func @batchnorm(%x: tensor<8x3xf32>, %r: tensor<8x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %g = adir.load @gamma : tensor<4xf32>
  %b = adir.load @beta : tensor<4xf32>
  %rm = adir.load @running_mean : tensor<4xf32>
  %rv = adir.load @running_var : tensor<4xf32>
  %h = adir.matmul %x, %w : tensor<8x3xf32>, tensor<3x4xf32> -> tensor<8x4xf32>
  %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %h, %g, %b, %rm, %rv : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  adir.store %rm2, @running_mean : tensor<4xf32>
  adir.store %rv2, @running_var : tensor<4xf32>
  %p = adir.mul %y, %r : tensor<8x4xf32>
  %l = adir.sum %p : tensor<8x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @w : tensor<3x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

// CHECK-LABEL: func.func @dropout_grad(%x: tensor<8x3xf32>, %step: tensor<i64>) -> (tensor<f32>, tensor<3x4xf32>, tensor<8x3xf32>)
// CHECK:         %d = adir.dropout %h, %step {p = 2.500000e-01 : f32, seed = 42 : i64} : tensor<8x4xf32>, tensor<i64> -> tensor<8x4xf32>
// CHECK:         %d_grad = adir.broadcast_to
// CHECK-NEXT:    %h_grad = adir.dropout_grad %d_grad, %step {p = 2.500000e-01 : f32, seed = 42 : i64} : tensor<8x4xf32>, tensor<i64> -> tensor<8x4xf32>
// CHECK-NEXT:    %x_grad = adir.matmul %h_grad, %w {transpose_b}
// CHECK-NEXT:    %w_grad = adir.matmul %x, %h_grad {transpose_a}
// CHECK-NEXT:    func.return %l, %w_grad, %x_grad : tensor<f32>, tensor<3x4xf32>, tensor<8x3xf32>
func.func @dropout(%x: tensor<8x3xf32>, %step: tensor<i64>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %h = adir.matmul %x, %w : tensor<8x3xf32>, tensor<3x4xf32> -> tensor<8x4xf32>
  %d = adir.dropout %h, %step {p = 0.25 : f32, seed = 42 : i64} : tensor<8x4xf32>, tensor<i64> -> tensor<8x4xf32>
  %l = adir.sum %d : tensor<8x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @gamma : tensor<2xf32> = #adir.fill<value = 1.0>
adir.param @beta : tensor<2xf32> = #adir.zeros
adir.param @running_mean : tensor<2xf32> = #adir.zeros {trainable = false}
adir.param @running_var : tensor<2xf32> = #adir.fill<value = 1.0> {trainable = false}

// dx = dy * gamma / sqrt(running_var + eps), per channel; dgamma = sum(dy * xhat) and
// dbeta = sum(dy) over all but the channel axis. The frozen running statistics get nothing.
// CHECK-LABEL: func.func @batchnorm_eval_grad(%x: tensor<4x2x3x3xf32>) -> (tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>)
// CHECK:         %y_grad = adir.broadcast_to
// CHECK-NEXT:    %[[EPS:[0-9]+]] = adir.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[VE:[0-9]+]] = adir.add %rv, %[[EPS]] : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
// CHECK-NEXT:    %[[SD:[0-9]+]] = adir.sqrt %[[VE]] : tensor<2xf32>
// CHECK-NEXT:    %[[R:[0-9]+]] = adir.div %{{.*}}, %[[SD]] : tensor<f32>, tensor<2xf32> -> tensor<2xf32>
// CHECK-NEXT:    %[[SCALE:[0-9]+]] = adir.mul %g, %[[R]] : tensor<2xf32>
// CHECK-NEXT:    %[[SCALE4:[0-9]+]] = adir.reshape %[[SCALE]] {shape = array<i64: 1, 2, 1, 1>} : tensor<2xf32> -> tensor<1x2x1x1xf32>
// CHECK-NEXT:    %x_grad = adir.mul %y_grad, %[[SCALE4]] : tensor<4x2x3x3xf32>, tensor<1x2x1x1xf32> -> tensor<4x2x3x3xf32>
// CHECK:         %gamma_grad = adir.sum %{{.*}} {axes = array<i64: 0, 2, 3>} : tensor<4x2x3x3xf32> -> tensor<2xf32>
// CHECK-NEXT:    %beta_grad = adir.sum %y_grad {axes = array<i64: 0, 2, 3>} : tensor<4x2x3x3xf32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %l, %gamma_grad, %beta_grad, %x_grad : tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<4x2x3x3xf32>
func.func @batchnorm_eval(%x: tensor<4x2x3x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %g = adir.load @gamma : tensor<2xf32>
  %b = adir.load @beta : tensor<2xf32>
  %rm = adir.load @running_mean : tensor<2xf32>
  %rv = adir.load @running_var : tensor<2xf32>
  %y = adir.batchnorm_eval %x, %g, %b, %rm, %rv : tensor<4x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<4x2x3x3xf32>
  %l = adir.sum %y : tensor<4x2x3x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
