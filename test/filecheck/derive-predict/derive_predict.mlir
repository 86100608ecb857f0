// derive-predict adds @predict: the loss function's body up to the loss, returning the loss's
// input, in eval mode. The labels and the dropout step are no longer read, so they are dropped;
// batchnorm normalises with the running statistics and stores nothing; dropout is the identity.
// RUN: adir-opt %s --split-input-file -p derive-predict | filecheck %s
// RUN: adir-opt %s --split-input-file -p 'derive-predict{predict=infer}' | filecheck %s --check-prefix=NAMED

adir.param @w : tensor<10x4xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 1>

// CHECK-LABEL: func.func @loss(
// CHECK-LABEL: func.func @predict(%x: tensor<2x4xf32>) -> tensor<2x10xf32> {
// CHECK-NEXT:    %w = adir.load @w : tensor<10x4xf32>
// CHECK-NEXT:    %logits = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<10x4xf32> -> tensor<2x10xf32>
// CHECK-NEXT:    func.return %logits : tensor<2x10xf32>
// CHECK-NEXT:  }
// NAMED:       func.func @infer(%x: tensor<2x4xf32>) -> tensor<2x10xf32> {
func.func @loss(%x: tensor<2x4xf32>, %label: tensor<2xi32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<10x4xf32>
  %logits = adir.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<10x4xf32> -> tensor<2x10xf32>
  %l = adir.cross_entropy %logits, %label : tensor<2x10xf32>, tensor<2xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @gamma : tensor<3xf32> = #adir.fill<value = 1.0>
adir.param @beta : tensor<3xf32> = #adir.zeros
adir.param @mean : tensor<3xf32> = #adir.zeros {trainable = false}
adir.param @var : tensor<3xf32> = #adir.fill<value = 1.0> {trainable = false}

// CHECK-LABEL: func.func @predict(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
// CHECK:         %n = adir.batchnorm_eval %x, %gamma, %beta, %mean, %var {eps = 1.000000e-03 : f32}
// CHECK-NOT:     adir.store
// CHECK-NOT:     adir.dropout
// CHECK:         func.return %n : tensor<4x3xf32>
func.func @loss(%x: tensor<4x3xf32>, %target: tensor<4x3xf32>, %step: tensor<i64>) -> tensor<f32> attributes {adir.loss} {
  %gamma = adir.load @gamma : tensor<3xf32>
  %beta = adir.load @beta : tensor<3xf32>
  %mean = adir.load @mean : tensor<3xf32>
  %var = adir.load @var : tensor<3xf32>
  %n, %bm, %bi, %mean2, %var2 = adir.batchnorm %x, %gamma, %beta, %mean, %var {eps = 1.0e-3 : f32} : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  adir.store %mean2, @mean : tensor<3xf32>
  adir.store %var2, @var : tensor<3xf32>
  %d = adir.dropout %n, %step {p = 0.5 : f32, seed = 1 : i64} : tensor<4x3xf32>, tensor<i64> -> tensor<4x3xf32>
  %l = adir.mse %d, %target : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// A module that already has @predict keeps it.
// CHECK-LABEL: func.func @predict(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    func.return %x : tensor<2xf32>
func.func @loss(%x: tensor<2xf32>, %t: tensor<2xf32>) -> tensor<f32> attributes {adir.loss} {
  %l = adir.mse %x, %t : tensor<2xf32>, tensor<2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @predict(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
