// Every loss prints in its custom form and survives a trip through the generic form. The
// default reduction ("mean") is left out of the custom form.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @mse
func.func @mse(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // CHECK-NEXT: %0 = adir.mse %x, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %0 = adir.mse %x, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.mse %x, %y {reduction = "sum"} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %1 = adir.mse %x, %y {reduction = "sum"} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  // CHECK-NEXT: %2 = adir.mse %x, %y {reduction = "none"} : tensor<4x3xf32>
  %2 = adir.mse %x, %y {reduction = "none"} : tensor<4x3xf32>
  // An explicit default prints like an absent one.
  // CHECK-NEXT: %3 = adir.mse %x, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %3 = adir.mse %x, %y {reduction = "mean"} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  func.return %2 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @nll_class_indices
func.func @nll_class_indices(%logp: tensor<8x10xf32>, %labels: tensor<8xi32>, %labels64: tensor<8xi64>) -> tensor<8xf32> {
  // CHECK-NEXT: %0 = adir.nll %logp, %labels : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  %0 = adir.nll %logp, %labels : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.nll %logp, %labels64 {reduction = "sum"} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  %1 = adir.nll %logp, %labels64 {reduction = "sum"} : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
  // CHECK-NEXT: %2 = adir.nll %logp, %labels {reduction = "none"} : tensor<8x10xf32>, tensor<8xi32> -> tensor<8xf32>
  %2 = adir.nll %logp, %labels {reduction = "none"} : tensor<8x10xf32>, tensor<8xi32> -> tensor<8xf32>
  func.return %2 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @nll_class_probabilities
func.func @nll_class_probabilities(%logp: tensor<8x10xf32>, %probs: tensor<8x10xf32>) -> tensor<8xf32> {
  // CHECK-NEXT: %0 = adir.nll %logp, %probs : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  %0 = adir.nll %logp, %probs : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.nll %logp, %probs {reduction = "sum"} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  %1 = adir.nll %logp, %probs {reduction = "sum"} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  // CHECK-NEXT: %2 = adir.nll %logp, %probs {reduction = "none"} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<8xf32>
  %2 = adir.nll %logp, %probs {reduction = "none"} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<8xf32>
  func.return %2 : tensor<8xf32>
}

// -----

// One unbatched sample, as in PyTorch: input [C], target [] (index) or [C] (probabilities).
// CHECK-LABEL: func.func @nll_unbatched
func.func @nll_unbatched(%logp: tensor<10xf32>, %label: tensor<i64>, %probs: tensor<10xf32>) -> tensor<f32> {
  // CHECK-NEXT: %0 = adir.nll %logp, %label {reduction = "none"} : tensor<10xf32>, tensor<i64> -> tensor<f32>
  %0 = adir.nll %logp, %label {reduction = "none"} : tensor<10xf32>, tensor<i64> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.nll %logp, %probs : tensor<10xf32>, tensor<10xf32> -> tensor<f32>
  %1 = adir.nll %logp, %probs : tensor<10xf32>, tensor<10xf32> -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%z: tensor<8x10xf32>, %labels: tensor<8xi32>, %probs: tensor<8x10xf32>) -> tensor<8xf32> {
  // CHECK-NEXT: %0 = adir.cross_entropy %z, %labels : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  %0 = adir.cross_entropy %z, %labels : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.cross_entropy %z, %labels {reduction = "sum"} : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  %1 = adir.cross_entropy %z, %labels {reduction = "sum"} : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  // CHECK-NEXT: %2 = adir.cross_entropy %z, %labels {reduction = "none"} : tensor<8x10xf32>, tensor<8xi32> -> tensor<8xf32>
  %2 = adir.cross_entropy %z, %labels {reduction = "none"} : tensor<8x10xf32>, tensor<8xi32> -> tensor<8xf32>
  // CHECK-NEXT: %3 = adir.cross_entropy %z, %probs : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  %3 = adir.cross_entropy %z, %probs : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<f32>
  // CHECK-NEXT: %4 = adir.cross_entropy %z, %probs {reduction = "none"} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<8xf32>
  %4 = adir.cross_entropy %z, %probs {reduction = "none"} : tensor<8x10xf32>, tensor<8x10xf32> -> tensor<8xf32>
  func.return %4 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_unbatched
func.func @cross_entropy_unbatched(%z: tensor<10xf32>, %label: tensor<i32>) -> tensor<f32> {
  // CHECK-NEXT: %0 = adir.cross_entropy %z, %label {reduction = "sum"} : tensor<10xf32>, tensor<i32> -> tensor<f32>
  %0 = adir.cross_entropy %z, %label {reduction = "sum"} : tensor<10xf32>, tensor<i32> -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @bce
func.func @bce(%p: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // CHECK-NEXT: %0 = adir.bce %p, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %0 = adir.bce %p, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.bce %p, %y {reduction = "sum"} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %1 = adir.bce %p, %y {reduction = "sum"} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  // CHECK-NEXT: %2 = adir.bce %p, %y {reduction = "none"} : tensor<4x3xf32>
  %2 = adir.bce %p, %y {reduction = "none"} : tensor<4x3xf32>
  func.return %2 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @bce_with_logits
func.func @bce_with_logits(%z: tensor<5xf32>, %y: tensor<5xf32>) -> tensor<5xf32> {
  // CHECK-NEXT: %0 = adir.bce_with_logits %z, %y : tensor<5xf32>, tensor<5xf32> -> tensor<f32>
  %0 = adir.bce_with_logits %z, %y : tensor<5xf32>, tensor<5xf32> -> tensor<f32>
  // CHECK-NEXT: %1 = adir.bce_with_logits %z, %y {reduction = "sum"} : tensor<5xf32>, tensor<5xf32> -> tensor<f32>
  %1 = adir.bce_with_logits %z, %y {reduction = "sum"} : tensor<5xf32>, tensor<5xf32> -> tensor<f32>
  // CHECK-NEXT: %2 = adir.bce_with_logits %z, %y {reduction = "none"} : tensor<5xf32>
  %2 = adir.bce_with_logits %z, %y {reduction = "none"} : tensor<5xf32>
  func.return %2 : tensor<5xf32>
}

// -----

// Unknown shapes are legal before infer-shapes; with an unranked target the element type
// tells class indices from class probabilities.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<?x10xf32>, %u: tensor<*xf32>, %labels: tensor<*xi32>, %y: tensor<?x?xf32>) -> tensor<*xf32> {
  // CHECK-NEXT: %0 = adir.cross_entropy %x, %labels {reduction = "none"} : tensor<?x10xf32>, tensor<*xi32> -> tensor<?xf32>
  %0 = adir.cross_entropy %x, %labels {reduction = "none"} : tensor<?x10xf32>, tensor<*xi32> -> tensor<?xf32>
  // CHECK-NEXT: %1 = adir.nll %u, %y {reduction = "none"} : tensor<*xf32>, tensor<?x?xf32> -> tensor<*xf32>
  %1 = adir.nll %u, %y {reduction = "none"} : tensor<*xf32>, tensor<?x?xf32> -> tensor<*xf32>
  // CHECK-NEXT: %2 = adir.mse %x, %u {reduction = "none"} : tensor<?x10xf32>, tensor<*xf32> -> tensor<?x10xf32>
  %2 = adir.mse %x, %u {reduction = "none"} : tensor<?x10xf32>, tensor<*xf32> -> tensor<?x10xf32>
  // CHECK-NEXT: %3 = adir.bce_with_logits %u, %u : tensor<*xf32>, tensor<*xf32> -> tensor<f32>
  %3 = adir.bce_with_logits %u, %u : tensor<*xf32>, tensor<*xf32> -> tensor<f32>
  func.return %1 : tensor<*xf32>
}

// -----

// The gradient ops: (input, target, dloss) -> the adjoint of input, dloss shaped like the
// loss's result (a scalar for "mean" and "sum", one per element or sample for "none").
// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>, %labels: tensor<4xi64>, %s: tensor<f32>, %per_element: tensor<4x3xf32>, %per_sample: tensor<4xf32>, %z: tensor<3xf32>, %label: tensor<i32>) -> tensor<4x3xf32> {
  // CHECK-NEXT: %0 = adir.mse_grad %x, %y, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %0 = adir.mse_grad %x, %y, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %1 = adir.mse_grad %x, %y, %per_element {reduction = "none"} : tensor<4x3xf32>
  %1 = adir.mse_grad %x, %y, %per_element {reduction = "none"} : tensor<4x3xf32>
  // CHECK-NEXT: %2 = adir.nll_grad %x, %labels, %s {reduction = "sum"} : tensor<4x3xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x3xf32>
  %2 = adir.nll_grad %x, %labels, %s {reduction = "sum"} : tensor<4x3xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %3 = adir.nll_grad %x, %y, %per_sample {reduction = "none"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  %3 = adir.nll_grad %x, %y, %per_sample {reduction = "none"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: %4 = adir.cross_entropy_grad %x, %labels, %s : tensor<4x3xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x3xf32>
  %4 = adir.cross_entropy_grad %x, %labels, %s : tensor<4x3xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %5 = adir.cross_entropy_grad %x, %y, %per_sample {reduction = "none"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  %5 = adir.cross_entropy_grad %x, %y, %per_sample {reduction = "none"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: %6 = adir.cross_entropy_grad %z, %label, %s {reduction = "none"} : tensor<3xf32>, tensor<i32>, tensor<f32> -> tensor<3xf32>
  %6 = adir.cross_entropy_grad %z, %label, %s {reduction = "none"} : tensor<3xf32>, tensor<i32>, tensor<f32> -> tensor<3xf32>
  // CHECK-NEXT: %7 = adir.bce_grad %x, %y, %s {reduction = "sum"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %7 = adir.bce_grad %x, %y, %s {reduction = "sum"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %8 = adir.bce_with_logits_grad %x, %y, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %8 = adir.bce_with_logits_grad %x, %y, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  // CHECK-NEXT: %9 = adir.bce_with_logits_grad %x, %y, %per_element {reduction = "none"} : tensor<4x3xf32>
  %9 = adir.bce_with_logits_grad %x, %y, %per_element {reduction = "none"} : tensor<4x3xf32>
  func.return %9 : tensor<4x3xf32>
}
