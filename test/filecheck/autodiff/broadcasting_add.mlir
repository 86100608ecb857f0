// A bias broadcast over the batch in the forward pass is summed over the batch in the backward.
// RUN: adir-opt %s -p autodiff | filecheck %s

adir.param @b : tensor<3xf32> = #adir.zeros

func.func @loss(%h: tensor<5x3xf32>, %r: tensor<5x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %b = adir.load @b : tensor<3xf32>
  %y = adir.add %h, %b : tensor<5x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
  %p = adir.mul %y, %r : tensor<5x3xf32>
  %l = adir.sum %p : tensor<5x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad
// CHECK:         %y_grad = adir.mul %p_grad, %r : tensor<5x3xf32>
// CHECK-NEXT:    %b_grad = adir.sum %y_grad {axes = array<i64: 0>} : tensor<5x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    func.return %l, %b_grad : tensor<f32>, tensor<3xf32>
