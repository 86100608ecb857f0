// infer-shapes fills the unknown result shapes of data movement ops from their operands and
// properties (with matmuls around them where they meet).
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @shape_ops(%x: tensor<2x3x4xf32>, %v: tensor<3x1xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    %0 = adir.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %1 = adir.reshape %0 {shape = array<i64: -1, 6>} : tensor<4x2x3xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %2 = adir.reshape %1 {shape = array<i64: 24>} : tensor<4x6xf32> -> tensor<24xf32>
// CHECK-NEXT:    %3 = adir.broadcast_to %v {shape = array<i64: 2, 3, 4>} : tensor<3x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x2x3xf32>
func.func @shape_ops(%x: tensor<2x3x4xf32>, %v: tensor<3x1xf32>) -> tensor<*xf32> {
  %0 = adir.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<*xf32>
  %1 = adir.reshape %0 {shape = array<i64: -1, 6>} : tensor<*xf32> -> tensor<*xf32>
  %2 = adir.reshape %1 {shape = array<i64: 24>} : tensor<*xf32> -> tensor<*xf32>
  %3 = adir.broadcast_to %v {shape = array<i64: 2, 3, 4>} : tensor<3x1xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// What the operands do not know stays unknown: the -1 of a reshape needs every input dim,
// a transpose of an unranked tensor knows only its rank, a matmul of one only that it exists.
// CHECK-LABEL: func.func @partly_unknown(%a: tensor<?x784xf32>, %u: tensor<*xf32>, %w: tensor<784x32xf32>) -> tensor<?x28x28xf32>
// CHECK-NEXT:    %0 = adir.reshape %a {shape = array<i64: -1, 28, 28>} : tensor<?x784xf32> -> tensor<?x28x28xf32>
// CHECK-NEXT:    %1 = adir.matmul %a, %w : tensor<?x784xf32>, tensor<784x32xf32> -> tensor<?x32xf32>
// CHECK-NEXT:    %2 = adir.transpose %u {permutation = array<i64: 1, 0>} : tensor<*xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %3 = adir.matmul %u, %w : tensor<*xf32>, tensor<784x32xf32> -> tensor<*xf32>
// CHECK-NEXT:    %4 = adir.broadcast_to %u {shape = array<i64: 5, 6>} : tensor<*xf32> -> tensor<5x6xf32>
// CHECK-NEXT:    func.return %0 : tensor<?x28x28xf32>
func.func @partly_unknown(%a: tensor<?x784xf32>, %u: tensor<*xf32>, %w: tensor<784x32xf32>) -> tensor<*xf32> {
  %0 = adir.reshape %a {shape = array<i64: -1, 28, 28>} : tensor<?x784xf32> -> tensor<*xf32>
  %1 = adir.matmul %a, %w : tensor<?x784xf32>, tensor<784x32xf32> -> tensor<*xf32>
  %2 = adir.transpose %u {permutation = array<i64: 1, 0>} : tensor<*xf32> -> tensor<*xf32>
  %3 = adir.matmul %u, %w : tensor<*xf32>, tensor<784x32xf32> -> tensor<*xf32>
  %4 = adir.broadcast_to %u {shape = array<i64: 5, 6>} : tensor<*xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}

// -----

// A constant's result takes the type of its data.
// CHECK-LABEL: func.func @constant() -> tensor<2x2xf32>
// CHECK-NEXT:    %0 = adir.constant dense<5.000000e-01> : tensor<2x2xf32>
// CHECK-NEXT:    %1 = adir.matmul %0, %0 : tensor<2x2xf32>
// CHECK-NEXT:    func.return %1 : tensor<2x2xf32>
func.func @constant() -> tensor<*xf32> {
  %0 = adir.constant dense<0.5> : tensor<2x2xf32> -> tensor<*xf32>
  %1 = adir.matmul %0, %0 : tensor<*xf32>, tensor<*xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}

// -----

// flatten merges dims, pad grows them, concat adds the sizes along its axis, slice counts
// the elements Python slicing selects; a `?` stays unknown where it matters.
// CHECK-LABEL: func.func @data_movement(%x: tensor<2x3x4xf32>, %a: tensor<?x3x4xf32>, %u: tensor<*xf32>) -> tensor<2x7x4xf32>
// CHECK-NEXT:    %0 = adir.flatten %x {start_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK-NEXT:    %1 = adir.flatten %a {end_dim = 1 : i64} : tensor<?x3x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT:    %2 = adir.flatten %u : tensor<*xf32> -> tensor<?xf32>
// CHECK-NEXT:    %3 = adir.pad %0 {low = array<i64: 1, 0>, high = array<i64: 2, 3>} : tensor<2x12xf32> -> tensor<5x15xf32>
// CHECK-NEXT:    %4 = adir.pad %a {low = array<i64: 1, 0, 0>, high = array<i64: 0, 1, 0>} : tensor<?x3x4xf32> -> tensor<?x4x4xf32>
// CHECK-NEXT:    %5 = adir.concat %x, %4, %x {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<?x4x4xf32>, tensor<2x3x4xf32> -> tensor<2x10x4xf32>
// CHECK-NEXT:    %6 = adir.concat %a, %x : tensor<?x3x4xf32>, tensor<2x3x4xf32> -> tensor<?x3x4xf32>
// CHECK-NEXT:    %7 = adir.slice %5 {start = array<i64: 0, -7, 0>, stop = array<i64: 9, 10, 4>} : tensor<2x10x4xf32> -> tensor<2x7x4xf32>
// CHECK-NEXT:    %8 = adir.slice %a {start = array<i64: 0, 0, 1>, stop = array<i64: 1, 3, 4>, step = array<i64: 1, 2, 2>} : tensor<?x3x4xf32> -> tensor<?x2x2xf32>
// CHECK-NEXT:    %9 = adir.slice_grad %8 {start = array<i64: 0, 0, 1>, stop = array<i64: 1, 3, 4>, step = array<i64: 1, 2, 2>, shape = array<i64: 5, 3, 4>} : tensor<?x2x2xf32> -> tensor<5x3x4xf32>
// CHECK-NEXT:    func.return %7 : tensor<2x7x4xf32>
func.func @data_movement(%x: tensor<2x3x4xf32>, %a: tensor<?x3x4xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  %0 = adir.flatten %x {start_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<*xf32>
  %1 = adir.flatten %a {end_dim = 1 : i64} : tensor<?x3x4xf32> -> tensor<*xf32>
  %2 = adir.flatten %u : tensor<*xf32> -> tensor<*xf32>
  %3 = adir.pad %0 {low = array<i64: 1, 0>, high = array<i64: 2, 3>} : tensor<*xf32> -> tensor<*xf32>
  %4 = adir.pad %a {low = array<i64: 1, 0, 0>, high = array<i64: 0, 1, 0>} : tensor<?x3x4xf32> -> tensor<*xf32>
  %5 = adir.concat %x, %4, %x {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<*xf32>, tensor<2x3x4xf32> -> tensor<*xf32>
  %6 = adir.concat %a, %x : tensor<?x3x4xf32>, tensor<2x3x4xf32> -> tensor<*xf32>
  %7 = adir.slice %5 {start = array<i64: 0, -7, 0>, stop = array<i64: 9, 10, 4>} : tensor<*xf32> -> tensor<*xf32>
  %8 = adir.slice %a {start = array<i64: 0, 0, 1>, stop = array<i64: 1, 3, 4>, step = array<i64: 1, 2, 2>} : tensor<?x3x4xf32> -> tensor<*xf32>
  %9 = adir.slice_grad %8 {start = array<i64: 0, 0, 1>, stop = array<i64: 1, 3, 4>, step = array<i64: 1, 2, 2>, shape = array<i64: 5, 3, 4>} : tensor<*xf32> -> tensor<*xf32>
  func.return %7 : tensor<*xf32>
}
