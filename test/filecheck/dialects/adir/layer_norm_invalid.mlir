// Every verifier rule of adir.layer_norm and adir.layer_norm_grad, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @normalized_shape_empty(%x: tensor<4x16xf32>) {
  %y:3 = adir.layer_norm %x {normalized_shape = array<i64>} : tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:5:3: error: adir.layer_norm: normalized_shape must be one or more positive dims, got []

// -----

func.func @normalized_shape_zero(%x: tensor<4x16xf32>) {
  %y:3 = adir.layer_norm %x {normalized_shape = array<i64: 0>} : tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:13:3: error: adir.layer_norm: normalized_shape must be one or more positive dims, got [0]

// -----

// The input must end in the normalized shape.
func.func @input_trailing_dims(%x: tensor<4x16xf32>) {
  %y:3 = adir.layer_norm %x {normalized_shape = array<i64: 8>} : tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:22:3: error: adir.layer_norm: operand input (4x16) does not end in the normalized shape (8)

// -----

func.func @input_rank(%x: tensor<16xf32>) {
  %y:3 = adir.layer_norm %x {normalized_shape = array<i64: 4, 16>} : tensor<16xf32> -> (tensor<16xf32>, tensor<f32>, tensor<f32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:30:3: error: adir.layer_norm: operand input (16) does not end in the normalized shape (4x16)

// -----

func.func @weight_shape(%x: tensor<4x16xf32>, %w: tensor<4x16xf32>) {
  %y:3 = adir.layer_norm %x, %w {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:38:3: error: adir.layer_norm: operand weight (4x16) must have the normalized shape (16)

// -----

func.func @bias_shape(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<15xf32>) {
  %y:3 = adir.layer_norm %x, %w, %b {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<16xf32>, tensor<15xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:46:3: error: adir.layer_norm: operand bias (15) must have the normalized shape (16)

// -----

func.func @three_affine_operands(%x: tensor<4x16xf32>, %w: tensor<16xf32>) {
  %y:3 = adir.layer_norm %x, %w, %w, %w {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:54:3: error: adir.layer_norm: expected at most 2 affine operands (weight, bias), got 3

// -----

func.func @eps_negative(%x: tensor<4x16xf32>) {
  %y:3 = adir.layer_norm %x {normalized_shape = array<i64: 16>, eps = -1.0 : f32} : tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:62:3: error: adir.layer_norm: eps must not be negative, got -1.0

// -----

// The statistics have the input's leading dims.
func.func @statistics_type(%x: tensor<4x7x16xf32>) {
  %y:3 = adir.layer_norm %x {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32> -> (tensor<4x7x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:71:3: error: adir.layer_norm: result #1 type tensor<4xf32> does not match the type tensor<4x7xf32> implied by its operands and properties

// -----

func.func @normalized_shape_missing(%x: tensor<4x16xf32>) {
  %y:3 = adir.layer_norm %x : tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:79:3: error: adir.layer_norm: property 'normalized_shape' expected in operation 'adir.layer_norm'

// -----

func.func @grad_mean_shape(%x: tensor<4x16xf32>, %m: tensor<5xf32>, %s: tensor<4xf32>) {
  %d:3 = adir.layer_norm_grad %x, %m, %s, %x {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:87:3: error: adir.layer_norm_grad: operand mean (5) must have the input's leading dims (4)

// -----

func.func @grad_shape(%x: tensor<4x16xf32>, %m: tensor<4xf32>, %g: tensor<3x16xf32>) {
  %d:3 = adir.layer_norm_grad %x, %m, %m, %g {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3x16xf32> -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:95:3: error: adir.layer_norm_grad: operands input (4x16) and grad (3x16) must have the same shape

// -----

func.func @grad_weight_shape(%x: tensor<4x16xf32>, %m: tensor<4xf32>, %w: tensor<8xf32>) {
  %d:3 = adir.layer_norm_grad %x, %m, %m, %x, %w {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x16xf32>, tensor<8xf32> -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:103:3: error: adir.layer_norm_grad: operand weight (8) must have the normalized shape (16)

// -----

func.func @grad_result_type(%x: tensor<4x16xf32>, %m: tensor<4xf32>) {
  %d:3 = adir.layer_norm_grad %x, %m, %m, %x {normalized_shape = array<i64: 16>} : tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x16xf32> -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>)
  func.return
}
// CHECK: layer_norm_invalid.mlir:111:3: error: adir.layer_norm_grad: result #1 type tensor<4x16xf32> does not match the type tensor<16xf32> implied by its operands and properties
