// A transpose of the last two dims that feeds a matmul becomes the matmul's flag, and goes away
// once nothing else uses it.
// RUN: adir-opt %s --split-input-file -p fold-transpose-into-matmul | filecheck %s

// CHECK-LABEL: func.func @lhs
// CHECK-NEXT:    %y = adir.matmul %x, %w {transpose_a} : tensor<784x8xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %y : tensor<8x32xf32>
func.func @lhs(%x: tensor<784x8xf32>, %w: tensor<784x32xf32>) -> tensor<8x32xf32> {
  %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<784x8xf32> -> tensor<8x784xf32>
  %y = adir.matmul %t, %w : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @rhs
// CHECK-NEXT:    %y = adir.matmul %x, %w {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %y : tensor<8x32xf32>
func.func @rhs(%x: tensor<8x784xf32>, %w: tensor<32x784xf32>) -> tensor<8x32xf32> {
  %t = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<32x784xf32> -> tensor<784x32xf32>
  %y = adir.matmul %x, %t : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// -----

// Both operands at once; discardable attributes and the declared result type are kept.
// CHECK-LABEL: func.func @both
// CHECK-NEXT:    %y = adir.matmul %a, %b {transpose_a, transpose_b, note = "kept"} : tensor<3x2xf32>, tensor<4x3xf32> -> tensor<*xf32>
// CHECK-NEXT:    func.return %y : tensor<*xf32>
func.func @both(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>) -> tensor<*xf32> {
  %ta = adir.transpose %a {permutation = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  %tb = adir.transpose %b {permutation = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
  %y = adir.matmul %ta, %tb {note = "kept"} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<*xf32>
  func.return %y : tensor<*xf32>
}

// -----

// A flag that is already set is toggled off: (w^T)^T = w.
// CHECK-LABEL: func.func @toggles_set_flag
// CHECK-NEXT:    %y = adir.matmul %x, %w : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %y : tensor<8x32xf32>
func.func @toggles_set_flag(%x: tensor<8x784xf32>, %w: tensor<784x32xf32>) -> tensor<8x32xf32> {
  %t = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<784x32xf32> -> tensor<32x784xf32>
  %y = adir.matmul %x, %t {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// -----

// Two transposes in a row toggle the flag twice, and both go.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %y = adir.matmul %x, %w : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %y : tensor<8x32xf32>
func.func @chain(%x: tensor<8x784xf32>, %w: tensor<784x32xf32>) -> tensor<8x32xf32> {
  %t1 = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<784x32xf32> -> tensor<32x784xf32>
  %t2 = adir.transpose %t1 {permutation = array<i64: 1, 0>} : tensor<32x784xf32> -> tensor<784x32xf32>
  %y = adir.matmul %x, %t2 : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// -----

// One transpose feeding both operands folds into both flags and is erased once.
// CHECK-LABEL: func.func @same_transpose_twice
// CHECK-NEXT:    %y = adir.matmul %x, %x {transpose_a, transpose_b} : tensor<3x3xf32>
// CHECK-NEXT:    func.return %y : tensor<3x3xf32>
func.func @same_transpose_twice(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<3x3xf32>
  %y = adir.matmul %t, %t : tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// -----

// Batched: [0, 2, 1] swaps the last two dims of a 3-D operand; [1, 0] those of a 2-D rhs
// shared across the batch.
// CHECK-LABEL: func.func @batched
// CHECK-NEXT:    %y = adir.matmul %a, %b {transpose_a} : tensor<4x3x2xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
// CHECK-NEXT:    %z = adir.matmul %y, %w {transpose_b} : tensor<4x2x5xf32>, tensor<6x5xf32> -> tensor<4x2x6xf32>
// CHECK-NEXT:    func.return %z : tensor<4x2x6xf32>
func.func @batched(%a: tensor<4x3x2xf32>, %b: tensor<4x3x5xf32>, %w: tensor<6x5xf32>) -> tensor<4x2x6xf32> {
  %ta = adir.transpose %a {permutation = array<i64: 0, 2, 1>} : tensor<4x3x2xf32> -> tensor<4x2x3xf32>
  %y = adir.matmul %ta, %b : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
  %tw = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<6x5xf32> -> tensor<5x6xf32>
  %z = adir.matmul %y, %tw : tensor<4x2x5xf32>, tensor<5x6xf32> -> tensor<4x2x6xf32>
  func.return %z : tensor<4x2x6xf32>
}
