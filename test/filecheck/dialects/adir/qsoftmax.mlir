// adir.qsoftmax prints in its custom form and survives a trip through the generic form; its
// result type is the input's (the softmax runs along the last axis, rank 1 or more).
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x10xi8>, %v: tensor<5xi8>, %i: tensor<2x3x4xi8>) -> (tensor<2x10xi8>, tensor<5xi8>, tensor<2x3x4xi8>) {
  // CHECK-NEXT: %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<2x10xi8>
  %0 = adir.qsoftmax %x {multiplier = 1073741824 : i32, shift = 23 : i32, diff_min = -248 : i32} : tensor<2x10xi8>
  // CHECK-NEXT: %1 = adir.qsoftmax %v {multiplier = 2147483647 : i32, shift = 30 : i32, diff_min = -1 : i32} : tensor<5xi8>
  %1 = adir.qsoftmax %v {multiplier = 2147483647 : i32, shift = 30 : i32, diff_min = -1 : i32} : tensor<5xi8> -> tensor<5xi8>
  // CHECK-NEXT: %2 = adir.qsoftmax %i {multiplier = 1073741824 : i32, shift = 0 : i32, diff_min = -2147483648 : i32} : tensor<2x3x4xi8>
  %2 = adir.qsoftmax %i {multiplier = 1073741824 : i32, shift = 0 : i32, diff_min = -2147483648 : i32} : tensor<2x3x4xi8>
  func.return %0, %1, %2 : tensor<2x10xi8>, tensor<5xi8>, tensor<2x3x4xi8>
}
