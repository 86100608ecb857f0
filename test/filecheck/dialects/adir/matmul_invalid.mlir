// Every verifier rule of the matmul family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @matmul_rank_lhs(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  %0 = adir.matmul %a, %b : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:5:3: error: adir.matmul: operand lhs must have rank 2 or 3, got rank 1 (4)

// -----

func.func @matmul_rank_rhs(%a: tensor<2x3xf32>, %b: tensor<1x2x3x4xf32>) {
  %0 = adir.matmul %a, %b : tensor<2x3xf32>, tensor<1x2x3x4xf32> -> tensor<2x4xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:13:3: error: adir.matmul: operand rhs must have rank 2 or 3, got rank 4 (1x2x3x4)

// -----

func.func @matmul_2d_lhs_3d_rhs(%a: tensor<2x3xf32>, %b: tensor<5x3x4xf32>) {
  %0 = adir.matmul %a, %b : tensor<2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:21:3: error: adir.matmul: operand rhs of rank 3 (5x3x4) needs an lhs of rank 3, got rank 2 (2x3)

// -----

// Without flags the contraction dims are lhs dim 1 and rhs dim 0.
func.func @matmul_inner(%x: tensor<1x784xf32>, %w: tensor<32x784xf32>) {
  %0 = adir.matmul %x, %w : tensor<1x784xf32>, tensor<32x784xf32> -> tensor<1x32xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:30:3: error: adir.matmul: inner dimensions 784 and 32 do not match

// -----

// The flags apply first: lhs^T is 1x784, rhs^T is 32x784.
func.func @matmul_inner_transposed(%x: tensor<784x1xf32>, %w: tensor<784x32xf32>) {
  %0 = adir.matmul %x, %w {transpose_a, transpose_b} : tensor<784x1xf32>, tensor<784x32xf32> -> tensor<1x784xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:39:3: error: adir.matmul: inner dimensions 784 and 32 do not match

// -----

// Batch dims must be equal: a batch of 1 does not broadcast.
func.func @matmul_batch(%a: tensor<4x2x3xf32>, %b: tensor<1x3x5xf32>) {
  %0 = adir.matmul %a, %b : tensor<4x2x3xf32>, tensor<1x3x5xf32> -> tensor<4x2x5xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:48:3: error: adir.matmul: batch dimensions 4 and 1 do not match

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  %0 = adir.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:56:3: error: adir.matmul: result type tensor<2x3xf32> does not match the type tensor<2x5xf32> implied by its operands and properties

// -----

func.func @matmul_int_operand(%a: tensor<2x3xi32>, %b: tensor<3x5xf32>) {
  %0 = adir.matmul %a, %b : tensor<2x3xi32>, tensor<3x5xf32> -> tensor<2x5xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:64:3: error: adir.matmul: operand 'lhs' at position 0 does not verify: i32 should be of base attribute f32

// -----

// A flag is a unit attribute, set or absent.
func.func @matmul_flag_not_unit(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  %0 = adir.matmul %a, %b {transpose_a = true} : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  func.return
}
// CHECK: matmul_invalid.mlir:73:3: error: adir.matmul: property 'transpose_a': true should be of base attribute unit
