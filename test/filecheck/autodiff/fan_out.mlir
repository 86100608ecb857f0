// A value used twice gets the sum of both adjoints: d/dw sum(w * w + exp(w)).
// RUN: adir-opt %s -p autodiff | filecheck %s

adir.param @w : tensor<3xf32> = #adir.normal<seed = 4>

func.func @loss() -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3xf32>
  %sq = adir.mul %w, %w : tensor<3xf32>
  %e = adir.exp %w : tensor<3xf32>
  %s = adir.add %sq, %e : tensor<3xf32>
  %l = adir.sum %s : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad() -> (tensor<f32>, tensor<3xf32>)
// The sweep meets exp first (adjoint dS * e), then the two uses in w * w, each added on.
// CHECK:         %s_grad = adir.broadcast_to %{{[0-9]+}} {shape = array<i64: 3>} : tensor<1xf32> -> tensor<3xf32>
// CHECK-NEXT:    %w_grad = adir.mul %s_grad, %e : tensor<3xf32>
// CHECK-NEXT:    %[[D1:[0-9]+]] = adir.mul %s_grad, %w : tensor<3xf32>
// CHECK-NEXT:    %[[D2:[0-9]+]] = adir.mul %s_grad, %w : tensor<3xf32>
// CHECK-NEXT:    %w_grad_1 = adir.add %w_grad, %[[D1]] : tensor<3xf32>
// CHECK-NEXT:    %w_grad_2 = adir.add %w_grad_1, %[[D2]] : tensor<3xf32>
// CHECK-NEXT:    func.return %l, %w_grad_2 : tensor<f32>, tensor<3xf32>
