// The VJP rules of layer_norm and embedding.
// - layer_norm: one adir.layer_norm_grad reading the forward's input and the mean and rstd it
//   returned (no reductions of its own); its results are the adjoints of the input, the weight
//   and the bias. Without a bias, its bias adjoint is unused; without a weight, both are.
// - embedding: adir.embedding_grad, a scatter-add into a table of the weight's rows, with the
//   forward's padding_idx; the indices get no adjoint.
// RUN: adir-opt %s --split-input-file -p autodiff | filecheck %s

adir.param @table : tensor<10x4xf32> = #adir.normal<seed = 1>
adir.param @ln_w : tensor<4xf32> = #adir.fill<value = 1.0>
adir.param @ln_b : tensor<4xf32> = #adir.zeros

// CHECK-LABEL: func.func @loss_grad(%tokens: tensor<2x3xi32>, %r: tensor<2x3x4xf32>) -> (tensor<f32>, tensor<10x4xf32>, tensor<4xf32>, tensor<4xf32>) attributes {adir.gradient_of = @loss, adir.gradients = [@table, @ln_w, @ln_b]}
// CHECK:         %e = adir.embedding %t, %tokens {padding_idx = 0 : i64} : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %y, %mean, %rstd = adir.layer_norm %e, %w, %b {normalized_shape = array<i64: 4>}
// CHECK:         %y_grad = adir.mul %p_grad, %r : tensor<2x3x4xf32>
// CHECK-NEXT:    %e_grad, %ln_w_grad, %ln_b_grad = adir.layer_norm_grad %e, %mean, %rstd, %y_grad, %w {normalized_shape = array<i64: 4>} : tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3x4xf32>, tensor<4xf32> -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %table_grad = adir.embedding_grad %e_grad, %tokens {num_weights = 10 : i64, padding_idx = 0 : i64} : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
// CHECK-NEXT:    func.return %l, %table_grad, %ln_w_grad, %ln_b_grad : tensor<f32>, tensor<10x4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @loss(%tokens: tensor<2x3xi32>, %r: tensor<2x3x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %t = adir.load @table : tensor<10x4xf32>
  %w = adir.load @ln_w : tensor<4xf32>
  %b = adir.load @ln_b : tensor<4xf32>
  %e = adir.embedding %t, %tokens {padding_idx = 0 : i64} : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %y, %mean, %rstd = adir.layer_norm %e, %w, %b {normalized_shape = array<i64: 4>} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %p = adir.mul %y, %r : tensor<2x3x4xf32>
  %l = adir.sum %p : tensor<2x3x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

adir.param @table : tensor<10x4xf32> = #adir.normal<seed = 1>

// Without affine operands the grad op reads no weight, and only its input adjoint is used.
// CHECK-LABEL: func.func @loss_grad(%tokens: tensor<5xi32>, %r: tensor<5x4xf32>) -> (tensor<f32>, tensor<10x4xf32>)
// CHECK:         %e_grad, %{{[0-9]+}}, %{{[0-9]+}} = adir.layer_norm_grad %e, %mean, %rstd, %y_grad {normalized_shape = array<i64: 4>} : tensor<5x4xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5x4xf32> -> (tensor<5x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %table_grad = adir.embedding_grad %e_grad, %tokens {num_weights = 10 : i64} : tensor<5x4xf32>, tensor<5xi32> -> tensor<10x4xf32>
// CHECK-NEXT:    func.return %l, %table_grad : tensor<f32>, tensor<10x4xf32>
func.func @loss(%tokens: tensor<5xi32>, %r: tensor<5x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %t = adir.load @table : tensor<10x4xf32>
  %e = adir.embedding %t, %tokens : tensor<10x4xf32>, tensor<5xi32> -> tensor<5x4xf32>
  %y, %mean, %rstd = adir.layer_norm %e {normalized_shape = array<i64: 4>} : tensor<5x4xf32> -> (tensor<5x4xf32>, tensor<5xf32>, tensor<5xf32>)
  %p = adir.mul %y, %r : tensor<5x4xf32>
  %l = adir.sum %p : tensor<5x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}

