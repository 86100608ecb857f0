// adir.embedding and adir.embedding_grad print in their custom form and survive a trip
// through the generic form: indices of rank 0, 1 and 2, with and without padding_idx.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @embedding
func.func @embedding(%w: tensor<50x16xf32>, %t: tensor<4x7xi32>, %v: tensor<5xi32>, %s: tensor<i32>) -> tensor<4x7x16xf32> {
  // CHECK-NEXT: %e = adir.embedding %w, %t : tensor<50x16xf32>, tensor<4x7xi32> -> tensor<4x7x16xf32>
  %e = adir.embedding %w, %t : tensor<50x16xf32>, tensor<4x7xi32> -> tensor<4x7x16xf32>
  // CHECK-NEXT: %e2 = adir.embedding %w, %v {padding_idx = 0 : i64} : tensor<50x16xf32>, tensor<5xi32> -> tensor<5x16xf32>
  %e2 = adir.embedding %w, %v {padding_idx = 0 : i64} : tensor<50x16xf32>, tensor<5xi32> -> tensor<5x16xf32>
  // CHECK-NEXT: %e3 = adir.embedding %w, %s : tensor<50x16xf32>, tensor<i32> -> tensor<16xf32>
  %e3 = adir.embedding %w, %s : tensor<50x16xf32>, tensor<i32> -> tensor<16xf32>
  // CHECK-NEXT: %dw = adir.embedding_grad %e, %t {num_weights = 50 : i64} : tensor<4x7x16xf32>, tensor<4x7xi32> -> tensor<50x16xf32>
  %dw = adir.embedding_grad %e, %t {num_weights = 50 : i64} : tensor<4x7x16xf32>, tensor<4x7xi32> -> tensor<50x16xf32>
  // CHECK-NEXT: %dw2 = adir.embedding_grad %e2, %v {num_weights = 50 : i64, padding_idx = 0 : i64} : tensor<5x16xf32>, tensor<5xi32> -> tensor<50x16xf32>
  %dw2 = adir.embedding_grad %e2, %v {num_weights = 50 : i64, padding_idx = 0 : i64} : tensor<5x16xf32>, tensor<5xi32> -> tensor<50x16xf32>
  func.return %e : tensor<4x7x16xf32>
}

// -----

// Unknown shapes are legal before infer-shapes.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%w: tensor<?x16xf32>, %t: tensor<?x7xi32>, %u: tensor<*xi32>) -> tensor<?x7x16xf32> {
  // CHECK-NEXT: %e = adir.embedding %w, %t : tensor<?x16xf32>, tensor<?x7xi32> -> tensor<?x7x16xf32>
  %e = adir.embedding %w, %t : tensor<?x16xf32>, tensor<?x7xi32> -> tensor<?x7x16xf32>
  // CHECK-NEXT: %e2 = adir.embedding %w, %u : tensor<?x16xf32>, tensor<*xi32> -> tensor<*xf32>
  %e2 = adir.embedding %w, %u : tensor<?x16xf32>, tensor<*xi32> -> tensor<*xf32>
  func.return %e : tensor<?x7x16xf32>
}
