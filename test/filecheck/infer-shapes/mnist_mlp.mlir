// The seed MLP written with unknown result shapes: infer-shapes recovers every type of
// examples/mnist_mlp.mlir, and the function's result type.
// RUN: adir-opt %s -p infer-shapes | filecheck %s

adir.param @w1 : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>
adir.param @w2 : tensor<10x32xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 2>

// CHECK-LABEL: func.func @loss(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<f32>
// CHECK-NEXT:    %w1 = adir.load @w1 : tensor<32x784xf32>
// CHECK-NEXT:    %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x784xf32>, tensor<32x784xf32> -> tensor<1x32xf32>
// CHECK-NEXT:    %a = adir.sigmoid %h : tensor<1x32xf32>
// CHECK-NEXT:    %w2 = adir.load @w2 : tensor<10x32xf32>
// CHECK-NEXT:    %logits = adir.matmul %a, %w2 {transpose_b} : tensor<1x32xf32>, tensor<10x32xf32> -> tensor<1x10xf32>
// CHECK-NEXT:    %logp = adir.log_softmax %logits : tensor<1x10xf32>
// CHECK-NEXT:    %loss = adir.nll %logp, %label : tensor<1x10xf32>, tensor<1xi32> -> tensor<f32>
// CHECK-NEXT:    func.return %loss : tensor<f32>
func.func @loss(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<*xf32> {
  %w1 = adir.load @w1 : tensor<*xf32>
  %h = adir.matmul %x, %w1 {transpose_b} : tensor<1x784xf32>, tensor<*xf32> -> tensor<*xf32>
  %a = adir.sigmoid %h : tensor<*xf32>
  %w2 = adir.load @w2 : tensor<*xf32>
  %logits = adir.matmul %a, %w2 {transpose_b} : tensor<*xf32>, tensor<*xf32> -> tensor<*xf32>
  %logp = adir.log_softmax %logits : tensor<*xf32>
  %loss = adir.nll %logp, %label : tensor<*xf32>, tensor<1xi32> -> tensor<*xf32>
  func.return %loss : tensor<*xf32>
}
