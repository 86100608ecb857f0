// Every elementwise op prints in its custom form and survives a trip through the generic form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %s: tensor<f32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = adir.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %0 = adir.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = adir.sub %0, %a : tensor<2x3xf32>
  %1 = adir.sub %0, %a : tensor<2x3xf32>
  // CHECK-NEXT: %2 = adir.mul %1, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %2 = adir.mul %1, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  // CHECK-NEXT: %3 = adir.div %2, %a : tensor<2x3xf32>
  %3 = adir.div %2, %a : tensor<2x3xf32>
  // CHECK-NEXT: %4 = adir.pow %3, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %4 = adir.pow %3, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  // CHECK-NEXT: %5 = adir.maximum %4, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %5 = adir.maximum %4, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %6 = adir.minimum %5, %a : tensor<2x3xf32>
  %6 = adir.minimum %5, %a : tensor<2x3xf32>
  func.return %6 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @unary
func.func @unary(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %0 = adir.neg %a : tensor<4xf32>
  %0 = adir.neg %a : tensor<4xf32>
  // CHECK-NEXT: %1 = adir.exp %0 : tensor<4xf32>
  %1 = adir.exp %0 : tensor<4xf32>
  // CHECK-NEXT: %2 = adir.log %1 : tensor<4xf32>
  %2 = adir.log %1 : tensor<4xf32>
  // CHECK-NEXT: %3 = adir.sqrt %2 : tensor<4xf32>
  %3 = adir.sqrt %2 : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @compare_and_select
func.func @compare_and_select(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = adir.cmp %a, %z {predicate = "gt"} : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xi1>
  %0 = adir.cmp %a, %z {predicate = "gt"} : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xi1>
  // CHECK-NEXT: %1 = adir.select %0, %a, %z : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %1 = adir.select %0, %a, %z : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// -----

// Unknown shapes are legal before infer-shapes.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%a: tensor<?x3xf32>, %b: tensor<*xf32>) -> tensor<*xf32> {
  // CHECK-NEXT: %0 = adir.add %a, %b : tensor<?x3xf32>, tensor<*xf32> -> tensor<*xf32>
  %0 = adir.add %a, %b : tensor<?x3xf32>, tensor<*xf32> -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}
