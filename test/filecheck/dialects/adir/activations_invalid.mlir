// Every verifier rule of the activations family, one case per split.
// RUN: adir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @wrong_result(%x: tensor<2x3xf32>) {
  %0 = adir.relu %x : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}
// CHECK: activations_invalid.mlir:5:3: error: adir.relu: result type tensor<3x2xf32> does not match the type tensor<2x3xf32> implied by its operands and properties

// -----

func.func @int_operand(%x: tensor<4xi32>) {
  %0 = adir.sigmoid %x : tensor<4xi32>
  func.return
}
// CHECK: activations_invalid.mlir:13:3: error: adir.sigmoid: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

// A float without a type is an f64; alpha is an f32.
func.func @alpha_not_f32(%x: tensor<4xf32>) {
  %0 = adir.leaky_relu %x {alpha = 0.2} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:22:3: error: adir.leaky_relu: property 'alpha': f64 should be of base attribute f32

// -----

func.func @alpha_not_a_float(%x: tensor<4xf32>) {
  %0 = adir.leaky_relu %x {alpha = 1 : i32} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:30:3: error: adir.leaky_relu: property 'alpha': 1 : i32 should be of base attribute float

// -----

func.func @unknown_gelu_approximation(%x: tensor<4xf32>) {
  %0 = adir.gelu %x {approximate = "fast"} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:38:3: error: adir.gelu: unknown approximation 'fast', expected none or tanh

// -----

func.func @gelu_approximation_not_a_string(%x: tensor<4xf32>) {
  %0 = adir.gelu %x {approximate = 1 : i64} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:46:3: error: adir.gelu: property 'approximate': 1 : i64 should be of base attribute string

// -----

func.func @softmax_axis_out_of_range(%x: tensor<2x3xf32>) {
  %0 = adir.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:54:3: error: adir.softmax: axis 2 is out of range for rank 2

// -----

func.func @log_softmax_negative_axis_out_of_range(%x: tensor<2x3xf32>) {
  %0 = adir.log_softmax %x {axis = -3 : i64} : tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:62:3: error: adir.log_softmax: axis -3 is out of range for rank 2

// -----

// A scalar has no axis to normalise along.
func.func @softmax_of_scalar(%x: tensor<f32>) {
  %0 = adir.softmax %x : tensor<f32>
  func.return
}
// CHECK: activations_invalid.mlir:71:3: error: adir.softmax: axis -1 is out of range for rank 0

// -----

func.func @axis_not_i64(%x: tensor<2x3xf32>) {
  %0 = adir.softmax %x {axis = 0 : i32} : tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:79:3: error: adir.softmax: property 'axis': Expected attribute i64 but got i32

// -----

func.func @softmax_wrong_result(%x: tensor<2x3xf32>) {
  %0 = adir.log_softmax %x : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}
// CHECK: activations_invalid.mlir:87:3: error: adir.log_softmax: result type tensor<2xf32> does not match the type tensor<2x3xf32> implied by its operands and properties

// -----

func.func @softplus_beta_not_positive(%x: tensor<4xf32>) {
  %0 = adir.softplus %x {beta = 0.0 : f32} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:95:3: error: adir.softplus: beta must be positive, got 0.0

// -----

func.func @relu_grad_shape_mismatch(%x: tensor<2x3xf32>, %dy: tensor<3x2xf32>) {
  %0 = adir.relu_grad %x, %dy : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:103:3: error: adir.relu_grad: operands output (2x3) and grad (3x2) must have the same shape

// -----

func.func @leaky_relu_grad_rank_mismatch(%x: tensor<4xf32>, %dy: tensor<2x4xf32>) {
  %0 = adir.leaky_relu_grad %x, %dy : tensor<4xf32>, tensor<2x4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:111:3: error: adir.leaky_relu_grad: operands input (4) and grad (2x4) must have the same shape

// -----

// Unknown dims are compatible with anything, but the known ones must agree.
func.func @softmax_grad_known_dims_differ(%y: tensor<?x3xf32>, %dy: tensor<2x4xf32>) {
  %0 = adir.softmax_grad %y, %dy : tensor<?x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:120:3: error: adir.softmax_grad: operands output (?x3) and grad (2x4) must have the same shape

// -----

func.func @sigmoid_grad_wrong_result(%y: tensor<2x3xf32>, %dy: tensor<2x3xf32>) {
  %0 = adir.sigmoid_grad %y, %dy : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}
// CHECK: activations_invalid.mlir:128:3: error: adir.sigmoid_grad: result type tensor<3x2xf32> does not match the type tensor<2x3xf32> implied by its operands and properties

// -----

func.func @tanh_grad_int_operand(%y: tensor<4xi32>, %dy: tensor<4xf32>) {
  %0 = adir.tanh_grad %y, %dy : tensor<4xi32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:136:3: error: adir.tanh_grad: operand 'output' at position 0 does not verify: i32 should be of base attribute f32

// -----

func.func @unknown_gelu_grad_approximation(%x: tensor<4xf32>, %dy: tensor<4xf32>) {
  %0 = adir.gelu_grad %x, %dy {approximate = "fast"} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:144:3: error: adir.gelu_grad: unknown approximation 'fast', expected none or tanh

// -----

func.func @softplus_grad_beta_not_positive(%x: tensor<4xf32>, %dy: tensor<4xf32>) {
  %0 = adir.softplus_grad %x, %dy {beta = -1.0 : f32} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:152:3: error: adir.softplus_grad: beta must be positive, got -1.0

// -----

func.func @softmax_grad_axis_out_of_range(%y: tensor<2x3xf32>, %dy: tensor<2x3xf32>) {
  %0 = adir.softmax_grad %y, %dy {axis = 2 : i64} : tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:160:3: error: adir.softmax_grad: axis 2 is out of range for rank 2

// -----

// The rank is known from either operand.
func.func @log_softmax_grad_axis_out_of_range(%y: tensor<?x3xf32>, %dy: tensor<*xf32>) {
  %0 = adir.log_softmax_grad %y, %dy {axis = -3 : i64} : tensor<?x3xf32>, tensor<*xf32> -> tensor<?x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:169:3: error: adir.log_softmax_grad: axis -3 is out of range for rank 2

// -----

// A nan bound would make every element nan (torch.clamp's rule); infinite ones are fine.
func.func @clamp_nan_min(%x: tensor<4xf32>) {
  %0 = adir.clamp %x {min = 0x7FC00000 : f32, max = 6.0 : f32} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:178:3: error: adir.clamp: min is nan

// -----

func.func @clamp_grad_nan_max(%x: tensor<4xf32>, %dy: tensor<4xf32>) {
  %0 = adir.clamp_grad %x, %dy {max = 0x7FC00000 : f32, inclusive} : tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:186:3: error: adir.clamp_grad: max is nan

// -----

func.func @clamp_grad_shape_mismatch(%x: tensor<2x3xf32>, %dy: tensor<3x2xf32>) {
  %0 = adir.clamp_grad %x, %dy {min = 0.0 : f32} : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x3xf32>
  func.return
}
// CHECK: activations_invalid.mlir:194:3: error: adir.clamp_grad: operands saved (2x3) and grad (3x2) must have the same shape

// -----

func.func @hardswish_grad_rank_mismatch(%x: tensor<4xf32>, %dy: tensor<2x4xf32>) {
  %0 = adir.hardswish_grad %x, %dy : tensor<4xf32>, tensor<2x4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:202:3: error: adir.hardswish_grad: operands input (4) and grad (2x4) must have the same shape

// -----

func.func @hardsigmoid_int_operand(%x: tensor<4xi32>) {
  %0 = adir.hardsigmoid %x : tensor<4xi32> -> tensor<4xf32>
  func.return
}
// CHECK: activations_invalid.mlir:210:3: error: adir.hardsigmoid: operand 'input' at position 0 does not verify: i32 should be of base attribute f32

// -----

func.func @mask_wrong_word_count(%y: tensor<2x3x7xf32>) {
  %0 = adir.relu_mask %y : tensor<2x3x7xf32> -> tensor<1xi32>
  func.return
}
// CHECK: activations_invalid.mlir:218:3: error: adir.relu_mask: result type tensor<1xi32> does not match the type tensor<2xi32> implied by its operands and properties

// -----

func.func @mask_grad_wrong_mask(%m: tensor<1xi32>, %dy: tensor<2x3x7xf32>) {
  %0 = adir.mask_grad %m, %dy : tensor<1xi32>, tensor<2x3x7xf32> -> tensor<2x3x7xf32>
  func.return
}
// CHECK: activations_invalid.mlir:226:3: error: adir.mask_grad: operand grad (2x3x7) needs a mask of 2 words, got 1

// -----

func.func @clamp_mask_nan_bound(%y: tensor<4xf32>) {
  %0 = adir.clamp_mask %y {min = 0x7FC00000 : f32} : tensor<4xf32> -> tensor<1xi32>
  func.return
}
// CHECK: activations_invalid.mlir:234:3: error: adir.clamp_mask: min is nan
