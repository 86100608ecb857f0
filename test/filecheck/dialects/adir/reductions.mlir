// Every reduction prints in its custom form and survives a trip through the generic form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @axes
func.func @axes(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // CHECK-NEXT: %0 = adir.sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %0 = adir.sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %1 = adir.mean %x {axes = array<i64: 0, -1>} : tensor<2x3x4xf32> -> tensor<3xf32>
  %1 = adir.mean %x {axes = array<i64: 0, -1>} : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK-NEXT: %2 = adir.max %x {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
  %2 = adir.max %x {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @keepdims
func.func @keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  // CHECK-NEXT: %0 = adir.sum %x {axes = array<i64: 1>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %0 = adir.sum %x {axes = array<i64: 1>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  // CHECK-NEXT: %1 = adir.mean %x {axes = array<i64: 0, 2>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %1 = adir.mean %x {axes = array<i64: 0, 2>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  // CHECK-NEXT: %2 = adir.max %x {axes = array<i64: -2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %2 = adir.max %x {axes = array<i64: -2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  func.return %0 : tensor<2x1x4xf32>
}

// -----

// Without axes, a reduction is over all axes.
// CHECK-LABEL: func.func @all_axes
func.func @all_axes(%x: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<f32> {
  // CHECK-NEXT: %0 = adir.sum %x : tensor<2x3xf32> -> tensor<f32>
  %0 = adir.sum %x : tensor<2x3xf32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.mean %x {keepdims} : tensor<2x3xf32> -> tensor<1x1xf32>
  %1 = adir.mean %x {keepdims} : tensor<2x3xf32> -> tensor<1x1xf32>
  // CHECK-NEXT: %2 = adir.max %x : tensor<2x3xf32> -> tensor<f32>
  %2 = adir.max %x : tensor<2x3xf32> -> tensor<f32>
  // A scalar has no axes: reducing over all of them gives the scalar back.
  // CHECK-NEXT: %3 = adir.sum %s : tensor<f32>
  %3 = adir.sum %s : tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// Unknown shapes are legal before infer-shapes; discardable attributes are kept.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<?x3xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  // CHECK-NEXT: %0 = adir.sum %x {axes = array<i64: 1>} : tensor<?x3xf32> -> tensor<?xf32>
  %0 = adir.sum %x {axes = array<i64: 1>} : tensor<?x3xf32> -> tensor<?xf32>
  // CHECK-NEXT: %1 = adir.max %u {axes = array<i64: 0>, keepdims} : tensor<*xf32>
  %1 = adir.max %u {axes = array<i64: 0>, keepdims} : tensor<*xf32>
  // CHECK-NEXT: %2 = adir.mean %u {tag = "loss"} : tensor<*xf32> -> tensor<f32>
  %2 = adir.mean %u {tag = "loss"} : tensor<*xf32> -> tensor<f32>
  func.return %1 : tensor<*xf32>
}
