// infer-shapes fills the unknown result shapes of normalization ops: the output has the
// input's shape, the statistics have one entry per channel (dim 1), which a per-channel
// operand can supply where the input does not know it.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @batchnorm(%x: tensor<8x4x5x5xf32>, %v: tensor<4xf32>) -> tensor<8x4x5x5xf32>
// CHECK-NEXT:    %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %dx, %dgamma, %dbeta = adir.batchnorm_grad %x, %v, %mean, %invstd, %y : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %e = adir.batchnorm_eval %dx, %dgamma, %dbeta, %rm, %rv : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x5x5xf32>
// CHECK-NEXT:    func.return %e : tensor<8x4x5x5xf32>
func.func @batchnorm(%x: tensor<8x4x5x5xf32>, %v: tensor<4xf32>) -> tensor<*xf32> {
  %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  %dx, %dgamma, %dbeta = adir.batchnorm_grad %x, %v, %mean, %invstd, %y : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  %e = adir.batchnorm_eval %dx, %dgamma, %dbeta, %rm, %rv : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32> -> tensor<*xf32>
  func.return %e : tensor<*xf32>
}

// -----

// The channel count comes from gamma when the input does not know it; the batch size stays
// unknown.
// CHECK-LABEL: func.func @channels_from_gamma(%x: tensor<?x?xf32>, %g: tensor<6xf32>, %u: tensor<*xf32>) -> tensor<?x6xf32>
// CHECK-NEXT:    %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %g, %u, %u, %u : tensor<?x?xf32>, tensor<6xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32> -> (tensor<?x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>)
// CHECK-NEXT:    func.return %y : tensor<?x6xf32>
func.func @channels_from_gamma(%x: tensor<?x?xf32>, %g: tensor<6xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %g, %u, %u, %u : tensor<?x?xf32>, tensor<6xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  func.return %y : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @dropout(%x: tensor<8x32xf32>, %s: tensor<i64>) -> tensor<8x32xf32>
// CHECK-NEXT:    %0 = adir.dropout %x, %s {seed = 1 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
// CHECK-NEXT:    %1 = adir.dropout_grad %0, %s {p = 2.500000e-01 : f32, seed = 1 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %1 : tensor<8x32xf32>
func.func @dropout(%x: tensor<8x32xf32>, %s: tensor<i64>) -> tensor<*xf32> {
  %0 = adir.dropout %x, %s {seed = 1 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<*xf32>
  %1 = adir.dropout_grad %0, %s {p = 0.25 : f32, seed = 1 : i64} : tensor<*xf32>, tensor<i64> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
