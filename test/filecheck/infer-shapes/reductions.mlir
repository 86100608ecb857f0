// infer-shapes fills unknown result shapes of reductions from the input shape, the axes and
// keepdims.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @axes(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %0 = adir.sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %1 = adir.mean %x {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT:    %2 = adir.max %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT:    func.return %0 : tensor<2x4xf32>
func.func @axes(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %0 = adir.sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<*xf32>
  %1 = adir.mean %x {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<*xf32>
  %2 = adir.max %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// keepdims keeps the reduced axes as 1s; without axes everything is reduced.
// CHECK-LABEL: func.func @keepdims(%x: tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT:    %0 = adir.sum %x {axes = array<i64: -2>, keepdims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %1 = adir.max %x {keepdims} : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %2 = adir.mean %x : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT:    func.return %1 : tensor<1x1x1xf32>
func.func @keepdims(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %0 = adir.sum %x {axes = array<i64: -2>, keepdims} : tensor<2x3x4xf32> -> tensor<*xf32>
  %1 = adir.max %x {keepdims} : tensor<2x3x4xf32> -> tensor<*xf32>
  %2 = adir.mean %x : tensor<2x3x4xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}

// -----

// Unknown dims that are kept stay unknown; an unknown dim that is reduced away does not matter.
// CHECK-LABEL: func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %0 = adir.sum %x {axes = array<i64: 1>} : tensor<?x3xf32> -> tensor<?xf32>
// CHECK-NEXT:    %1 = adir.mean %x {axes = array<i64: 0>} : tensor<?x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %2 = adir.max %x {axes = array<i64: 0>, keepdims} : tensor<?x3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %0 : tensor<?xf32>
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<*xf32> {
  %0 = adir.sum %x {axes = array<i64: 1>} : tensor<?x3xf32> -> tensor<*xf32>
  %1 = adir.mean %x {axes = array<i64: 0>} : tensor<?x3xf32> -> tensor<*xf32>
  %2 = adir.max %x {axes = array<i64: 0>, keepdims} : tensor<?x3xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// With an unranked input only a reduction over all axes without keepdims has a known shape:
// a scalar.
// CHECK-LABEL: func.func @unranked(%x: tensor<*xf32>) -> tensor<f32>
// CHECK-NEXT:    %0 = adir.sum %x : tensor<*xf32> -> tensor<f32>
// CHECK-NEXT:    %1 = adir.max %x {keepdims} : tensor<*xf32>
// CHECK-NEXT:    %2 = adir.mean %x {axes = array<i64: 0>} : tensor<*xf32>
// CHECK-NEXT:    func.return %0 : tensor<f32>
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  %0 = adir.sum %x : tensor<*xf32>
  %1 = adir.max %x {keepdims} : tensor<*xf32>
  %2 = adir.mean %x {axes = array<i64: 0>} : tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// Shapes flow through a chain: a numerically stable softmax written with reductions.
// CHECK-LABEL: func.func @chain(%x: tensor<8x10xf32>) -> tensor<8x10xf32>
// CHECK-NEXT:    %0 = adir.max %x {axes = array<i64: 1>, keepdims} : tensor<8x10xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %1 = adir.sub %x, %0 : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<8x10xf32>
// CHECK-NEXT:    %2 = adir.exp %1 : tensor<8x10xf32>
// CHECK-NEXT:    %3 = adir.sum %2 {axes = array<i64: 1>, keepdims} : tensor<8x10xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %4 = adir.div %2, %3 : tensor<8x10xf32>, tensor<8x1xf32> -> tensor<8x10xf32>
// CHECK-NEXT:    func.return %4 : tensor<8x10xf32>
func.func @chain(%x: tensor<8x10xf32>) -> tensor<*xf32> {
  %0 = adir.max %x {axes = array<i64: 1>, keepdims} : tensor<8x10xf32> -> tensor<*xf32>
  %1 = adir.sub %x, %0 : tensor<8x10xf32>, tensor<*xf32> -> tensor<*xf32>
  %2 = adir.exp %1 : tensor<*xf32>
  %3 = adir.sum %2 {axes = array<i64: 1>, keepdims} : tensor<*xf32> -> tensor<*xf32>
  %4 = adir.div %2, %3 : tensor<*xf32>
  func.return %4 : tensor<*xf32>
}
