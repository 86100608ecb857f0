// What fold-transpose-into-matmul must leave alone.
// RUN: adir-opt %s --split-input-file -p fold-transpose-into-matmul | filecheck %s

// A transpose with another use stays for that use; the matmul still reads around it.
// CHECK-LABEL: func.func @other_use
// CHECK-NEXT:    %t = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<32x784xf32> -> tensor<784x32xf32>
// CHECK-NEXT:    %y = adir.matmul %x, %w {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %y, %t : tensor<8x32xf32>, tensor<784x32xf32>
func.func @other_use(%x: tensor<8x784xf32>, %w: tensor<32x784xf32>) -> (tensor<8x32xf32>, tensor<784x32xf32>) {
  %t = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<32x784xf32> -> tensor<784x32xf32>
  %y = adir.matmul %x, %t : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  func.return %y, %t : tensor<8x32xf32>, tensor<784x32xf32>
}

// -----

// Permutations that move the batch dim are not a matmul flag.
// CHECK-LABEL: func.func @moves_batch_dim
// CHECK-NEXT:    %ta = adir.transpose %a {permutation = array<i64: 1, 0, 2>} : tensor<2x4x3xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %tb = adir.transpose %b {permutation = array<i64: 2, 1, 0>} : tensor<5x3x4xf32> -> tensor<4x3x5xf32>
// CHECK-NEXT:    %y = adir.matmul %ta, %tb : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
// CHECK-NEXT:    func.return %y : tensor<4x2x5xf32>
func.func @moves_batch_dim(%a: tensor<2x4x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<4x2x5xf32> {
  %ta = adir.transpose %a {permutation = array<i64: 1, 0, 2>} : tensor<2x4x3xf32> -> tensor<4x2x3xf32>
  %tb = adir.transpose %b {permutation = array<i64: 2, 1, 0>} : tensor<5x3x4xf32> -> tensor<4x3x5xf32>
  %y = adir.matmul %ta, %tb : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
  func.return %y : tensor<4x2x5xf32>
}

// -----

// The identity permutation swaps nothing (removing it is canonicalization's business).
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    %t = adir.transpose %x {permutation = array<i64: 0, 1>} : tensor<8x784xf32>
// CHECK-NEXT:    %y = adir.matmul %t, %w : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
func.func @identity(%x: tensor<8x784xf32>, %w: tensor<784x32xf32>) -> tensor<8x32xf32> {
  %t = adir.transpose %x {permutation = array<i64: 0, 1>} : tensor<8x784xf32>
  %y = adir.matmul %t, %w : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}

// -----

// A transpose that feeds no matmul is not this pass's business.
// CHECK-LABEL: func.func @no_matmul
// CHECK-NEXT:    %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %t : tensor<3x2xf32>
func.func @no_matmul(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %t : tensor<3x2xf32>
}
