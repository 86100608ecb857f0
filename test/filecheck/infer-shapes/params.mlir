// infer-shapes gives a load the type of the parameter it reads; the ops that use the loaded
// value follow, down to the value stored back.
// RUN: adir-opt %s -p infer-shapes | filecheck %s

adir.param @w : tensor<2x3xf32> = #adir.xavier_uniform<seed = 1>
adir.param @b : tensor<3xf32> = #adir.zeros

// CHECK:      adir.param @w : tensor<2x3xf32> = #adir.xavier_uniform<seed = 1>
// CHECK-NEXT: adir.param @b : tensor<3xf32> = #adir.zeros
// CHECK-LABEL: func.func @affine(%x: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %w = adir.load @w : tensor<2x3xf32>
// CHECK-NEXT:    %b = adir.load @b : tensor<3xf32>
// CHECK-NEXT:    %0 = adir.mul %x, %w : tensor<2x3xf32>
// CHECK-NEXT:    %1 = adir.add %0, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    adir.store %1, @w : tensor<2x3xf32>
// CHECK-NEXT:    func.return %1 : tensor<2x3xf32>
func.func @affine(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %w = adir.load @w : tensor<*xf32>
  %b = adir.load @b : tensor<?xf32>
  %0 = adir.mul %x, %w : tensor<2x3xf32>, tensor<*xf32> -> tensor<*xf32>
  %1 = adir.add %0, %b : tensor<*xf32>, tensor<?xf32> -> tensor<*xf32>
  adir.store %1, @w : tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
