// infer-shapes gives a loss the shape its reduction implies: a scalar for "mean" and "sum", one
// loss per element (mse, bce, bce_with_logits) or per sample (nll, cross_entropy) for "none",
// taking each dim from whichever operand knows it. A contradiction that only shows once a
// shape is known is an error at the loss.
// RUN: adir-opt %s --split-input-file -p infer-shapes --verify-diagnostics | filecheck %s
// RUN: adir-opt %s --split-input-file -p infer-shapes --verify-diagnostics \
// RUN:   | filecheck %s --check-prefix=LATE

// CHECK-LABEL: func.func @reduced_losses_are_scalars(%x: tensor<4x10xf32>, %l: tensor<4xi32>) -> (tensor<f32>, tensor<f32>)
// CHECK-NEXT:    %0 = adir.exp %x : tensor<4x10xf32>
// CHECK-NEXT:    %1 = adir.cross_entropy %0, %l : tensor<4x10xf32>, tensor<4xi32> -> tensor<f32>
// CHECK-NEXT:    %2 = adir.mse %0, %x {reduction = "sum"} : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<f32>
// CHECK-NEXT:    func.return %1, %2 : tensor<f32>, tensor<f32>
func.func @reduced_losses_are_scalars(%x: tensor<4x10xf32>, %l: tensor<4xi32>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = adir.exp %x : tensor<4x10xf32> -> tensor<*xf32>
  %1 = adir.cross_entropy %0, %l : tensor<*xf32>, tensor<4xi32> -> tensor<*xf32>
  %2 = adir.mse %0, %x {reduction = "sum"} : tensor<*xf32>, tensor<4x10xf32> -> tensor<*xf32>
  func.return %1, %2 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise_losses_keep_the_shape(%p: tensor<?x3xf32>, %y: tensor<8x?xf32>, %u: tensor<*xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %0 = adir.bce %p, %y {reduction = "none"} : tensor<?x3xf32>, tensor<8x?xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %1 = adir.bce_with_logits %u, %p {reduction = "none"} : tensor<*xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
// CHECK-NEXT:    %2 = adir.mse %0, %1 {reduction = "none"} : tensor<8x3xf32>, tensor<?x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    func.return %2 : tensor<8x3xf32>
func.func @elementwise_losses_keep_the_shape(%p: tensor<?x3xf32>, %y: tensor<8x?xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  %0 = adir.bce %p, %y {reduction = "none"} : tensor<?x3xf32>, tensor<8x?xf32> -> tensor<*xf32>
  %1 = adir.bce_with_logits %u, %p {reduction = "none"} : tensor<*xf32>, tensor<?x3xf32> -> tensor<*xf32>
  %2 = adir.mse %0, %1 {reduction = "none"} : tensor<*xf32>, tensor<*xf32> -> tensor<*xf32>
  func.return %2 : tensor<*xf32>
}

// -----

// The batch size comes from the input or the target, whichever knows it.
// CHECK-LABEL: func.func @per_sample_losses(%z: tensor<?x10xf32>, %l: tensor<8xi64>, %y: tensor<?x10xf32>, %u: tensor<*xf32>, %ul: tensor<*xi32>) -> tensor<8xf32>
// CHECK-NEXT:    %0 = adir.cross_entropy %z, %l {reduction = "none"} : tensor<?x10xf32>, tensor<8xi64> -> tensor<8xf32>
// CHECK-NEXT:    %1 = adir.nll %z, %y {reduction = "none"} : tensor<?x10xf32>, tensor<?x10xf32> -> tensor<?xf32>
// CHECK-NEXT:    %2 = adir.nll %u, %l {reduction = "none"} : tensor<*xf32>, tensor<8xi64> -> tensor<8xf32>
// CHECK-NEXT:    %3 = adir.cross_entropy %u, %y {reduction = "none"} : tensor<*xf32>, tensor<?x10xf32> -> tensor<?xf32>
// CHECK-NEXT:    %4 = adir.nll %z, %ul {reduction = "none"} : tensor<?x10xf32>, tensor<*xi32> -> tensor<?xf32>
// CHECK-NEXT:    %5 = adir.nll %u, %ul {reduction = "none"} : tensor<*xf32>, tensor<*xi32> -> tensor<*xf32>
// CHECK-NEXT:    func.return %0 : tensor<8xf32>
func.func @per_sample_losses(%z: tensor<?x10xf32>, %l: tensor<8xi64>, %y: tensor<?x10xf32>, %u: tensor<*xf32>, %ul: tensor<*xi32>) -> tensor<*xf32> {
  %0 = adir.cross_entropy %z, %l {reduction = "none"} : tensor<?x10xf32>, tensor<8xi64> -> tensor<*xf32>
  %1 = adir.nll %z, %y {reduction = "none"} : tensor<?x10xf32>, tensor<?x10xf32> -> tensor<*xf32>
  %2 = adir.nll %u, %l {reduction = "none"} : tensor<*xf32>, tensor<8xi64> -> tensor<*xf32>
  %3 = adir.cross_entropy %u, %y {reduction = "none"} : tensor<*xf32>, tensor<?x10xf32> -> tensor<*xf32>
  %4 = adir.nll %z, %ul {reduction = "none"} : tensor<?x10xf32>, tensor<*xi32> -> tensor<*xf32>
  %5 = adir.nll %u, %ul {reduction = "none"} : tensor<*xf32>, tensor<*xi32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// One unbatched sample: the loss of a [C] input is a scalar for every reduction.
// CHECK-LABEL: func.func @unbatched(%z: tensor<10xf32>, %l: tensor<i32>) -> tensor<f32>
// CHECK-NEXT:    %0 = adir.cross_entropy %z, %l {reduction = "none"} : tensor<10xf32>, tensor<i32> -> tensor<f32>
func.func @unbatched(%z: tensor<10xf32>, %l: tensor<i32>) -> tensor<*xf32> {
  %0 = adir.cross_entropy %z, %l {reduction = "none"} : tensor<10xf32>, tensor<i32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// The mismatch is only visible once %0's shape is known.
func.func @late_batch_mismatch(%x: tensor<32x10xf32>, %l: tensor<16xi32>) -> tensor<*xf32> {
  %0 = adir.exp %x : tensor<32x10xf32> -> tensor<*xf32>
  %1 = adir.nll %0, %l {reduction = "none"} : tensor<*xf32>, tensor<16xi32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// LATE: losses.mlir:[[# @LINE - 3]]:3: error: adir.nll: batch sizes 32 and 16 of input and target do not match

// -----

func.func @late_shape_mismatch(%x: tensor<4x3xf32>, %y: tensor<3x4xf32>) -> tensor<*xf32> {
  %0 = adir.exp %x : tensor<4x3xf32> -> tensor<?x?xf32>
  %1 = adir.mse %0, %y : tensor<?x?xf32>, tensor<3x4xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}
// LATE: losses.mlir:[[# @LINE - 3]]:3: error: adir.mse: shapes 4x3 and 3x4 of input and target do not match
