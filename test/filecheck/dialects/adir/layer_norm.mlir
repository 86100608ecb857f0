// adir.layer_norm and adir.layer_norm_grad print in their custom form and survive a trip
// through the generic form: with a weight and a bias, a weight only, none; over one and two
// trailing dims; eps equal to PyTorch's default (1e-5) is left out of the print.
// RUN: ADIR_ROUNDTRIP
// RUN: ADIR_GENERIC_ROUNDTRIP

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<4x7x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>, %w2: tensor<7x16xf32>) -> tensor<4x7x16xf32> {
  // CHECK-NEXT: %y, %mean, %rstd = adir.layer_norm %x, %w, %b {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<16xf32>, tensor<16xf32> -> (tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>)
  %y, %mean, %rstd = adir.layer_norm %x, %w, %b {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<16xf32>, tensor<16xf32> -> (tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>)
  // CHECK-NEXT: %y2, %mean2, %rstd2 = adir.layer_norm %x, %w2 {normalized_shape = array<i64: 7, 16>, eps = 1.000000e-03 : f32} : tensor<4x7x16xf32>, tensor<7x16xf32> -> (tensor<4x7x16xf32>, tensor<4xf32>, tensor<4xf32>)
  %y2, %mean2, %rstd2 = adir.layer_norm %x, %w2 {normalized_shape = array<i64: 7, 16>, eps = 1.0e-3 : f32} : tensor<4x7x16xf32>, tensor<7x16xf32> -> (tensor<4x7x16xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK-NEXT: %y3, %mean3, %rstd3 = adir.layer_norm %x {normalized_shape = array<i64: 4, 7, 16>} : tensor<4x7x16xf32> -> (tensor<4x7x16xf32>, tensor<f32>, tensor<f32>)
  %y3, %mean3, %rstd3 = adir.layer_norm %x {normalized_shape = array<i64: 4, 7, 16>, eps = 1.0e-5 : f32} : tensor<4x7x16xf32> -> (tensor<4x7x16xf32>, tensor<f32>, tensor<f32>)
  // CHECK-NEXT: %dx, %dw, %db = adir.layer_norm_grad %x, %mean, %rstd, %y, %w {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7x16xf32>, tensor<16xf32> -> (tensor<4x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %dx, %dw, %db = adir.layer_norm_grad %x, %mean, %rstd, %y, %w {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7x16xf32>, tensor<16xf32> -> (tensor<4x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
  // CHECK-NEXT: %dx2, %dw2, %db2 = adir.layer_norm_grad %x, %mean2, %rstd2, %y2 {normalized_shape = array<i64: 7, 16>} : tensor<4x7x16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x7x16xf32> -> (tensor<4x7x16xf32>, tensor<7x16xf32>, tensor<7x16xf32>)
  %dx2, %dw2, %db2 = adir.layer_norm_grad %x, %mean2, %rstd2, %y2 {normalized_shape = array<i64: 7, 16>} : tensor<4x7x16xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x7x16xf32> -> (tensor<4x7x16xf32>, tensor<7x16xf32>, tensor<7x16xf32>)
  func.return %y : tensor<4x7x16xf32>
}

// -----

// Unknown leading dims are legal before infer-shapes; the normalized dims are the property's.
// CHECK-LABEL: func.func @unknown
func.func @unknown(%x: tensor<?x16xf32>, %u: tensor<*xf32>) -> tensor<?x16xf32> {
  // CHECK-NEXT: %y, %mean, %rstd = adir.layer_norm %x {normalized_shape = array<i64: 16>} : tensor<?x16xf32> -> (tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>)
  %y, %mean, %rstd = adir.layer_norm %x {normalized_shape = array<i64: 16>} : tensor<?x16xf32> -> (tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>)
  // CHECK-NEXT: %y2, %mean2, %rstd2 = adir.layer_norm %u {normalized_shape = array<i64: 16>} : tensor<*xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  %y2, %mean2, %rstd2 = adir.layer_norm %u {normalized_shape = array<i64: 16>} : tensor<*xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  func.return %y : tensor<?x16xf32>
}
