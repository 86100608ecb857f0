// The backward of a linear layer on a batch of sequences, y = x @ w^T with x [B, M, K] and one
// 2-D w [N, K] shared by the batch: dW contracts over the batch and the rows at once, as one 2-D
// matmul of the rows stacked ([B * M, N]^T @ [B * M, K]), not a [B, N, K] batch of products
// summed over B (B times the weight's size). dx is a batched matmul with the shared weight.
// RUN: adir-opt %s -p 'autodiff{wrt_args=0}' | filecheck %s

adir.param @w : tensor<4x3xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 1>

func.func @loss(%x: tensor<5x2x3xf32>, %r: tensor<5x2x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<4x3xf32>
  %y = adir.matmul %x, %w {transpose_b} : tensor<5x2x3xf32>, tensor<4x3xf32> -> tensor<5x2x4xf32>
  %p = adir.mul %y, %r : tensor<5x2x4xf32>
  %l = adir.sum %p : tensor<5x2x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad
// CHECK:         %y_grad = adir.mul %p_grad, %r : tensor<5x2x4xf32>
// CHECK-NEXT:    %x_grad = adir.matmul %y_grad, %w : tensor<5x2x4xf32>, tensor<4x3xf32> -> tensor<5x2x3xf32>
// CHECK-NEXT:    %[[XROWS:.*]] = adir.reshape %x {shape = array<i64: 10, 3>} : tensor<5x2x3xf32> -> tensor<10x3xf32>
// CHECK-NEXT:    %[[DYROWS:.*]] = adir.reshape %y_grad {shape = array<i64: 10, 4>} : tensor<5x2x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT:    %w_grad = adir.matmul %[[DYROWS]], %[[XROWS]] {transpose_a} : tensor<10x4xf32>, tensor<10x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %l, %w_grad, %x_grad
