// The backward of y = x @ w^T (a linear layer with weights [out, in]): dW = dy^T @ x through
// the transpose_a flag, no transpose materialised, and no op for the input's gradient.
// RUN: adir-opt %s -p autodiff | filecheck %s

adir.param @w : tensor<4x3xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 1>

func.func @loss(%x: tensor<2x3xf32>, %r: tensor<2x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x3xf32>
  %y = adir.matmul %x, %w {transpose_b} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %p = adir.mul %y, %r : tensor<2x4xf32>
  %l = adir.sum %p : tensor<2x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad(%x: tensor<2x3xf32>, %r: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>) attributes {adir.gradient_of = @loss, adir.gradients = [@w]} {
// CHECK-NEXT:    %w = adir.load @w : tensor<4x3xf32>
// CHECK-NEXT:    %y = adir.matmul %x, %w {transpose_b} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %p = adir.mul %y, %r : tensor<2x4xf32>
// CHECK-NEXT:    %l = adir.sum %p : tensor<2x4xf32> -> tensor<f32>
// CHECK-NEXT:    %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONES:[0-9]+]] = adir.reshape %[[ONE]] {shape = array<i64: 1, 1>} : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %p_grad = adir.broadcast_to %[[ONES]] {shape = array<i64: 2, 4>} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %y_grad = adir.mul %p_grad, %r : tensor<2x4xf32>
// CHECK-NEXT:    %w_grad = adir.matmul %y_grad, %x {transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %l, %w_grad : tensor<f32>, tensor<4x3xf32>
// CHECK-NEXT:  }
