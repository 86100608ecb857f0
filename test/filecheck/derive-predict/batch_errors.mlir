// derive-predict{batch=N} refuses, at the op, what would mix samples at the new batch.
// RUN: adir-opt %s --split-input-file --verify-diagnostics -p 'derive-predict{batch=1}' | filecheck %s

// A reshape that merges the batch with another dim: [8, 10] to [2, 40].
// CHECK: batch_errors.mlir:[[# @LINE + 2]]:3: error: derive-predict{batch=1}: adir.reshape has the batch of 8 in its properties: it reshapes 8x10 to 2x40, merging the batch of 8 with other dims
func.func @loss(%x: tensor<8x10xf32>, %t: tensor<2x40xf32>) -> tensor<f32> attributes {adir.loss} {
  %r = adir.reshape %x {shape = array<i64: 2, 40>} : tensor<8x10xf32> -> tensor<2x40xf32>
  %l = adir.mse %r, %t : tensor<2x40xf32>, tensor<2x40xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// A constant as large as the training batch broadcasts a batch of 1 back to 8 rows.
// CHECK: batch_errors.mlir:[[# @LINE + 3]]:3: error: derive-predict{batch=1}: result #0 of adir.add is tensor<8x3xf32> at batch 1, tensor<8x3xf32> at batch 8: it does not keep the batch in a dim of its own (is a constant or a parameter as large as the training batch?)
func.func @loss(%x: tensor<8x3xf32>, %t: tensor<8x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %h = adir.constant dense<0.5> : tensor<8x3xf32>
  %y = adir.add %x, %h : tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x3xf32>
  %l = adir.mse %y, %t : tensor<8x3xf32>, tensor<8x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// A slice of the batch: the first 4 samples.
// CHECK: batch_errors.mlir:[[# @LINE + 2]]:3: error: derive-predict{batch=1}: adir.slice has the batch of 8 in its properties: it slices the batch of 8 ([0:4:1])
func.func @loss(%x: tensor<8x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %s = adir.slice %x {start = array<i64: 0, 0>, stop = array<i64: 4, 3>} : tensor<8x3xf32> -> tensor<4x3xf32>
  %l = adir.mse %s, %t : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// A prediction that sums over the batch has none left.
// CHECK: batch_errors.mlir:[[# @LINE + 2]]:3: error: derive-predict{batch=1}: result #0 of adir.sum is tensor<3xf32> at batch 1, tensor<3xf32> at batch 8: it does not keep the batch in a dim of its own
func.func @loss(%x: tensor<8x3xf32>, %t: tensor<3xf32>) -> tensor<f32> attributes {adir.loss} {
  %s = adir.sum %x {axes = array<i64: 0>} : tensor<8x3xf32> -> tensor<3xf32>
  %l = adir.mse %s, %t : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// Inputs that differ in dim 0 have no common batch.
// CHECK: batch_errors.mlir:[[# @LINE + 1]]:1: error: derive-predict{batch=1}: the inputs of @predict (8x3, 4x3) differ in dim 0, so it is no batch
func.func @loss(%x: tensor<8x3xf32>, %y: tensor<4x3xf32>, %t: tensor<8x3xf32>) -> tensor<f32> attributes {adir.loss} {
  %s = adir.matmul %x, %y {transpose_b} : tensor<8x3xf32>, tensor<4x3xf32> -> tensor<8x4xf32>
  %u = adir.slice %s {start = array<i64: 0, 0>, stop = array<i64: 8, 3>} : tensor<8x4xf32> -> tensor<8x3xf32>
  %l = adir.mse %u, %t : tensor<8x3xf32>, tensor<8x3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
