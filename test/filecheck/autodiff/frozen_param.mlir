// A frozen parameter ({trainable = false}) gets no gradient and no gradient ops; data inputs
// get none either. Only @w is differentiated.
// RUN: adir-opt %s -p autodiff | filecheck %s

adir.param @w : tensor<3xf32> = #adir.normal<seed = 1>
adir.param @scale : tensor<3xf32> = #adir.fill<value = 2.0> {trainable = false}

func.func @loss(%x: tensor<3xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3xf32>
  %s = adir.load @scale : tensor<3xf32>
  %xs = adir.mul %x, %s : tensor<3xf32>
  %y = adir.mul %xs, %w : tensor<3xf32>
  %l = adir.sum %y : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) attributes {adir.gradient_of = @loss, adir.gradients = [@w]}
// CHECK:         %y_grad = adir.broadcast_to
// CHECK-NEXT:    %w_grad = adir.mul %y_grad, %xs : tensor<3xf32>
// CHECK-NEXT:    func.return %l, %w_grad : tensor<f32>, tensor<3xf32>
