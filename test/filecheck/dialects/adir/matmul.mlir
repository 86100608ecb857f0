// Every matmul form prints in its custom form and survives a trip through the generic form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @matmul
func.func @matmul(%x: tensor<8x784xf32>, %w: tensor<32x784xf32>, %v: tensor<784x32xf32>) -> tensor<8x32xf32> {
  // CHECK-NEXT: %0 = adir.matmul %x, %v : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  %0 = adir.matmul %x, %v : tensor<8x784xf32>, tensor<784x32xf32> -> tensor<8x32xf32>
  // CHECK-NEXT: %1 = adir.matmul %x, %w {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<8x32xf32>
  %1 = adir.matmul %x, %w {transpose_b} : tensor<8x784xf32>, tensor<32x784xf32> -> tensor<8x32xf32>
  // CHECK-NEXT: %2 = adir.matmul %x, %0 {transpose_a} : tensor<8x784xf32>, tensor<8x32xf32> -> tensor<784x32xf32>
  %2 = adir.matmul %x, %0 {transpose_a} : tensor<8x784xf32>, tensor<8x32xf32> -> tensor<784x32xf32>
  // CHECK-NEXT: %3 = adir.matmul %v, %w {transpose_a, transpose_b} : tensor<784x32xf32>, tensor<32x784xf32> -> tensor<32x32xf32>
  %3 = adir.matmul %v, %w {transpose_a, transpose_b} : tensor<784x32xf32>, tensor<32x784xf32> -> tensor<32x32xf32>
  // A square matmul whose types are all equal prints one type.
  // CHECK-NEXT: %4 = adir.matmul %3, %3 : tensor<32x32xf32>
  %4 = adir.matmul %3, %3 : tensor<32x32xf32>
  func.return %1 : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @batched
func.func @batched(%a: tensor<4x2x3xf32>, %b: tensor<4x3x5xf32>, %w: tensor<5x3xf32>) -> tensor<4x2x5xf32> {
  // CHECK-NEXT: %0 = adir.matmul %a, %b : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
  %0 = adir.matmul %a, %b : tensor<4x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
  // CHECK-NEXT: %1 = adir.matmul %a, %w {transpose_b} : tensor<4x2x3xf32>, tensor<5x3xf32> -> tensor<4x2x5xf32>
  %1 = adir.matmul %a, %w {transpose_b} : tensor<4x2x3xf32>, tensor<5x3xf32> -> tensor<4x2x5xf32>
  // CHECK-NEXT: %2 = adir.matmul %b, %a {transpose_a, transpose_b} : tensor<4x3x5xf32>, tensor<4x2x3xf32> -> tensor<4x5x2xf32>
  %2 = adir.matmul %b, %a {transpose_a, transpose_b} : tensor<4x3x5xf32>, tensor<4x2x3xf32> -> tensor<4x5x2xf32>
  func.return %1 : tensor<4x2x5xf32>
}
