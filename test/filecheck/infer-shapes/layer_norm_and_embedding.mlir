// infer-shapes fills the unknown result shapes of layer norm and embedding ops: layer_norm's
// output has the input's shape and its statistics the input's leading dims (the dims before
// normalized_shape); an embedding's result is the indices' shape and the table's row width;
// the gradients have the shapes of what they are the adjoints of.
// RUN: adir-opt %s --split-input-file -p infer-shapes | filecheck %s

// CHECK-LABEL: func.func @layer_norm(%x: tensor<4x7x16xf32>, %w: tensor<16xf32>) -> tensor<4x7x16xf32>
// CHECK-NEXT:    %y, %mean, %rstd = adir.layer_norm %x, %w {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<16xf32> -> (tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>)
// CHECK-NEXT:    %dx, %dw, %db = adir.layer_norm_grad %x, %mean, %rstd, %y, %w {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7x16xf32>, tensor<16xf32> -> (tensor<4x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK-NEXT:    %y2, %mean2, %rstd2 = adir.layer_norm %dx {normalized_shape = array<i64: 7, 16>} : tensor<4x7x16xf32> -> (tensor<4x7x16xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    func.return %y2 : tensor<4x7x16xf32>
func.func @layer_norm(%x: tensor<4x7x16xf32>, %w: tensor<16xf32>) -> tensor<*xf32> {
  %y, %mean, %rstd = adir.layer_norm %x, %w {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<16xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  %dx, %dw, %db = adir.layer_norm_grad %x, %mean, %rstd, %y, %w {normalized_shape = array<i64: 16>} : tensor<4x7x16xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<16xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  %y2, %mean2, %rstd2 = adir.layer_norm %dx {normalized_shape = array<i64: 7, 16>} : tensor<*xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  func.return %y2 : tensor<*xf32>
}

// -----

// The normalized dims come from the property where the input does not know them.
// CHECK-LABEL: func.func @normalized_dims_from_the_property(%x: tensor<4x?xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %y, %mean, %rstd = adir.layer_norm %x {normalized_shape = array<i64: 16>} : tensor<4x?xf32> -> (tensor<4x16xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @normalized_dims_from_the_property(%x: tensor<4x?xf32>) -> tensor<*xf32> {
  %y, %mean, %rstd = adir.layer_norm %x {normalized_shape = array<i64: 16>} : tensor<4x?xf32> -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  func.return %y : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @embedding(%w: tensor<50x16xf32>, %t: tensor<4x7xi32>) -> tensor<50x16xf32>
// CHECK-NEXT:    %e = adir.embedding %w, %t : tensor<50x16xf32>, tensor<4x7xi32> -> tensor<4x7x16xf32>
// CHECK-NEXT:    %dw = adir.embedding_grad %e, %t {num_weights = 50 : i64} : tensor<4x7x16xf32>, tensor<4x7xi32> -> tensor<50x16xf32>
// CHECK-NEXT:    func.return %dw : tensor<50x16xf32>
func.func @embedding(%w: tensor<50x16xf32>, %t: tensor<4x7xi32>) -> tensor<*xf32> {
  %e = adir.embedding %w, %t : tensor<50x16xf32>, tensor<4x7xi32> -> tensor<*xf32>
  %dw = adir.embedding_grad %e, %t {num_weights = 50 : i64} : tensor<*xf32>, tensor<4x7xi32> -> tensor<*xf32>
  func.return %dw : tensor<*xf32>
}
