// A batchnorm whose channel count disagrees with gamma's only once infer-shapes knows the
// input's shape is an error at the batchnorm.
// RUN: not adir-opt %s -p infer-shapes 2>&1 | filecheck %s

func.func @f(%x: tensor<8x3xf32>, %v: tensor<4xf32>) {
  %h = adir.flatten %x : tensor<8x3xf32> -> tensor<*xf32>
  %r = adir.reshape %h {shape = array<i64: 4, 6>} : tensor<*xf32> -> tensor<*xf32>
  %y:5 = adir.batchnorm %r, %v, %v, %v, %v : tensor<*xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  func.return
}
// CHECK: normalization_mismatch_found_late.mlir:8:3: error: adir.batchnorm: operand gamma has 4 entries but input has 6 channels
