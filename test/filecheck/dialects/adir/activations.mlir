// Every activation prints in its custom form and survives a trip through the generic form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = adir.relu %x : tensor<2x3xf32>
  %0 = adir.relu %x : tensor<2x3xf32>
  // CHECK-NEXT: %1 = adir.leaky_relu %0 : tensor<2x3xf32>
  %1 = adir.leaky_relu %0 : tensor<2x3xf32>
  // CHECK-NEXT: %2 = adir.sigmoid %1 : tensor<2x3xf32>
  %2 = adir.sigmoid %1 : tensor<2x3xf32>
  // CHECK-NEXT: %3 = adir.tanh %2 : tensor<2x3xf32>
  %3 = adir.tanh %2 : tensor<2x3xf32>
  // CHECK-NEXT: %4 = adir.gelu %3 : tensor<2x3xf32>
  %4 = adir.gelu %3 : tensor<2x3xf32>
  // CHECK-NEXT: %5 = adir.softplus %4 : tensor<2x3xf32>
  %5 = adir.softplus %4 : tensor<2x3xf32>
  // CHECK-NEXT: %6 = adir.softplus %5 {beta = 2.000000e+00 : f32, threshold = 5.000000e+00 : f32} : tensor<2x3xf32>
  %6 = adir.softplus %5 {beta = 2.0 : f32, threshold = 5.0 : f32} : tensor<2x3xf32>
  func.return %6 : tensor<2x3xf32>
}

// -----

// Properties other than their defaults print; the defaults (alpha = 0.01, approximate = "none",
// axis = -1) are left out even when written.
// CHECK-LABEL: func.func @properties
func.func @properties(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = adir.leaky_relu %x {alpha = 2.000000e-01 : f32} : tensor<2x3xf32>
  %0 = adir.leaky_relu %x {alpha = 0.2 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %1 = adir.leaky_relu %0 : tensor<2x3xf32>
  %1 = adir.leaky_relu %0 {alpha = 0.01 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %2 = adir.gelu %1 {approximate = "tanh"} : tensor<2x3xf32>
  %2 = adir.gelu %1 {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK-NEXT: %3 = adir.gelu %2 : tensor<2x3xf32>
  %3 = adir.gelu %2 {approximate = "none"} : tensor<2x3xf32>
  // CHECK-NEXT: %4 = adir.softmax %3 {axis = 0 : i64} : tensor<2x3xf32>
  %4 = adir.softmax %3 {axis = 0 : i64} : tensor<2x3xf32>
  // CHECK-NEXT: %5 = adir.log_softmax %4 {axis = -2 : i64} : tensor<2x3xf32>
  %5 = adir.log_softmax %4 {axis = -2 : i64} : tensor<2x3xf32>
  // CHECK-NEXT: %6 = adir.softmax %5 : tensor<2x3xf32>
  %6 = adir.softmax %5 {axis = -1 : i64} : tensor<2x3xf32>
  // CHECK-NEXT: %7 = adir.log_softmax %6 : tensor<2x3xf32>
  %7 = adir.log_softmax %6 : tensor<2x3xf32>
  func.return %7 : tensor<2x3xf32>
}

// -----

// Unknown shapes are legal before infer-shapes.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<?x10xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  // CHECK-NEXT: %0 = adir.softmax %x : tensor<?x10xf32>
  %0 = adir.softmax %x : tensor<?x10xf32>
  // CHECK-NEXT: %1 = adir.log_softmax %u {axis = 3 : i64} : tensor<*xf32>
  %1 = adir.log_softmax %u {axis = 3 : i64} : tensor<*xf32>
  // CHECK-NEXT: %2 = adir.relu %0 : tensor<?x10xf32> -> tensor<*xf32>
  %2 = adir.relu %0 : tensor<?x10xf32> -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}

// -----

// The gradient ops: (saved forward value, adjoint of the result), one type for both and the
// result; the properties are the forward ops', with the same defaults left out.
// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = adir.relu_grad %x, %dy : tensor<2x3xf32>
  %0 = adir.relu_grad %x, %dy : tensor<2x3xf32>
  // CHECK-NEXT: %1 = adir.leaky_relu_grad %x, %0 : tensor<2x3xf32>
  %1 = adir.leaky_relu_grad %x, %0 {alpha = 0.01 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %2 = adir.leaky_relu_grad %x, %1 {alpha = 2.000000e-01 : f32} : tensor<2x3xf32>
  %2 = adir.leaky_relu_grad %x, %1 {alpha = 0.2 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %3 = adir.sigmoid_grad %x, %2 : tensor<2x3xf32>
  %3 = adir.sigmoid_grad %x, %2 : tensor<2x3xf32>
  // CHECK-NEXT: %4 = adir.tanh_grad %x, %3 : tensor<2x3xf32>
  %4 = adir.tanh_grad %x, %3 : tensor<2x3xf32>
  // CHECK-NEXT: %5 = adir.gelu_grad %x, %4 : tensor<2x3xf32>
  %5 = adir.gelu_grad %x, %4 {approximate = "none"} : tensor<2x3xf32>
  // CHECK-NEXT: %6 = adir.gelu_grad %x, %5 {approximate = "tanh"} : tensor<2x3xf32>
  %6 = adir.gelu_grad %x, %5 {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK-NEXT: %7 = adir.softplus_grad %x, %6 : tensor<2x3xf32>
  %7 = adir.softplus_grad %x, %6 : tensor<2x3xf32>
  // CHECK-NEXT: %8 = adir.softplus_grad %x, %7 {beta = 2.000000e+00 : f32, threshold = 5.000000e+00 : f32} : tensor<2x3xf32>
  %8 = adir.softplus_grad %x, %7 {beta = 2.0 : f32, threshold = 5.0 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %9 = adir.softmax_grad %x, %8 : tensor<2x3xf32>
  %9 = adir.softmax_grad %x, %8 {axis = -1 : i64} : tensor<2x3xf32>
  // CHECK-NEXT: %10 = adir.softmax_grad %x, %9 {axis = 0 : i64} : tensor<2x3xf32>
  %10 = adir.softmax_grad %x, %9 {axis = 0 : i64} : tensor<2x3xf32>
  // CHECK-NEXT: %11 = adir.log_softmax_grad %x, %10 : tensor<2x3xf32>
  %11 = adir.log_softmax_grad %x, %10 : tensor<2x3xf32>
  // CHECK-NEXT: %12 = adir.log_softmax_grad %x, %11 {axis = -2 : i64} : tensor<2x3xf32>
  %12 = adir.log_softmax_grad %x, %11 {axis = -2 : i64} : tensor<2x3xf32>
  func.return %12 : tensor<2x3xf32>
}

// -----

// Unknown dims: the operands need only be compatible; the result may say what either knows.
// CHECK-LABEL: func.func @gradients_unknown
func.func @gradients_unknown(%y: tensor<?x10xf32>, %dy: tensor<8x?xf32>, %u: tensor<*xf32>) -> tensor<8x10xf32> {
  // CHECK-NEXT: %0 = adir.softmax_grad %y, %dy : tensor<?x10xf32>, tensor<8x?xf32> -> tensor<8x10xf32>
  %0 = adir.softmax_grad %y, %dy : tensor<?x10xf32>, tensor<8x?xf32> -> tensor<8x10xf32>
  // CHECK-NEXT: %1 = adir.sigmoid_grad %u, %0 : tensor<*xf32>, tensor<8x10xf32> -> tensor<*xf32>
  %1 = adir.sigmoid_grad %u, %0 : tensor<*xf32>, tensor<8x10xf32> -> tensor<*xf32>
  // CHECK-NEXT: %2 = adir.log_softmax_grad %u, %u {axis = 5 : i64} : tensor<*xf32>
  %2 = adir.log_softmax_grad %u, %u {axis = 5 : i64} : tensor<*xf32>
  func.return %0 : tensor<8x10xf32>
}

// -----

// clamp's bounds print unless infinite (no bound on that side; -inf and +inf written out are
// the defaults too); `inclusive` chooses torch.clamp's gradient at the bounds.
// CHECK-LABEL: func.func @clamps
func.func @clamps(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = adir.clamp %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
  %0 = adir.clamp %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %1 = adir.clamp %0 {max = 2.500000e+00 : f32, inclusive} : tensor<2x3xf32>
  %1 = adir.clamp %0 {max = 2.5 : f32, inclusive} : tensor<2x3xf32>
  // CHECK-NEXT: %2 = adir.clamp %1 {min = -1.000000e+00 : f32} : tensor<2x3xf32>
  %2 = adir.clamp %1 {min = -1.0 : f32, max = 0x7F800000 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %3 = adir.hardswish %2 : tensor<2x3xf32>
  %3 = adir.hardswish %2 : tensor<2x3xf32>
  // CHECK-NEXT: %4 = adir.hardsigmoid %3 : tensor<2x3xf32>
  %4 = adir.hardsigmoid %3 : tensor<2x3xf32>
  // CHECK-NEXT: %5 = adir.clamp_grad %0, %dy {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
  %5 = adir.clamp_grad %0, %dy {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %6 = adir.clamp_grad %x, %5 {min = 3.000000e+00 : f32, max = 1.000000e+00 : f32, inclusive} : tensor<2x3xf32>
  %6 = adir.clamp_grad %x, %5 {min = 3.0 : f32, max = 1.0 : f32, inclusive} : tensor<2x3xf32>
  // CHECK-NEXT: %7 = adir.hardswish_grad %x, %6 : tensor<2x3xf32>
  %7 = adir.hardswish_grad %x, %6 : tensor<2x3xf32>
  // CHECK-NEXT: %8 = adir.hardsigmoid_grad %x, %7 : tensor<2x3xf32>
  %8 = adir.hardsigmoid_grad %x, %7 : tensor<2x3xf32>
  func.return %8 : tensor<2x3xf32>
}

// The 1-bit masks of a relu or clamp's saved value: 2 x 3 x 7 = 42 elements, 2 words of 32 bits.
// CHECK-LABEL: func.func @masks
func.func @masks(%y: tensor<2x3x7xf32>, %dy: tensor<2x3x7xf32>) -> tensor<2x3x7xf32> {
  // CHECK-NEXT: %0 = adir.relu_mask %y : tensor<2x3x7xf32> -> tensor<2xi32>
  %0 = adir.relu_mask %y : tensor<2x3x7xf32> -> tensor<2xi32>
  // CHECK-NEXT: %1 = adir.clamp_mask %y {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3x7xf32> -> tensor<2xi32>
  %1 = adir.clamp_mask %y {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x3x7xf32> -> tensor<2xi32>
  // CHECK-NEXT: %2 = adir.clamp_mask %y {min = -1.000000e+00 : f32, inclusive} : tensor<2x3x7xf32> -> tensor<2xi32>
  %2 = adir.clamp_mask %y {min = -1.0 : f32, inclusive} : tensor<2x3x7xf32> -> tensor<2xi32>
  // CHECK-NEXT: %3 = adir.mask_grad %0, %dy : tensor<2xi32>, tensor<2x3x7xf32> -> tensor<2x3x7xf32>
  %3 = adir.mask_grad %0, %dy : tensor<2xi32>, tensor<2x3x7xf32> -> tensor<2x3x7xf32>
  func.return %3 : tensor<2x3x7xf32>
}
