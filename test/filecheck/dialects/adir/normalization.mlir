// Every normalization op prints in its custom form and survives a trip through the generic
// form. Properties equal to their defaults (PyTorch's: momentum 0.1, eps 1e-5, p 0.5) are left
// out of the print; dropout's seed has no default and always prints.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @batchnorm
func.func @batchnorm(%x: tensor<8x4x5x5xf32>, %v: tensor<4xf32>, %z: tensor<6x4xf32>) -> tensor<8x4x5x5xf32> {
  // CHECK-NEXT: %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK-NEXT: %y2, %mean2, %invstd2, %rm2, %rv2 = adir.batchnorm %z, %v, %v, %v, %v {momentum = 2.500000e-01 : f32, eps = 1.000000e-03 : f32} : tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %y2, %mean2, %invstd2, %rm2, %rv2 = adir.batchnorm %z, %v, %v, %v, %v {momentum = 0.25 : f32, eps = 1.0e-3 : f32} : tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK-NEXT: %0 = adir.batchnorm_eval %x, %v, %v, %rm, %rv : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x5x5xf32>
  %0 = adir.batchnorm_eval %x, %v, %v, %rm, %rv : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<8x4x5x5xf32>
  // CHECK-NEXT: %1 = adir.batchnorm_eval %z, %v, %v, %v, %v {eps = 0.000000e+00 : f32} : tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<6x4xf32>
  %1 = adir.batchnorm_eval %z, %v, %v, %v, %v {eps = 0.0 : f32} : tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<6x4xf32>
  // CHECK-NEXT: %dx, %dgamma, %dbeta = adir.batchnorm_grad %x, %v, %mean, %invstd, %y : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  %dx, %dgamma, %dbeta = adir.batchnorm_grad %x, %v, %mean, %invstd, %y : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %y : tensor<8x4x5x5xf32>
}

// -----

// The fused ops of fuse-batchnorm-relu.
// CHECK-LABEL: func.func @batchnorm_relu
func.func @batchnorm_relu(%x: tensor<8x4x5x5xf32>, %v: tensor<4xf32>) -> tensor<8x4x5x5xf32> {
  // CHECK-NEXT: %a, %mean, %invstd, %rm, %rv = adir.batchnorm_relu %x, %v, %v, %v, %v {momentum = 2.500000e-01 : f32} : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %a, %mean, %invstd, %rm, %rv = adir.batchnorm_relu %x, %v, %v, %v, %v {momentum = 0.25 : f32} : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK-NEXT: %dx, %dgamma, %dbeta = adir.batchnorm_relu_grad %x, %v, %v, %mean, %invstd, %a : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  %dx, %dgamma, %dbeta = adir.batchnorm_relu_grad %x, %v, %v, %mean, %invstd, %a : tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x5x5xf32> -> (tensor<8x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %dx : tensor<8x4x5x5xf32>
}

// -----

// CHECK-LABEL: func.func @dropout
func.func @dropout(%x: tensor<8x32xf32>, %s64: tensor<i64>, %s32: tensor<i32>, %sf: tensor<f32>) -> tensor<8x32xf32> {
  // CHECK-NEXT: %0 = adir.dropout %x, %s64 {seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  %0 = adir.dropout %x, %s64 {seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  // CHECK-NEXT: %1 = adir.dropout %0, %s32 {p = 2.500000e-01 : f32, seed = 0 : i64} : tensor<8x32xf32>, tensor<i32> -> tensor<8x32xf32>
  %1 = adir.dropout %0, %s32 {p = 0.25 : f32, seed = 0 : i64} : tensor<8x32xf32>, tensor<i32> -> tensor<8x32xf32>
  // An f32 step, e.g. a counter kept in an adir.param.
  // CHECK-NEXT: %2 = adir.dropout %1, %sf {p = 0.000000e+00 : f32, seed = 3 : i64} : tensor<8x32xf32>, tensor<f32> -> tensor<8x32xf32>
  %2 = adir.dropout %1, %sf {p = 0.0 : f32, seed = 3 : i64} : tensor<8x32xf32>, tensor<f32> -> tensor<8x32xf32>
  // CHECK-NEXT: %3 = adir.dropout_grad %2, %s64 {p = 1.000000e+00 : f32, seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  %3 = adir.dropout_grad %2, %s64 {p = 1.0 : f32, seed = 7 : i64} : tensor<8x32xf32>, tensor<i64> -> tensor<8x32xf32>
  func.return %3 : tensor<8x32xf32>
}

// -----

// A scalar input with a scalar f32 step has one type for everything.
// CHECK-LABEL: func.func @dropout_scalar
func.func @dropout_scalar(%x: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  // CHECK-NEXT: %0 = adir.dropout %x, %s {seed = 1 : i64} : tensor<f32>
  %0 = adir.dropout %x, %s {seed = 1 : i64} : tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// Unknown shapes are legal before infer-shapes.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<?x4x?x?xf32>, %u: tensor<*xf32>, %v: tensor<4xf32>, %s: tensor<*xi64>) -> tensor<?x4x?x?xf32> {
  // CHECK-NEXT: %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<?x4x?x?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<?x4x?x?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %y, %mean, %invstd, %rm, %rv = adir.batchnorm %x, %v, %v, %v, %v : tensor<?x4x?x?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<?x4x?x?xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK-NEXT: %0 = adir.batchnorm_eval %u, %v, %v, %v, %v : tensor<*xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<*xf32>
  %0 = adir.batchnorm_eval %u, %v, %v, %v, %v : tensor<*xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<*xf32>
  // CHECK-NEXT: %1 = adir.dropout %u, %s {seed = 5 : i64} : tensor<*xf32>, tensor<*xi64> -> tensor<*xf32>
  %1 = adir.dropout %u, %s {seed = 5 : i64} : tensor<*xf32>, tensor<*xi64> -> tensor<*xf32>
  func.return %y : tensor<?x4x?x?xf32>
}
