// Every data movement op prints in its custom form and survives a trip through the generic
// form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @shape_ops
func.func @shape_ops(%x: tensor<2x3x4xf32>, %v: tensor<3x1xf32>) -> tensor<4x3x2xf32> {
  // CHECK-NEXT: %0 = adir.transpose %x {permutation = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %0 = adir.transpose %x {permutation = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  // CHECK-NEXT: %1 = adir.reshape %x {shape = array<i64: 6, 4>} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = adir.reshape %x {shape = array<i64: 6, 4>} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK-NEXT: %2 = adir.reshape %x {shape = array<i64: 2, -1>} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %2 = adir.reshape %x {shape = array<i64: 2, -1>} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: %3 = adir.broadcast_to %v {shape = array<i64: 5, 3, 4>} : tensor<3x1xf32> -> tensor<5x3x4xf32>
  %3 = adir.broadcast_to %v {shape = array<i64: 5, 3, 4>} : tensor<3x1xf32> -> tensor<5x3x4xf32>
  // An identity permutation and a same-shape reshape print one type.
  // CHECK-NEXT: %4 = adir.transpose %x {permutation = array<i64: 0, 1, 2>} : tensor<2x3x4xf32>
  %4 = adir.transpose %x {permutation = array<i64: 0, 1, 2>} : tensor<2x3x4xf32>
  // CHECK-NEXT: %5 = adir.reshape %x {shape = array<i64: 2, 3, 4>} : tensor<2x3x4xf32>
  %5 = adir.reshape %x {shape = array<i64: 2, 3, 4>} : tensor<2x3x4xf32>
  func.return %0 : tensor<4x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @constants
func.func @constants() -> tensor<2xf32> {
  // CHECK-NEXT: %0 = adir.constant dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
  %0 = adir.constant dense<[1.0, 2.5]> : tensor<2xf32>
  // A splat keeps its one value.
  // CHECK-NEXT: %1 = adir.constant dense<5.000000e-01> : tensor<4x4xf32>
  %1 = adir.constant dense<0.5> : tensor<4x4xf32>
  // CHECK-NEXT: %2 = adir.constant dense<-3.000000e+00> : tensor<f32>
  %2 = adir.constant dense<-3.0> : tensor<f32>
  // Discardable attributes go first, as for arith.constant.
  // CHECK-NEXT: %3 = adir.constant {note = "bias"} dense<{{\[}}[0.000000e+00, 1.000000e+00]]> : tensor<1x2xf32>
  %3 = adir.constant {note = "bias"} dense<[[0.0, 1.0]]> : tensor<1x2xf32>
  // A result type that says less than the data is kept (infer-shapes refines it).
  // CHECK-NEXT: %4 = adir.constant dense<1.000000e+00> : tensor<3xf32> -> tensor<*xf32>
  %4 = adir.constant dense<1.0> : tensor<3xf32> -> tensor<*xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// Unknown shapes are legal before infer-shapes.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%a: tensor<?x784xf32>, %w: tensor<32x784xf32>, %u: tensor<*xf32>) -> tensor<?x32xf32> {
  // CHECK-NEXT: %0 = adir.matmul %a, %w {transpose_b} : tensor<?x784xf32>, tensor<32x784xf32> -> tensor<?x32xf32>
  %0 = adir.matmul %a, %w {transpose_b} : tensor<?x784xf32>, tensor<32x784xf32> -> tensor<?x32xf32>
  // CHECK-NEXT: %1 = adir.matmul %u, %w : tensor<*xf32>, tensor<32x784xf32> -> tensor<*xf32>
  %1 = adir.matmul %u, %w : tensor<*xf32>, tensor<32x784xf32> -> tensor<*xf32>
  // CHECK-NEXT: %2 = adir.transpose %u {permutation = array<i64: 1, 0>} : tensor<*xf32> -> tensor<?x?xf32>
  %2 = adir.transpose %u {permutation = array<i64: 1, 0>} : tensor<*xf32> -> tensor<?x?xf32>
  // CHECK-NEXT: %3 = adir.reshape %a {shape = array<i64: -1, 28, 28>} : tensor<?x784xf32> -> tensor<?x28x28xf32>
  %3 = adir.reshape %a {shape = array<i64: -1, 28, 28>} : tensor<?x784xf32> -> tensor<?x28x28xf32>
  // CHECK-NEXT: %4 = adir.broadcast_to %u {shape = array<i64: 2, 3>} : tensor<*xf32> -> tensor<2x3xf32>
  %4 = adir.broadcast_to %u {shape = array<i64: 2, 3>} : tensor<*xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<?x32xf32>
}

// -----

// flatten, pad, concat, slice and slice_grad. Defaults (start_dim 0, end_dim -1, pad value
// 0.0, concat axis 0, slice steps 1) are left out of the print.
// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %s: tensor<f32>) -> tensor<2x8x4xf32> {
  // CHECK-NEXT: %0 = adir.flatten %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %0 = adir.flatten %x : tensor<2x3x4xf32> -> tensor<24xf32>
  // CHECK-NEXT: %1 = adir.flatten %x {start_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %1 = adir.flatten %x {start_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: %2 = adir.flatten %x {start_dim = -3 : i64, end_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %2 = adir.flatten %x {start_dim = -3 : i64, end_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK-NEXT: %3 = adir.flatten %s : tensor<f32> -> tensor<1xf32>
  %3 = adir.flatten %s : tensor<f32> -> tensor<1xf32>
  // CHECK-NEXT: %4 = adir.pad %x {low = array<i64: 0, 1, 2>, high = array<i64: 1, 0, 3>} : tensor<2x3x4xf32> -> tensor<3x4x9xf32>
  %4 = adir.pad %x {low = array<i64: 0, 1, 2>, high = array<i64: 1, 0, 3>} : tensor<2x3x4xf32> -> tensor<3x4x9xf32>
  // CHECK-NEXT: %5 = adir.pad %x {low = array<i64: 0, 0, 0>, high = array<i64: 0, 0, 0>, value = -1.500000e+00 : f32} : tensor<2x3x4xf32>
  %5 = adir.pad %x {low = array<i64: 0, 0, 0>, high = array<i64: 0, 0, 0>, value = -1.5 : f32} : tensor<2x3x4xf32>
  // CHECK-NEXT: %6 = adir.concat %x, %y {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x8x4xf32>
  %6 = adir.concat %x, %y {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x8x4xf32>
  // CHECK-NEXT: %7 = adir.concat %x, %x, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<6x3x4xf32>
  %7 = adir.concat %x, %x, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<6x3x4xf32>
  // CHECK-NEXT: %8 = adir.concat %x, %x {axis = -1 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  %8 = adir.concat %x, %x {axis = -1 : i64} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  // A concat of one input is a copy, and prints one type.
  // CHECK-NEXT: %9 = adir.concat %x : tensor<2x3x4xf32>
  %9 = adir.concat %x : tensor<2x3x4xf32>
  // CHECK-NEXT: %10 = adir.slice %x {start = array<i64: 0, 1, 0>, stop = array<i64: 2, 3, 4>} : tensor<2x3x4xf32> -> tensor<2x2x4xf32>
  %10 = adir.slice %x {start = array<i64: 0, 1, 0>, stop = array<i64: 2, 3, 4>} : tensor<2x3x4xf32> -> tensor<2x2x4xf32>
  // Python slicing: x[1:, -2:100, ::3] (a negative start counts from the end, a stop past the
  // end is clamped).
  // CHECK-NEXT: %11 = adir.slice %x {start = array<i64: 1, -2, 0>, stop = array<i64: 2, 100, 4>, step = array<i64: 1, 1, 3>} : tensor<2x3x4xf32> -> tensor<1x2x2xf32>
  %11 = adir.slice %x {start = array<i64: 1, -2, 0>, stop = array<i64: 2, 100, 4>, step = array<i64: 1, 1, 3>} : tensor<2x3x4xf32> -> tensor<1x2x2xf32>
  // An empty slice.
  // CHECK-NEXT: %12 = adir.slice %x {start = array<i64: 0, 2, 0>, stop = array<i64: 2, 1, 4>} : tensor<2x3x4xf32> -> tensor<2x0x4xf32>
  %12 = adir.slice %x {start = array<i64: 0, 2, 0>, stop = array<i64: 2, 1, 4>} : tensor<2x3x4xf32> -> tensor<2x0x4xf32>
  // CHECK-NEXT: %13 = adir.slice_grad %11 {start = array<i64: 1, -2, 0>, stop = array<i64: 2, 100, 4>, step = array<i64: 1, 1, 3>, shape = array<i64: 2, 3, 4>} : tensor<1x2x2xf32> -> tensor<2x3x4xf32>
  %13 = adir.slice_grad %11 {start = array<i64: 1, -2, 0>, stop = array<i64: 2, 100, 4>, step = array<i64: 1, 1, 3>, shape = array<i64: 2, 3, 4>} : tensor<1x2x2xf32> -> tensor<2x3x4xf32>
  func.return %6 : tensor<2x8x4xf32>
}

// -----

// Unknown shapes are legal before infer-shapes.
// CHECK-LABEL: func.func @data_movement_unknown
func.func @data_movement_unknown(%a: tensor<?x3x4xf32>, %u: tensor<*xf32>) -> tensor<?x12xf32> {
  // CHECK-NEXT: %0 = adir.flatten %a {start_dim = 1 : i64} : tensor<?x3x4xf32> -> tensor<?x12xf32>
  %0 = adir.flatten %a {start_dim = 1 : i64} : tensor<?x3x4xf32> -> tensor<?x12xf32>
  // CHECK-NEXT: %1 = adir.flatten %u : tensor<*xf32> -> tensor<?xf32>
  %1 = adir.flatten %u : tensor<*xf32> -> tensor<?xf32>
  // CHECK-NEXT: %2 = adir.pad %a {low = array<i64: 1, 0, 0>, high = array<i64: 1, 0, 0>} : tensor<?x3x4xf32>
  %2 = adir.pad %a {low = array<i64: 1, 0, 0>, high = array<i64: 1, 0, 0>} : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
  // CHECK-NEXT: %3 = adir.concat %a, %u : tensor<?x3x4xf32>, tensor<*xf32> -> tensor<?x3x4xf32>
  %3 = adir.concat %a, %u : tensor<?x3x4xf32>, tensor<*xf32> -> tensor<?x3x4xf32>
  // CHECK-NEXT: %4 = adir.slice %u {start = array<i64: 0, 0>, stop = array<i64: 1, 2>} : tensor<*xf32> -> tensor<?x?xf32>
  %4 = adir.slice %u {start = array<i64: 0, 0>, stop = array<i64: 1, 2>} : tensor<*xf32> -> tensor<?x?xf32>
  func.return %0 : tensor<?x12xf32>
}
