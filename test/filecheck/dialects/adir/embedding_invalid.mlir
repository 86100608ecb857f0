// Every verifier rule of adir.embedding and adir.embedding_grad, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @weight_rank(%w: tensor<50xf32>, %i: tensor<4xi32>) {
  %e = adir.embedding %w, %i : tensor<50xf32>, tensor<4xi32> -> tensor<4x1xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:5:3: error: adir.embedding: operand weight must have rank 2, got rank 1 (50)

// -----

// Indices are i32, as adir's labels (the importer converts PyTorch's int64).
func.func @indices_i64(%w: tensor<50x16xf32>, %i: tensor<4xi64>) {
  %e = adir.embedding %w, %i : tensor<50x16xf32>, tensor<4xi64> -> tensor<4x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:14:3: error: adir.embedding: operand indices must have element type i32, got i64

// -----

func.func @indices_float(%w: tensor<50x16xf32>, %i: tensor<4xf32>) {
  %e = adir.embedding %w, %i : tensor<50x16xf32>, tensor<4xf32> -> tensor<4x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:22:3: error: adir.embedding: operand 'indices' at position 1 does not verify: f32 should be of base attribute integer_type

// -----

func.func @padding_idx_outside(%w: tensor<50x16xf32>, %i: tensor<4xi32>) {
  %e = adir.embedding %w, %i {padding_idx = 50 : i64} : tensor<50x16xf32>, tensor<4xi32> -> tensor<4x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:30:3: error: adir.embedding: padding_idx must be a row of the table, in [0, num_weights), got 50, num_weights = 50

// -----

func.func @padding_idx_negative(%w: tensor<50x16xf32>, %i: tensor<4xi32>) {
  %e = adir.embedding %w, %i {padding_idx = -1 : i64} : tensor<50x16xf32>, tensor<4xi32> -> tensor<4x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:38:3: error: adir.embedding: padding_idx must be a row of the table, in [0, num_weights), got -1, num_weights = 50

// -----

func.func @result_type(%w: tensor<50x16xf32>, %i: tensor<4x2xi32>) {
  %e = adir.embedding %w, %i : tensor<50x16xf32>, tensor<4x2xi32> -> tensor<4x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:46:3: error: adir.embedding: result type tensor<4x16xf32> does not match the type tensor<4x2x16xf32> implied by its operands and properties

// -----

func.func @grad_num_weights(%g: tensor<4x16xf32>, %i: tensor<4xi32>) {
  %d = adir.embedding_grad %g, %i {num_weights = -1 : i64} : tensor<4x16xf32>, tensor<4xi32> -> tensor<50x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:54:3: error: adir.embedding_grad: num_weights must not be negative, got -1

// -----

func.func @grad_padding_idx(%g: tensor<4x16xf32>, %i: tensor<4xi32>) {
  %d = adir.embedding_grad %g, %i {num_weights = 50 : i64, padding_idx = 50 : i64} : tensor<4x16xf32>, tensor<4xi32> -> tensor<50x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:62:3: error: adir.embedding_grad: padding_idx must be a row of the table, in [0, num_weights), got 50, num_weights = 50

// -----

func.func @grad_shape(%g: tensor<4x16xf32>, %i: tensor<5xi32>) {
  %d = adir.embedding_grad %g, %i {num_weights = 50 : i64} : tensor<4x16xf32>, tensor<5xi32> -> tensor<50x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:70:3: error: adir.embedding_grad: operand grad (4x16) must be the indices' shape (5) and one dim more

// -----

func.func @grad_rank(%g: tensor<4xf32>, %i: tensor<4xi32>) {
  %d = adir.embedding_grad %g, %i {num_weights = 50 : i64} : tensor<4xf32>, tensor<4xi32> -> tensor<50x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:78:3: error: adir.embedding_grad: operand grad (4) must be the indices' shape (4) and one dim more

// -----

func.func @grad_result(%g: tensor<4x16xf32>, %i: tensor<4xi32>) {
  %d = adir.embedding_grad %g, %i {num_weights = 50 : i64} : tensor<4x16xf32>, tensor<4xi32> -> tensor<49x16xf32>
  func.return
}
// CHECK: embedding_invalid.mlir:86:3: error: adir.embedding_grad: result type tensor<49x16xf32> does not match the type tensor<50x16xf32> implied by its operands and properties
