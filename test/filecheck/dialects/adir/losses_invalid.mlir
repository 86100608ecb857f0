// Every verifier rule of the losses family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @unknown_reduction(%x: tensor<4x3xf32>) {
  %0 = adir.mse %x, %x {reduction = "avg"} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:5:3: error: adir.mse: unknown reduction 'avg', expected one of none, mean, sum

// -----

func.func @reduction_not_a_string(%z: tensor<4x3xf32>, %l: tensor<4xi32>) {
  %0 = adir.cross_entropy %z, %l {reduction = 1 : i32} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:13:3: error: adir.cross_entropy: property 'reduction': 1 : i32 should be of base attribute string
// (IRDL's message for a property of the wrong kind does not name the property.)

// -----

// The short form says that the result has the operands' type, but a mean is a scalar.
func.func @mean_is_a_scalar(%x: tensor<4x3xf32>) {
  %0 = adir.bce_with_logits %x, %x : tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:23:3: error: adir.bce_with_logits: result type tensor<4x3xf32> does not match the type tensor<f32> implied by its operands and properties

// -----

func.func @none_keeps_the_batch(%z: tensor<4x3xf32>, %l: tensor<4xi64>) {
  %0 = adir.nll %z, %l {reduction = "none"} : tensor<4x3xf32>, tensor<4xi64> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:31:3: error: adir.nll: result type tensor<f32> does not match the type tensor<4xf32> implied by its operands and properties

// -----

func.func @integer_input(%x: tensor<4xi32>, %y: tensor<4xf32>) {
  %0 = adir.mse %x, %y : tensor<4xi32>, tensor<4xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:39:3: error: adir.mse: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

func.func @integer_bce_target(%p: tensor<4xf32>, %y: tensor<4xi32>) {
  %0 = adir.bce %p, %y : tensor<4xf32>, tensor<4xi32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:47:3: error: adir.bce: operand 'target' at position 1 does not verify: i32 should be of base attribute f32

// -----

func.func @mse_shapes_differ(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>) {
  %0 = adir.mse %x, %y : tensor<4x3xf32>, tensor<4x2xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:55:3: error: adir.mse: shapes 4x3 and 4x2 of input and target do not match

// -----

// No broadcasting: a target of another rank is an error even if it would broadcast.
func.func @mse_ranks_differ(%x: tensor<4x3xf32>, %y: tensor<3xf32>) {
  %0 = adir.mse %x, %y : tensor<4x3xf32>, tensor<3xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:64:3: error: adir.mse: shapes 4x3 and 3 of input and target do not match

// -----

func.func @bce_shapes_differ(%p: tensor<?x3xf32>, %y: tensor<8x1xf32>) {
  %0 = adir.bce %p, %y : tensor<?x3xf32>, tensor<8x1xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:72:3: error: adir.bce: shapes ?x3 and 8x1 of input and target do not match

// -----

func.func @bce_with_logits_shapes_differ(%z: tensor<32xf32>, %y: tensor<16xf32>) {
  %0 = adir.bce_with_logits %z, %y {reduction = "none"} : tensor<32xf32>, tensor<16xf32> -> tensor<32xf32>
  func.return
}
// CHECK: losses_invalid.mlir:80:3: error: adir.bce_with_logits: shapes 32 and 16 of input and target do not match

// -----

func.func @input_rank_3(%z: tensor<2x3x4xf32>, %l: tensor<2x4xi32>) {
  %0 = adir.cross_entropy %z, %l : tensor<2x3x4xf32>, tensor<2x4xi32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:88:3: error: adir.cross_entropy: operand input must have rank 1 or 2, got rank 3 (2x3x4)

// -----

func.func @input_rank_0(%z: tensor<f32>, %l: tensor<i32>) {
  %0 = adir.nll %z, %l : tensor<f32>, tensor<i32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:96:3: error: adir.nll: operand input must have rank 1 or 2, got rank 0 (scalar)

// -----

func.func @i1_labels(%z: tensor<4x2xf32>, %l: tensor<4xi1>) {
  %0 = adir.cross_entropy %z, %l : tensor<4x2xf32>, tensor<4xi1> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:104:3: error: adir.cross_entropy: operand target must have element type i32 or i64 (class indices) or f32 (class probabilities), got i1

// -----

func.func @signed_labels(%z: tensor<4x2xf32>, %l: tensor<4xsi32>) {
  %0 = adir.nll %z, %l : tensor<4x2xf32>, tensor<4xsi32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:112:3: error: adir.nll: operand target must have element type i32 or i64 (class indices) or f32 (class probabilities), got si32

// -----

func.func @f64_probabilities(%z: tensor<4x2xf32>, %y: tensor<4x2xf64>) {
  %0 = adir.nll %z, %y : tensor<4x2xf32>, tensor<4x2xf64> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:120:3: error: adir.nll: operand target must have element type i32 or i64 (class indices) or f32 (class probabilities), got f64

// -----

func.func @float_labels(%z: tensor<32x10xf32>, %l: tensor<32xf32>) {
  %0 = adir.cross_entropy %z, %l : tensor<32x10xf32>, tensor<32xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:128:3: error: adir.cross_entropy: operand target of rank 1 holds class indices, so its element type must be i32 or i64, got f32

// -----

func.func @float_label_unbatched(%z: tensor<10xf32>, %l: tensor<f32>) {
  %0 = adir.nll %z, %l : tensor<10xf32>, tensor<f32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:136:3: error: adir.nll: operand target of rank 0 holds class indices, so its element type must be i32 or i64, got f32

// -----

func.func @integer_probabilities(%z: tensor<32x10xf32>, %y: tensor<32x10xi32>) {
  %0 = adir.nll %z, %y : tensor<32x10xf32>, tensor<32x10xi32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:144:3: error: adir.nll: operand target of rank 2 holds class probabilities, so its element type must be f32, got i32

// -----

func.func @target_rank_3(%z: tensor<32x10xf32>, %y: tensor<32x10x1xf32>) {
  %0 = adir.cross_entropy %z, %y : tensor<32x10xf32>, tensor<32x10x1xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:152:3: error: adir.cross_entropy: operand target must have rank 1 (class indices) or 2 (class probabilities) for input of rank 2, got rank 3 (32x10x1)

// -----

func.func @target_rank_0(%z: tensor<32x10xf32>, %l: tensor<i32>) {
  %0 = adir.nll %z, %l : tensor<32x10xf32>, tensor<i32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:160:3: error: adir.nll: operand target must have rank 1 (class indices) or 2 (class probabilities) for input of rank 2, got rank 0 (scalar)

// -----

// With an unranked input, the element type of the target says what it holds.
func.func @index_target_rank_2(%z: tensor<*xf32>, %l: tensor<32x10xi64>) {
  %0 = adir.nll %z, %l : tensor<*xf32>, tensor<32x10xi64> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:169:3: error: adir.nll: operand target of class indices (i64) must have rank 0 or 1, got rank 2 (32x10)

// -----

func.func @probability_target_rank_3(%z: tensor<*xf32>, %y: tensor<2x3x4xf32>) {
  %0 = adir.cross_entropy %z, %y : tensor<*xf32>, tensor<2x3x4xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:177:3: error: adir.cross_entropy: operand target of class probabilities (f32) must have rank 1 or 2, got rank 3 (2x3x4)

// -----

func.func @label_batch_sizes_differ(%z: tensor<32x10xf32>, %l: tensor<16xi32>) {
  %0 = adir.nll %z, %l : tensor<32x10xf32>, tensor<16xi32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:185:3: error: adir.nll: batch sizes 32 and 16 of input and target do not match

// -----

func.func @probability_batch_sizes_differ(%z: tensor<32x10xf32>, %y: tensor<16x10xf32>) {
  %0 = adir.cross_entropy %z, %y : tensor<32x10xf32>, tensor<16x10xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:193:3: error: adir.cross_entropy: batch sizes 32 and 16 of input and target do not match

// -----

func.func @class_counts_differ(%z: tensor<?x10xf32>, %y: tensor<4x5xf32>) {
  %0 = adir.cross_entropy %z, %y : tensor<?x10xf32>, tensor<4x5xf32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:201:3: error: adir.cross_entropy: class counts 10 and 5 of input and target do not match

// -----

func.func @f64_result(%x: tensor<4xf32>) {
  %0 = adir.mse %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<f64>
  func.return
}
// CHECK: losses_invalid.mlir:209:3: error: adir.mse: result 'result' at position 0 does not verify: f64 should be of base attribute f32

// -----

// The gradient ops: dloss has the shape of the loss's result, a scalar for "mean" and "sum".
func.func @grad_dloss_not_a_scalar(%x: tensor<4x3xf32>, %d: tensor<4x3xf32>) {
  %0 = adir.mse_grad %x, %x, %d : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:218:3: error: adir.mse_grad: operand dloss must be a scalar (the loss's shape for reduction 'mean'), got 4x3

// -----

func.func @grad_dloss_per_sample_not_scalar(%z: tensor<4x3xf32>, %l: tensor<4xi32>, %d: tensor<4xf32>) {
  %0 = adir.nll_grad %z, %l, %d {reduction = "sum"} : tensor<4x3xf32>, tensor<4xi32>, tensor<4xf32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:226:3: error: adir.nll_grad: operand dloss must be a scalar (the loss's shape for reduction 'sum'), got 4

// -----

// "none": one adjoint per sample for the classification losses...
func.func @grad_dloss_batch_differs(%z: tensor<4x3xf32>, %l: tensor<4xi64>, %d: tensor<8xf32>) {
  %0 = adir.cross_entropy_grad %z, %l, %d {reduction = "none"} : tensor<4x3xf32>, tensor<4xi64>, tensor<8xf32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:235:3: error: adir.cross_entropy_grad: operand dloss must have shape 4 (the loss's shape for reduction 'none'), got 8

// -----

// ...and one per element for the elementwise ones.
func.func @grad_dloss_per_sample_for_elementwise(%x: tensor<4x3xf32>, %d: tensor<4xf32>) {
  %0 = adir.bce_grad %x, %x, %d {reduction = "none"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:244:3: error: adir.bce_grad: operand dloss must have shape 4x3 (the loss's shape for reduction 'none'), got 4

// -----

// An unbatched sample's loss is a scalar for every reduction.
func.func @grad_unbatched_dloss(%z: tensor<3xf32>, %l: tensor<i32>, %d: tensor<1xf32>) {
  %0 = adir.nll_grad %z, %l, %d {reduction = "none"} : tensor<3xf32>, tensor<i32>, tensor<1xf32> -> tensor<3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:253:3: error: adir.nll_grad: operand dloss must be a scalar (the loss's shape for reduction 'none'), got 1

// -----

// The result is the input's adjoint: the input's shape.
func.func @grad_result_not_input_shape(%x: tensor<4x3xf32>, %s: tensor<f32>) {
  %0 = adir.bce_with_logits_grad %x, %x, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<f32>
  func.return
}
// CHECK: losses_invalid.mlir:262:3: error: adir.bce_with_logits_grad: result type tensor<f32> does not match the type tensor<4x3xf32> implied by its operands and properties

// -----

func.func @grad_unknown_reduction(%x: tensor<4xf32>, %s: tensor<f32>) {
  %0 = adir.mse_grad %x, %x, %s {reduction = "avg"} : tensor<4xf32>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  func.return
}
// CHECK: losses_invalid.mlir:270:3: error: adir.mse_grad: unknown reduction 'avg', expected one of none, mean, sum

// -----

func.func @grad_integer_dloss(%x: tensor<4xf32>, %s: tensor<i32>) {
  %0 = adir.mse_grad %x, %x, %s : tensor<4xf32>, tensor<4xf32>, tensor<i32> -> tensor<4xf32>
  func.return
}
// CHECK: losses_invalid.mlir:278:3: error: adir.mse_grad: operand 'dloss' at position 2 does not verify: i32 should be of base attribute f32

// -----

// Input and target follow the forward loss's rules, which name the gradient op.
func.func @grad_shapes_differ(%x: tensor<4x3xf32>, %y: tensor<4x2xf32>, %s: tensor<f32>) {
  %0 = adir.bce_grad %x, %y, %s : tensor<4x3xf32>, tensor<4x2xf32>, tensor<f32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:287:3: error: adir.bce_grad: shapes 4x3 and 4x2 of input and target do not match

// -----

func.func @grad_label_batch_differs(%z: tensor<4x3xf32>, %l: tensor<8xi32>, %s: tensor<f32>) {
  %0 = adir.cross_entropy_grad %z, %l, %s : tensor<4x3xf32>, tensor<8xi32>, tensor<f32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:295:3: error: adir.cross_entropy_grad: batch sizes 4 and 8 of input and target do not match

// -----

func.func @grad_float_labels(%z: tensor<4x3xf32>, %l: tensor<4xf32>, %s: tensor<f32>) {
  %0 = adir.nll_grad %z, %l, %s : tensor<4x3xf32>, tensor<4xf32>, tensor<f32> -> tensor<4x3xf32>
  func.return
}
// CHECK: losses_invalid.mlir:303:3: error: adir.nll_grad: operand target of rank 1 holds class indices, so its element type must be i32 or i64, got f32
