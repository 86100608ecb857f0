// nll(log_softmax(z)) is cross_entropy(z), so its backward is one adir.cross_entropy_grad on
// the logits (softmax - onehot): no nll_grad, and no log_softmax backward. A log_softmax whose
// result has another use keeps the unfused backward, nll_grad then log_softmax_grad.
// RUN: adir-opt %s --split-input-file -p autodiff | filecheck %s

adir.param @w : tensor<10x4xf32> = #adir.normal<seed = 1>

func.func @loss(%x: tensor<8x4xf32>, %labels: tensor<8xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<10x4xf32>
  %z = adir.matmul %x, %w {transpose_b} : tensor<8x4xf32>, tensor<10x4xf32> -> tensor<8x10xf32>
  %logp = adir.log_softmax %z : tensor<8x10xf32>
  %l = adir.nll %logp, %labels : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss_grad
// CHECK:         %l = adir.nll %logp, %labels : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
// CHECK-NEXT:    %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %z_grad = adir.cross_entropy_grad %z, %labels, %[[ONE]] : tensor<8x10xf32>, tensor<8xi32>, tensor<f32> -> tensor<8x10xf32>
// CHECK-NEXT:    %w_grad = adir.matmul %z_grad, %x {transpose_a} : tensor<8x10xf32>, tensor<8x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT:    func.return %l, %w_grad : tensor<f32>, tensor<10x4xf32>
// (CHECK-NEXT pins every backward op; nothing else follows in the function.)
// CHECK-NOT:     adir.nll_grad
// CHECK-NOT:     adir.log_softmax_grad

// -----

// Class probabilities, one unbatched sample, summed: the same fused backward.

adir.param @z : tensor<10xf32> = #adir.normal<seed = 2>

func.func @soft(%p: tensor<10xf32>) -> tensor<f32> attributes {adir.loss} {
  %z = adir.load @z : tensor<10xf32>
  %logp = adir.log_softmax %z : tensor<10xf32>
  %l = adir.nll %logp, %p {reduction = "sum"} : tensor<10xf32>, tensor<10xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @soft_grad
// CHECK:         %l = adir.nll %logp, %p {reduction = "sum"} : tensor<10xf32>, tensor<10xf32> -> tensor<f32>
// CHECK-NEXT:    %[[ONE:[0-9]+]] = adir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %z_grad = adir.cross_entropy_grad %z, %p, %[[ONE]] {reduction = "sum"} : tensor<10xf32>, tensor<10xf32>, tensor<f32> -> tensor<10xf32>
// CHECK-NEXT:    func.return %l, %z_grad : tensor<f32>, tensor<10xf32>
// CHECK-NOT:     adir.nll_grad
// CHECK-NOT:     adir.log_softmax_grad

// -----

// The log-probabilities are also read by a second loss term: not fused.

adir.param @w : tensor<10x4xf32> = #adir.normal<seed = 1>

func.func @two_uses(%x: tensor<8x4xf32>, %labels: tensor<8xi64>, %r: tensor<8x10xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<10x4xf32>
  %z = adir.matmul %x, %w {transpose_b} : tensor<8x4xf32>, tensor<10x4xf32> -> tensor<8x10xf32>
  %logp = adir.log_softmax %z : tensor<8x10xf32>
  %l = adir.nll %logp, %labels : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  %m = adir.mul %logp, %r : tensor<8x10xf32>
  %s = adir.sum %m : tensor<8x10xf32> -> tensor<f32>
  %y = adir.add %l, %s : tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK-LABEL: func.func @two_uses_grad
// CHECK-NOT:     adir.cross_entropy_grad
// CHECK:         %[[DL:[0-9]+]] = adir.nll_grad %logp, %labels, %l_grad : tensor<8x10xf32>, tensor<8xi64>, tensor<f32> -> tensor<8x10xf32>
// CHECK-NEXT:    %logp_grad_1 = adir.add %logp_grad, %[[DL]] : tensor<8x10xf32>
// CHECK-NEXT:    %z_grad = adir.log_softmax_grad %logp, %logp_grad_1 : tensor<8x10xf32>
// CHECK-NEXT:    %w_grad = adir.matmul %z_grad, %x {transpose_a} : tensor<8x10xf32>, tensor<8x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT:    func.return %y, %w_grad : tensor<f32>, tensor<10x4xf32>
