// infer-shapes fills the unknown result shapes of matmuls from their operands and flags.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// An MLP layer stack: the flags decide which dims contract and which remain.
// CHECK-LABEL: func.func @mlp(%x: tensor<8x784xf32>, %w1: tensor<32x784xf32>, %w2: tensor<32x10xf32>) -> tensor<8x10xf32>
// CHECK-NEXT:    %0 = adir.matmul %x, %w1 {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    %1 = adir.matmul %0, %w2 : tensor<8x32xf32>, tensor<32x10xf32> -> tensor<8x10xf32>
// CHECK-NEXT:    %2 = adir.matmul %x, %0 {transpose_a} : tensor<8x784xf32>, tensor<8x32xf32> -> tensor<784x32xf32>
// CHECK-NEXT:    %3 = adir.matmul %w1, %2 {transpose_a, transpose_b} : tensor<32x784xf32>, tensor<784x32xf32> -> tensor<784x784xf32>
// CHECK-NEXT:    func.return %1 : tensor<8x10xf32>
func.func @mlp(%x: tensor<8x784xf32>, %w1: tensor<32x784xf32>, %w2: tensor<32x10xf32>) -> tensor<*xf32> {
  %0 = adir.matmul %x, %w1 {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<*xf32>
  %1 = adir.matmul %0, %w2 : tensor<*xf32>, tensor<32x10xf32> -> tensor<*xf32>
  %2 = adir.matmul %x, %0 {transpose_a} : tensor<8x784xf32>, tensor<*xf32> -> tensor<*xf32>
  %3 = adir.matmul %w1, %2 {transpose_a, transpose_b} : tensor<32x784xf32>, tensor<*xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}

// -----

// Batched products keep the batch dim; a 2-D rhs is shared across it; a `?` batch dim is
// taken from the other operand.
// CHECK-LABEL: func.func @batched(%a: tensor<4x2x3xf32>, %b: tensor<?x3x5xf32>, %w: tensor<5x3xf32>) -> tensor<4x2x5xf32>
// CHECK-NEXT:    %0 = adir.matmul %a, %b : tensor<4x2x3xf32>, tensor<?x3x5xf32> -> tensor<4x2x5xf32>
// CHECK-NEXT:    %1 = adir.matmul %a, %w {transpose_b} : tensor<4x2x3xf32>, tensor<5x3xf32> -> tensor<4x2x5xf32>
// CHECK-NEXT:    %2 = adir.matmul %b, %a {transpose_a, transpose_b} : tensor<?x3x5xf32>, tensor<4x2x3xf32> -> tensor<4x5x2xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x2x5xf32>
func.func @batched(%a: tensor<4x2x3xf32>, %b: tensor<?x3x5xf32>, %w: tensor<5x3xf32>) -> tensor<*xf32> {
  %0 = adir.matmul %a, %b : tensor<4x2x3xf32>, tensor<?x3x5xf32> -> tensor<*xf32>
  %1 = adir.matmul %a, %w {transpose_b} : tensor<4x2x3xf32>, tensor<5x3xf32> -> tensor<?x?x?xf32>
  %2 = adir.matmul %b, %a {transpose_a, transpose_b} : tensor<?x3x5xf32>, tensor<4x2x3xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}
